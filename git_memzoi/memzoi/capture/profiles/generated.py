"""The tool's own exports inside a capture source (pure): the generated-projection header and the marker pairs
around the blocks ``integrate instructions`` and ``export --file`` write (memzoi-spec.md §9.5; issue 15).

Capture never offers them as candidates: the instruction profile and the markdown profile (1.1.0) skip a whole
generated projection and leave every generated block out of their sections.
"""

from __future__ import annotations

from git_memzoi.memzoi import export

# the first line of a generated projection file (upstream's and this project's export use the same text)
GENERATED_HEADER = export.GENERATED
# (begin, end) line pairs around generated blocks: ``integrate instructions`` and ``export --file``
MARKER_PAIRS = (
    (export.INTEGRATE_START, export.INTEGRATE_END),
    *((export.begin_marker(fmt), export.end_marker(fmt)) for fmt in ("agents-md", "claude-md")),
)


def is_projection(text: str) -> bool:
    """Whether ``text`` is a whole generated projection (its first text is :data:`GENERATED_HEADER`)."""
    return text.lstrip("\ufeff \t\r\n").startswith(GENERATED_HEADER)


def generated_blocks(text: str) -> list[tuple[int, int]] | None:
    """The ``(start, end)`` character ranges of the generated marker blocks of ``text`` (begin line through end
    line, its newline included), sorted and merged; ``None`` when a marker family has other than one begin line
    followed by one end line (malformed: the caller fails closed)."""
    lines, offset = [], 0
    for raw in text.split("\n"):
        lines.append((offset, min(offset + len(raw) + 1, len(text)), raw.strip()))
        offset += len(raw) + 1
    ranges = []
    for begin, end in MARKER_PAIRS:
        begins = [line for line in lines if line[2] == begin]
        ends = [line for line in lines if line[2] == end]
        if not begins and not ends:
            continue
        if len(begins) != 1 or len(ends) != 1 or begins[0][0] >= ends[0][0]:
            return None
        ranges.append((begins[0][0], ends[0][1]))
    merged: list[tuple[int, int]] = []
    for start, stop in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(stop, merged[-1][1]))
        else:
            merged.append((start, stop))
    return merged


def byte_ranges(text: str) -> list[tuple[int, int]] | None:
    """:func:`generated_blocks` as byte offsets of ``text`` encoded as UTF-8 (``None``: malformed markers)."""
    blocks = generated_blocks(text)
    if blocks is None:
        return None
    return [(len(text[:s].encode("utf-8")), len(text[:e].encode("utf-8"))) for s, e in blocks]
