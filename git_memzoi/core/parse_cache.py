"""A derived cache of parsed frontmatter: unchanged files are neither read nor hashed, changed ones not re-parsed.

Parsing YAML costs about a millisecond per file; hooks and ``status`` read hundreds. The cache is a file that
can be deleted at any time (DESIGN.md principle 1): a missing, unreadable or foreign cache (another cache format,
tool version or installed YAML parser) is simply rebuilt, and it is replaced atomically, so concurrent runs each
see a whole file. Values keep their YAML 1.2 types: a date or timestamp is stored tagged (or its key listed as
dated), never as a bare string, and a value of any other type (a set, bytes, a custom tag) is never cached (the
caller checks).

The file is :data:`MAGIC` followed by the payload in :mod:`marshal` format (plain dicts, lists, strings and
numbers), which every run decodes whole: equal strings are written once (:func:`share_strings`), so it decodes about
three times faster than the same payload as JSON, which was the largest per-entry cost of a warm ``status``. marshal is not meant for untrusted data; the cache lives in the git
directory, which is trusted as much as its hooks, and a file without the magic prefix is never decoded.

Each file is remembered under its name with two keys:

- its **stat signature** ``[size, mtime_ns, ctime_ns, inode]``: a file whose signature is unchanged is served
  without being opened. Any write, rename over it or ``touch`` changes the ctime, which no user call can set
  back, and a replaced file has a new inode. A signature is only *trusted* when its mtime and ctime are older
  than the start of the run by :data:`RACY_NS` (git's "racily clean" rule, with a margin over the file system's
  timestamp granularity): a write in the same clock tick as the read could otherwise leave an equal signature.
  An untrusted signature is stored as ``null``, so the file is read again next time, and trusted once it ages;
- its **content hash** (BLAKE3 of the bytes, computed by the caller): a file that was read (new signature, or
  racy) but whose bytes are known is not parsed again.
"""

from __future__ import annotations

import datetime as dt
import marshal
from pathlib import Path
from typing import Any

from git_memzoi import __version__
from git_memzoi.core import safe_read
from git_memzoi.core.clock import file_time_ns

VERSION = 4  # the cache format and the shape of what the frontmatter parser returns
MAGIC = b"memzoi parse cache\n"  # what the file starts with, before the marshal payload
RACY_NS = 3_000_000_000  # a signature younger than this, at the start of the run, is not trusted
# Tags no YAML key can collide with in practice (a NUL cannot appear in a plain YAML key).
_DATE, _DATETIME = "\x00date", "\x00datetime"
# One remembered file: [signature | None, content hash, tagged fields, body offset, dated keys | None,
# body line, body]
_SIG, _HASH, _FIELDS, _OFFSET, _DATED, _LINE, _BODY = range(7)

Parsed = tuple[dict[str, Any], str, int]  # (fields, body, body line)


class ParseCache:
    """Remembered parses by file name (stat signature) and by content hash; :meth:`save` persists this run's.

    Args:
        path: the cache file; ``None`` disables persistence (a read-only checkout still works).
        now_ns: the start of the run in nanoseconds since the epoch, on the file system's clock (the wall
            clock; injectable for tests); signatures newer than ``now_ns - RACY_NS`` are not trusted.
    """

    def __init__(self, path: Path | None, *, now_ns: int | None = None) -> None:
        self.path = path
        self._trust_before = (file_time_ns() if now_ns is None else now_ns) - RACY_NS
        self._old: dict[str, list[Any]] = {}
        self._new: dict[str, list[Any]] = {}
        self._by_hash: dict[str, list[Any]] | None = None
        self._dates: dict[str, dt.date] = {}  # ISO text → date: entries share their dates, which are immutable
        self._dirty = False
        if path is not None:
            try:
                data = decode(safe_read.read_bytes(path, None))
                if data["version"] == VERSION and data["tool"] == __version__ and data["parser"] == _parser():
                    self._old = data["files"] if type(data["files"]) is dict else {}
            except (OSError, ValueError, LookupError, TypeError, safe_read.FileRefused):  # a FIFO: never opened
                self._old = {}

    def known(self, name: str, signature: list[int]) -> Parsed | None:
        """The parse of file ``name`` when its trusted signature equals ``signature``, else ``None``."""
        item = self._old.get(name)
        if type(item) is not list or len(item) != 7 or item[_SIG] != signature:
            return None
        stored, body, line = item[_FIELDS], item[_BODY], item[_LINE]
        if type(stored) is not dict or type(body) is not str or type(line) is not int:
            return None
        try:
            fields = _typed_in_place(item, self._dates)
        except (LookupError, TypeError, ValueError, AttributeError):
            return None  # a hand-edited cache: the file is read instead
        self._new[name] = item
        return fields, body, line

    def get(self, key: str) -> tuple[dict[str, Any], int] | None:
        """Return ``(fields, body_offset)`` remembered for the content hash ``key``, or ``None``."""
        if self._by_hash is None:
            self._by_hash = {i[_HASH]: i for i in self._old.values() if type(i) is list and len(i) == 7}
        item = self._by_hash.get(key)
        if item is None:
            return None
        try:
            fields, offset = _fields(item, self._dates), item[_OFFSET]
        except (LookupError, TypeError, ValueError, AttributeError):
            return None
        return (fields, offset) if type(fields) is dict and type(offset) is int else None

    def put(
        self,
        key: str,
        fields: dict[str, Any],
        body_offset: int,
        *,
        name: str | None = None,
        signature: list[int] | None = None,
        body: str = "",
        body_line: int = 1,
    ) -> None:
        """Remember the parse of the file ``name`` (signature, body) whose content hash is ``key``.

        The signature is kept only when trusted (older than the run by :data:`RACY_NS`); a file put without a
        name can only be found by its content hash, in this run.
        """
        stored, dated = _stored(fields)
        trusted = signature is not None and max(signature[1], signature[2]) < self._trust_before
        item = [signature if trusted else None, key, stored, body_offset, dated, body_line, body]
        if self._by_hash is not None:
            self._by_hash[key] = item
        if name is not None:
            self._new[name] = item
            self._dirty = self._dirty or self._old.get(name) != item

    def save(self) -> None:
        """Write the files remembered in this run when they differ from what was loaded (best effort)."""
        if self.path is None or (not self._dirty and self._new.keys() == self._old.keys()):
            return
        try:
            files = {name: _portable(item) for name, item in self._new.items()}
            payload = {"version": VERSION, "tool": __version__, "parser": _parser(), "files": files}
            data = encode(share_strings(payload, {}))
        except ValueError:  # a value marshal cannot hold
            return  # a cache that cannot be written only costs time
        from git_memzoi.core.atomic import write_cache  # a warm run writes nothing: no need to load the writer

        write_cache(self.path, data)


def encode(payload: dict[str, Any]) -> bytes:
    """The bytes of a cache file holding ``payload`` (plain dicts, lists, strings, numbers, booleans, None).

    Raises:
        ValueError: when ``payload`` holds anything else.
    """
    return MAGIC + marshal.dumps(payload)


def share_strings(value: Any, memo: dict[str, str]) -> Any:
    """``value`` with equal strings made one object (keys included): marshal writes a string once and a reference
    after that, so decoding allocates each distinct key, status, anchor or pattern once for the whole store."""
    kind = type(value)
    if kind is str:
        return memo.setdefault(value, value)
    if kind is dict:
        share = memo.setdefault
        return {
            share(str(k), str(k)) if isinstance(k, str) else k: share(v, v)
            if type(v) is str
            else share_strings(v, memo)
            for k, v in value.items()
        }
    if kind is list:
        return [memo.setdefault(v, v) if type(v) is str else share_strings(v, memo) for v in value]
    return value


def decode(data: bytes) -> dict[str, Any]:
    """The payload of a cache file's bytes.

    Raises:
        ValueError: when the bytes are not a cache file (no magic prefix, truncated, malformed, not a dict).
    """
    if not data.startswith(MAGIC):
        raise ValueError("not a parse cache file")
    try:
        payload = marshal.loads(memoryview(data)[len(MAGIC) :])
    except (EOFError, TypeError, MemoryError, OverflowError) as exc:  # ValueError passes as it is
        raise ValueError(f"malformed parse cache: {exc}") from None
    if type(payload) is not dict:
        raise ValueError("malformed parse cache: not a mapping")
    return payload


def _parser() -> list[Any]:
    """The installed YAML parser, without importing it: where its package is, with that file's size and mtime.

    An upgrade (or any reinstall) of ruamel.yaml rewrites the file, so the cache is rebuilt with the new parser.
    """
    from importlib.machinery import PathFinder  # loaded at start-up already, unlike importlib.util

    try:
        namespace = PathFinder.find_spec("ruamel")
        locations = namespace.submodule_search_locations if namespace is not None else None
        spec = PathFinder.find_spec("ruamel.yaml", list(locations)) if locations else None
        origin = spec.origin if spec is not None else None
        if origin is None:
            return []
        st = Path(origin).stat()
    except (ImportError, ValueError, OSError):
        return []
    return [origin, st.st_size, st.st_mtime_ns]


def _fields(item: list[Any], dates: dict[str, dt.date]) -> dict[str, Any]:
    """The fields of a remembered file, as the parser gave them (a new dict; ``dates`` memoizes parsed dates)."""
    fields: dict[str, Any] = item[_FIELDS]
    dated = item[_DATED]
    if dated is None:  # dates deeper than the top level: every date is tagged
        untagged: dict[str, Any] = _untag(fields)
        return untagged
    fields = dict(fields)
    for name in dated:  # top-level dates are stored as their ISO text: 10 characters for a date
        text = fields[name]
        if type(text) is not str:  # typed in place already (:func:`_typed_in_place`)
            continue
        value = dates.get(text)
        if value is None:
            value = dates[text] = dt.date.fromisoformat(text) if len(text) == 10 else dt.datetime.fromisoformat(text)
        fields[name] = value
    return fields


def _typed_in_place(item: list[Any], dates: dict[str, dt.date]) -> dict[str, Any]:
    """:func:`_fields`, converting the top-level dates of the remembered dict itself rather than a copy: the
    fields of a file served by its signature are handed out once per run, and a copy per entry was a tenth of a
    warm ``status``'s per-entry time. :func:`_portable` turns them back into text for :meth:`ParseCache.save`."""
    fields: dict[str, Any] = item[_FIELDS]
    dated = item[_DATED]
    if dated is None:
        untagged: dict[str, Any] = _untag(fields)
        return untagged
    for name in dated:
        text = fields[name]
        if type(text) is str:
            value = dates.get(text)
            if value is None:
                value = dates[text] = (
                    dt.date.fromisoformat(text) if len(text) == 10 else dt.datetime.fromisoformat(text)
                )
            fields[name] = value
        elif not isinstance(text, dt.date):  # a hand-edited cache
            raise TypeError(f"{name} is neither a date nor its text")
    return fields


def _portable(item: list[Any]) -> list[Any]:
    """``item`` as the cache file holds it: top-level dates typed in place by :func:`_typed_in_place` back to
    their ISO text (a copy; ``item`` itself is left as it is)."""
    fields, dated = item[_FIELDS], item[_DATED]
    if not dated or all(type(fields.get(k)) is str for k in dated):
        return item
    text = {k: v.isoformat() if k in dated and isinstance(v, dt.date) else v for k, v in fields.items()}
    return [*item[:_FIELDS], text, *item[_FIELDS + 1 :]]


def _stored(fields: dict[str, Any]) -> tuple[dict[str, Any], list[str] | None]:
    """``fields`` as the cache holds them, and the top-level keys whose ISO text is a date (``None``: all tagged)."""
    nested = any(isinstance(v, (dict, list)) and _tag(v) != v for v in fields.values())
    if nested:
        return _tag(fields), None
    dated = [k for k, v in fields.items() if isinstance(v, dt.date)]
    return {k: v.isoformat() if k in dated else v for k, v in fields.items()}, dated


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
