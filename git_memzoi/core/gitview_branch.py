"""What this branch and working tree changed, for the session-start context and the PreCompact checkpoint (io).

The branch's own changes are the tree diff from its merge base with the default branch to HEAD, as
``git diff <default>...HEAD`` lists them. The default branch is ``origin/HEAD`` (what ``git clone`` set), else a
local ``main``, else ``master``; when none exists, or HEAD is that branch, only the working tree counts. The
working tree's changes are git's status: staged, unstaged and untracked (not ignored) files; as ``git status``
shows them, a folder holding only untracked files is one entry ending in ``/``.

It reads through :class:`~git_memzoi.core.gitview_pygit2.Pygit2RepoView` (the one module that imports pygit2),
using the module and repository that view already holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memzoi.core.gitview_pygit2 import Pygit2RepoView
from git_memzoi.core.paths import nfc

DEFAULT_REFS = ("refs/remotes/origin/HEAD", "refs/heads/main", "refs/heads/master")
MAX_FILES = 500  # a listing cap: a branch rewriting the whole tree says so by its count, not by 10,000 names
# git status bits (libgit2's GIT_STATUS_*): index side, working-tree side, untracked
_STAGED = 0x1 | 0x2 | 0x4 | 0x8 | 0x10
_UNSTAGED = 0x100 | 0x200 | 0x400 | 0x800
_UNTRACKED = 0x80


@dataclass(frozen=True)
class BranchState:
    """The branch and working tree of a repository.

    ``branch`` is the short branch name (``None`` when HEAD is detached or the repository has no commit);
    ``base`` the default branch's short name and ``merge_base`` the full id the branch forked from (both
    ``None`` without a default branch or on it); ``branch_files`` the paths changed from the merge base to HEAD;
    ``staged``, ``unstaged`` and ``untracked`` git's status; ``recent`` the last commits as ``(short id,
    subject)``, newest first. Paths are repository-relative POSIX (NFC), sorted, at most :data:`MAX_FILES` each;
    ``truncated`` is true when a list was cut.
    """

    branch: str | None
    head: str | None
    base: str | None
    merge_base: str | None
    branch_files: tuple[str, ...]
    staged: tuple[str, ...]
    unstaged: tuple[str, ...]
    untracked: tuple[str, ...]
    recent: tuple[tuple[str, str], ...]
    truncated: bool = False

    @property
    def working(self) -> tuple[str, ...]:
        """Every path the working tree changed (staged, unstaged or untracked), sorted, once."""
        return tuple(sorted({*self.staged, *self.unstaged, *self.untracked}))

    @property
    def changed(self) -> tuple[str, ...]:
        """Every path changed on the branch or in the working tree, sorted, once."""
        return tuple(sorted({*self.branch_files, *self.working}))


def branch_state(start: Path, recent: int = 5) -> BranchState:
    """The :class:`BranchState` of the repository holding ``start``, with the last ``recent`` commits.

    Raises:
        NotARepository: ``start`` is in no git working tree (an InputError).
    """
    return _View(start).state(recent)


class _View(Pygit2RepoView):
    """The repository view, plus the branch and status reads only this module needs."""

    def state(self, recent: int) -> BranchState:
        repo = self._repo
        head = self.head()
        branch = None if head is None or repo.head_is_detached else repo.head.shorthand
        base, fork = self._fork_point(head)
        files = self._diff_names(fork, head) if fork is not None and head is not None and fork != head else []
        staged, unstaged, untracked = self._status()
        cut = any(len(part) > MAX_FILES for part in (files, staged, unstaged, untracked))
        return BranchState(
            branch,
            head,
            base,
            fork,
            _capped(files),
            _capped(staged),
            _capped(unstaged),
            _capped(untracked),
            self._recent(head, recent),
            cut,
        )

    def _fork_point(self, head: str | None) -> tuple[str | None, str | None]:
        """``(default branch short name, merge base)`` or ``(None, None)``."""
        if head is None:
            return None, None
        repo = self._repo
        for name in DEFAULT_REFS:
            try:
                ref = repo.references.get(name)
                target = None if ref is None else ref.resolve()
            except (KeyError, ValueError, self._pygit2.GitError):
                continue
            if target is None:
                continue
            if repo.head.name == target.name:  # on the default branch itself: nothing is the branch's own
                return None, None
            fork = repo.merge_base(target.target, repo.head.target)
            return target.shorthand, None if fork is None else str(fork)
        return None, None

    def _diff_names(self, older: str, newer: str) -> list[str]:
        old = self._repo[older].peel(self._pygit2.Tree)
        new = self._repo[newer].peel(self._pygit2.Tree)
        deltas = old.diff_to_tree(new).deltas
        return sorted({_norm(p) for d in deltas for p in (d.old_file.path, d.new_file.path)})

    def _status(self) -> tuple[list[str], list[str], list[str]]:
        staged: list[str] = []
        unstaged: list[str] = []
        untracked: list[str] = []
        # "normal", as `git status` lists them: an untracked folder is one "folder/" entry, not a walk of it
        found: dict[str, Any] = self._repo.status(untracked_files="normal")
        for path, status in found.items():
            name, flags = _norm(path), int(status)  # an enum's & costs microseconds; 10,000 files pay them
            if flags & _UNTRACKED:
                untracked.append(name)
            if flags & _STAGED:
                staged.append(name)
            if flags & _UNSTAGED:
                unstaged.append(name)
        return sorted(staged), sorted(unstaged), sorted(untracked)

    def _recent(self, head: str | None, count: int) -> tuple[tuple[str, str], ...]:
        if head is None or count <= 0:
            return ()
        out = []
        for commit in self._repo.walk(self._repo[head].id):
            subject = (commit.message or "").strip().splitlines()
            out.append((str(commit.id)[:12], subject[0] if subject else ""))
            if len(out) >= count:
                break
        return tuple(out)


def _norm(path: str) -> str:
    return path if path.isascii() else nfc(path)


def _capped(paths: list[str]) -> tuple[str, ...]:
    return tuple(paths[:MAX_FILES])
