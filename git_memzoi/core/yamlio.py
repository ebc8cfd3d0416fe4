"""YAML 1.2 through ruamel.yaml: the only module that imports it (:mod:`yaml_lines` reads the plain subset
memory files are written in, then :mod:`yaml_fast` ordinary frontmatter through libyaml, each answering only
where its answer is ruamel's).

Loading follows the YAML 1.2 core schema (``no`` and ``NO`` stay strings, field report BR-06); duplicate keys
are errors. Values come back as plain Python: dict, list, str, int, float, bool, None, ``datetime.date`` and
``datetime.datetime``.

A text that would cost far more than its size is refused as :data:`TOO_COMPLEX` (issue 13, "Hangs"): anchors and
aliases (``&a`` / ``*a``: nine lines of them expand to a billion values), more than :data:`MAX_DEPTH` levels of
nesting (the parser slows with every open level and the library recurses per level), more than :data:`MAX_NODES`
values, or more than the caller's byte cap, checked before anything is parsed. The scanner and the composer
refuse at the first such token, so a refusal costs no more than parsing the text before it.
"""

from __future__ import annotations

import datetime as dt
import functools
import io
from dataclasses import dataclass
from typing import Any, NamedTuple

from git_memzoi.core.safe_read import MAX_FILE_BYTES

TOO_COMPLEX = "yaml_too_complex"
MAX_DEPTH = 32  # nested collections (`a: [1]` is two); memory files use fewer than 8, and the parser slows per level
MAX_NODES = 4096  # values in one frontmatter block; a large memory file holds a few hundred
_ALIASES = "uses anchors or aliases (&name, *name), which are not supported"
_DEEP = f"is nested deeper than {MAX_DEPTH} levels"


@dataclass(frozen=True)
class YamlProblem(Exception):
    """A YAML syntax or structure error at a 0-based ``line`` of the parsed text (``None`` when unknown);
    ``code`` is :data:`TOO_COMPLEX` for a text refused unparsed, else ``None``."""

    reason: str
    line: int | None
    code: str | None = None


class _TooComplex(Exception):
    def __init__(self, reason: str, line: int | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


class KeySpan(NamedTuple):
    """Where a top-level key's value sits in the YAML text: 0-based line and column of key and value (a tuple:
    one is made per key of every file read, and a frozen dataclass costs three times as much to make)."""

    key_line: int
    value_line: int
    value_col: int
    is_scalar: bool


def _yaml(max_nodes: int | None = MAX_NODES) -> Any:
    from ruamel.yaml import YAML

    yaml: Any = YAML(typ="rt", pure=True)
    yaml.Constructor = _constructor_class()
    yaml.Composer = _composer_class()
    yaml.Scanner = _scanner_class()
    yaml.allow_duplicate_keys = False
    yaml.memzoi_max_nodes = max_nodes
    return yaml


_CONSTRUCTOR: Any = None
_COMPOSER: Any = None
_SCANNER: Any = None


def _scanner_class() -> Any:
    """ruamel's round-trip scanner, refusing (:class:`_TooComplex`) an anchor, an alias and a flow collection
    (``[``, ``{``) deeper than :data:`MAX_DEPTH` as it meets them. The scanner reads up to 1,024 characters
    ahead for a possible key and checks every open flow level per token: a thousand ``[`` on one line cost
    seconds before the composer saw the first level too many."""
    global _SCANNER
    if _SCANNER is None:
        from ruamel.yaml.scanner import RoundTripScanner

        class Scanner(RoundTripScanner):
            def fetch_flow_collection_start(self, TokenClass: Any, to_push: str) -> None:
                if self.flow_level >= MAX_DEPTH:
                    raise _TooComplex(_DEEP, self.reader.line)
                super().fetch_flow_collection_start(TokenClass, to_push)

            def fetch_alias(self) -> None:
                raise _TooComplex(_ALIASES, self.reader.line)

            def fetch_anchor(self) -> None:
                raise _TooComplex(_ALIASES, self.reader.line)

        _SCANNER = Scanner
    return _SCANNER


def _composer_class() -> Any:
    """ruamel's composer, refusing (:class:`_TooComplex`) a value nested deeper than :data:`MAX_DEPTH` (block
    collections; the scanner counts the flow ones) and the value after the loader's ``memzoi_max_nodes``, at the
    event that crosses the line: the parser reads no further. Anchors and aliases are refused here too, should a
    scanner ever let one through."""
    global _COMPOSER
    if _COMPOSER is None:
        from ruamel.yaml.composer import Composer as Base
        from ruamel.yaml.events import AliasEvent, MappingStartEvent, SequenceStartEvent

        class Composer(Base):
            _nodes = 0
            _levels = 0

            def compose_node(self, parent: Any, index: Any) -> Any:
                event = self.parser.peek_event()
                line = event.start_mark.line if event.start_mark is not None else None
                if isinstance(event, AliasEvent) or event.anchor is not None:
                    raise _TooComplex(_ALIASES, line)
                self._nodes += 1
                limit = self.loader.memzoi_max_nodes
                if limit is not None and self._nodes > limit:
                    raise _TooComplex(f"holds more than {limit} values", line)
                if not isinstance(event, (MappingStartEvent, SequenceStartEvent)):
                    return super().compose_node(parent, index)
                if self._levels >= MAX_DEPTH:  # levels count collections: `a: [1]` is two deep
                    raise _TooComplex(_DEEP, line)
                self._levels += 1
                try:
                    return super().compose_node(parent, index)
                finally:
                    self._levels -= 1

        _COMPOSER = Composer
    return _COMPOSER


def _constructor_class() -> Any:
    """ruamel's round-trip constructor, except that a timestamp-shaped value that is no real date or time
    (``2026-13-01``) stays the string it was written as, for lint to name, instead of failing the file."""
    global _CONSTRUCTOR
    if _CONSTRUCTOR is None:
        from ruamel.yaml.constructor import RoundTripConstructor

        class Constructor(RoundTripConstructor):
            def construct_yaml_timestamp(self, node: Any, values: Any = None) -> Any:
                try:
                    return super().construct_yaml_timestamp(node, values)
                except ValueError:
                    return self.construct_scalar(node)

        Constructor.add_constructor("tag:yaml.org,2002:timestamp", Constructor.construct_yaml_timestamp)
        _CONSTRUCTOR = Constructor
    return _CONSTRUCTOR


def load_mapping(
    text: str,
    what: str = "frontmatter",
    *,
    max_bytes: int = MAX_FILE_BYTES,
    max_nodes: int | None = MAX_NODES,
) -> tuple[dict[str, Any], dict[str, KeySpan]]:
    """Parse ``text`` as one YAML mapping (an empty text is ``{}``); ``what`` names the text in messages
    (``frontmatter``, ``the file``). A whole document (a corpus, a request) passes its own caps: ``max_bytes`` of
    UTF-8, checked before parsing, and ``max_nodes`` values (``None``: only the byte cap bounds them).

    Returns:
        (fields, spans): the mapping as plain Python values, and for every top-level key where its value is.

    Raises:
        YamlProblem: on a syntax error, a duplicate key, a non-string key, a merge key (``<<``), or a document
            that is not a mapping; with code :data:`TOO_COMPLEX` for an anchor or alias, nesting deeper than
            :data:`MAX_DEPTH`, more than ``max_nodes`` values or more than ``max_bytes``.
    """
    if len(text) > max_bytes or (len(text) * 4 > max_bytes and len(text.encode("utf-8", "surrogatepass")) > max_bytes):
        raise YamlProblem(f"{what} is larger than {max_bytes} bytes", None, TOO_COMPLEX)
    from git_memzoi.core import yaml_fast, yaml_lines

    fast = yaml_lines.load(text, max_nodes)  # the subset the tools write, read line by line: no YAML library
    if fast is None:
        fast = yaml_fast.load(text, max_nodes, MAX_DEPTH, implicit_tag)  # libyaml where its answer is ruamel's
    if fast is None:
        return load_mapping_ruamel(text, what, max_nodes=max_nodes)
    fields, spans = fast
    return fields, {key: KeySpan(*span) for key, span in spans.items()}


def load_mapping_ruamel(
    text: str, what: str = "frontmatter", *, max_nodes: int | None = MAX_NODES
) -> tuple[dict[str, Any], dict[str, KeySpan]]:
    """:func:`load_mapping` through ruamel alone, with no byte cap: the reference the fast reader is held to
    (tests/core/test_yaml_fast_property.py) and the reader of every text it leaves. Same returns and errors."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        data = _yaml(max_nodes).load(text)
    except _TooComplex as exc:
        raise YamlProblem(f"{what} {exc.reason}", exc.line, TOO_COMPLEX) from None
    except RecursionError:  # unreachable below MAX_DEPTH; never a crash if a library path recurses anyway
        raise YamlProblem(f"{what} is nested too deeply", None, TOO_COMPLEX) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = exc.problem or exc.context or "invalid YAML"
        if reason == "mapping values are not allowed here":  # `run: grep -q x: f`: the commonest hand-edit slip
            reason += "; quote a value that holds ': ' (run: \"grep -q 'x: y' f\")"
        elif reason == "found character '\\t' that cannot start any token":  # an editor's tab after `key:`
            reason += "; indent and separate with spaces, not tabs"
        raise YamlProblem(_one_line(reason), mark.line if mark else None) from None
    except YAMLError as exc:
        raise YamlProblem(_one_line(str(exc).splitlines()[0]), None) from None
    except Exception as exc:  # a value the library cannot build, e.g. `!!float abc`: name it, never crash
        reason = f"a value cannot be read ({type(exc).__name__}: {exc})"
        raise YamlProblem(_one_line(reason), _failing_key_line(text)) from None
    if data is None:
        return {}, {}
    if not hasattr(data, "items") or not hasattr(data, "lc"):
        raise YamlProblem(f"{what} is not a mapping of keys to values", 0)
    if getattr(data, "merge", None):  # keys merged in from elsewhere have no line of their own to rewrite
        raise YamlProblem(f"merge keys ('<<') are not supported in {what}", None)
    fields: dict[str, Any] = {}
    spans: dict[str, KeySpan] = {}
    for key, value in data.items():
        if not isinstance(key, str):
            problem = "a key is empty" if key is None else f"key {key!r} is not a string"
            raise YamlProblem(problem, data.lc.key(key)[0])
        fields[key] = plain(value)
        key_line, _ = data.lc.key(key)
        value_line, value_col = data.lc.value(key)
        scalar = not isinstance(value, (dict, list)) and not _is_block_scalar(value)
        spans[key] = KeySpan(key_line, value_line, value_col, scalar)
    return fields, spans


_IMPLICIT: dict[str | None, list[tuple[str, Any]]] | None = None


@functools.lru_cache(maxsize=8192)
def implicit_tag(value: str) -> str | None:
    """The YAML 1.2 tag ruamel resolves a plain scalar ``value`` to (``tag:yaml.org,2002:int`` ...), or ``None``
    for a string: the first matching pattern of ruamel's own 1.2 table for ``value``'s first character, as its
    ``VersionedResolver.resolve`` tries them (the fast path of :mod:`yaml_fast`, which must answer as ruamel)."""
    global _IMPLICIT
    if _IMPLICIT is None:
        from ruamel.yaml.resolver import VersionedResolver

        table = VersionedResolver(version=(1, 2)).versioned_resolver
        _IMPLICIT = {first: list(table.get(first, [])) + list(table.get(None, [])) for first in table if first}
        _IMPLICIT[""] = list(table.get("", [])) + list(table.get(None, []))
        _IMPLICIT[None] = list(table.get(None, []))  # every other first character
    for tag, pattern in _IMPLICIT.get(value[:1], _IMPLICIT[None]):
        if pattern.match(value):
            return None if tag == "tag:yaml.org,2002:str" else str(tag)
    return None


def _one_line(reason: str, limit: int = 300) -> str:
    """``reason`` as one line of at most ``limit`` characters: the library quotes the values it names (a duplicate
    key's two values), which may span lines or run to the size of the file."""
    flat = reason.replace("\r", "\\r").replace("\n", "\\n")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _failing_key_line(text: str) -> int | None:
    """The 0-based line of the first top-level key whose value cannot be built, found by loading each alone."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line[:1] not in ("", " ", "\t", "#", "\r", "\n", "-")]
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        try:
            _yaml(None).load("".join(lines[start:end]))
        except Exception:
            return start
    return None


def _is_block_scalar(value: Any) -> bool:
    from ruamel.yaml.scalarstring import FoldedScalarString, LiteralScalarString

    return isinstance(value, (LiteralScalarString, FoldedScalarString))


def plain(value: Any) -> Any:
    """Convert ruamel's round-trip types into plain Python values (recursively)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, dt.datetime):
        return dt.datetime.fromisoformat(value.isoformat())
    if isinstance(value, dt.date):
        return dt.date(value.year, value.month, value.day)
    return value


def dump_scalar(value: Any) -> str:
    """Render ``value`` (str, int, bool, date, datetime, None) as YAML 1.2 scalar text that loads back equal.

    Dates and datetimes use ISO 8601 (``2026-03-16``, ``2026-03-16T09:05:28-06:00``, field report BR-08), and
    ``None`` is ``null``.
    """
    if isinstance(value, dt.date):
        return value.isoformat()
    if value is None:
        return "null"
    yaml = _yaml()
    yaml.width = 1 << 20
    out = io.StringIO()
    yaml.dump({"k": value}, out)
    text = out.getvalue()
    return text[len("k: ") :].rstrip("\n").removesuffix("\n...")
