"""An in-memory :class:`~git_memzoi.core.gitview.RepoView` built from a compact history spec (for tests, evals).

A history is a list of commits, each ``(id, parents, files)`` where ``files`` maps path → content for the
whole tree at that commit. It answers as the pygit2 view does (tests/core/test_gitview_contract.py runs both on the
same histories), except where it has nothing to go on: it holds no blobs or trees (their ids read as missing, not
as ``not_commit``), no file modes (a mode-only change is none), and its ids may be names (``c1``), looked up as
given, shorter prefixes included.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from git_memzoi.core.gitview import AnchorState
from git_memzoi.core.patterns import lazy

_HEX_ID = lazy(r"[0-9a-fA-F]{4,64}")  # what the pygit2 view looks up as an object id


@dataclass
class FakeRepoView:
    """A repository view over an explicit commit graph.

    Args:
        commits: id → (parent ids, tree as path → content).
        head: the id HEAD points at (``None``: no commits yet).
        shallow: pretend to be a shallow clone (unknown ids then read as ``shallow_missing``).
    """

    commits: Mapping[str, tuple[Sequence[str], Mapping[str, str]]] = field(default_factory=dict)
    head_id: str | None = None
    shallow: bool = False
    calls: list[tuple[str, str]] = field(default_factory=list)

    def head(self) -> str | None:
        """The HEAD id."""
        return self.head_id

    def is_shallow(self) -> bool:
        """The configured shallowness."""
        return self.shallow

    def anchor_states(self, revs: Iterable[str]) -> dict[str, tuple[AnchorState, str | None]]:
        """Resolve each rev by exact id or unique prefix (hex in any case) and place it against HEAD; a rev that
        names no commit and is not shaped like an object id (a ref name, an expression) names no commit."""
        return {rev: self._state(rev) for rev in revs}

    def _state(self, rev: str) -> tuple[AnchorState, str | None]:
        if self.head_id is None:
            return AnchorState.NO_HEAD, None
        wanted = rev.lower()
        matches = [rev] if rev in self.commits else [c for c in self.commits if wanted and c.startswith(wanted)]
        if len(matches) > 1:
            return AnchorState.AMBIGUOUS, None
        if not matches:
            if not _HEX_ID.fullmatch(rev):
                return AnchorState.NOT_COMMIT, None
            return (AnchorState.SHALLOW if self.shallow else AnchorState.MISSING), None
        oid = matches[0]
        return (AnchorState.ANCESTOR if self._reaches(self.head_id, oid) else AnchorState.NOT_ANCESTOR), oid

    def _reaches(self, start: str, target: str) -> bool:
        todo, seen = [start], set()
        while todo:
            current = todo.pop()
            if current == target:
                return True
            if current not in seen:
                seen.add(current)
                todo.extend(self.commits[current][0])
        return False

    def changed_files(self, base: str, head: str) -> list[str]:
        """Paths (NFC) whose content differs between the two trees, sorted."""
        self.calls.append((base, head))
        old, new = self.commits[base][1], self.commits[head][1]
        return sorted({_nfc(p) for p in set(old) | set(new) if old.get(p) != new.get(p)})

    def changed_since(self, bases: Iterable[str], head: str) -> dict[str, frozenset[str]]:
        """:meth:`changed_files` for each base."""
        return {base: frozenset(self.changed_files(base, head)) for base in set(bases)}

    def path_exists(self, commit: str, path: str) -> bool:
        """True for a file, or a directory prefix of one, in ``commit``'s tree (NFC or NFD spelling)."""
        tree = self.commits[commit][1]
        for spelling in {path, _nfc(path), unicodedata.normalize("NFD", path)}:
            clean = spelling.strip("/")
            if clean in tree or any(p.startswith(clean + "/") for p in tree):
                return True
        return False


def _nfc(path: str) -> str:
    return path if path.isascii() else unicodedata.normalize("NFC", path)


def linear_history(*trees: Mapping[str, str]) -> FakeRepoView:
    """A view whose commits ``c1, c2, ...`` each have the previous one as parent; HEAD is the last."""
    commits: dict[str, tuple[Sequence[str], Mapping[str, str]]] = {}
    for i, tree in enumerate(trees, 1):
        commits[f"c{i}"] = ([f"c{i - 1}"] if i > 1 else [], dict(tree))
    return FakeRepoView(commits, f"c{len(trees)}" if trees else None)
