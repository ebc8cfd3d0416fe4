"""Scope globs: gitignore semantics on repository-relative POSIX paths, via ``pathspec``.

Grammar (gitignore(5), as ``git check-ignore --no-index`` reads it): patterns are relative to the repository
root; a pattern with a ``/`` before its end is anchored there, one without matches at any depth; ``*`` and
``?`` stop at ``/``; a whole ``**`` component spans directories; a trailing ``/`` matches directories only, so
it matches the files below them; ``!`` re-includes, and the last matching pattern wins; unescaped trailing
spaces are dropped; a bracket expression ``[...]`` reads ``!``/``^`` negation, ``\\`` escapes and POSIX classes
(``[[:digit:]]``) as git's wildmatch does, and never matches ``/``. Matching is case-sensitive
(``core.ignorecase=false``) and on Unicode NFC, one character at a time (git compares bytes).

Changed paths are always files. The last pattern that matches the file or one of its parent directories
decides: the file is in scope unless that pattern starts with ``!``. One difference from git: git never
re-includes a file below a directory an earlier pattern matched, so of ``src/`` then ``!src/gen.py`` it keeps
``src/gen.py`` ignored, while here ``src/gen.py`` is out of scope.
"""

from __future__ import annotations

import bisect
import itertools
import string
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Any

from git_memzoi.core.paths import nfc
from git_memzoi.core.patterns import lazy
from git_memzoi.errors import InputError

_GLOB_CHARS = "*?[\\"
_CONTROL = lazy("[\x00-\x1f\x7f-\x9f]")
_GLOB = lazy(r"[*?\[\\]")
_MAX_CHAR = 0x10FFFF
# git's character classes (sane_ctype: ASCII only), checked against `git check-ignore --no-index`.
_CLASSES = {
    "alnum": string.digits + string.ascii_letters,
    "alpha": string.ascii_letters,
    "blank": " \t",
    "cntrl": "".join(map(chr, range(32))) + "\x7f",
    "digit": string.digits,
    "graph": "".join(map(chr, range(33, 127))),
    "lower": string.ascii_lowercase,
    "print": "".join(map(chr, range(32, 127))),
    "punct": string.punctuation,
    "space": " \t\n\r",
    "upper": string.ascii_uppercase,
    "xdigit": string.hexdigits,
}


class ScopeError(InputError):
    """A scope pattern that can never mean what its author wanted (exit 2, code ``bad_scope``)."""

    default_code = "bad_scope"


def pattern_problem(pattern: object) -> str | None:
    """Return why ``pattern`` is not a valid scope glob, or ``None`` when it is (see :func:`_problem`)."""
    if not isinstance(pattern, str):
        return "a scope pattern must be a string"
    if _SIMPLE.fullmatch(pattern) and not pattern.startswith("#"):
        return None
    return _problem(pattern)


# Plain name characters, `*` and `/` between non-empty components that are not `.` or `..`: always valid.
_SIMPLE = lazy(r"!?/?(?:(?!\.\.?(?:/|$))[\w.*-]+/)*(?!\.\.?/?$)[\w.*-]+/?")


@cache
def _problem(pattern: str) -> str | None:
    """Return why ``pattern`` is not a valid scope glob, or ``None`` when it is.

    Rejected: non-strings, empty or blank patterns, comments (``#``), control characters, a lone ``!``,
    ``..`` components (a scope never leaves the repository), patterns git never matches with (``/``, an empty
    or ``.`` component, an unterminated ``[``, an unknown ``[:class:]``, a bracket of only ``/``), and anything
    ``pathspec`` cannot compile.
    """
    if not isinstance(pattern, str):
        return "a scope pattern must be a string"
    body = pattern[1:] if pattern.startswith("!") else pattern
    if not body.strip():
        return "empty pattern"
    if pattern.startswith("#"):
        return "starts with '#', which gitignore reads as a comment (write \\# for a literal #)"
    if _CONTROL.search(pattern):
        return "contains a control character"
    parts = body.strip().removeprefix("/").removesuffix("/").split("/")
    if ".." in parts:
        return "contains a '..' component; scopes are relative to the repository root"
    if "" in parts or "." in parts:  # git compares paths as they are: `/`, `a//b`, `./a` match nothing
        return "contains an empty or '.' path component, which matches no path"
    try:
        _compile(_positive(pattern))
    except Exception as exc:  # pathspec raises several types for malformed patterns
        return f"not a valid gitignore pattern ({exc})"
    return None


def _normalise(pattern: str) -> str:
    """Rewrite the positive ``pattern`` (no leading ``!``) so that pathspec reads it as git does.

    Raises:
        ValueError: for a bracket expression git never matches (unterminated, unknown class, no character).
    """
    pattern = _brackets(_trim_spaces(nfc(pattern)))
    # pathspec reads `foo/**/` as matching foo's own files; git matches only directories below foo
    # (field report BR-16). For files, "some directory below foo" is the same as `foo/*/`.
    if pattern.endswith("**/"):
        head = pattern[: -len("**/")]
        if head == "" or head.endswith("/"):
            return head + "*/"
    return pattern


def _trim_spaces(pattern: str) -> str:
    # git drops trailing spaces unless the last one is escaped (`a\  ` is `a\ `); pathspec rejects that form
    stripped = pattern.rstrip(" ")
    if stripped != pattern and (len(stripped) - len(stripped.rstrip("\\"))) % 2 == 1:
        stripped += " "
    return stripped


def _brackets(pattern: str) -> str:
    """Rewrite the bracket expressions and star runs of ``pattern`` into forms pathspec reads as git does.

    pathspec copies a bracket's text into a regex: it ignores ``\\`` escapes and POSIX classes there, and its
    ``[^...]`` also matches ``/``; the replacement lists the set's characters explicitly, without ``/``. git reads
    a run of three or more ``*`` like ``**``; pathspec reads it as ``*``.
    """
    if "[" not in pattern and "***" not in pattern:
        return pattern
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
        elif pattern[i] == "[":
            ranges, i = _bracket(pattern, i)
            out.append(_bracket_text(ranges))
        elif pattern.startswith("**", i):
            out.append("**")
            while pattern.startswith("*", i):
                i += 1
        else:
            out.append(pattern[i])
            i += 1
    result = "".join(out)
    if _anchored(pattern) and not _anchored(result):  # its only '/' was inside a bracket
        result = "/" + result
    return result


def _anchored(pattern: str) -> bool:
    return "/" in pattern.removesuffix("/")


def _bracket(pattern: str, start: int) -> tuple[list[tuple[int, int]], int]:
    """Read the bracket expression at ``pattern[start]`` as git's wildmatch does.

    Returns:
        (ranges, end): the code-point ranges it matches ('/' included when listed), and the index past its ``]``.
    """
    i = start + 1
    negated = pattern[i : i + 1] in ("!", "^")
    i += negated
    ranges: list[tuple[int, int]] = []
    prev: str | None = None  # the last single character, which a following '-' makes a range start
    first = True
    while True:
        if i >= len(pattern):
            raise ValueError("unterminated '[' (write \\[ for a literal [)")
        ch = pattern[i]
        if ch == "]" and not first:
            break
        first = False
        if ch == "\\" and i + 1 < len(pattern):
            i += 1
            prev = pattern[i]
            ranges.append((ord(prev), ord(prev)))
        elif ch == "-" and prev is not None and pattern[i + 1 : i + 2] not in ("", "]"):
            i += 1
            if pattern[i] == "\\" and i + 1 < len(pattern):
                i += 1
            ranges.append((ord(prev), ord(pattern[i])))  # empty when reversed, as in git
            prev = None
        elif ch == "[" and pattern[i + 1 : i + 2] == ":":
            close = pattern.find("]", i + 2)
            if close < 0:
                raise ValueError("unterminated '[' (write \\[ for a literal [)")
            name = pattern[i + 2 : close]
            if not name.endswith(":"):  # not a class: a literal '['
                prev = "["
                ranges.append((ord(prev), ord(prev)))
            else:
                if name[:-1] not in _CLASSES:
                    raise ValueError(f"unknown character class [:{name}]")
                ranges += [(ord(c), ord(c)) for c in _CLASSES[name[:-1]]]
                prev = None
                i = close
        else:
            prev = ch
            ranges.append((ord(ch), ord(ch)))
        i += 1
    merged = _merge(ranges)
    if negated:
        bounds = [(0, 0), *merged, (_MAX_CHAR + 1, _MAX_CHAR + 1)]
        merged = [(a[1] + 1, b[0] - 1) for a, b in itertools.pairwise(bounds) if a[1] + 1 <= b[0] - 1]
    return merged, i + 1


def _merge(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(r for r in ranges if r[0] <= r[1]):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _bracket_text(ranges: list[tuple[int, int]]) -> str:
    """A bracket expression for the characters in ``ranges`` (minus '/') that pathspec copies verbatim.

    pathspec ends a bracket at its first ``]`` unless it comes first, reads a leading ``!`` or ``^`` as negation
    and regex reads ``-`` as a range: those three are listed first (``]``) or last, never as range ends.
    """
    special = {ord(c): c for c in "]/!^-"}
    plain: list[tuple[int, int]] = []
    for lo, hi in ranges:
        cuts = [c for c in sorted(special) if lo <= c <= hi]
        for c in cuts:
            plain.append((lo, c - 1))
            lo = c + 1
        plain.append((lo, hi))
    inside = {c for c in "]!^-" if any(lo <= ord(c) <= hi for lo, hi in ranges)}
    plain = [(lo, hi) for lo, hi in plain if lo <= hi]
    text = "".join(chr(lo) if hi == lo else chr(lo) + "-" * (hi > lo + 1) + chr(hi) for lo, hi in plain)
    size = sum(hi - lo + 1 for lo, hi in plain) + len(inside)
    if size == 0:
        raise ValueError("a bracket expression that matches no character ('/' never matches)")
    if size == 1:
        return "\\" + (text or inside.pop())
    lead = "]" if "]" in inside else ""
    tail = "".join(c for c in "!^" if c in inside)
    if not lead and not text and tail:  # a leading '!' or '^' would negate
        if "-" not in inside:
            raise ValueError("a bracket expression of only '!' and '^' (write two patterns)")
        return f"[-{tail}]"
    return f"[{lead}{text}{tail}{'-' if '-' in inside else ''}]"


def _positive(pattern: str) -> str:
    """``pattern`` without its ``!``: what it matches (a further leading ``!`` or ``#`` is literal, as in git)."""
    if not pattern.startswith("!"):
        return pattern
    body = pattern[1:]
    return "\\" + body if body.startswith(("!", "#")) else body


@cache
def _compile(pattern: str) -> Callable[[str], bool]:
    """A matcher for one positive pattern: plain string tests for the common shapes, pathspec for the rest.

    Compiling a pathspec regex costs about 0.2 ms, and a store has hundreds of distinct patterns; literal
    paths, ``dir/**``, ``dir/*`` and ``*.ext`` (each with or without a trailing ``/``) need no regex.
    """
    fast = _fast_matcher(pattern)
    if fast is not None:
        return fast
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([_normalise(pattern)]).match_file


def _fast_matcher(pattern: str) -> Callable[[str], bool] | None:
    pattern = nfc(pattern)
    if pattern != pattern.rstrip(" ") or pattern.startswith(("#", "!")) or "\\" in pattern:
        return None
    dir_only = pattern.endswith("/")
    body = pattern.rstrip("/") if dir_only else pattern
    anchored = "/" in body
    for suffix in ("/**", "/*"):
        if anchored and body.endswith(suffix) and not _has_glob(body[: -len(suffix)]) and not dir_only:
            below = body[: -len(suffix)].lstrip("/") + "/"
            return lambda path: path.startswith(below)
    if _has_glob(body):
        if anchored:
            return _star_leaf_matcher(body.lstrip("/"), dir_only)
        if not body.startswith("*") or _has_glob(body[1:]):
            return None
        ending = body[1:] + "/"  # `*.ext`: some component ends with `.ext` (`*` stops at `/`)
        if dir_only:
            return lambda path: ending in path
        return lambda path: ending in path + "/"
    if anchored:
        literal = body.lstrip("/")
        below = literal + "/"
        if dir_only:
            return lambda path: path.startswith(below)
        return lambda path: path == literal or path.startswith(below)
    if dir_only:
        return lambda path: body in path.split("/")[:-1]
    return lambda path: body in path.split("/")


def _star_leaf_matcher(body: str, dir_only: bool) -> Callable[[str], bool] | None:
    """``dir/sub/name*part*.ext``: literal directories, then one component whose only wildcard is ``*``.

    The component at that depth must match (``*`` never crosses ``/``); whatever lies below it is in scope,
    as below any matched directory. ``None`` for any other shape.
    """
    head, _, leaf = body.rpartition("/")
    if not head or _has_glob(head) or "**" in leaf or _GLOB.search(leaf.replace("*", "")):
        return None
    prefix = head + "/"
    depth = head.count("/") + 1
    first, *middle, last = leaf.split("*")
    needed = depth + 2 if dir_only else depth + 1

    def match(path: str) -> bool:
        if not path.startswith(prefix):
            return False
        parts = path.split("/", depth + 1)
        if len(parts) < needed:
            return False
        name = parts[depth]
        if len(name) < len(first) + len(last) or not name.startswith(first) or not name.endswith(last):
            return False
        at, end = len(first), len(name) - len(last)
        for piece in middle:
            at = name.find(piece, at, end)
            if at < 0:
                return False
            at += len(piece)
        return True

    return match


def _has_glob(text: str) -> bool:
    return _GLOB.search(text) is not None


def matcher(pattern: str) -> tuple[bool, Callable[[str], bool]]:
    """For one valid scope pattern: whether it is a ``!`` pattern, and what its positive form matches.

    The matcher takes a repository-relative POSIX path in NFC and is True when that file, or one of its
    parent directories, matches.
    """
    return pattern.startswith("!"), _compile(_positive(pattern))


def literal_prefix(pattern: str) -> str:
    """The prefix every path matched by ``pattern``'s positive form starts with ('' when unanchored)."""
    return _literal_prefix(nfc(_positive(pattern)))


def _literal_prefix(pattern: str) -> str:
    """The directory prefix every path matched by a positive ``pattern`` starts with ('' when unanchored)."""
    text = pattern.rstrip(" ")
    if text.startswith("**/") or "/" not in text.rstrip("/"):
        return ""  # matches at any depth
    text = text.lstrip("/")
    first_glob = _GLOB.search(text)
    return text[: first_glob.start()] if first_glob else text


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
        self._specs: list[tuple[bool, Any]] | None = None

    def matches(self, path: str) -> bool:
        """True when the file ``path`` (repository-relative POSIX) is in scope."""
        if self._specs is None:
            # one spec per pattern: GitIgnoreSpec's own combination lets a file-level match outrank a later
            # `!` that matches a parent directory, which is not "the last matching pattern wins"
            self._specs = [(p.startswith("!"), _compile(_positive(p))) for p in reversed(self.patterns)]
        path = nfc(path)
        for negated, spec in self._specs:
            if spec(path):
                return not negated
        return False

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
