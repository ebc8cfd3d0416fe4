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

    The subset: ``key: scalar`` lines, two-space nested mappings, ``  - scalar`` lists, ``{}``/``[]``, JSON
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
    while i < len(lines):
        line = lines[i]
        depth = _depth(line)
        if depth < indent and line.strip():
            break
        match = _KEY.fullmatch(line)
        if match is None or depth != indent or match[2] in out or match[2].lower() in _YAML_WORDS:
            raise _Slow
        i += 1
        if match[3] is not None:
            out[match[2]] = _fast_scalar(match[3])
        elif i < len(lines) and lines[i].startswith(" " * (indent + 2) + "- "):
            out[match[2]], i = _fast_list(lines, i, indent + 2)
        elif i < len(lines) and _depth(lines[i]) == indent + 2 and lines[i].strip():
            out[match[2]], i = _fast_map(lines, i, indent + 2)
        else:
            raise _Slow
    if not out:
        raise _Slow
    return out, i


def _fast_list(lines: Sequence[str], i: int, indent: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    head = " " * indent + "- "
    while i < len(lines) and lines[i].startswith(head):
        items.append(_fast_scalar(lines[i][len(head) :]))
        i += 1
    if i < len(lines) and _depth(lines[i]) >= indent:
        raise _Slow
    return items, i


def _depth(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _fast_scalar(raw: str) -> Any:
    if raw == "{}":
        return {}
    if raw == "[]":
        return []
    if raw.startswith('"'):
        if len(raw) < 2 or not raw.endswith('"') or "\\u" in raw:
            raise _Slow
        try:
            value = json.loads(raw)
        except ValueError:
            raise _Slow from None
        if not isinstance(value, str):
            raise _Slow
        return value
    if _NUMBER.fullmatch(raw):
        if len(raw) > 4000:  # int() refuses over 4,300 digits (ValueError); ruamel names the value instead
            raise _Slow
        return float(raw) if "." in raw else int(raw)
    if raw in ("true", "false"):
        return raw == "true"
    if _WORD.fullmatch(raw) and raw.lower() not in _YAML_WORDS:
        return raw
    raise _Slow
