"""Many scopes over one set of paths: each distinct pattern is matched once (the status hot path).

A scope is evaluated as git reads an ignore list, last matching pattern wins, which for files is the same as
applying the patterns in order as set operations: a pattern adds the paths it matches, a ``!`` pattern removes
them. So each distinct pattern is matched once against the union of every path of interest, each distinct
scope is combined once, and an entry's hits are its scope's set intersected with the files changed since its
anchor.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence

from git_memzoi.core import globs
from git_memzoi.core.patterns import lazy


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
            found = self._by_scope[key] = combine([self.matching(pattern) for pattern in key])
        return found

    def matching(self, pattern: str) -> tuple[bool, frozenset[str]]:
        """Whether the valid ``pattern`` is a ``!`` pattern, and the paths of the universe its positive form
        matches (computed once per pattern)."""
        found = self.plain(pattern)
        if found is None:
            negated, match = globs.matcher(pattern)
            candidates = self._candidates(globs.literal_prefix(pattern))
            needle = _needle(pattern)
            if needle:  # a substring test in C first: an unanchored pattern would scan every path
                candidates = [p for p in candidates if needle in p]
            found = self._by_pattern[pattern] = (negated, frozenset(p for p in candidates if match(p)))
        return found

    def plain(self, pattern: str) -> tuple[bool, frozenset[str]] | None:
        """:meth:`matching` of a pattern already matched, or of one of the commonest shapes (an optional ``!``,
        an anchored literal path of two or more plain components, then nothing, ``/``, ``/*`` or ``/**``), which
        are always valid patterns; ``None`` for any other pattern, without validating it."""
        found = self._by_pattern.get(pattern)
        if found is None:
            plain = _PLAIN.fullmatch(pattern)
            if plain is None:
                return None
            found = self._by_pattern[pattern] = (plain[1] == "!", self._plain(plain[2], plain[3]))
        return found

    def _plain(self, literal: str, tail: str | None) -> frozenset[str]:
        """What ``globs`` matches for an anchored literal path ``literal`` followed by ``tail``: the file itself
        and everything below it ('' tail), only what is below it (``/``, ``/*`` or ``/**``)."""
        paths = self._paths
        i = bisect.bisect_left(paths, literal)
        exact = not tail and i < len(paths) and paths[i] == literal
        prefix = literal + "/"
        start = bisect.bisect_left(paths, prefix, i)  # what is below sorts after the literal itself
        if start == len(paths) or not paths[start].startswith(prefix):  # a file (or nothing): none below
            return frozenset((literal,)) if exact else frozenset()
        below = paths[start : bisect.bisect_left(paths, prefix + "\U0010ffff", start)]
        return frozenset((literal, *below) if exact else below)

    def _candidates(self, prefix: str) -> Sequence[str]:
        if not prefix:
            return self._paths
        start = bisect.bisect_left(self._paths, prefix)
        end = bisect.bisect_left(self._paths, prefix + "\U0010ffff")
        return self._paths[start:end]


def combine(parts: Sequence[tuple[bool, frozenset[str]]]) -> frozenset[str]:
    """The scope whose patterns, in order, have the :meth:`ScopeIndex.matching` results ``parts``: each adds the
    paths it matches, or a ``!`` pattern removes them."""
    if len(parts) == 1:  # the commonest scope: one pattern, nothing to combine
        negated, matching = parts[0]
        return frozenset() if negated else matching
    if not any(negated for negated, _ in parts):  # no exception: one union in C
        return frozenset().union(*[matching for _, matching in parts])
    selected: set[str] = set()
    for negated, matching in parts:
        if negated:
            selected -= matching
        else:
            selected |= matching
    return frozenset(selected)


def _needle(pattern: str) -> str:
    """The longest run of literal characters inside one component of ``pattern``, which every path it matches
    contains ('' when unsure: escapes, brackets, spaces or non-ASCII text, where the text may be rewritten)."""
    body = pattern.removeprefix("!")
    if not body.isascii() or any(c in body for c in "\\[ "):
        return ""
    return max(_RUNS.split(body), key=len)


_RUNS = lazy(r"[*?/]+")
# An optional '!', then an anchored path of at least two plain ASCII components (an optional leading '/'; none
# is '.' or '..'), then nothing, '/', '/*' or '/**'. For these, globs' matcher is: the path itself or anything
# below it; with a tail, only what is below it.
_PLAIN = lazy(r"(!?)/?((?!\.\.?/)[A-Za-z0-9_.-]+(?:/(?!\.\.?(?:/|$))[A-Za-z0-9_.-]+)+)(/|/\*|/\*\*)?", re.ASCII)
