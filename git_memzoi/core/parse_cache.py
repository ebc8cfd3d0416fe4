"""A derived cache of parsed frontmatter, keyed by the BLAKE3 hash of the file's bytes.

Parsing YAML costs about a millisecond per file; hooks and ``status`` read hundreds. The cache is a JSON file
that can be deleted at any time (DESIGN.md principle 1): a missing, unreadable or foreign-version cache is
simply rebuilt. Values keep their YAML 1.2 types: dates and timestamps are stored tagged, never as strings.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from git_memzoi.core.atomic import write_bytes_atomic
from git_memzoi.errors import MemzoiError

VERSION = 2
# Tags no YAML key can collide with in practice (a NUL cannot appear in a plain YAML key).
_DATE, _DATETIME = "\x00date", "\x00datetime"


class ParseCache:
    """``content hash → (fields, body offset)``; call :meth:`save` to persist what this run used.

    Args:
        path: the cache file; ``None`` disables persistence (a read-only checkout still works).
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._old: dict[str, Any] = {}
        self._used: dict[str, Any] = {}
        if path is not None:
            try:
                data = json.loads(path.read_bytes())
                if data.get("version") == VERSION:
                    self._old = data["items"]
            except (OSError, ValueError, KeyError, AttributeError):
                self._old = {}

    def get(self, key: str) -> tuple[dict[str, Any], int] | None:
        """Return ``(fields, body_offset)`` cached for ``key``, or ``None``."""
        item = self._used.get(key) or self._old.get(key)
        if item is None:
            return None
        self._used[key] = item
        fields, offset, dated = item
        if dated is None:  # dates deeper than the top level: walk everything
            return _untag(fields), offset
        fields = dict(fields)
        for name in dated:
            fields[name] = _untag(fields[name])
        return fields, offset

    def put(self, key: str, fields: dict[str, Any], body_offset: int) -> None:
        """Remember the parse of the file whose content hash is ``key``."""
        nested = any(isinstance(v, (dict, list)) and _tag(v) != v for v in fields.values())
        dated = None if nested else [k for k, v in fields.items() if isinstance(v, dt.date)]
        self._used[key] = [_tag(fields), body_offset, dated]

    def save(self) -> None:
        """Write the entries used in this run when they differ from what was loaded (best effort)."""
        if self.path is None or self._used.keys() == self._old.keys():
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            payload = json.dumps({"version": VERSION, "items": self._used}, ensure_ascii=False)
            write_bytes_atomic(self.path, payload.encode("utf-8"))
        except (OSError, MemzoiError):
            pass  # a cache that cannot be written only costs time


def _tag(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return {_DATETIME: value.isoformat()}
    if isinstance(value, dt.date):
        return {_DATE: value.isoformat()}
    if isinstance(value, dict):
        return {k: _tag(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tag(v) for v in value]
    return value


def _untag(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and _DATE in value:
            return dt.date.fromisoformat(value[_DATE])
        if len(value) == 1 and _DATETIME in value:
            return dt.datetime.fromisoformat(value[_DATETIME])
        return {k: _untag(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_untag(v) for v in value]
    return value
