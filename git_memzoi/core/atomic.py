"""Atomic file writes (temp file in the same directory + fsync + rename) and the lifecycle lock."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from git_memzoi.errors import ToolError


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically; readers see the old or the new file, never a mix.

    The file mode of an existing file is kept. Raises :class:`ToolError` when the directory is not writable.
    """
    import tempfile  # lazily: it pulls in shutil and random, which read-only commands never need

    directory = path.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise ToolError(f"cannot write in {directory}: {exc.strerror}", "write_failed") from exc
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


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def lifecycle_lock(lock_path: Path, timeout_s: float = 30.0) -> Iterator[None]:
    """Hold the exclusive lifecycle lock at ``lock_path`` for the block (DESIGN.md principle 3).

    Uses the ``filelock`` library. Re-entrant within one process (nested holders share one lock); other
    processes wait at most ``timeout_s`` seconds, then get :class:`ToolError` (``lock_timeout``).
    """
    from filelock import FileLock, Timeout

    lock_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # One lock object per path in this process, so a holder may re-enter (apply inside propose --apply).
        with FileLock(str(lock_path), timeout=timeout_s, is_singleton=True):
            yield
    except Timeout as exc:
        raise ToolError(f"another git-memzoi process holds {lock_path}", "lock_timeout") from exc
