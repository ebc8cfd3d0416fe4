"""Atomic file writes (temp file in the same directory + fsync + rename) and the lifecycle lock."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from git_memzoi.errors import ToolError


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically; readers see the old or the new file, never a mix.

    An existing file keeps its mode; a new one gets the mode ``open()`` would give it (``0o666`` less the
    umask). Raises :class:`ToolError` when the directory is not writable.
    """
    directory = path.parent
    fd, tmp = _create_temp(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)


def _create_temp(path: Path) -> tuple[int, str]:
    # mkstemp creates its file 0o600, which the rename would hand on to a new file. Opening with 0o666 lets the
    # kernel apply the umask (and a default ACL) exactly as for open(); reading the umask would mean setting it.
    for _ in range(100):
        tmp = str(path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666), tmp
        except FileExistsError:
            continue
        except OSError as exc:
            raise ToolError(f"cannot write in {path.parent}: {exc.strerror}", "write_failed") from exc
    raise ToolError(f"cannot write in {path.parent}: no free temporary name", "write_failed")


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# Locks this process holds: (lock path, thread id) -> (file descriptor, depth). Re-entry only ever happens
# in the holding thread; another thread opens its own descriptor and waits on flock like another process.
_HELD: dict[tuple[str, int], list[int]] = {}
_RELEASED: dict[str, int] = {}


def releases(lock_path: Path) -> int:
    """How often this process released the outermost hold of ``lock_path`` (holds with ``counted=False`` aside).

    Writers of memory files hold the lifecycle lock, so an unchanged count means this process wrote nothing
    there since the last reading: a synchronous check for :mod:`git_memzoi.memzoi.recall.index.watch`.
    """
    return _RELEASED.get(str(lock_path), 0)


@contextlib.contextmanager
def lifecycle_lock(lock_path: Path, timeout_s: float = 30.0, *, counted: bool = True) -> Iterator[None]:
    """Hold the exclusive lifecycle lock at ``lock_path`` for the block (DESIGN.md principle 3).

    An advisory ``flock`` on the lock file, re-entrant within one thread (``propose --apply`` applies while it
    holds the lock). Other processes and threads wait at most ``timeout_s`` seconds, then get
    :class:`ToolError` (``lock_timeout``). The ``filelock`` library did the same but cost 16 to 30 ms of imports
    on every write command (evals/bench/memzoi_store.py), a tenth of the 150 ms write budget. Releasing the
    outermost hold counts for :func:`releases` unless ``counted`` is false (the index refresh, which writes
    only the derived index, passes that).
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
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise ToolError(f"another git-memzoi process holds {lock_path}", "lock_timeout") from None
            time.sleep(0.02)
    _HELD[key] = [fd, 1]
    try:
        yield
    finally:
        del _HELD[key]
        if counted:
            _RELEASED[key[0]] = _RELEASED.get(key[0], 0) + 1
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
