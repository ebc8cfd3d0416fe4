"""Categorized statements in a record's body: ``- [fact] ...``, ``- [decision] ...`` (pure).

vault-memory README "Categorized statements" (F04), followed exactly:

- An explicit Markdown list item whose text opens with ``[category]`` is a statement: ``- [fact] The rollout
  starts in June``, ``* [decision] Use a local model``, ``1. [preference] Write asynchronously``. A category is
  ``[a-z][a-z0-9_-]*``; unknown categories are kept as written (no vocabulary, no inference).
- Indented continuation lines (deeper than the item's marker, up to a blank line) belong to the statement.
- Nested list items stay separate: a nested ``- [risk] ...`` is a statement of its own, and any nested item
  ends its parent's continuation.
- Fenced code (````` ``` ````` or ``~~~``, closed by the same fence), checkboxes (``- [ ]``, ``- [x]``,
  ``- [X]``) and ordinary prose are ignored. Nothing is promoted or rewritten: Markdown stays authoritative.

Each :class:`Statement` carries its 1-based inclusive file line range, so a citation points at the source.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from git_memzoi.core.patterns import lazy

_ITEM = lazy(r"^(?P<indent>[ \t]*)(?:[-*+]|\d{1,9}[.)])[ \t]+(?P<text>.*)$")
_STATEMENT = lazy(r"^\[(?P<category>[a-z][a-z0-9_-]*)\][ \t]+(?P<text>\S.*)$")
_CHECKBOX = lazy(r"^\[[ xX]\](?:[ \t]|$)")
_FENCE = lazy(r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})")


@dataclass(frozen=True)
class Statement:
    """One categorized statement: its ``category``, its ``text`` (continuation lines joined with a newline, each
    stripped of its indentation) and its file lines ``line_start``..``line_end`` (1-based, inclusive)."""

    category: str
    text: str
    line_start: int
    line_end: int

    def as_json(self) -> dict[str, object]:
        """``{"category", "text", "lines": [start, end]}``."""
        return {"category": self.category, "text": self.text, "lines": [self.line_start, self.line_end]}


def parse(body: str, first_line: int = 1) -> tuple[Statement, ...]:
    """The statements of ``body`` in file order; ``first_line`` is the file line of the body's first line.

    A checkbox is never a statement (``- [x] done`` has the shape of category ``x``): the rule is checked first.
    """
    out: list[Statement] = []
    open_item: tuple[int, str, list[str], int] | None = None  # (marker indent, category, lines, start)
    end = first_line
    for number, line in _outside_fences(body, first_line):
        item = _ITEM.match(line)
        indent = _width(line)
        continues = open_item is not None and line.strip() and item is None and indent > open_item[0]
        if continues and number == end + 1 and open_item is not None:
            open_item[2].append(line.strip())
            end = number
            continue
        if open_item is not None:
            out.append(Statement(open_item[1], "\n".join(open_item[2]), open_item[3], end))
            open_item = None
        if item is None or _CHECKBOX.match(item["text"]):
            continue
        found = _STATEMENT.match(item["text"])
        if found is not None:
            open_item = (_width(item["indent"]), found["category"], [found["text"].strip()], number)
            end = number
    if open_item is not None:
        out.append(Statement(open_item[1], "\n".join(open_item[2]), open_item[3], end))
    return tuple(out)


def _outside_fences(body: str, first_line: int) -> Iterator[tuple[int, str]]:
    """``(file line, text)`` of each line outside fenced code; a fence line itself yields an empty line (it ends
    an open statement, as any line that is no continuation)."""
    fence: str | None = None
    for offset, line in enumerate(body.splitlines()):
        number = first_line + offset
        opened = _FENCE.match(line)
        if fence is None and opened is not None:
            fence = opened["fence"]
            yield number, ""
        elif fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                fence = None
        else:
            yield number, line


def _width(text: str) -> int:
    """The indentation width of ``text`` (a tab counts four columns)."""
    stripped = text[: len(text) - len(text.lstrip(" \t"))]
    return len(stripped.replace("\t", "    "))
