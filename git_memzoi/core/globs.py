"""Scope globs: gitignore semantics on repository-relative POSIX paths, via ``pathspec``.

Grammar (gitignore(5), as ``git check-ignore --no-index`` reads it): patterns are relative to the repository
root; a pattern with a ``/`` before its end is anchored there, one without matches at any depth; ``*`` and
``?`` stop at ``/``; a whole ``**`` component spans directories; a trailing ``/`` matches directories only, so
it matches the files below them; ``!`` re-includes, and the last matching pattern wins; unescaped trailing
spaces are dropped. Matching is case-sensitive (``core.ignorecase=false``) and on Unicode NFC.

Changed paths are always files. A file matches when it, or one of its parent directories, matches.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from functools import lru_cache

from git_memzoi.core.paths import nfc
from git_memzoi.errors import InputError

_GLOB_CHARS = "*?[\\"


class ScopeError(InputError):
    """A scope pattern that can never mean what its author wanted (exit 2, code ``bad_scope``)."""

    default_code = "bad_scope"


def pattern_problem(pattern: object) -> str | None:
    """Return why ``pattern`` is not a valid scope glob, or ``None`` when it is.

    Rejected: non-strings, empty or blank patterns, comments (``#``), control characters, a lone ``!``,
    ``..`` components (a scope never leaves the repository), and anything ``pathspec`` cannot compile.
    """
    if not isinstance(pattern, str):
        return "a scope pattern must be a string"
    body = pattern[1:] if pattern.startswith("!") else pattern
    if not body.strip():
        return "empty pattern"
    if pattern.startswith("#"):
        return "starts with '#', which gitignore reads as a comment (write \\# for a literal #)"
    if any(ord(ch) < 32 for ch in pattern):
        return "contains a control character"
    if ".." in body.strip().strip("/").split("/"):
        return "contains a '..' component; scopes are relative to the repository root"
    try:
        _compile((pattern,))
    except Exception as exc:  # pathspec raises several types for malformed patterns
        return f"not a valid gitignore pattern ({exc})"
    return None


def _normalise(pattern: str) -> str:
    # pathspec reads `foo/**/` as matching foo's own files; git matches only directories below foo
    # (field report BR-16). For files, "some directory below foo" is the same as `foo/*/`.
    pattern = nfc(pattern)
    if pattern.rstrip(" ").endswith("**/"):
        stripped = pattern.rstrip(" ")
        head = stripped[: -len("**/")]
        if head == "" or head.endswith("/") or head == "!":
            return head + "*/"
    return pattern


@lru_cache(maxsize=4096)
def _compile(patterns: tuple[str, ...]):  # type: ignore[no-untyped-def]
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([_normalise(p) for p in patterns])


def _literal_prefix(pattern: str) -> str:
    """The directory prefix every path matched by a positive ``pattern`` starts with ('' when unanchored)."""
    text = pattern.rstrip(" ")
    if text.startswith("**/") or "/" not in text.rstrip("/"):
        return ""  # matches at any depth
    text = text.lstrip("/")
    cut = min((i for i, ch in enumerate(text) if ch in _GLOB_CHARS), default=len(text))
    return text[:cut]


class Scope:
    """A compiled scope: an ordered list of gitignore-style patterns.

    Args:
        patterns: the entry's ``scope`` list; validate each with :func:`pattern_problem` first.

    Raises:
        ScopeError: when a pattern is invalid.
    """

    def __init__(self, patterns: Sequence[str]) -> None:
        for pattern in patterns:
            problem = pattern_problem(pattern)
            if problem:
                raise ScopeError(f"scope pattern {pattern!r}: {problem}")
        self.patterns = tuple(patterns)
        positives = [nfc(p) for p in self.patterns if not p.startswith("!")]
        self._prefixes = sorted({_literal_prefix(p) for p in positives})
        self._spec = None

    def matches(self, path: str) -> bool:
        """True when the file ``path`` (repository-relative POSIX) is in scope."""
        if self._spec is None:
            self._spec = _compile(self.patterns)
        return bool(self._spec.match_file(nfc(path)))

    def select(self, sorted_paths: Sequence[str]) -> list[str]:
        """Return the paths of ``sorted_paths`` (sorted, NFC) that are in scope, in order.

        Only paths under a positive pattern's literal prefix are tested, so a narrow scope costs a bisect,
        not a scan of every changed file.
        """
        if not self._prefixes:
            return []
        if self._prefixes[0] == "":
            candidates: Iterable[str] = sorted_paths
        else:
            candidates = _under_prefixes(sorted_paths, self._prefixes)
        return [p for p in candidates if self.matches(p)]


def _under_prefixes(sorted_paths: Sequence[str], prefixes: Sequence[str]) -> list[str]:
    seen: set[int] = set()
    for prefix in prefixes:
        i = bisect.bisect_left(sorted_paths, prefix)
        while i < len(sorted_paths) and sorted_paths[i].startswith(prefix):
            seen.add(i)
            i += 1
    return [sorted_paths[i] for i in sorted(seen)]
