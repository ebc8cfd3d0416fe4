"""The pygit2 repository view: the only module that imports pygit2.

It answers history questions in-process (no git subprocess) and works in an empty repository, on a detached
HEAD, in a linked worktree and in a shallow clone. Paths come back decoded as UTF-8, never in git's quoted form.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from git_memzoi.core.gitview import AnchorState
from git_memzoi.core.paths import nfc
from git_memzoi.errors import InputError, ToolError

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


class NotARepository(InputError):
    """The directory is not inside a git working tree (exit 2)."""

    default_code = "not_a_repository"


class Pygit2RepoView:
    """A :class:`~git_memzoi.core.gitview.RepoView` over a real repository.

    Args:
        start: a directory inside the working tree. When git's own ``GIT_DIR`` is set (inside a hook), the
            repository is opened from the environment as git itself would.

    Raises:
        NotARepository: when ``start`` is not inside a git working tree, or the repository is bare.
    """

    def __init__(self, start: Path) -> None:
        import pygit2

        self._pygit2 = pygit2
        try:
            if os.environ.get("GIT_DIR"):
                flags = pygit2.enums.RepositoryOpenFlag.FROM_ENV
                self._repo = pygit2.Repository(str(start), flags=flags)
            else:
                found = pygit2.discover_repository(str(start))
                if found is None:
                    raise NotARepository(f"not a git repository: {start}")
                self._repo = pygit2.Repository(found)
        except pygit2.GitError as exc:
            raise NotARepository(f"not a git repository: {start} ({exc})") from None
        if self._repo.workdir is None:
            raise NotARepository(f"{start}: a bare repository has no working tree")
        self.root = Path(self._repo.workdir).resolve()
        self.git_dir = Path(self._repo.path).resolve()

    def head(self) -> str | None:
        """The full id HEAD points at (detached or not), or ``None`` when no commit exists yet."""
        if self._repo.head_is_unborn:
            return None
        return str(self._repo.head.target)

    def is_shallow(self) -> bool:
        """True in a shallow clone."""
        return bool(self._repo.is_shallow)

    def anchor_state(self, rev: str) -> tuple[AnchorState, str | None]:
        """Resolve ``rev`` and place it against HEAD (see :class:`AnchorState`)."""
        head = self.head()
        if head is None:
            return AnchorState.NO_HEAD, None
        obj, state = self._resolve(rev)
        if obj is None:
            return state, None
        oid = str(obj.id)
        if oid == head or self._repo.descendant_of(head, oid):
            return AnchorState.ANCESTOR, oid
        return AnchorState.NOT_ANCESTOR, oid

    def _resolve(self, rev: str):  # type: ignore[no-untyped-def]
        pygit2 = self._pygit2
        try:
            obj = self._repo.revparse_single(rev)
        except (KeyError, pygit2.InvalidSpecError):
            return None, AnchorState.SHALLOW if self.is_shallow() else AnchorState.MISSING
        except (ValueError, pygit2.GitError) as exc:
            if "ambiguous" in str(exc):
                return None, AnchorState.AMBIGUOUS
            return None, AnchorState.SHALLOW if self.is_shallow() else AnchorState.MISSING
        try:
            return obj.peel(pygit2.Commit), AnchorState.ANCESTOR
        except (pygit2.InvalidSpecError, ValueError, pygit2.GitError):
            return None, AnchorState.NOT_COMMIT

    def changed_files(self, base: str, head: str) -> list[str]:
        """Sorted unique paths (NFC) changed between the trees of ``base`` and ``head``; renames give both."""
        return list(self._changed(base, head))

    @lru_cache(maxsize=256)  # noqa: B019 - one view lives for one command
    def _changed(self, base: str, head: str) -> tuple[str, ...]:
        repo = self._repo
        try:
            old = repo[base].peel(self._pygit2.Tree)
            new = repo[head].peel(self._pygit2.Tree)
        except (KeyError, ValueError) as exc:
            raise ToolError(f"cannot read the tree of {base} or {head}: {exc}", "git_error") from None
        paths: set[str] = set()
        for delta in old.diff_to_tree(new).deltas:
            paths.add(nfc(delta.old_file.path))
            paths.add(nfc(delta.new_file.path))
        return tuple(sorted(paths))

    def path_exists(self, commit: str, path: str) -> bool:
        """True when ``path`` is a file or directory in ``commit``'s tree (NFC or NFD spelling)."""
        tree = self._repo[commit].peel(self._pygit2.Tree)
        for spelling in {path, nfc(path), _nfd(path)}:
            try:
                tree[spelling.strip("/")]
            except (KeyError, ValueError):
                continue
            return True
        return False


def _nfd(path: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFD", path)
