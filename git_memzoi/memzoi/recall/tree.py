"""Whether a path given to recall names something in the repository (io): the ``path_not_in_tree`` note.

A ``--path`` that is neither tracked (in git's index) nor present in the working tree binds no memory in
practice, most often because it was typed relative to the wrong folder; recall says so instead of a silent
"No memory warnings". A glob other than a trailing ``/**`` is not checked.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from git_memzoi.errors import InputError

if TYPE_CHECKING:
    from git_memzoi.memzoi.recall.schema import NoteJson
    from git_memzoi.memzoi.workspace import Workspace

NOT_IN_TREE = "path_not_in_tree"


def path_notes(ws: Workspace, path: str | None) -> list[NoteJson]:
    """``[{"code": "path_not_in_tree", "path", "message"}]`` when the repository-relative ``path`` is neither in
    the working tree nor in git's index (a folder: nothing tracked below it); ``[]`` otherwise or without a path.
    Git's index is read only when the path is absent from the working tree."""
    if not path:
        return []
    base = path.strip().rstrip("/")
    base = base.removesuffix("/**").rstrip("/")
    if not base or base == "." or any(c in base for c in "*?["):
        return []
    if os.path.lexists(ws.layout.root / base):
        return []
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    try:
        tracked = Pygit2RepoView(ws.layout.root).tracked_under(base)
    except InputError:  # no repository around the workspace: the working tree alone answers
        tracked = []
    if tracked:
        return []
    message = (
        f"path {path} (from the repository root) is neither tracked nor present in the working tree; no memory "
        "can be bound to it"
    )
    return [{"code": NOT_IN_TREE, "path": path, "message": message}]
