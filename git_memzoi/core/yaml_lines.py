"""A line reader for the block-style YAML that memory files are written in, needing no YAML library, or ``None``.

A cold ``git memkeep status`` reads every entry (issue 17, "Cold status"): libyaml's events (:mod:`yaml_fast`)
cost about 110 µs an entry from Python, and typing their scalars needs ruamel's resolver table, a 40–60 ms
import. The files the tools write, and most written by hand, use a small subset: one ``key: value`` per line,
a list of scalars under a key (indented or not), a one-level mapping of scalars under a key (``check:``), and
literal blocks (``|``, ``|-``). This module reads exactly that subset line by line and answers ``None`` at the
first line outside it, so :func:`git_memzoi.core.yamlio.load_mapping` passes the text on to :mod:`yaml_fast` and
then ruamel. Where it answers, its fields (types included) and key spans are ruamel's, held by the property test
in tests/core/test_yaml_fast_property.py.

Outside the subset, so ``None``: everything :mod:`yaml_fast` leaves (tabs, backslashes, carriage returns,
controls); comments; blank lines outside a literal block; trailing spaces; flow collections; folded and
keep-chomped blocks or an indentation indicator; a key without a value below it, or longer than 1,000
characters (YAML's cap on an implicit key is 1,024); a plain scalar that begins with
anything but an ASCII letter or digit, ``/``, ``_`` or ``.`` + letter, or that holds ``#`` or ``: `` or ends in
``:``; multi-line scalars; and any plain scalar whose YAML 1.2 core type is not certain from its characters (a
number other than a decimal integer, a time of day): only a string, ``true``/``false``, ``null``, a decimal
integer and a ``YYYY-MM-DD`` date are typed here.
"""

from __future__ import annotations

from typing import Any

from git_memzoi.core.patterns import lazy
from git_memzoi.core.yaml_fast import UNSURE_TEXT, calendar_date

Span = tuple[int, int, int, bool]  # a top-level key's (key_line, value_line, value_col, is_scalar): yamlio.KeySpan

_KEY = lazy(r"([A-Za-z_][A-Za-z0-9_-]*):(?= |$) *")
_INT = lazy(r"0|[1-9][0-9]*")
# ruamel's 1.2 table for a first letter: t/T/f/F may be a boolean, n/N a null, any other letter is a string
_BOOLEANS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NULLS = frozenset({"null", "Null", "NULL"})
# every character a number or timestamp that starts with a digit can hold, apart from a 0x/0o/0b prefix
_NUMERIC = frozenset("0123456789_.eE+-Tt :Z")
_PREFIXED = {"0x": frozenset("0123456789abcdefABCDEF_"), "0o": frozenset("01234567_"), "0b": frozenset("01_")}
_MAX_KEY = 1000  # YAML caps an implicit key at 1024 characters, and both other readers refuse a longer one
_LITERALS = {"|": "\n", "|-": ""}  # the clip and strip indicators, and what each leaves after the last line


class _Unsure(Exception):
    """Raised at the first line outside the subset."""


def load(text: str, max_nodes: int | None) -> tuple[dict[str, Any], dict[str, Span]] | None:
    """Read ``text`` as one YAML mapping the way ``yamlio.load_mapping`` does, or ``None`` to leave it to others.

    Args:
        text: the frontmatter (without its ``---`` lines), already checked against the caller's byte cap.
        max_nodes: values allowed (keys, scalars and collections, as ruamel's composer counts them); ``None``: any.

    Returns:
        ``(fields, spans)`` as plain Python values (str, bool, None, int, ``datetime.date``, lists and dicts of
        them) with every top-level key's :data:`Span`, equal to ruamel's; ``None`` outside the subset in the
        module docstring, or with more than ``max_nodes`` values.
    """
    if not text:
        return {}, {}
    if text[-1] != "\n" or " \n" in text or UNSURE_TEXT.search(text):
        return None
    lines = text.split("\n")
    lines.pop()  # the text ends with a line break
    reader = _Reader(lines)
    try:
        found = reader.mapping()
    except _Unsure:
        return None
    return None if max_nodes is not None and reader.values > max_nodes else found


class _Reader:
    """The lines of one text and the values read so far (as ruamel's composer counts them: keys, scalars and
    collections); each method returns the line after what it read."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.values = 1  # the top mapping

    def mapping(self) -> tuple[dict[str, Any], dict[str, Span]]:
        lines = self.lines
        fields: dict[str, Any] = {}
        spans: dict[str, Span] = {}
        at, end = 0, len(lines)
        while at < end:
            line = lines[at]
            key, col = _key(line, fields)
            rest = line[col:]
            if not rest:
                fields[key], spans[key], at = self.collection(at)
            elif rest in _LITERALS:
                fields[key], next_at = self.literal(at + 1, _LITERALS[rest])
                spans[key], at = (at, at, col, False), next_at
            else:
                fields[key], spans[key], at = _scalar(rest), (at, at, col, True), at + 1
        self.values += 2 * len(fields)
        return fields, spans

    def collection(self, at: int) -> tuple[list[Any] | dict[str, Any], Span, int]:
        """The list or mapping below the key on line ``at``, its span and the line after it."""
        if at + 1 == len(self.lines):
            raise _Unsure  # `key:` alone: libyaml and ruamel place the empty value differently
        first = self.lines[at + 1]
        indent = len(first) - len(first.lstrip(" "))
        span = (at, at + 1, indent, False)
        if first.startswith("- ", indent):
            items, end = self.items(at + 1, indent)
            return items, span, end
        if indent == 0:
            raise _Unsure
        mapping, end = self.submapping(at + 1, indent)
        return mapping, span, end

    def items(self, at: int, indent: int) -> tuple[list[Any], int]:
        lines, lead = self.lines, " " * indent + "- "
        start = at
        while at < len(lines) and lines[at].startswith(lead):
            at += 1
        items = [_scalar(line[indent + 2 :]) for line in lines[start:at]]
        self.values += len(items)
        return items, self.after_block(at)

    def submapping(self, at: int, indent: int) -> tuple[dict[str, Any], int]:
        lines, pad = self.lines, " " * indent
        mapping: dict[str, Any] = {}
        while at < len(lines) and lines[at].startswith(pad) and lines[at][indent : indent + 1] != " ":
            line = lines[at][indent:]
            key, col = _key(line, mapping)
            if not line[col:]:
                raise _Unsure  # a deeper collection or an empty value: the event readers decide
            mapping[key] = _scalar(line[col:])
            at += 1
        self.values += 2 * len(mapping)
        return mapping, self.after_block(at)

    def after_block(self, at: int) -> int:
        """``at`` when the line there starts a top-level key (or the text ended), else :class:`_Unsure`."""
        if at < len(self.lines) and self.lines[at][:1] in ("", " "):
            raise _Unsure  # a deeper or continued value, or a blank line
        return at

    def literal(self, at: int, last: str) -> tuple[str, int]:
        """A ``|`` block's text from line ``at``, ending its last line with ``last``; and the line after it."""
        lines, start = self.lines, at
        while at < len(lines) and lines[at][:1] in ("", " "):
            at += 1
        block = lines[start:at]
        while block and not block[-1]:
            block.pop()  # trailing blank lines: clipped or stripped either way
        if not block or not block[0]:
            raise _Unsure  # an empty block, or leading blank lines: their indentation rules differ by reader
        indent = len(block[0]) - len(block[0].lstrip(" "))
        pad = " " * indent
        if any(line and not line.startswith(pad) for line in block):
            raise _Unsure
        return "\n".join(line[indent:] for line in block) + last, at


def _key(line: str, seen: dict[str, Any]) -> tuple[str, int]:
    """A ``key:`` at the start of ``line`` and the column its value starts at; never a duplicate or a non-string."""
    found = _KEY.match(line)
    if found is None:
        raise _Unsure
    key = found[1]
    if key in seen or key in _BOOLEANS or key in _NULLS or len(key) > _MAX_KEY:
        raise _Unsure
    return key, found.end()


def _scalar(text: str) -> Any:
    """The value of a one-line scalar: quoted, or plain and typed as YAML 1.2's core schema types it."""
    first = text[:1]
    if first == "'" or first == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != first or first in (inner.replace("''", "") if first == "'" else inner):
            raise _Unsure
        return inner.replace("''", "'") if first == "'" else inner  # no backslash (load refused it): no escapes
    if "#" in text or ": " in text or text[-1:] in (":", ""):
        raise _Unsure
    if first.isalpha() and first.isascii():
        if first in "tTfF" and text in _BOOLEANS:
            return _BOOLEANS[text]
        return None if first in "nN" and text in _NULLS else text
    if first in ("/", "_") or (first == "." and text[1:2].isalpha() and text[1:2].isascii() and text[1] not in "iInN"):
        return text
    if not first.isdigit() or not first.isascii():
        raise _Unsure
    if _INT.fullmatch(text):
        if len(text) > 18:
            raise _Unsure  # past Python's digit limit int() refuses; ruamel decides how to say so
        return int(text)
    if (date := calendar_date(text)) is not None:
        return date
    digits = _PREFIXED.get(text[:2])
    if not (_NUMERIC if digits is None else digits).issuperset(text if digits is None else text[2:]):
        return text  # a commit id, a version with letters: no number or timestamp pattern can match it
    raise _Unsure
