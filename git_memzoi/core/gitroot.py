"""Where a working tree's top and its git directory are (io), read from the file system where git's environment
allows and from pygit2 only where it does not.

Every ``git memzoi`` command finds its repository first; these two lookups lived in
:mod:`~git_memzoi.core.gitview_pygit2`, so a search imported that module and its neighbours (the git view,
tree diffs, the history caches) only to read a ``.git`` entry (issue 17, "Start-up"). pygit2 itself (55 to 100
ms of imports) loads only on the fallback.
"""

from __future__ import annotations

import os
from pathlib import Path

from git_memzoi.core import gitenv


def worktree_root(start: Path) -> Path:
    """The top of the working tree containing ``start``: the nearest folder with a plain ``.git`` entry
    (:func:`gitenv.plain_top`), found without loading pygit2 when git's own environment does not redirect it.

    Raises:
        NotARepository: when no such folder exists (pygit2 is asked before giving up).
    """
    top = None if gitenv.redirected(os.environ) else gitenv.plain_top(start)
    if top is not None:
        return top
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    return Pygit2RepoView(start).root


def git_dir(root: Path) -> Path:
    """The git directory of the working tree at ``root``: ``root/.git``, or where a ``.git`` file (a linked
    worktree, a submodule) points, read without loading pygit2; pygit2 is asked when git's environment redirects
    it or the file cannot be read."""
    found = None if gitenv.redirected(os.environ) else gitenv.dot_git_target(root)
    if found is not None:
        return found
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    return Pygit2RepoView(root).git_dir
