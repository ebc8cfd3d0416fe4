"""Read the record files of a from-scratch rebuild on two cores (io: ``os.fork`` and a pipe; no SQL).

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


def read_all(items: Sequence[Any], read: Callable[[Any], R], *, parallel: bool = True) -> Iterator[tuple[int, R]]:
    """``(index, read(item))`` for every item exactly once, in no fixed order once forked (the child's results
    arrive between this process's own); in order without a fork (see the module docstring). ``read`` must not
    raise (a record that cannot be read is a value, never an exception)."""
    half = len(items) * OWN_PERCENT // 100
    if not (parallel and _can_fork(len(items))):
        yield from enumerate(map(read, items))
        return
    readable, writable = os.pipe()
    _widen(writable)
    try:
        pid = os.fork()
    except OSError:
        os.close(readable)
        os.close(writable)
        yield from enumerate(map(read, items))
        return
    if pid == 0:  # the child: read its part, send it frame by frame, leave without this program's exit handlers
        os.close(readable)
        _child(items, read, half, writable)
    os.close(writable)
    frames = _Frames(readable)
    reaped = False
    try:
        for n in range(half):
            yield n, read(items[n])
            if n % TAKE_EVERY == 0:
                yield from frames.take(block=False)
        yield from frames.take(block=True)  # to the end of the stream: the child has exited or is exiting
        os.waitpid(pid, 0)  # its exit status adds nothing: every whole frame is good, the rest is read below
        reaped = True
    finally:
        os.close(readable)
        if not reaped:  # the caller stopped early: the child's next write fails on the closed pipe; reap it
            os.waitpid(pid, 0)
    for n in range(half, len(items)):  # what the child did not deliver (it failed, or was killed mid-frame)
        if n not in frames.sent:
            yield n, read(items[n])


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


def _can_fork(count: int) -> bool:
    return count >= MIN_FILES and hasattr(os, "fork") and (os.cpu_count() or 1) > 1 and threading.active_count() == 1
