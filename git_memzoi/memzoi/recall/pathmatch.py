"""Path binding between a record's ``applies_to`` paths and a requested path (memzoi-spec.md §4, §5; pure).

Paths are repository-relative POSIX strings. The only glob is a trailing ``/**`` ("this folder and everything
below it"); any other character is literal. A record path matches a request when either one contains the other:
an ancestor folder, a descendant file, or the same path. The §5 path score ranks how close the binding is.
"""

from __future__ import annotations

from collections.abc import Iterable

GLOB = "/**"
EXACT, GLOB_CONTAINS, ANCESTOR, DESCENDANT, NONE = 5, 4, 3, 2, 0


def _clean(path: str) -> str:
    return path.strip().rstrip("/")


def _under(path: str, base: str) -> bool:
    """``path`` equals ``base`` or lies below it (a prefix followed by ``/``)."""
    return path == base or path.startswith(base + "/")


def path_matches_request(stored: str, requested: str) -> bool:
    """Whether a record path ``stored`` binds to the ``requested`` path (memzoi-spec.md §4).

    Both are trimmed and lose trailing ``/``; an empty one never matches. A ``/**`` side contains its base and
    everything below; otherwise an ancestor or a descendant of the request matches, as does the path itself.
    """
    return path_score(stored, requested) > NONE


def path_score(stored: str, requested: str) -> int:
    """How ``stored`` binds to ``requested`` (memzoi-spec.md §5): exact 5; a ``/**`` glob on either side that
    contains the other 4; ``stored`` an ancestor of the request 3; ``stored`` a descendant of it 2; else 0."""
    stored, requested = _clean(stored), _clean(requested)
    if not stored or not requested:
        return NONE
    if stored == requested:
        return EXACT
    if stored.endswith(GLOB):
        return GLOB_CONTAINS if _under(requested, stored[: -len(GLOB)]) else NONE
    if requested.endswith(GLOB):
        return GLOB_CONTAINS if _under(stored, requested[: -len(GLOB)]) else NONE
    if _under(requested, stored):
        return ANCESTOR
    if _under(stored, requested):
        return DESCENDANT
    return NONE


def best_path(paths: Iterable[str], requested: str | None) -> tuple[int, str | None]:
    """The best (score, path) of ``paths`` for ``requested``; ties go to the smaller path string.

    Returns ``(0, None)`` when no path matches or no path was requested.
    """
    if not requested:
        return NONE, None
    best: tuple[int, str | None] = (NONE, None)
    for path in sorted(paths):
        score = path_score(path, requested)
        if score > best[0]:
            best = (score, path)
    return best


def citation_path(paths: Iterable[str], requested: str | None) -> str | None:
    """The path a citation names (memzoi-spec.md §4): the first stored path, in ascending order, that matches
    ``requested``; else the first path; else ``None``."""
    ordered = sorted(paths)
    if requested:
        for path in ordered:
            if path_matches_request(path, requested):
                return path
    return ordered[0] if ordered else None


def scope_score(patterns: Iterable[str], requested: str | None) -> tuple[int, str | None]:
    """How a memkeep entry's ``scope`` globs cover ``requested`` (git's wildmatch rules, as memkeep reads them:
    :mod:`git_memzoi.core.globs`), and the pattern that does: the same literal path 5; a glob matching it (or a
    folder above it) 4, unless a later ``!`` pattern takes it out; a pattern naming something below a requested
    folder 2 (``src/`` covers an entry scoped to ``src/http/**``); else ``(0, None)``. Invalid patterns never match.
    """
    from git_memzoi.core.globs import literal_prefix, matcher, pattern_problem

    base = _clean(requested or "")
    base = base[: -len(GLOB)] if base.endswith(GLOB) else base
    if not base or base == ".":  # as for records: the repository root binds nothing
        return NONE, None
    valid = [p for p in patterns if pattern_problem(p) is None]
    best: str | None = None
    for pattern in valid:
        negated, match = matcher(pattern)
        if match(base):
            best = None if negated else pattern
    if best is not None:
        return (EXACT if best.strip("/") == base else GLOB_CONTAINS), best
    for pattern in sorted(valid):
        prefix = literal_prefix(pattern).rstrip("/")
        if not pattern.startswith("!") and _under(prefix, base) and prefix != base:
            return DESCENDANT, pattern
    return NONE, None


def scope_covers(stored: str, requested: str) -> bool:
    """Whether the one scope glob ``stored`` covers ``requested`` (:func:`scope_score` of that pattern alone)."""
    return scope_score([stored], requested)[0] > NONE
