"""Read many files on two cores (io: ``os.fork`` and a pipe): a from-scratch rebuild's record files, a memkeep
store's entries on a cold parse cache.

Reading and validating a record file is pure Python, about 100 µs a file: 50,000 records took 10.2 s to rebuild
on one core (issue 17, "Bulk paths"). :func:`read_all` forks one child that reads the last two thirds of the
files while this process reads the first third (:data:`OWN_PERCENT`) and inserts every row. The child sends its results as they are made,
in frames of :data:`FRAME_ITEMS` (pickled; the child is this program, so nothing foreign is unpickled), and this
process takes each frame in between its own files: the child's rows are inserted while the child still reads,
not all after it (that tail was a seventh of a 50,000-record rebuild). So results come out of order, each with
its index; the caller numbers rows by index, which makes them the serial read's rows exactly.

It forks only where that is safe and worth it: ``os.fork`` exists, there are two CPUs or more, at least
:data:`MIN_FILES` files, and this process runs one thread (a fork copies only the calling thread, so a lock
another thread held would never be released in the child: the MCP server's watcher keeps the serial read).
When the child fails in any way, this process reads what it did not send: the result is the same, only slower.

The fork happens when :func:`read_all` is called, so a caller can do other work before taking the pairs: ``git
memkeep status`` on a cold parse cache imports pygit2 and opens the repository (about 45 ms) while the child
parses most of the entries (:func:`git_memzoi.memkeep.store.load`).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn, TypeVar

MIN_FILES = 4000  # below this a fork and the pickling cost more than they save
# the share of the files this process reads: it also unpickles the child's results and inserts every row, so
# both finish together near a third (50,000 records: 45 % took 6.4 s, 35 % 6.1 s, 33 % 5.8 s, 30 % 5.9 s)
OWN_PERCENT = 34
FRAME_ITEMS = 500  # results a frame of the child carries: small enough to arrive steadily, large enough to pickle well
TAKE_EVERY = 32  # own files between two looks at the pipe (a look that finds nothing costs one failed read)
PIPE_BYTES = 1 << 20  # asked of Linux for the pipe (its default is 64 KiB): the child rarely waits on a full pipe
_LENGTH = struct.Struct("<Q")

R = TypeVar("R")


class Reading(Iterator[tuple[int, R]]):
    """The ``(index, result)`` pairs of :func:`read_all`, as an iterator; a context manager whose exit (or
    :meth:`close`) reaps the child however far the pairs were taken, also when none was."""

    def __init__(self, pairs: Iterator[tuple[int, R]], child: _Child | None) -> None:
        self._pairs = pairs
        self._child = child

    def __next__(self) -> tuple[int, R]:
        return next(self._pairs)

    def __enter__(self) -> Reading[R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop: the pairs not taken are never made; a child still reading is reaped (its next write fails on
        the closed pipe)."""
        close = getattr(self._pairs, "close", None)
        if close is not None:
            close()
        if self._child is not None:
            self._child.reap()


def read_all(
    items: Sequence[Any],
    read: Callable[[Any], R],
    *,
    parallel: bool = True,
    own_percent: int | None = None,
    min_items: int | None = None,
) -> Reading[R]:
    """``(index, read(item))`` for every item exactly once, in no fixed order once forked (the child's results
    arrive between this process's own); in order without a fork (see the module docstring). ``read`` must not
    raise (a file that cannot be read is a value, never an exception).

    The child is forked by this call, not at the first pair: what the caller does before it takes the pairs
    runs beside the child's reading (``own_percent``: the share of ``items`` this process reads, the first
    ones, default :data:`OWN_PERCENT`; ``min_items``: the fewest items worth a fork, default :data:`MIN_FILES`). A caller that may stop
    before the last pair uses the result as a context manager, so the child is reaped in any case.
    """
    half = len(items) * (OWN_PERCENT if own_percent is None else own_percent) // 100
    child = _Child.fork(items, read, half) if parallel and _can_fork(len(items), min_items) else None
    if child is None:
        return Reading(enumerate(map(read, items)), None)
    return Reading(_pairs(items, read, half, child), child)


def _pairs(items: Sequence[Any], read: Callable[[Any], R], half: int, child: _Child) -> Iterator[tuple[int, R]]:
    frames = child.frames
    try:
        for n in range(half):
            yield n, read(items[n])
            if n % TAKE_EVERY == 0:
                yield from frames.take(block=False)
        yield from frames.take(block=True)  # to the end of the stream: the child has exited or is exiting
    finally:
        child.reap()  # its exit status adds nothing: every whole frame is good, the rest is read below
    for n in range(half, len(items)):  # what the child did not deliver (it failed, or was killed mid-frame)
        if n not in frames.sent:
            yield n, read(items[n])


class _Child:
    """A forked reader of ``items[start:]`` and the read end of its pipe."""

    def __init__(self, pid: int, readable: int) -> None:
        self.pid = pid
        self.frames = _Frames(readable)
        self.reaped = False

    @classmethod
    def fork(cls, items: Sequence[Any], read: Callable[[Any], Any], start: int) -> _Child | None:
        """The child reading ``items[start:]``, or ``None`` when the system refuses a fork."""
        readable, writable = os.pipe()
        _widen(writable)
        try:
            pid = os.fork()
        except OSError:
            os.close(readable)
            os.close(writable)
            return None
        if pid == 0:  # the child: read its part, send it frame by frame, leave without this program's exit handlers
            os.close(readable)
            _child(items, read, start, writable)
        os.close(writable)
        return cls(pid, readable)

    def reap(self) -> None:
        """Close the pipe and wait for the child (once): a child still writing fails on the closed pipe."""
        if self.reaped:
            return
        self.reaped = True
        os.close(self.frames.fd)
        os.waitpid(self.pid, 0)


def _widen(fd: int) -> None:
    """Ask for a :data:`PIPE_BYTES` pipe where the system allows it (Linux); best effort: a smaller pipe only
    makes the child wait more often for this process to take a frame."""
    import fcntl

    if hasattr(fcntl, "F_SETPIPE_SZ"):
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)


def _child(items: Sequence[Any], read: Callable[[Any], Any], start: int, fd: int) -> NoReturn:
    status = 1
    try:
        for first in range(start, len(items), FRAME_ITEMS):
            chunk = [read(item) for item in items[first : first + FRAME_ITEMS]]
            data = pickle.dumps((first, chunk), protocol=pickle.HIGHEST_PROTOCOL)
            view = memoryview(_LENGTH.pack(len(data)) + data)
            while view:
                view = view[os.write(fd, view) :]
        status = 0
    finally:
        os._exit(status)


class _Frames:
    """The child's frames as they arrive on ``fd``: :meth:`take` yields the ``(index, result)`` pairs of every
    whole frame read so far; ``sent`` holds the indexes yielded. A frame that does not unpickle (a child killed
    mid-write cannot make one, but nothing is trusted) ends the stream: its files are read by this process."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.sent: set[int] = set()
        self.broken = False

    def take(self, *, block: bool) -> Iterator[tuple[int, Any]]:
        """The pairs of the frames available now, or (``block``) of all frames up to the end of the stream."""
        os.set_blocking(self.fd, block)
        while not self.broken:
            try:
                chunk = os.read(self.fd, PIPE_BYTES)
            except BlockingIOError:  # nothing more for now
                return
            if not chunk:  # the end of the stream; a partial frame left in the buffer is read by this process
                return
            self.buffer += chunk
            yield from self._whole()

    def _whole(self) -> Iterator[tuple[int, Any]]:
        while len(self.buffer) >= _LENGTH.size:
            (size,) = _LENGTH.unpack_from(self.buffer)
            end = _LENGTH.size + size
            if len(self.buffer) < end:
                return
            try:
                first, results = pickle.loads(bytes(self.buffer[_LENGTH.size : end]))
            except Exception:  # any failure to unpickle: the stream is not trusted from here
                self.broken = True
                return
            del self.buffer[:end]
            for offset, result in enumerate(results):
                self.sent.add(first + offset)
                yield first + offset, result


def _can_fork(count: int, min_items: int | None) -> bool:
    least = MIN_FILES if min_items is None else min_items
    return count >= least and hasattr(os, "fork") and (os.cpu_count() or 1) > 1 and threading.active_count() == 1
