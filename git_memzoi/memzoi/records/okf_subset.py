"""Fast reading of the YAML subset the record writer emits (pure; no ruamel).

Parsing a record's frontmatter with ruamel costs ~2.7 ms; a 10,000-record rebuild must take seconds, not half a
minute. :func:`load` reads exactly the shapes :func:`git_memzoi.memzoi.records.okf.render` writes and returns ``None`` for
anything else (comments, flow collections, block scalars, unquoted timestamps, single quotes ...), which the caller
then parses with ruamel. Where it returns a value, that value equals what ruamel (YAML 1.2) returns.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from git_memzoi.core.patterns import lazy
from git_memzoi.core.yamlio import MAX_DEPTH

_KEY = lazy(r"( *)([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?")
_NUMBER = lazy(r"(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")
_WORD = lazy(r"[A-Za-z][A-Za-z0-9._/-]*")
# Characters YAML does not allow raw (outside c-printable), and NEL/LS/PS, which ruamel reads as line breaks.
_NOT_PRINTABLE = lazy("[^\x09\x0a\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_YAML_WORDS = frozenset(("null", "yes", "no", "on", "off", "y", "n", "true", "false"))


class _Slow(Exception):
    pass


def load(text: str) -> dict[str, Any] | None:
    """Parse frontmatter written in the record writer's YAML subset; ``None`` for anything else.

    The subset: ``key: scalar`` lines, two-space nested mappings, ``  - scalar`` lists and lists of mappings
    opened on the dash line (``  - key: scalar`` with the further keys under the first), ``{}``/``[]``, JSON
    double-quoted strings, plain ``[A-Za-z][A-Za-z0-9._/-]*`` words, unsigned decimal numbers, true/false.
    Where it returns a value it equals what ruamel (YAML 1.2) returns; ruamel reads every other file.
    """
    if "\t" in text or _NOT_PRINTABLE.search(text):
        return None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    try:
        value, end = _fast_map(lines, 0, 0)
    except _Slow:
        return None
    return value if end == len(lines) else None


def _fast_map(lines: Sequence[str], i: int, indent: int) -> tuple[dict[str, Any], int]:
    if indent // 2 + 2 > MAX_DEPTH:  # a list or {} here could pass the cap: ruamel gives the verdict on depth
        raise _Slow
    out: dict[str, Any] = {}
    child = indent + 2
    item = " " * child + "- "
    count = len(lines)
    while i < count:
        line = lines[i]
        parsed = _key_line(line)
        if parsed is None:
            if _depth(line) < indent and line.strip():
                break
            raise _Slow
        depth, key, value = parsed  # depth: the leading spaces (a key starts with a letter or _)
        if depth < indent:
            break
        if depth != indent or key in out or not _plain_key(key):
            raise _Slow
        i += 1
        if value is not None:
            out[key] = _fast_scalar(value)
        elif i < count and lines[i].startswith(item):
            out[key], i = _fast_list(lines, i, child)
        elif i < count and _depth(lines[i]) == child and lines[i].strip():
            out[key], i = _fast_map(lines, i, child)
        else:
            raise _Slow
    if not out:
        raise _Slow
    return out, i


def _key_line(line: str) -> tuple[int, str, str | None] | None:
    """``(leading spaces, key, value or None)`` of a ``key: value`` / ``key:`` line, else ``None``: exactly what
    ``_KEY.fullmatch`` accepts, the key's shape checked once per distinct key (keys repeat in every record)."""
    body = line.lstrip(" ")
    key, colon, rest = body.partition(":")
    if not colon or (rest and rest[0] != " "):
        return None
    shaped = _KEY_SHAPES.get(key)
    if shaped is None:
        shaped = _KEY.fullmatch(key + ":") is not None
        if len(_KEY_SHAPES) < 4096:
            _KEY_SHAPES[key] = shaped
    if not shaped:
        return None
    return len(line) - len(body), key, rest[1:] if rest else None


_KEY_SHAPES: dict[str, bool] = {}
_PLAIN_KEYS: dict[str, bool] = {}  # keys repeat in every record: their YAML-word check, once each


def _plain_key(key: str) -> bool:
    known = _PLAIN_KEYS.get(key)
    if known is None:
        known = key.lower() not in _YAML_WORDS
        if len(_PLAIN_KEYS) < 4096:
            _PLAIN_KEYS[key] = known
    return known


def _fast_list(lines: Sequence[str], i: int, indent: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    head = " " * indent + "- "
    content = indent + 2  # where an item's text starts, and where a mapping item's further keys stand
    while i < len(lines) and lines[i].startswith(head):
        text = lines[i][len(head) :]
        i += 1
        if _key_line(text) is None:
            items.append(_fast_scalar(text))
            continue
        # a mapping item, as the writer opens one on the dash line (``- path: "x"``, the next keys under ``path``):
        # read as the mapping it is with the dash replaced by spaces
        end = i
        while end < len(lines) and _depth(lines[end]) >= content and lines[end].strip():
            end += 1
        value, used = _fast_map([" " * content + text, *lines[i:end]], 0, content)
        if used != end - i + 1:
            raise _Slow
        items.append(value)
        i = end
    if i < len(lines) and _depth(lines[i]) >= indent:
        raise _Slow
    return items, i


def _depth(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _fast_scalar(raw: str) -> Any:
    first = raw[:1]
    if first == '"':
        if len(raw) < 2 or not raw.endswith('"') or "\\u" in raw:
            raise _Slow
        inner = raw[1:-1]
        if "\\" not in inner and '"' not in inner:  # no escape: the JSON string is its text (controls: refused above)
            return inner
        try:
            value = json.loads(raw)
        except ValueError:
            raise _Slow from None
        if not isinstance(value, str):
            raise _Slow
        return value
    if first.isascii() and first.isalpha():  # a plain word (true/false are words too); a number starts with a digit
        if raw in ("true", "false"):
            return raw == "true"
        if _WORD.fullmatch(raw) and raw.lower() not in _YAML_WORDS:
            return raw
        raise _Slow
    if raw == "{}":
        return {}
    if raw == "[]":
        return []
    if _NUMBER.fullmatch(raw):
        if len(raw) > 4000:  # int() refuses over 4,300 digits (ValueError); ruamel names the value instead
            raise _Slow
        return float(raw) if "." in raw else int(raw)
    raise _Slow
