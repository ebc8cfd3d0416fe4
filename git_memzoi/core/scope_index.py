"""Many scopes over one set of paths: each distinct pattern is matched once (the status hot path).

A scope is evaluated as git reads an ignore list, last matching pattern wins, which for files is the same as
applying the patterns in order as set operations: a pattern adds the paths it matches, a ``!`` pattern removes
them. So each distinct pattern is matched once against the union of every path of interest, each distinct
scope is combined once, and an entry's hits are its scope's set intersected with the files changed since its
anchor.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

from git_memzoi.core import globs


class ScopeIndex:
    """Evaluate scopes against a fixed universe of repository-relative POSIX paths (NFC).

    Args:
        paths: every path a scope may be asked about (duplicates are fine).
    """

    def __init__(self, paths: Iterable[str]) -> None:
        self._paths = sorted(set(paths))
        self._by_pattern: dict[str, tuple[bool, frozenset[str]]] = {}  # by the whole pattern, '!' included
        self._by_scope: dict[tuple[str, ...], frozenset[str]] = {}

    def select(self, patterns: Sequence[str]) -> frozenset[str]:
        """The paths of the universe in the scope made of ``patterns`` (each already valid)."""
        key = tuple(patterns)
        found = self._by_scope.get(key)
        if found is None:
            selected: set[str] = set()
            for pattern in key:
                negated, matching = self._matching(pattern)
                if negated:
                    selected -= matching
                else:
                    selected |= matching
            found = self._by_scope[key] = frozenset(selected)
        return found

    def _matching(self, pattern: str) -> tuple[bool, frozenset[str]]:
        found = self._by_pattern.get(pattern)
        if found is None:
            negated, match = globs.matcher(pattern)
            candidates = self._candidates(globs.literal_prefix(pattern))
            found = self._by_pattern[pattern] = (negated, frozenset(p for p in candidates if match(p)))
        return found

    def _candidates(self, prefix: str) -> Sequence[str]:
        if not prefix:
            return self._paths
        start = bisect.bisect_left(self._paths, prefix)
        end = bisect.bisect_left(self._paths, prefix + "\U0010ffff")
        return self._paths[start:end]
