"""The record files recall leaves out because they cannot be read (io): the ``unreadable_records`` note.

A file the index cannot read (broken YAML, renamed by hand so that its name no longer matches its ``id``, a
symlink, a FIFO, too large) is never served, and search said nothing of it: a user saw no result and no reason.
Recall now says how many files of the searched destination it left out, naming canonical files (they are in
git anyway) and never private ones (a runtime file's name is its title's slug). ``doctor`` and
``rebuild --json`` give each reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from git_memzoi.memzoi.recall.schema import NoteJson
    from git_memzoi.memzoi.workspace import Workspace

UNREADABLE = "unreadable_records"
NAMED = 3  # canonical files named in the note; the count says the rest


def unreadable_notes(ws: Workspace, destinations: Sequence[str]) -> list[NoteJson]:
    """One ``{"code": "unreadable_records", "path": <the first file or None>, "message"}`` per destination of
    ``destinations`` (``repo``, ``local``, ``session``) whose files the index holds but could not read; ``[]``
    when there are none. One query, on the index as the caller's read left it (inside
    :func:`~git_memzoi.memzoi.index_db.read_session`)."""
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.recall.index.sources import sources

    paths = index_db.scalars(ws.layout, "SELECT path FROM files WHERE problem_code IS NOT NULL ORDER BY path", ())
    if not paths:
        return []
    walked = sources(ws.layout)
    where = {p: next((s.destination for s in walked if p.startswith(s.prefix)), None) for p in paths}
    return [note for d in destinations if (note := _note(d, [p for p in paths if where[p] == d])) is not None]


def _note(destination: str, mine: list[str]) -> NoteJson | None:
    if not mine:
        return None
    if destination != "repo":
        message = (
            f"{len(mine)} private {destination} record file(s) cannot be read and are left out "
            "(`git memzoi rebuild --json` names each and why)"
        )
        return {"code": UNREADABLE, "path": None, "message": message}
    named = ", ".join(mine[:NAMED]) + (f" and {len(mine) - NAMED} more" if len(mine) > NAMED else "")
    message = f"{len(mine)} record file(s) cannot be read and are left out: {named} (`git memzoi doctor` says why)"
    return {"code": UNREADABLE, "path": mine[0], "message": message}
