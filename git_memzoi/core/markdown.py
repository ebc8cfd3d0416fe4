"""Markdown line rules shared by the readers of record bodies (pure): ATX headings, CommonMark 0.31 §4.2.

``show``'s section slices (:mod:`git_memzoi.memzoi.recall.slices`) and a record's written description
(:func:`git_memzoi.memzoi.records.okf.first_line`) read headings by the same rule.
"""

from __future__ import annotations

from git_memzoi.core.patterns import lazy

_ATX = lazy(r" {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_CLOSING = lazy(r"(?:^|[ \t]+)#+[ \t]*$")


def atx_heading(line: str) -> tuple[int, str] | None:
    """``(level, title)`` when ``line`` (no line break) is an ATX heading: up to 3 spaces, 1 to 6 ``#``, then a
    space or tab or the line's end; the title stripped, its closing ``#`` sequence removed. ``None`` otherwise
    (``#pnpm``, ``####### seven``, a line indented 4 spaces)."""
    found = _ATX.match(line)
    if found is None:
        return None
    return len(found.group(1)), _CLOSING.sub("", found.group(2) or "").strip()
