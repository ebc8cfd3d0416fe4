"""Read the record files of a from-scratch rebuild on two cores (io: ``os.fork`` and a pipe; no SQL).

Reading and validating a record file is pure Python, about 100 µs a file: 50,000 records took 10.2 s to rebuild
on one core (issue 17, "Bulk paths"). :func:`read_all` forks one child that reads the last 55 % of the files
while this process reads the first 45 % (it also inserts every row), then takes the child's results through a pipe (pickled; the child is this
program, so nothing foreign is unpickled) and yields every result in walk order, as a serial read would. The
SQLite inserts stay in this process.

It forks only where that is safe and worth it: ``os.fork`` exists, there are two CPUs or more, at least
:data:`MIN_FILES` files, and this process runs one thread (a fork copies only the calling thread, so a lock
another thread held would never be released in the child: the MCP server's watcher keeps the serial read).
When the child fails in any way, this process reads its half itself: the result is the same, only slower.
"""

from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

MIN_FILES = 4000  # below this a fork and the pickling cost more than they save

R = TypeVar("R")


def read_all(items: Sequence[Any], read: Callable[[Any], R], *, parallel: bool = True) -> Iterator[R]:
    """``read(item)`` for every item, in order; the second half in a forked child when that is safe (see the
    module docstring). ``read`` must not raise (a record that cannot be read is a value, never an exception)."""
    half = len(items) * 45 // 100  # the child reads a little more: this process also inserts the rows
    if not (parallel and _can_fork(len(items))):
        yield from map(read, items)
        return
    readable, writable = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(readable)
        os.close(writable)
        yield from map(read, items)
        return
    if pid == 0:  # the child: read its half, send it, and leave without running this program's exit handlers
        os.close(readable)
        status = 1
        try:
            data = pickle.dumps([read(item) for item in items[half:]], protocol=pickle.HIGHEST_PROTOCOL)
            view = memoryview(data)
            while view:
                view = view[os.write(writable, view) :]
            status = 0
        finally:
            os._exit(status)
    os.close(writable)
    rest: list[Any] | None = None
    collected = False
    try:
        yield from map(read, items[:half])
        rest, collected = _collect(readable, pid, len(items) - half), True
    finally:
        os.close(readable)
        if not collected:  # the caller stopped early: the child's write fails on the closed pipe; reap it
            os.waitpid(pid, 0)
    yield from rest if rest is not None else map(read, items[half:])


def _collect(fd: int, pid: int, expected: int) -> list[Any] | None:
    """The child's results, or ``None`` when it failed (a short or broken stream, a non-zero exit)."""
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        return None
    try:
        results = pickle.loads(b"".join(chunks))
    except Exception:  # a child killed mid-write: read the half here instead
        return None
    return results if isinstance(results, list) and len(results) == expected else None


def _can_fork(count: int) -> bool:
    return count >= MIN_FILES and hasattr(os, "fork") and (os.cpu_count() or 1) > 1 and threading.active_count() == 1
