"""Every write of the tool (io): atomic replace, exclusive create, append, folders, removal - each confined to a
root by :mod:`git_memzoi.core.confine` - and the lifecycle lock.

Each writer takes the ``root`` its file must stay in (the working tree, or the git directory for git-private
state), resolves the file's real path below it, refuses a symlink anywhere on the way (``unsafe_path``, nothing
written) and then works relative to a checked descriptor of the file's folder. ``tests/test_architecture.py``
keeps raw writes out of the rest of the package, so a new writer cannot skip the guard. Temporary files live
where git never lists them (:mod:`git_memzoi.core.scratch`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from git_memzoi.core import scratch
from git_memzoi.core.command import command_name
from git_memzoi.core.command import name_command as name_command  # re-exported
from git_memzoi.core.confine import UnsafePath, confined, open_dir, real_root
from git_memzoi.errors import InputError, MemzoiError, ToolError


class NotAFile(InputError):
    """A path the tool writes is a folder, a FIFO, a socket or a device (exit 2; nothing written)."""

    default_code = "not_a_regular_file"  # the code safe_read gives a read of it


def write_bytes_atomic(path: Path, data: bytes, *, root: Path, parents: bool = False, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically; readers see the old or the new file, never a mix.

    The temporary file is written (fsynced) where git never sees it and renamed into the checked folder. An
    existing file keeps its mode; a new one gets the mode ``open()`` would give it (``0o666`` less the umask).

    Args:
        root: the folder ``path`` must stay in (see :func:`~git_memzoi.core.confine.confined`).
        parents: create the missing folders above ``path`` (confined too).
        durable: fsync the file and its folder before returning; ``False`` for a derived cache (:func:`write_cache`).

    Raises:
        UnsafePath: a symlink on the way, or outside ``root``. NotAFile: ``path`` is not a regular file.
        ToolError: the folder is missing or not writable (``write_failed``).
    """
    real = _target(path, root, parents)
    with _folder(real, root) as dir_fd:
        _changed(real.parent)
        temp = _filled_temp(dir_fd, real, real_root(root), data, _existing_mode(real, dir_fd), durable)
        try:
            os.replace(temp.name, real.name, src_dir_fd=temp.dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            scratch.discard(temp)
            raise
        if durable:
            _fsync(dir_fd)


def write_many_atomic(items: Sequence[tuple[Path, bytes]], *, root: Path, parents: bool = False) -> None:
    """:func:`write_bytes_atomic` for each ``(path, data)``, durable, with the folder work done once per folder:
    confining, creating and opening it, and the fsync that makes its renames durable (one per folder after its
    files, not one per file). Files are written folder by folder, in the order the folders first appear, each
    folder's files in the given order. A bulk apply of 1,000 notes writes 2,000 files into two folders; each
    file's own checks and its four walks of the path cost more than its parsing (issue 17, "Bulk paths").

    Each file is still checked as :func:`write_bytes_atomic` checks it: its name is refused when it is a
    symlink (``unsafe_path``) or no regular file (``not_a_regular_file``), and any path that is not a plain
    name in its folder (``..``, a ``.git`` name, a path named twice) is written by :func:`write_bytes_atomic`
    itself, with every check of its own.

    Raises:
        UnsafePath, NotAFile, ToolError: as :func:`write_bytes_atomic`, for the first file that fails (the ones
            before it are written: callers run inside a journaled operation, which rolls back).
    """
    folders: dict[Path, list[tuple[Path, bytes]]] = {}
    seen: set[Path] = set()
    for path, data in items:
        if path in seen or path.name in ("", ".", "..") or path.name.casefold() in _GIT_FILE_NAMES:
            _flush(folders, root, parents)
            write_bytes_atomic(path, data, root=root, parents=parents)  # the general path, every check its own
            continue
        seen.add(path)
        folders.setdefault(path.parent, []).append((path, data))
    _flush(folders, root, parents)


_GIT_FILE_NAMES = frozenset({".git", "git~1"})  # as confine's: a name the per-file path refuses, with its message


def _flush(folders: dict[Path, list[tuple[Path, bytes]]], root: Path, parents: bool) -> None:
    base = real_root(root)
    for folder, files in folders.items():
        real_folder = make_dirs(folder, root=root) if parents else confined(folder, root)
        with _folder(real_folder / files[0][0].name, root) as dir_fd:  # opens the file's folder
            _changed(real_folder)
            for path, data in files:
                real = real_folder / path.name
                temp = _filled_temp(dir_fd, real, base, data, _existing_mode(real, dir_fd))
                try:
                    os.replace(temp.name, real.name, src_dir_fd=temp.dir_fd, dst_dir_fd=dir_fd)
                except BaseException:
                    scratch.discard(temp)
                    raise
            _fsync(dir_fd)
    folders.clear()


def _filled_temp(
    dir_fd: int, real: Path, base: Path, data: bytes, mode: int | None, durable: bool = True
) -> scratch.Temp:
    """A temporary file (:mod:`~git_memzoi.core.scratch`) holding ``data``, ``mode`` set when given, fsynced when
    ``durable``: ready to be renamed or linked onto ``real`` (below the resolved root ``base``); removed again
    when writing it fails."""
    try:
        temp = scratch.create(dir_fd, real.name, base)
    except OSError as exc:
        raise ToolError(f"cannot write in {real.parent}: {exc.strerror or exc}", "write_failed") from exc
    try:
        with os.fdopen(temp.fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            if durable:
                os.fsync(handle.fileno())
    except BaseException:
        scratch.discard(temp)
        raise
    return temp


def write_new(path: Path, data: bytes, *, root: Path, mode: int = 0o644, parents: bool = False) -> bool:
    """Create ``path`` holding ``data``, never replacing anything (a hard link of a complete temporary file).

    Returns:
        False when ``path`` already exists (nothing written), else True.

    Raises:
        UnsafePath, ToolError: as :func:`write_bytes_atomic`.
    """
    real = _target(path, root, parents)
    with _folder(real, root) as dir_fd:
        _changed(real.parent)
        temp = _filled_temp(dir_fd, real, real_root(root), data, mode)
        try:
            os.link(temp.name, real.name, src_dir_fd=temp.dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        except FileExistsError:
            return False
        finally:
            scratch.discard(temp)
        _fsync(dir_fd)
    return True


def open_append(path: Path, *, root: Path, mode: int = 0o600) -> int:
    """A descriptor appending to the regular file ``path`` (created ``mode`` when missing); the caller closes it.

    Opened ``O_NOFOLLOW`` (a symlinked log is refused, never followed) and ``O_NONBLOCK`` (a FIFO put there never
    blocks), relative to the checked folder, and checked to be a regular file before anything is written.

    Raises:
        UnsafePath: a symlink on the way or at ``path``. NotAFile: not a regular file. ToolError: not writable.
    """
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    return _open_regular(path, root, flags, mode, parents=True)


def move_new(source: Path, target: Path, *, source_root: Path, root: Path) -> bool:
    """Move the regular file ``source`` (below ``source_root``) to ``target`` (below ``root``), never replacing
    anything: a hard link, then the source unlinked; across file systems a complete copy (:func:`write_new`,
    the mode kept), then the unlink. A kill in between leaves both, byte-identical, which a rerun resolves.

    Returns:
        False when ``target`` exists (nothing moved), else True.

    Raises:
        UnsafePath: a symlink on either way, or at ``source``. NotAFile: ``source`` is not a regular file.
        ToolError: it cannot be read, linked or removed (``write_failed``).
    """
    real_source = confined(source, source_root)
    st = os.lstat(real_source)
    if not stat.S_ISREG(st.st_mode):
        raise NotAFile(f"cannot move {source}: it is not a regular file")
    real = _target(target, root, True)
    _changed(real.parent)
    try:
        with _folder(real, root) as dir_fd:
            os.link(real_source, real.name, dst_dir_fd=dir_fd, follow_symlinks=False)
            _fsync(dir_fd)
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise ToolError(f"cannot move {source} to {target}: {exc.strerror}", "write_failed") from exc
        from git_memzoi.core import safe_read

        if not write_new(target, safe_read.read_bytes(real_source, None), root=root, mode=st.st_mode & 0o7777):
            return False
    remove_file(source, root=source_root)
    return True


def make_dirs(path: Path, *, root: Path) -> Path:
    """Create the folder ``path`` and its missing parents below ``root``; its real path.

    Raises:
        UnsafePath: a symlink on the way. InputError: a part of it is a file (``not_a_folder``).
    """
    real = confined(path, root)
    if not os.path.isdir(real):
        _changed(real.parent)
        _changed(real)
    try:
        os.makedirs(real, exist_ok=True)
    except FileExistsError:
        raise InputError(f"cannot create the folder {path}: a file of that name exists", "not_a_folder") from None
    except OSError as exc:
        raise ToolError(f"cannot create the folder {path}: {exc.strerror}", "write_failed") from exc
    return confined(path, root)  # made by someone else meanwhile as a symlink: refused here


def remove_file(path: Path, *, root: Path) -> bool:
    """Remove the file ``path`` (a symlink there is removed itself, never followed); False when it was missing.

    Raises:
        UnsafePath: a symlink in a folder above it. ToolError: it cannot be removed.
    """
    real = confined(path.parent, root) / path.name
    try:
        dir_fd = open_dir(real.parent, root)
    except FileNotFoundError:
        return False
    _changed(real.parent)
    try:
        os.unlink(real.name, dir_fd=dir_fd)
    except FileNotFoundError:
        return False
    except IsADirectoryError:
        raise NotAFile(f"cannot remove {path}: it is a folder") from None
    except OSError as exc:
        raise ToolError(f"cannot remove {path}: {exc.strerror}", "write_failed") from exc
    finally:
        os.close(dir_fd)
    return True


def remove_dir(path: Path, *, root: Path) -> None:
    """Remove the empty folder ``path`` (a missing one is fine).

    Raises:
        UnsafePath: a symlink on the way or at ``path``. ToolError: not empty, or cannot be removed.
    """
    real = confined(path, root)
    _changed(real.parent)
    try:
        os.rmdir(real)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ToolError(f"cannot remove the folder {path}: {exc.strerror}", "write_failed") from exc


def write_cache(path: Path, data: bytes) -> None:
    """Replace the derived cache file ``path`` in a folder only this tool writes (under the git directory), best
    effort: a cache that cannot be written only costs time. Never through a symlinked cache file.

    Atomic (readers see the old file or the new one) but not fsynced: a cache needs no durability, and a status
    writes up to four of them, two fsyncs each (tens of ms under I/O load, issue 17). After a power cut the file
    may be the old one, missing, or empty or short where the file system reorders the rename before the data;
    every cache reader checks its file (a magic line, JSON, marshal, the expected shape) and recomputes."""
    with contextlib.suppress(OSError, MemzoiError):
        write_bytes_atomic(path, data, root=path.parent.parent, parents=True, durable=False)


# Every folder whose entries this process changed (or may have: a failed write counts too), by real path, with
# the number of the latest change: a writer's own account of its writes, so that the derived index can list
# those folders again instead of walking them all (git_memzoi.memzoi.recall.index.db.settle).
_CHANGED: dict[str, int] = {}
_CHANGES = [0]


def mark() -> int:
    """A point in this process's writes, for :func:`folders_since`."""
    return _CHANGES[0]


def folders_since(point: int) -> list[str]:
    """The real paths of the folders whose entries this process changed after :func:`mark` gave ``point``:
    files written, created, moved in or out, or removed; folders created or removed."""
    return [folder for folder, change in _CHANGED.items() if change > point]


def _changed(folder: Path) -> None:
    _CHANGES[0] += 1
    _CHANGED[str(folder)] = _CHANGES[0]


def _target(path: Path, root: Path, parents: bool) -> Path:
    if parents:
        make_dirs(path.parent, root=root)
    real = confined(path, root)
    return real


@contextlib.contextmanager
def _folder(real: Path, root: Path) -> Iterator[int]:
    try:
        dir_fd = open_dir(real.parent, root)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise ToolError(f"cannot write in {real.parent}: {exc.strerror}", "write_failed") from exc
    except PermissionError as exc:
        raise ToolError(f"cannot write in {real.parent}: {exc.strerror}", "write_failed") from exc
    try:
        yield dir_fd
    finally:
        os.close(dir_fd)


def _existing_mode(real: Path, dir_fd: int) -> int | None:
    try:
        st = os.stat(real.name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePath(f"refusing to write {real}: it became a symlink")
    if not stat.S_ISREG(st.st_mode):
        raise NotAFile(f"cannot write {real}: it is not a regular file")
    return st.st_mode & 0o7777


def _open_regular(path: Path, root: Path, flags: int, mode: int, *, parents: bool) -> int:
    real = _target(path, root, parents)
    _changed(real.parent)
    extra = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    with _folder(real, root) as dir_fd:
        try:
            fd = os.open(real.name, flags | extra, mode, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafePath(f"refusing to write {real}: it is a symlink") from None
            if exc.errno in (errno.EISDIR, errno.ENXIO, errno.ENODEV):
                raise NotAFile(f"cannot write {real}: it is not a regular file") from None
            raise ToolError(f"cannot write {real}: {exc.strerror}", "write_failed") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotAFile(f"cannot write {real}: it is not a regular file")
    os.set_blocking(fd, True)  # O_NONBLOCK only kept a FIFO from blocking the open
    return fd


def _fsync(dir_fd: int) -> None:
    # The rename is durable only once the directory entry is on disk.
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)


# ------------------------------------------------------------------------------------------------ the lifecycle lock

# Locks this process holds: (lock path, thread id) -> (file descriptor, depth, hold number). Re-entry only ever happens
# in the holding thread; another thread opens its own descriptor and waits on flock like another process.
_HELD: dict[tuple[str, int], list[int]] = {}
_RELEASED: dict[str, int] = {}
_HOLDS = [0]  # outermost holds taken by this process, numbering each (hold)


def releases(lock_path: Path) -> int:
    """How often this process released the outermost hold of ``lock_path`` (holds with ``counted=False`` aside).

    Writers of memory files hold the lifecycle lock, so an unchanged count means this process wrote nothing
    there since the last reading: a synchronous check for :mod:`git_memzoi.memzoi.recall.index.watch`.
    """
    return _RELEASED.get(str(lock_path), 0)


def hold(lock_path: Path) -> int | None:
    """The number of this thread's outermost hold of ``lock_path`` (each hold a new one), ``None`` when it holds
    none: while it stays the same, no other process or thread wrote under the lock (what this process wrote
    meanwhile, :func:`folders_since` tells)."""
    import threading

    held = _HELD.get((str(lock_path), threading.get_ident()))
    return None if held is None else held[2]


def holds(lock_path: Path) -> bool:
    """Whether this thread holds ``lock_path`` already (a nested hold: the outer one did the repairs)."""
    import threading

    return (str(lock_path), threading.get_ident()) in _HELD


@contextlib.contextmanager
def lifecycle_lock(lock_path: Path, timeout_s: float = 30.0, *, root: Path, counted: bool = True) -> Iterator[None]:
    """Hold the exclusive lifecycle lock at ``lock_path`` (confined to ``root``) for the block (DESIGN.md
    principle 3).

    An advisory ``flock`` on the lock file, re-entrant within one thread (``propose --apply`` applies while it
    holds the lock). The holder writes its pid and command into the file; another process or thread waits at
    most ``timeout_s`` seconds, then gets :class:`ToolError` (``lock_timeout``) naming the holder, since when it
    holds the lock and how long this one waited. The ``filelock`` library did the same but cost 16 to 30 ms of
    imports on every write command (evals/bench/memzoi_store.py). Releasing the outermost hold counts for
    :func:`releases` unless ``counted`` is false (the index refresh, which writes only the derived index).

    Raises:
        ToolError: ``lock_timeout``. UnsafePath, NotAFile: the lock file is a symlink or not a regular file.
    """
    import fcntl
    import threading
    import time

    key = (str(lock_path), threading.get_ident())
    held = _HELD.get(key)
    if held is not None:
        held[1] += 1
        try:
            yield
        finally:
            held[1] -= 1
        return
    fd = _open_regular(lock_path, root, os.O_RDWR | os.O_CREAT, 0o644, parents=True)
    started = time.monotonic()
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() - started >= timeout_s:
                message = _held_by(fd, lock_path, time.monotonic() - started)
                os.close(fd)
                raise ToolError(message, "lock_timeout") from None
            time.sleep(0.02)
    _claim(fd)
    _HOLDS[0] += 1
    _HELD[key] = [fd, 1, _HOLDS[0]]
    try:
        yield
    finally:
        del _HELD[key]
        if counted:
            _RELEASED[key[0]] = _RELEASED.get(key[0], 0) + 1
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


_CLAIM_BYTES = 512  # the lock file's size: one padded JSON claim


def _claim(fd: int) -> None:
    """Write who holds the lock into the lock file (its mtime is then the moment the hold began)."""
    import json
    import sys

    command = command_name() or os.path.basename(sys.argv[0] or "python")
    claim = json.dumps({"pid": os.getpid(), "command": command[: _CLAIM_BYTES // 2]}).encode("utf-8")
    # one fixed-size write over the old claim, padded with spaces (JSON allows them): truncating the file first
    # cost milliseconds under I/O load on every search, and every claim is the same length so none leaves a tail
    with contextlib.suppress(OSError):
        os.pwrite(fd, claim[: _CLAIM_BYTES - 1].ljust(_CLAIM_BYTES - 1) + b"\n", 0)


def _held_by(fd: int, lock_path: Path, waited: float) -> str:
    """The timeout message: who holds the lock, since when, and how long this process waited."""
    import datetime as dt
    import json

    from git_memzoi.core.clock import file_time_ns

    base = f"the lifecycle lock {lock_path} is held by another git-memzoi process"
    try:
        holder = json.loads(os.pread(fd, 4096, 0))
        pid, command = int(holder["pid"]), str(holder["command"])
        since = os.fstat(fd).st_mtime
    except (OSError, ValueError, LookupError, TypeError):
        return f"{base}; waited {waited:.1f} s"
    stamp = dt.datetime.fromtimestamp(since, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    held = max(0.0, file_time_ns() / 1e9 - since)
    return (
        f"the lifecycle lock {lock_path} is held by pid {pid} ({ascii(command)[1:-1]}) since {stamp} "
        f"({held:.1f} s); waited {waited:.1f} s"
    )
