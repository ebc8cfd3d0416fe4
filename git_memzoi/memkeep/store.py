"""Find a memkeep store and read its entries (io).

Discovery (memkeep README "Commands", "Optional .memkeep.yml"): an explicit ``--store`` path (or
``MEMKEEP_STORE``) wins; otherwise the store directory name is ``--store-dir``, else ``store_dir`` from the
nearest ``.memkeep.yml``, else ``agent-memory``, and the store is the first ``<dir>/<name>/`` with an
``entries/`` folder found walking up from the start directory to the repository root. A store outside the
repository is refused.
"""

from __future__ import annotations

import datetime as dt
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from git_memzoi.core import safe_read
from git_memzoi.core.hashing import short_hash
from git_memzoi.core.parse_cache import ParseCache
from git_memzoi.core.paths import nfc
from git_memzoi.memkeep.location import CONFIG_FIELDS as CONFIG_FIELDS
from git_memzoi.memkeep.location import CONFIG_NAME as CONFIG_NAME
from git_memzoi.memkeep.location import DEFAULT_STORE_DIR as DEFAULT_STORE_DIR
from git_memzoi.memkeep.location import MAX_CONFIG_BYTES as MAX_CONFIG_BYTES
from git_memzoi.memkeep.location import Store as Store
from git_memzoi.memkeep.location import StoreConfig as StoreConfig
from git_memzoi.memkeep.location import StoreNotFound as StoreNotFound
from git_memzoi.memkeep.location import locate as locate
from git_memzoi.memkeep.location import read_config as read_config

if TYPE_CHECKING:  # the entry model loads when entries are read, not when a served status answer is unpickled
    from git_memzoi.memkeep.entries import Entry

MAX_ENTRY_BYTES = safe_read.MAX_FILE_BYTES  # larger files are not read at all; lint's own cap is smaller
MAX_INDEX_BYTES = safe_read.MAX_INDEX_BYTES
BAD_NAME = "bad_file_name"  # an entry file whose name is not UTF-8: listed as unreadable, never indexed


@dataclass(frozen=True)
class Unreadable:
    """An entry file that could not be read; it never hides the others."""

    path: str
    line: int | None
    reason: str
    code: str


@dataclass(frozen=True)
class LoadedStore:
    """A store with its readable entries (sorted by path) and its unreadable files."""

    store: Store
    entries: tuple[Entry, ...]
    unreadable: tuple[Unreadable, ...]


def leftovers(store: Store) -> list[Path]:
    """Temporary files a killed writer left in the store (beside its entries or INDEX.md, or in the git
    directory's scratch folder); read-only, for ``git memzoi doctor``."""
    from git_memzoi.core import scratch

    return scratch.leftovers(store.root.resolve(), _store_folders(store))


def sweep_leftovers(store: Store) -> None:
    """Remove :func:`leftovers` (writers call it under the lifecycle lock)."""
    from git_memzoi.core import scratch

    scratch.sweep(store.root.resolve(), _store_folders(store))


def _store_folders(store: Store) -> list[Path]:
    folders = [store.path, store.entries_dir]
    try:
        with os.scandir(store.entries_dir) as listing:
            folders += [Path(i.path) for i in listing if i.is_dir(follow_symlinks=False)]
    except OSError:
        pass
    return folders


def cache_name(store: Store) -> str:
    """The name part of ``store``'s derived caches under ``<git dir>/memzoi/cache/`` (its parse cache, its status
    answer): a short hash of the store's repository-relative path."""
    return short_hash(store.rel.encode("utf-8"))


def cache_for(git_dir: Path, store: Store) -> ParseCache:
    """The parse cache of ``store``, kept under the git directory (never in the working tree)."""
    return ParseCache(git_dir / "memzoi" / "cache" / f"memkeep-{cache_name(store)}.marshal")


PARALLEL_ENTRIES = 200  # files to parse, at least, for a forked reader to pay (core/parallel.py)
OWN_PERCENT = 30  # of them parsed here, after ``alongside``: both sides finish together (1,000 entries, pygit2)


def load(
    store: Store, cache: ParseCache | None = None, *, alongside: Callable[[], object] | None = None
) -> LoadedStore:
    """Read every ``*.md`` below ``entries/``; a broken file becomes an :class:`Unreadable`, not an error.

    A file whose stat signature the parse cache trusts is not opened (see :mod:`git_memzoi.core.parse_cache`).
    With :data:`PARALLEL_ENTRIES` files or more to parse, a forked child parses most of them
    (:func:`git_memzoi.core.parallel.read_all`) while this process runs ``alongside`` (the caller's own work,
    e.g. opening the repository: called once in any case, before the files are parsed here), then parses its
    share. The result and the cache written are the serial read's.
    """
    from git_memzoi.memkeep.entries import Entry, served

    cache = cache or ParseCache(None)
    slots: list[Entry | Unreadable | None] = []
    misses: list[tuple[int, str, str, str, list[int] | None]] = []  # (slot, file, rel, name, signature)
    skip = len(str(store.root)) + 1  # the root and its separator
    posix = os.sep == "/"
    known = cache.known
    for file, signature in _entry_files(str(store.entries_dir)):
        name = file[skip:]
        rel = name if posix else name.replace(os.sep, "/")
        if not rel.isascii():
            if not _is_text(rel):  # bytes that are not UTF-8 (lone surrogates): no file name INDEX.md can hold
                shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                slots.append(Unreadable(shown, None, "the file name is not valid UTF-8; rename it", BAD_NAME))
                continue
            rel = nfc(rel)
        stem = rel[rel.rfind("/") + 1 : -3]  # the file name without `.md`
        hit = known(name, signature) if signature is not None else None
        if hit is not None:
            slots.append(served(rel, hit[0], hit[1], hit[2], stem))
            continue
        misses.append((len(slots), file, rel, name, signature))
        slots.append(None)
    _parse_misses(misses, slots, cache, alongside)
    cache.save()
    entries = tuple(slot for slot in slots if isinstance(slot, Entry))
    unreadable = tuple(slot for slot in slots if isinstance(slot, Unreadable))
    return LoadedStore(store, entries, unreadable)


def _parse_misses(
    misses: list[tuple[int, str, str, str, list[int] | None]],
    slots: list[Entry | Unreadable | None],
    cache: ParseCache,
    alongside: Callable[[], object] | None,
) -> None:
    """Fill the slots of ``misses`` with their parses and remember them in ``cache``, in walk order."""

    def parse(miss: tuple[int, str, str, str, list[int] | None]) -> tuple[Entry | Unreadable, _Remembered | None]:
        return _read_entry(miss[1], miss[2], cache)

    parsed: list[tuple[Entry | Unreadable, _Remembered | None] | None] = [None] * len(misses)
    if len(misses) < PARALLEL_ENTRIES:  # the usual warm run (a hook): no fork, nor the pickling machinery's import
        if alongside is not None:
            alongside()
        parsed[:] = map(parse, misses)
    else:
        from git_memzoi.core.parallel import read_all

        with read_all(misses, parse, own_percent=OWN_PERCENT, min_items=PARALLEL_ENTRIES) as pairs:
            if alongside is not None:
                alongside()
            for n, result in pairs:
                parsed[n] = result
    for (slot, _, _, name, signature), done in zip(misses, parsed, strict=True):
        assert done is not None  # read_all yields every index
        entry, remembered = done
        slots[slot] = entry
        if remembered is not None and not isinstance(entry, Unreadable):
            key, fields, offset = remembered
            cache.put(key, fields, offset, name=name, signature=signature, body=entry.body, body_line=entry.body_line)


def _is_text(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def entry_file(store: Store, rel: str) -> Path:
    """The file on disk behind an entry's path ``rel`` (repository-relative, NFC).

    Entry paths are NFC so that they compare equal to git's paths (field report BR-23); on a file system that
    keeps names as bytes, the file itself may be spelled in NFD. Each component is matched exactly first,
    then by its NFC form; the NFC path is returned when nothing matches.
    """
    path = store.root
    for part in PurePosixPath(rel).parts:
        exact = path / part
        if exact.exists() or exact.is_symlink():
            path = exact
            continue
        try:
            same = sorted(c for c in path.iterdir() if nfc(c.name) == nfc(part))
        except OSError:
            same = []
        if not same:
            return store.root / rel
        path = same[0]
    return path


def read_entry_file(file: Path, rel: str) -> bytes | Unreadable:
    """The bytes of the entry file ``file`` (shown as ``rel``), or why it is not read, as :func:`load` reads it:
    for a caller naming one entry (``git memzoi show``) that must refuse it the way the store lists it."""
    return _read_regular(str(file), rel)


def _read_regular(file: str, rel: str) -> bytes | Unreadable:
    """The bytes of a regular entry file of at most :data:`MAX_ENTRY_BYTES`, else why not: a symlink
    (``symlink``), a FIFO, socket, device or folder (``not_a_regular_file``, never opened, so it cannot block),
    too large (``file_too_large``) or unreadable (``unreadable``)."""
    try:
        return safe_read.read_bytes(file, MAX_ENTRY_BYTES)
    except safe_read.FileRefused as exc:
        reason = "a symlink; entries must be regular files" if exc.code == safe_read.SYMLINK else exc.reason
        return Unreadable(rel, None, reason, exc.code)
    except OSError as exc:
        return Unreadable(rel, None, f"cannot read ({exc.strerror})", "unreadable")


def entry_signatures(store: Store) -> list[tuple[str, list[int] | None]]:
    """Every entry file of ``store`` (absolute path, sorted) with its stat signature ``[size, mtime_ns,
    ctime_ns, inode]``, ``None`` when it is no regular file: what :func:`load` reads, without reading it."""
    return _entry_files(str(store.entries_dir))


def _entry_files(directory: str) -> list[tuple[str, list[int] | None]]:
    """Every ``*.md`` below ``directory``, sorted, with its stat signature ``[size, mtime_ns, ctime_ns, inode]``
    (``None`` when it is not a regular file, or vanished); plain strings and one lstat each, since this runs
    once per entry in every hook."""
    found: list[tuple[str, list[int] | None]] = []
    _walk(directory, found)
    found.sort(key=itemgetter(0))  # paths are unique: comparing the strings alone is enough, and cheaper
    return found


def _walk(directory: str, found: list[tuple[str, list[int] | None]]) -> None:
    try:
        listing = list(os.scandir(directory))
    except OSError:
        return
    is_regular, is_directory = stat.S_ISREG, stat.S_ISDIR
    for item in listing:
        name = item.name
        if name[:1] == ".":
            continue
        if name[-3:] == ".md":  # an entry file, almost always: its lstat also says whether it is a folder
            try:
                st = item.stat(follow_symlinks=False)
            except OSError:
                found.append((item.path, None))
                continue
            mode = st.st_mode
            if is_regular(mode):
                found.append((item.path, [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]))
            elif is_directory(mode):
                _walk(item.path, found)
            else:
                found.append((item.path, None))
        elif item.is_dir(follow_symlinks=False):
            _walk(item.path, found)
        elif item.is_symlink() and item.is_dir():  # a linked folder is never followed: say so, like a linked entry
            found.append((item.path, None))


_Remembered = tuple[str, dict[str, Any], int]  # what the parse cache keeps of a file: hash, fields, body offset


def _read_entry(file: str, rel: str, cache: ParseCache) -> tuple[Entry | Unreadable, _Remembered | None]:
    """The entry in ``file`` (``rel``: its repository-relative NFC path), or why it cannot be read; and what the
    parse cache should remember of it (``None``: nothing, e.g. a value the cache cannot hold). Only reads
    ``cache``, so it runs in a forked reader too."""
    from git_memzoi.memkeep.entries import Entry  # loaded already by load(), the one caller

    data = _read_regular(file, rel)
    if isinstance(data, Unreadable):
        return data, None
    stem = rel.rsplit("/", 1)[-1][: -len(".md")]
    key = short_hash(data, 32)
    cached = cache.get(key)
    if cached is not None:
        fields, offset = cached
        text = data.decode("utf-8-sig")
        return Entry(rel, fields, text[offset:], 1 + text.count("\n", 0, offset), stem), (key, fields, offset)
    from git_memzoi.core import frontmatter

    try:
        doc = frontmatter.parse(data)
    except frontmatter.FrontmatterError as exc:
        return Unreadable(rel, exc.line, exc.reason, exc.code), None
    if not doc.split.has_frontmatter:
        return Unreadable(rel, 1, frontmatter.missing_reason(doc.split), "no_frontmatter"), None
    fields = doc.fields
    offset = len(doc.split.opening + doc.split.yaml_text + doc.split.closing)
    entry = Entry(rel, fields, doc.body, doc.split.body_start_line, stem)
    if not _cacheable(fields):  # a value the cache does not hold (`!!binary`, `!!set`, a custom tag): not cached
        return entry, None
    return entry, (key, fields, offset)


_PLAIN = frozenset({str, int, float, bool, type(None), dt.date, dt.datetime})


def _cacheable(value: Any, depth: int = 0) -> bool:
    """True when ``value`` holds only types the parse cache stores and gives back equal."""
    kind = type(value)
    if kind in _PLAIN:
        return True
    if depth > 50:
        return False
    if kind is dict:  # a key starting with NUL could be mistaken for the cache's date tags
        return all(
            type(k) is str and k[:1] != "\x00" and (type(v) in _PLAIN or _cacheable(v, depth + 1))
            for k, v in value.items()
        )
    if kind is list:
        return all(type(v) in _PLAIN or _cacheable(v, depth + 1) for v in value)
    return False  # a subclass (a ruamel scalar type, a date subclass) may not come back as it was
