"""Compact reads of one memory's file (issue 18; seed vault-memory "Compact v2 context"): a projection, heading
paths and one character budget over all excerpts (pure: bytes in, slices out).

Rules, as vault-memory defines them:

- ``metadata`` returns no body text (a body budget of zero): the body is listed in ``excluded``.
- ``full`` returns the body as one slice; without ``max_chars`` it is whole (the previous ``show`` response),
  with it the slice is cut to the budget.
- ``sections`` returns the sections named by heading paths (required: none given is ``invalid_projection``),
  each with its nested subsections, in the order asked; the budget defaults to :data:`SECTION_BUDGET`.
- One budget, counted in UTF-16 code units, covers every excerpt; a cut never splits a surrogate pair (an emoji).
  A nonempty excerpt the budget has no room left for (``max_chars`` 0 included) is ``excluded``, not returned
  empty. ``budget_used`` is the sum of the excerpts' lengths; ``truncated`` says the budget cut or excluded
  something (a metadata projection's body is excluded by the projection, not truncated).
- Every slice (and every excluded excerpt) carries the byte offsets ``[start_byte, end_byte)`` and the 1-based,
  inclusive line range ``start_line..end_line`` of its complete source range in the whole file, even when its
  text is cut; ``original_chars`` is that range's length in UTF-16 code units.
- Headings are ATX headings (``#`` to ``######``) outside fenced code blocks; Setext headings are not
  recognised. A heading path is the titles from the outermost heading down (``["Use pnpm", "Context"]``;
  ``Use pnpm/Context`` on the command line, ``\\/`` for a slash inside a title). A path naming no heading is
  ``target_not_found``, one naming several is ``ambiguous_target``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from git_memzoi.core.markdown import atx_heading
from git_memzoi.core.patterns import lazy
from git_memzoi.errors import InputError

PROJECTIONS = ("metadata", "sections", "full")
SECTION_BUDGET = 6000  # UTF-16 code units, the seed's default for a section projection
MAX_LISTED = 10  # heading paths a target_not_found message names

_FENCE = lazy(r" {0,3}(`{3,}|~{3,})(.*)$")
_LINE = lazy(rb"[^\n]*\n|[^\n]+")


class InvalidProjection(InputError):
    """A bad projection or selection (an unknown projection, sections without heading paths, heading paths with
    another projection, an empty heading path) (exit 2)."""

    default_code = "invalid_projection"


class HeadingNotFound(InputError):
    """A heading path that names no heading of the file (exit 2)."""

    default_code = "target_not_found"


class AmbiguousHeading(InputError):
    """A heading path that names several headings of the file (exit 2)."""

    default_code = "ambiguous_target"


@dataclass(frozen=True)
class Heading:
    """One ATX heading: its ``level`` (1-6), ``path`` (titles from the outermost heading down) and the section it
    opens, ``[start, end)`` in bytes of the whole file (up to the next heading of the same or a higher level)."""

    level: int
    path: tuple[str, ...]
    start: int
    end: int


@dataclass(frozen=True)
class Slice:
    """One excerpt: ``heading_path`` (``None``: the whole body), the source range in the whole file (bytes
    ``[start_byte, end_byte)``, lines ``start_line..end_line``, 1-based), ``text`` (the range's text, cut to the
    budget), ``original_chars`` (the range in UTF-16 code units) and ``truncated``; ``reason`` only on an excluded
    excerpt (``metadata_projection`` or ``budget_exhausted``)."""

    heading_path: tuple[str, ...] | None
    start_byte: int
    end_byte: int
    start_line: int
    end_line: int
    text: str
    original_chars: int
    truncated: bool
    reason: str | None = None

    @property
    def chars(self) -> int:
        """The returned text's length in UTF-16 code units (its share of the budget)."""
        return units(self.text)

    def to_json(self) -> dict[str, Any]:
        """The slice as ``show --json`` prints it (an excluded one without ``text`` and ``truncated``)."""
        out: dict[str, Any] = {
            "heading_path": None if self.heading_path is None else list(self.heading_path),
            "start_byte": self.start_byte,
            "end_byte": self.end_byte,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "original_chars": self.original_chars,
        }
        if self.reason is not None:
            return {**out, "reason": self.reason}
        return {**out, "text": self.text, "truncated": self.truncated}


@dataclass(frozen=True)
class Compact:
    """A projection of one file: its ``slices`` and ``excluded`` excerpts, the budget (``budget_limit``:
    ``None`` when unlimited), ``budget_used`` (UTF-16 code units), ``truncated``, and the whole file's size and
    SHA-256 (the source hash describes the full document, whatever was cut)."""

    projection: str
    slices: tuple[Slice, ...]
    excluded: tuple[Slice, ...]
    budget_limit: int | None
    budget_used: int
    truncated: bool
    file_bytes: int
    file_lines: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        """The ``context`` object of ``show --json``."""
        return {
            "projection": self.projection,
            "slices": [s.to_json() for s in self.slices],
            "excluded": [s.to_json() for s in self.excluded],
            "budget_limit": self.budget_limit,
            "budget_used": self.budget_used,
            "truncated": self.truncated,
            "source": {"bytes": self.file_bytes, "lines": self.file_lines, "sha256": self.sha256},
        }


def parse_heading_path(text: str) -> tuple[str, ...]:
    """``"Use pnpm/Context"`` → ``("Use pnpm", "Context")``; ``\\/`` is a slash inside a title, each title is
    stripped. Raises :class:`InvalidProjection` for an empty path or an empty title."""
    parts = [p.replace("\0", "/").strip() for p in text.replace("\\/", "\0").split("/")]
    if not text.strip() or any(not p for p in parts):
        raise InvalidProjection(f"heading path {text!r} has an empty title (write Title/Subtitle)")
    return tuple(parts)


def units(text: str) -> int:
    """``text``'s length in UTF-16 code units (the budget's unit)."""
    return len(text.encode("utf-16-le")) // 2


def clip(text: str, budget: int) -> str:
    """The longest prefix of ``text`` of at most ``budget`` UTF-16 code units that splits no surrogate pair."""
    raw = text.encode("utf-16-le")[: 2 * max(budget, 0)]
    if len(raw) >= 2 and 0xD8 <= raw[-1] <= 0xDB:  # a lone high surrogate: drop it with its pair
        raw = raw[:-2]
    return raw.decode("utf-16-le")


def headings(data: bytes, body_start: int) -> list[Heading]:
    """The ATX headings of ``data[body_start:]`` (outside fenced code blocks), in file order, with their
    sections' byte ranges in ``data``. Setext headings are not recognised."""
    found: list[tuple[int, str, int]] = []  # (level, title, start byte)
    fence: tuple[str, int] | None = None
    offset = body_start
    for raw in _LINE.findall(data[body_start:]):
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        fenced = _FENCE.match(line)
        if fence is not None:
            if fenced and fenced.group(1)[0] == fence[0] and len(fenced.group(1)) >= fence[1]:
                fence = None if not fenced.group(2).strip() else fence
        elif fenced and not (fenced.group(1)[0] == "`" and "`" in fenced.group(2)):
            fence = (fenced.group(1)[0], len(fenced.group(1)))
        elif heading := atx_heading(line):
            found.append((*heading, offset))
        offset += len(raw)
    out: list[Heading] = []
    stack: list[tuple[int, str]] = []
    for i, (level, title, start) in enumerate(found):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = next((s for lv, _t, s in found[i + 1 :] if lv <= level), len(data))
        out.append(Heading(level, tuple(t for _lv, t in stack), start, end))
    return out


def project(
    data: bytes,
    body_start: int,
    projection: str,
    heading_paths: Sequence[Sequence[str]] = (),
    max_chars: int | None = None,
) -> Compact:
    """The ``projection`` of the file ``data`` whose body starts at byte ``body_start`` (module docstring rules).

    Args:
        heading_paths: for ``sections``: the heading paths to return (a repeated path is returned once).
        max_chars: the one budget in UTF-16 code units (``None``: the projection's default; must be >= 0).

    Raises:
        InvalidProjection: an unknown projection, sections without heading paths, heading paths with another
            projection, a negative budget.
        HeadingNotFound, AmbiguousHeading: a heading path naming no heading or several.
    """
    paths = validate(projection, heading_paths, max_chars)
    ranges: list[tuple[tuple[str, ...] | None, int, int]]
    if projection == "sections":
        ranges = [(path, *_section(data, body_start, path)) for path in paths]
        limit: int | None = SECTION_BUDGET if max_chars is None else max_chars
    else:
        ranges = [(None, body_start, len(data))] if len(data) > body_start else []
        limit = 0 if projection == "metadata" else max_chars
    reason = "metadata_projection" if projection == "metadata" else "budget_exhausted"
    return _budgeted(data, projection, ranges, limit, reason)


def validate(projection: str, heading_paths: Sequence[Sequence[str]], max_chars: int | None) -> list[tuple[str, ...]]:
    """The distinct heading paths of a valid selection, in the order given (:func:`project`'s rules).

    Raises:
        InvalidProjection: an unknown projection, sections without heading paths, heading paths with another
            projection, an empty path or title, a negative budget.
    """
    if projection not in PROJECTIONS:
        raise InvalidProjection(f"projection must be one of {', '.join(PROJECTIONS)}, not {projection!r}")
    if max_chars is not None and max_chars < 0:
        raise InvalidProjection("max_chars must be 0 or more")
    if any(not p or any(not isinstance(t, str) or not t for t in p) for p in heading_paths):
        raise InvalidProjection("a heading path is a list of nonempty titles")
    paths = list(dict.fromkeys(tuple(p) for p in heading_paths))
    if projection == "sections" and not paths:
        raise InvalidProjection("the sections projection needs at least one heading path")
    if projection != "sections" and paths:
        raise InvalidProjection(f"heading paths select sections: use the sections projection, not {projection}")
    return paths


def _section(data: bytes, body_start: int, path: tuple[str, ...]) -> tuple[int, int]:
    found = headings(data, body_start)
    hits = [h for h in found if h.path == path]
    if not hits:
        known = list(dict.fromkeys(_shown(h.path) for h in found if all(h.path)))
        listed = ", ".join(known[:MAX_LISTED]) + (", ..." if len(known) > MAX_LISTED else "")
        raise HeadingNotFound(
            f"no heading {_shown(path)!r}: give the titles from the outermost heading down"
            + (f" ({listed})" if listed else " (the body has no headings)")
        )
    if len(hits) > 1:
        lines = ", ".join(str(_line_of(data, h.start)) for h in hits)
        raise AmbiguousHeading(f"heading {_shown(path)!r} names {len(hits)} sections (lines {lines})")
    return hits[0].start, hits[0].end


def _budgeted(
    data: bytes,
    projection: str,
    ranges: Sequence[tuple[tuple[str, ...] | None, int, int]],
    limit: int | None,
    reason: str,
) -> Compact:
    slices: list[Slice] = []
    excluded: list[Slice] = []
    left = limit
    for path, start, end in ranges:
        whole = data[start:end].decode("utf-8")
        size = units(whole)
        text = whole if left is None else clip(whole, left)
        first = _line_of(data, start)
        last = first + data[start : end - 1].count(b"\n")
        if size and not text:
            excluded.append(Slice(path, start, end, first, last, "", size, True, reason))
            continue
        slices.append(Slice(path, start, end, first, last, text, size, text != whole))
        if left is not None:
            left -= units(text)
    used = sum(units(s.text) for s in slices)
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    return Compact(
        projection=projection,
        slices=tuple(slices),
        excluded=tuple(excluded),
        budget_limit=limit,
        budget_used=used,
        truncated=any(s.reason == "budget_exhausted" for s in excluded) or any(s.truncated for s in slices),
        file_bytes=len(data),
        file_lines=lines,
        sha256=hashlib.sha256(data).hexdigest(),
    )


def _shown(path: Sequence[str]) -> str:
    """A heading path as ``--heading`` takes it (``Title/Section``, a slash in a title as ``\\/``)."""
    return "/".join(t.replace("/", "\\/") for t in path)


def _line_of(data: bytes, offset: int) -> int:
    """The 1-based line of the byte at ``offset``."""
    return data.count(b"\n", 0, offset) + 1
