"""How the ADR profile reads one record (pure): the parts of an ADR (title, status, fields) as byte ranges, for
both extractor versions (memzoi-spec.md §9.2, §9.3; the rules are in :mod:`~git_memzoi.memzoi.capture.profiles.adr`).

- :func:`read_v1` is upstream's 1.0.0 reading: the first heading ``# ADR: <title>``, level-2 field headings, one
  ``## Status`` section.
- :func:`read` is 1.1.0's: also the real templates (adr-tools / Nygard, MADR 2.x-4.x, log4brains): a numbered or
  plain title, an inline status line under the title, a YAML front-matter ``status:``, MADR's section names and its
  ``### Consequences`` subsections of the decision outcome.

Nothing here reads files: each reader takes the member's bytes and returns a :class:`Reading`, or ``None`` with the
line of an ``unsupported_adr_content`` diagnostic when the bytes are not an ADR.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from git_memzoi.core.patterns import lazy
from git_memzoi.memzoi.capture.profiles import markdown as md

V1_STATUSES = ("accepted", "adopted", "approved", "draft", "rejected", "superseded", "deprecated")
STATUSES = (*V1_STATUSES, "proposed")
# adr-tools-python writes "Superceded by"
STATUS_SPELLINGS = {"superceded": "superseded"}
# level-2 heading text (casefolded, trailing ':' and HTML comments dropped) → field; 1.0.0 knows the first block
V1_FIELDS = {
    "status": "status",
    "context": "context",
    "context and problem statement": "context",
    "decision": "decision",
    "decision outcome": "decision",
    "consequences": "consequences",
    "risk": "risk",
    "risks": "risk",
    "supersedes": "supersession",
    "superseded by": "supersession",
    "supersession": "supersession",
}
# MADR's and log4brains' other sections: known, never memories (1.1.0)
FIELDS = {
    **V1_FIELDS,
    "decision drivers": "drivers",
    "considered options": "options",
    "pros and cons of the options": "pros_and_cons",
    "links": "links",
    "validation": "validation",
    "more information": "more_information",
}
# level-3 headings of a decision field that are fields of their own (1.1.0): MADR's consequences, MADR 4's
# confirmation
SUBFIELDS = {
    "consequences": "consequences",
    "positive consequences": "consequences",
    "negative consequences": "consequences",
    "confirmation": "confirmation",
}
# a title's numbering: "ADR:", "ADR-0001:", "ADR 12:", "0001.", "1." (1.1.0)
TITLE_PREFIX = lazy(r"^(?:ADR(?:[- ]?\d+)?[ \t]*:|\d+[ \t]*\.)[ \t]*", re.IGNORECASE)
# an inline status line once list markers and bold/italic markers are dropped (1.1.0)
INLINE_STATUS = lazy(r"^status[ \t]*:[ \t]*(.*)$", re.IGNORECASE)
_LIST_MARKER = lazy(r"^ {0,3}[*+-][ \t]+")
_COMMENT = lazy(r"<!--.*?-->")
_FRONT_STATUS = lazy(rb"^status[ \t]*:[ \t]*(.*?)[ \t]*\r?$", re.IGNORECASE)


@dataclass(frozen=True)
class Part:
    """One cited part of an ADR: its field, bytes ``[start, end)``, 1-based first line, heading path and the text
    it says (a field's trimmed body, a status's value)."""

    field: str
    start: int
    end: int
    line: int
    heading_path: list[str]
    body: str


@dataclass
class Reading:
    """One ADR: its title line, candidate title (``ADR: <title>``), status parts and fields in document order, and
    the lines of its ``unsupported_adr_content`` diagnostics."""

    title: Part
    candidate_title: str
    statuses: list[Part]
    fields: list[Part]
    unsupported: list[int] = field(default_factory=list)


def status_v1(text: str) -> str:
    """1.0.0's status of a status's text: its first word, lowercased, if one of :data:`V1_STATUSES`, else
    ``unknown``."""
    words = text.split()
    word = words[0].strip(".,;:!()[]*_`").lower() if words else ""
    return word if word in V1_STATUSES else "unknown"


def status(text: str) -> str:
    """1.1.0's status of a status's text: as :func:`status_v1` over :data:`STATUSES`, HTML comments, braces and
    quotes dropped, ``superceded`` read as ``superseded``. A template's placeholder (a value opening with ``[`` or
    ``{``, or listing alternatives with ``|``, as MADR's and log4brains' templates do) is ``unknown``: a raw
    template is no accepted, proposed or draft decision."""
    value = _COMMENT.sub(" ", text).strip()
    if value.startswith(("[", "{")) or "|" in value:
        return "unknown"
    words = value.split()
    word = words[0].strip(".,;:!()[]{}*_`\"'").lower() if words else ""
    word = STATUS_SPELLINGS.get(word, word)
    return word if word in STATUSES else "unknown"


def body(data: bytes, start: int, end: int) -> str:
    """The trimmed text of a section after its heading line."""
    line_end = data.find(b"\n", start, end)
    return data[line_end + 1 if line_end >= 0 else end : end].decode("utf-8").strip()


def _line_end(data: bytes, start: int) -> int:
    """The offset just past the line starting at ``start`` (its newline included)."""
    end = data.find(b"\n", start)
    return len(data) if end < 0 else end + 1


def _key(text: str) -> str:
    return _COMMENT.sub("", text).strip().rstrip(":").strip().casefold()


def read_v1(data: bytes) -> Reading | None:
    """1.0.0: the first heading is ``# ADR: <title>``; level-2 headings are fields of :data:`V1_FIELDS`."""
    heads = md.headings(data)
    title = heads[0] if heads else None
    if title is None or title.level != 1 or not title.text.startswith("ADR:") or not title.text[4:].strip():
        return None
    reading = Reading(_title_part(data, title), title.text, [], [])
    if data[: title.byte_start].strip():
        reading.unsupported.append(1)
    _level2(data, heads, title, reading, V1_FIELDS, subfields=False)
    return reading


def read(data: bytes) -> Reading | None:
    """1.1.0: :func:`read_v1`'s records plus the real templates (rules: the adr module's docstring)."""
    front_end, front_statuses = _front_matter(data)
    masked = bytes(b if b in b"\r\n" else 0x20 for b in data[:front_end]) + data[front_end:]
    heads = md.headings(masked)
    title = heads[0] if heads else None
    if title is None or title.level != 1:
        return None
    prefix = TITLE_PREFIX.match(title.text)
    # MADR 4's bare template titles itself with an HTML comment only: no title, no ADR
    name = _COMMENT.sub("", title.text[prefix.end() :] if prefix else title.text).strip()
    if not name:
        return None
    reading = Reading(_title_part(data, title), f"ADR: {name}", front_statuses, [])
    if masked[: title.byte_start].strip():
        reading.unsupported.append(1)
    first_field = _level2(data, heads, title, reading, FIELDS, subfields=True)
    reading.statuses.extend(_inline_statuses(data, title, first_field))
    reading.statuses.sort(key=lambda p: p.start)
    if not (prefix or reading.statuses or reading.fields):
        return None
    return reading


def _title_part(data: bytes, title: md.Heading) -> Part:
    return Part("title", title.byte_start, _line_end(data, title.byte_start), title.line, [title.text], title.text)


def _level2(
    data: bytes,
    heads: list[md.Heading],
    title: md.Heading,
    reading: Reading,
    fields: dict[str, str],
    *,
    subfields: bool,
) -> int:
    """Add the level-2 fields (and statuses) of the ADR under ``title`` to ``reading``; the offset of its first
    level-2 heading (the end of the ADR without one). The ADR ends at the next level-1 heading."""
    rest = [h for h in heads if h.byte_start > title.byte_start]
    end_of_adr = next((h.byte_start for h in rest if h.level == 1), len(data))
    tops = [h for h in rest if h.byte_start < end_of_adr and h.level == 2]
    for i, head in enumerate(tops):
        end = tops[i + 1].byte_start if i + 1 < len(tops) else end_of_adr
        kind = fields.get(_key(head.text) if subfields else head.text.rstrip(":").strip().casefold())
        if kind is None:
            if body(data, head.byte_start, end):
                reading.unsupported.append(head.line)
            continue
        path = [title.text, head.text]
        if kind == "decision" and subfields:
            inner = [h for h in rest if head.byte_start < h.byte_start < end]
            _decision(data, head, end, inner, path, reading)
            continue
        part = Part(kind, head.byte_start, end, head.line, path, body(data, head.byte_start, end))
        (reading.statuses if kind == "status" else reading.fields).append(part)
    if end_of_adr < len(data) and data[end_of_adr:].strip():
        reading.unsupported.append(next(h.line for h in rest if h.byte_start == end_of_adr))
    return tops[0].byte_start if tops else end_of_adr


def _decision(
    data: bytes, head: md.Heading, end: int, inner: list[md.Heading], path: list[str], reading: Reading
) -> None:
    """A decision field whose level-3 subfields (:data:`SUBFIELDS`) are fields of their own: the decision ends at
    the first; consecutive consequences subsections are one consequences field (one subsection: its text after
    the heading; several: their whole text, headings included); other level-3 sections after the first subfield
    are unsupported content."""
    threes = [h for h in inner if h.level == 3]
    split = next((h.byte_start for h in threes if _key(h.text) in SUBFIELDS), end)
    reading.fields.append(Part("decision", head.byte_start, split, head.line, path, body(data, head.byte_start, split)))
    after = [h for h in threes if h.byte_start >= split]
    i = 0
    while i < len(after):
        kind = SUBFIELDS.get(_key(after[i].text))
        j = i + 1
        while kind == "consequences" and j < len(after) and SUBFIELDS.get(_key(after[j].text)) == kind:
            j += 1
        stop = after[j].byte_start if j < len(after) else end
        first = after[i]
        if kind is None:
            if body(data, first.byte_start, stop):
                reading.unsupported.append(first.line)
        else:
            text = body(data, first.byte_start, stop) if j == i + 1 else data[first.byte_start : stop].decode().strip()
            reading.fields.append(Part(kind, first.byte_start, stop, first.line, [*path, first.text], text))
        i = j


def _inline_statuses(data: bytes, title: md.Heading, stop: int) -> list[Part]:
    """The inline status lines between the title line and ``stop`` (outside fences): ``Status: X``, ``* Status:
    X``, ``- Status: X``, ``**Status:** X``, ``Status: **X**``."""
    fenced = md.fenced_lines(data)
    found = []
    start = _line_end(data, title.byte_start)
    line = title.line + 1
    while start < stop:
        end = min(_line_end(data, start), stop)
        text = _LIST_MARKER.sub("", data[start:end].decode("utf-8").rstrip("\r\n"))
        match = INLINE_STATUS.match(text.replace("**", "").replace("__", "").strip())
        if match and line not in fenced:
            found.append(Part("status", start, end, line, [title.text], match.group(1).strip()))
        start, line = end, line + 1
    return found


def _front_matter(data: bytes) -> tuple[int, list[Part]]:
    """(the offset past a leading YAML front-matter block, its top-level ``status:`` lines); ``(0, [])`` when the
    member does not start with a ``---`` line closed by a ``---`` or ``...`` line."""
    lines = data.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != b"---":
        return 0, []
    offset = len(lines[0])
    found: list[Part] = []
    for number, raw in enumerate(lines[1:], start=2):
        if raw.rstrip() in (b"---", b"..."):
            return offset + len(raw), found
        if match := _FRONT_STATUS.match(raw):
            value = match.group(1).decode("utf-8").strip().strip("\"'")
            found.append(Part("status", offset, offset + len(raw), number, [], value))
        offset += len(raw)
    return 0, []
