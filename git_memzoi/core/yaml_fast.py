"""A fast first reader of frontmatter through libyaml's C parser (PyYAML), or ``None`` where it is unsure.

ruamel's pure-Python round-trip parser costs about 1.3 ms an entry, 96 % of a cold ``git memkeep status``
(issue 17, "Cold status"). libyaml's event stream costs about 25 µs for the same text, but libyaml speaks YAML
1.1, so this module builds values only from events whose YAML 1.2 meaning is certain and gives up (``None``) at the
first one that is not; :func:`git_memzoi.core.yamlio.load_mapping` then reads the text with ruamel, which also
names any error. So where this reader answers, it answers exactly what ruamel answers (checked by a property test
over generated frontmatter, tests/core/test_yaml_fast_property.py), and it never answers for a text ruamel refuses.

It gives up on: a tab, a backslash, a carriage return, a byte-order mark or a character YAML 1.2 and libyaml
read differently (NEL, LS, PS, C0/C1 controls); directives and explicit document markers; anchors, aliases and
explicit tags; a top-level key without a value; a key that is not a string, a duplicate key, a merge key; a plain scalar that ruamel's 1.2
resolver (:func:`~git_memzoi.core.yamlio.implicit_tag`) types as anything but a string, ``null``, a boolean, a
decimal integer, a decimal fraction or a ``YYYY-MM-DD`` date (octal, hex, exponents, a time of day); more values than the caller allows or deeper nesting
than :data:`~git_memzoi.core.yamlio.MAX_DEPTH`; anything libyaml reports as an error.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from git_memzoi.core.patterns import lazy

Span = tuple[int, int, int, bool]  # a top-level key's (key_line, value_line, value_col, is_scalar): yamlio.KeySpan
Resolve = Callable[[str], "str | None"]  # a plain scalar's YAML 1.2 tag, None for a string (yamlio.implicit_tag)

# Text this reader (and yaml_lines) leaves to ruamel: see the module docstring.
UNSURE_TEXT = lazy(r"[^\n\x20-\x5b\x5d-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_INT = lazy(r"-?(?:0|[1-9][0-9]*)")
_DATE = lazy(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_FLOAT = lazy(r"-?(?:0|[1-9][0-9]*)\.[0-9]+")
_BLOCK = ("|", ">")


class _Unsure(Exception):
    """Raised inside the walk at the first event whose 1.2 meaning is not certain."""


def load(
    text: str, max_nodes: int | None, max_depth: int, resolve: Resolve
) -> tuple[dict[str, Any], dict[str, Span]] | None:
    """Read ``text`` as one YAML mapping the way ``yamlio.load_mapping`` does, or ``None`` to leave it to ruamel.

    Args:
        text: the frontmatter (without its ``---`` lines), already checked against the caller's byte cap.
        max_nodes: values allowed (keys, scalars and collections, as ruamel's composer counts them); ``None``: any.
        max_depth: nested collections allowed (the top mapping is one).
        resolve: ruamel's tag of a plain scalar (:func:`git_memzoi.core.yamlio.implicit_tag`).

    Returns:
        ``(fields, spans)`` as plain Python values with every top-level key's :data:`Span`, equal to ruamel's;
        ``None`` when the text holds anything listed in the module docstring, or when libyaml is not installed.
    """
    if UNSURE_TEXT.search(text):
        return None
    try:
        from yaml._yaml import CParser
    except ImportError:  # PyYAML without libyaml: ruamel reads everything
        return None
    parser = CParser(text)
    try:
        return _walk(_Events(parser, max_nodes, resolve), max_depth)
    except _Unsure:
        return None
    except Exception:  # a libyaml error: ruamel reads the text again and names the problem
        return None
    finally:
        parser.dispose()


def _walk(events: _Events, max_depth: int) -> tuple[dict[str, Any], dict[str, Span]]:
    ev = events.classes
    events.expect(ev.StreamStartEvent)
    first = events.next()
    if type(first) is ev.StreamEndEvent:
        return {}, {}
    if type(first) is not ev.DocumentStartEvent or first.explicit or first.version or first.tags:
        raise _Unsure
    start = events.next()
    if type(start) is not ev.MappingStartEvent:
        raise _Unsure  # an empty document or a top-level scalar or list: ruamel decides
    _collection_start(start)
    fields: dict[str, Any] = {}
    spans: dict[str, Span] = {}
    while type(key_event := events.next()) is not ev.MappingEndEvent:
        key = _key(key_event, fields, events)
        value_event = events.next()
        if type(value_event) is ev.ScalarEvent and not value_event.value and not value_event.style:
            raise _Unsure  # `key:` alone: libyaml and ruamel place the empty value differently
        fields[key] = _value(value_event, events, 2, max_depth)
        mark = value_event.start_mark
        scalar = type(value_event) is ev.ScalarEvent and value_event.style not in _BLOCK
        spans[key] = (key_event.start_mark.line, mark.line, mark.column, scalar)
    events.expect(ev.DocumentEndEvent)
    events.expect(ev.StreamEndEvent)
    return fields, spans


class _Events:
    """libyaml's events one at a time, counting the values ruamel's composer would count (``max_nodes``)."""

    def __init__(self, parser: Any, max_nodes: int | None, resolve: Resolve) -> None:
        import yaml.events

        self.classes = yaml.events
        self.resolve = resolve
        self._counted = (yaml.events.ScalarEvent, yaml.events.MappingStartEvent, yaml.events.SequenceStartEvent)
        self._parser = parser
        self._left = -1 if max_nodes is None else max_nodes

    def next(self) -> Any:
        event = self._parser.get_event()
        if type(event) in self._counted:
            self._left -= 1
            if self._left == -1:  # one value more than allowed: ruamel refuses it with its own message
                raise _Unsure
        elif type(event) is self.classes.AliasEvent:
            raise _Unsure
        return event

    def expect(self, kind: type) -> None:
        if type(self.next()) is not kind:
            raise _Unsure


def _key(event: Any, seen: dict[str, Any], events: _Events) -> str:
    if type(event) is not events.classes.ScalarEvent or event.style in _BLOCK:
        raise _Unsure
    key = _scalar(event, events.resolve)
    if not isinstance(key, str) or key in seen or key == "<<":
        raise _Unsure
    return key


def _value(event: Any, events: _Events, depth: int, max_depth: int) -> Any:
    ev = events.classes
    kind = type(event)
    if kind is ev.ScalarEvent:
        return _scalar(event, events.resolve)
    if depth > max_depth or kind not in (ev.MappingStartEvent, ev.SequenceStartEvent):
        raise _Unsure
    _collection_start(event)
    if kind is ev.SequenceStartEvent:
        items: list[Any] = []
        while type(item := events.next()) is not ev.SequenceEndEvent:
            items.append(_value(item, events, depth + 1, max_depth))
        return items
    mapping: dict[str, Any] = {}
    while type(key_event := events.next()) is not ev.MappingEndEvent:
        key = _key(key_event, mapping, events)
        mapping[key] = _value(events.next(), events, depth + 1, max_depth)
    return mapping


def _collection_start(event: Any) -> None:
    if event.anchor is not None or event.tag is not None:
        raise _Unsure


def _scalar(event: Any, resolve: Resolve) -> Any:
    if event.anchor is not None or event.tag is not None:
        raise _Unsure
    value: str = event.value
    if event.style:  # quoted or block (libyaml's plain style is ""): a string in both versions
        return value
    return _plain(value, resolve)


def _plain(value: str, resolve: Resolve) -> Any:
    """The YAML 1.2 core value of a plain scalar, as ruamel's resolver and yamlio's constructor build it."""
    tag = resolve(value)
    if tag is None:
        return value
    kind = tag.rpartition(":")[2]
    if kind == "null":
        return None
    if kind == "bool":
        return value.lower() == "true"
    if kind == "int" and _INT.fullmatch(value):
        return int(value)
    if kind == "float" and _FLOAT.fullmatch(value):
        return float(value)
    if kind == "timestamp" and (date := calendar_date(value)) is not None:
        return date
    raise _Unsure  # octal, hex, underscores, exponents, a time of day, merge and value keys: ruamel decides


def calendar_date(value: str) -> dt.date | str | None:
    """The value of a plain ``YYYY-MM-DD`` scalar as yamlio's constructor builds it: a date, or ``value`` itself
    for an impossible one (kept as written, for lint to name); ``None`` for any other text."""
    found = _DATE.fullmatch(value)
    if found is None:
        return None
    try:
        return dt.date(int(found[1]), int(found[2]), int(found[3]))
    except ValueError:
        return value
