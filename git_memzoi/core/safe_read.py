"""Reading files and documents that may be hostile (io): only regular files, never blocking, never past a cap.

Every file the two models read from a store, a configuration, a request or a corpus comes through here (issue 13,
"Hangs"): a FIFO blocks ``open()`` until a writer comes (forever, in a git hook), a device streams without end, a
directory where a file is expected fails in odd ways, and a 10 MB file costs seconds to scan. The rules:

- lstat first, and open nothing that is not a regular file (a symlink is refused too unless the caller follows
  links, as it did before);
- open with ``O_NONBLOCK`` (and ``O_NOFOLLOW``), so a file swapped for a FIFO or a link after the lstat cannot
  block either, and check the open descriptor again;
- read at most the cap: a file over it is refused before it is read, and one that grew past it meanwhile too.

A refused file raises :class:`FileRefused`, an :class:`~git_memzoi.errors.InputError` (exit 2) with a stable code
(:data:`NOT_REGULAR`, :data:`TOO_LARGE`, :data:`SYMLINK`); the readers of a store turn it into an unreadable item
and go on with the other files. A missing or unreadable file is the ``OSError`` ``open()`` raises.

JSON documents are bounded too (:func:`load_json`): at most :data:`MAX_JSON_DEPTH` levels of nesting, far below
Python's recursion limit, so no later walk over a value can overflow (YAML has its own caps in
:mod:`git_memzoi.core.yamlio`).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import IO, Any

from git_memzoi.errors import InputError

NOT_REGULAR = "not_a_regular_file"
TOO_LARGE = "file_too_large"
SYMLINK = "symlink"
JSON_TOO_COMPLEX = "json_too_complex"
MAX_FILE_BYTES = 256 * 1024  # an entry, a record, a packet: the cap each store already had
MAX_INDEX_BYTES = 16 * 1024 * 1024  # a generated INDEX.md: about 150 bytes per entry
MAX_JSON_DEPTH = 100  # nesting levels of a JSON document; hook inputs and artifacts use fewer than 10
_OPEN = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CHUNK = 1 << 20


class FileRefused(InputError):
    """A file that was not read: not a regular file, a symlink, or larger than its cap (exit 2).

    ``path`` is the path as given, ``reason`` the words without it (``a FIFO, not a regular file``).
    """

    default_code = NOT_REGULAR

    def __init__(self, path: str, reason: str, code: str) -> None:
        super().__init__(f"{path}: {reason}", code)
        self.path = path
        self.reason = reason

    def renamed(self, path: str) -> FileRefused:
        """The same refusal naming ``path`` (a repository-relative path, say, for the absolute one read)."""
        return FileRefused(path, self.reason, self.code)


class JsonTooComplex(ValueError):
    """A JSON text nested deeper than :data:`MAX_JSON_DEPTH` (a ``ValueError``, like any other invalid JSON, so the
    callers' handling of invalid JSON covers it); ``code`` is :data:`JSON_TOO_COMPLEX`."""

    code = JSON_TOO_COMPLEX


def kind(mode: int) -> str:
    """What a file of lstat ``mode`` is, in words: ``a FIFO``, ``a directory``, ``a symlink``, …"""
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symlink"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "a special file"


def check(info: os.stat_result, path: str, max_bytes: int | None = None) -> None:
    """Refuse the file whose (l)stat is ``info`` unless it is a regular file of at most ``max_bytes``.

    Raises:
        FileRefused: ``symlink`` for a link, ``not_a_regular_file`` for anything else not regular,
            ``file_too_large`` for a regular file over ``max_bytes``.
    """
    mode = info.st_mode
    if not stat.S_ISREG(mode):
        if stat.S_ISLNK(mode):
            raise FileRefused(path, "a symlink; memory files must be regular files", SYMLINK)
        raise FileRefused(path, f"{kind(mode)}, not a regular file; not read", NOT_REGULAR)
    if max_bytes is not None and info.st_size > max_bytes:
        raise FileRefused(path, f"larger than {max_bytes} bytes; not read", TOO_LARGE)


def within(data: bytes, path: str, max_bytes: int | None) -> bytes:
    """``data`` (a file's bytes read elsewhere, a git blob) when it is at most ``max_bytes`` long.

    Raises:
        FileRefused: ``file_too_large``.
    """
    if max_bytes is not None and len(data) > max_bytes:
        raise FileRefused(path, f"larger than {max_bytes} bytes; not read", TOO_LARGE)
    return data


def open_fd(path: str | os.PathLike[str], max_bytes: int | None = None, *, follow_symlinks: bool = False) -> int:
    """An open, non-blocking read descriptor on the regular file ``path`` (the caller closes it).

    Raises:
        FileRefused: see :func:`check` (checked on the lstat, or stat when ``follow_symlinks``, and again on the
            open descriptor).
        OSError: what ``open()`` raises for a missing or unreadable file.
    """
    return _open(os.fspath(path), max_bytes, follow_symlinks)[0]


def _open(name: str, max_bytes: int | None, follow_symlinks: bool) -> tuple[int, os.stat_result]:
    check(os.stat(name) if follow_symlinks else os.lstat(name), name, max_bytes)
    try:
        fd = os.open(name, _OPEN if follow_symlinks else _OPEN | _NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # became a symlink since the lstat
            raise FileRefused(name, "a symlink; memory files must be regular files", SYMLINK) from None
        raise
    try:
        info = os.fstat(fd)
        check(info, name, max_bytes)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_bytes(
    path: str | os.PathLike[str], max_bytes: int | None = MAX_FILE_BYTES, *, follow_symlinks: bool = False
) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them (``None``: no cap).

    Costs one lstat, one open, one fstat and (for a file under 1 MiB) one read: the store loaders call it once
    per file in every hook.

    Raises:
        FileRefused: not a regular file (``not_a_regular_file``, ``symlink``) or over the cap (``file_too_large``).
        OSError: a missing or unreadable file.
    """
    name = os.fspath(path)
    fd, info = _open(name, max_bytes, follow_symlinks)
    try:
        size = info.st_size
        limit = None if max_bytes is None else max_bytes + 1
        first = os.read(fd, size + 1 if limit is None else min(size + 1, limit))
        if len(first) <= size:  # the whole file in one call: no second read just to see the end
            return first
        chunks, total = [first], len(first)  # the file grew since the fstat
        while chunks[-1] and (limit is None or total < limit):
            chunks.append(os.read(fd, _CHUNK if limit is None else min(_CHUNK, limit - total)))
            total += len(chunks[-1])
    finally:
        os.close(fd)
    if max_bytes is not None and total > max_bytes:
        raise FileRefused(name, f"larger than {max_bytes} bytes; not read", TOO_LARGE)
    return b"".join(chunks)


def read_text(
    path: str | os.PathLike[str],
    max_bytes: int | None = MAX_FILE_BYTES,
    *,
    follow_symlinks: bool = False,
    errors: str = "strict",
) -> str:
    """:func:`read_bytes` decoded as UTF-8 (``errors`` as for ``bytes.decode``).

    Raises:
        FileRefused: as :func:`read_bytes`. UnicodeDecodeError: not UTF-8 (with ``errors="strict"``).
        OSError: a missing or unreadable file.
    """
    return read_bytes(path, max_bytes, follow_symlinks=follow_symlinks).decode("utf-8", errors)


def read_head(path: str | os.PathLike[str], limit: int, *, follow_symlinks: bool = True) -> bytes:
    """The first ``limit`` bytes of the regular file ``path``, whatever its size (a hook's header, a manager's
    configuration): a FIFO there is refused unopened instead of blocking ``integrate`` or ``hooks``.

    Raises:
        FileRefused: not a regular file. OSError: a missing or unreadable file.
    """
    fd = open_fd(path, follow_symlinks=follow_symlinks)
    try:
        return os.read(fd, limit)
    finally:
        os.close(fd)


def open_stream(path: str | os.PathLike[str], *, follow_symlinks: bool = False) -> IO[bytes]:
    """A binary file object on the regular file ``path``, for reading a log line by line (no size cap).

    Raises:
        FileRefused: not a regular file. OSError: a missing or unreadable file.
    """
    return os.fdopen(open_fd(path, follow_symlinks=follow_symlinks), "rb")


def open_append(path: str | os.PathLike[str], mode: int = 0o600) -> int:
    """A descriptor appending to the regular file ``path`` (created with ``mode`` when missing), opened without
    blocking: a FIFO, a directory or a device there is refused before anything is written (the caller closes).

    Raises:
        FileRefused: ``not_a_regular_file``. OSError: the file cannot be opened for writing.
    """
    name = os.fspath(path)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags, mode)
    except OSError as exc:
        if exc.errno in (errno.ENXIO, errno.EISDIR):  # a FIFO nobody reads; a directory
            what = kind(os.stat(name).st_mode)
            raise FileRefused(name, f"{what}, not a regular file; not written", NOT_REGULAR) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(name, f"{kind(info.st_mode)}, not a regular file; not written", NOT_REGULAR)
    except BaseException:
        os.close(fd)
        raise
    return fd


def require_regular_or_absent(path: str | os.PathLike[str]) -> None:
    """Refuse ``path`` when something other than a regular file is there (links followed): the check a writer
    makes before its first write, so a command that would fail on the file fails before it changes anything.

    Raises:
        FileRefused: ``not_a_regular_file``.
    """
    name = os.fspath(path)
    try:
        info = os.stat(name)
    except FileNotFoundError:
        return
    except OSError as exc:  # a dangling or looping link, a component that is a file: not a usable log either
        raise FileRefused(name, f"cannot be used ({exc.strerror})", NOT_REGULAR) from None
    if not stat.S_ISREG(info.st_mode):
        raise FileRefused(name, f"{kind(info.st_mode)}, not a regular file; not written", NOT_REGULAR)


def load_json(text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH, **options: Any) -> Any:
    """``json.loads(text, **options)``, refusing a document nested deeper than ``max_depth`` levels.

    Python's JSON decoder recurses once per level: 100,000 levels raise ``RecursionError`` (an internal error,
    exit 3, before this check), and a value just under the interpreter's limit overflows the first recursive walk
    over it. Both are refused here as invalid JSON.

    Raises:
        JsonTooComplex: nested too deep (a ``ValueError``). ValueError: any other invalid JSON.
    """
    import json  # the store loaders import this module on every hook; most never parse JSON

    try:
        value = json.loads(text, **options)
    except RecursionError:
        raise JsonTooComplex(f"nested deeper than {max_depth} levels") from None
    if depth(value, max_depth) > max_depth:
        raise JsonTooComplex(f"nested deeper than {max_depth} levels")
    return value


def depth(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """How deeply lists and dicts nest in ``value`` (a scalar is 0, ``[]`` is 1), counted without recursion and
    only up to ``limit + 1``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            level += 1
            if level > deepest:
                deepest = level
                if deepest > limit:
                    return deepest
            stack.extend((v, level) for v in (item.values() if isinstance(item, dict) else item))
    return deepest
