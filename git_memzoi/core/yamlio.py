"""YAML 1.2 through ruamel.yaml: the only module that imports it.

Loading follows the YAML 1.2 core schema (``no`` and ``NO`` stay strings, field report BR-06); duplicate keys
are errors. Values come back as plain Python: dict, list, str, int, float, bool, None, ``datetime.date`` and
``datetime.datetime``.
"""

from __future__ import annotations

import datetime as dt
import io
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class YamlProblem(Exception):
    """A YAML syntax or structure error at a 0-based ``line`` of the parsed text (``None`` when unknown)."""

    reason: str
    line: int | None


@dataclass(frozen=True)
class KeySpan:
    """Where a top-level key's value sits in the YAML text: 0-based line and column of key and value."""

    key_line: int
    value_line: int
    value_col: int
    is_scalar: bool


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt", pure=True)
    yaml.Constructor = _constructor_class()
    yaml.allow_duplicate_keys = False
    return yaml


_CONSTRUCTOR: Any = None


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


def load_mapping(text: str, what: str = "frontmatter") -> tuple[dict[str, Any], dict[str, KeySpan]]:
    """Parse ``text`` as one YAML mapping (an empty text is ``{}``); ``what`` names the text in messages
    (``frontmatter``, ``the file``).

    Returns:
        (fields, spans): the mapping as plain Python values, and for every top-level key where its value is.

    Raises:
        YamlProblem: on a syntax error, a duplicate key, a non-string key, a merge key (``<<``), or a document
            that is not a mapping.
    """
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        data = _yaml().load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = exc.problem or exc.context or "invalid YAML"
        raise YamlProblem(reason, mark.line if mark else None) from None
    except YAMLError as exc:
        raise YamlProblem(str(exc).splitlines()[0], None) from None
    except Exception as exc:  # a value the library cannot build, e.g. `!!float abc`: name it, never crash
        reason = f"a value cannot be read ({type(exc).__name__}: {exc})"
        raise YamlProblem(reason, _failing_key_line(text)) from None
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


def _failing_key_line(text: str) -> int | None:
    """The 0-based line of the first top-level key whose value cannot be built, found by loading each alone."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line[:1] not in ("", " ", "\t", "#", "\r", "\n", "-")]
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        try:
            _yaml().load("".join(lines[start:end]))
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
