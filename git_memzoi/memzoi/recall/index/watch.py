"""When :func:`index_db.refresh` may skip its stat walk: a file-system watcher in long-running processes (io).

``refresh`` walks and stats every record file (about 35 ms for 10,000) so that edits made outside the tool are
never missed. A process that calls :func:`watch` (the MCP server, the recall benchmark; never a one-shot CLI
command) keeps a watcher (:mod:`git_memzoi.core.fswatch`) on the folders the walk reads: ``.memzoi/records/``
and the private runtime folders (:meth:`Layout.runtime`, shared by every worktree), recursively. ``refresh``
then skips the walk only when all of these equal what they were just before the last completed walk (the *ticket* it settled):

- the watcher is the same one, still alive, and counted no change event since (it started before that walk);
- this process released no counted lifecycle lock of the layout since (our own writes: synchronous);
- the (mtime, inode) of each walked folder, and whether each source folder exists (creates, deletes, renames
  by any process: synchronous; renames are how every atomic write lands);
- the index file's (size, mtime, inode) as the walk left it (another process rebuilt or replaced it);
- and that walk is less than :data:`MAX_TRUST_S` seconds old (a bound on any failure nobody reported).

Otherwise it walks, exactly as without a watcher. The one asynchronous path: an in-place edit by another
process (same file, no rename, so no folder mtime changes) is seen once watchdog's threads deliver its event,
usually well under a millisecond after the write, more under heavy load; a search racing that edit may
return the state before it. Without a watcher (unsupported platform, inotify limits, a dead thread) every
refresh walks. Nothing here raises.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from typing import TYPE_CHECKING

from git_memzoi.core import atomic
from git_memzoi.core.clock import file_time_ns

if TYPE_CHECKING:
    from git_memzoi.core.fswatch import Watch
    from git_memzoi.memzoi.layout import Layout

MAX_TRUST_S = 60.0
RACY_NS = 50_000_000  # file timestamps come from a clock that ticks every 1 to 10 ms: 50 ms is safely more
_Stat = tuple[int, int] | None  # (mtime_ns, inode); None: missing


@dataclasses.dataclass(frozen=True)
class Ticket:
    """What a refresh saw before it walked. ``fresh``: nothing changed since the last settled walk (skip it);
    ``scanned``: that walk's file count. The other fields are for :func:`settle`."""

    fresh: bool
    scanned: int
    watch: Watch
    generation: int
    releases: int
    roots: tuple[_Stat, ...]
    at: float
    wall_ns: int


@dataclasses.dataclass(frozen=True)
class _Settled:
    ticket: Ticket
    folders: tuple[tuple[str, _Stat], ...]
    index: tuple[int, int, int] | None


@dataclasses.dataclass
class _State:
    watch: Watch
    roots: tuple[str, ...]
    inodes: tuple[int | None, ...]  # of each root when the watch started (None: missing, not watched)
    settled: _Settled | None = None


_STATES: dict[str, _State] = {}
_GUARD = threading.Lock()


def _roots(layout: Layout) -> tuple[str, ...]:
    from git_memzoi.memzoi.recall.index.sources import sources

    return tuple(os.path.join(layout.root, source.prefix).rstrip("/") for source in sources(layout))


def _stat(path: str) -> _Stat:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_ino


def _index_stat(layout: Layout) -> tuple[int, int, int] | None:
    try:
        st = os.stat(layout.index)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


def watch(layout: Layout) -> bool:
    """Keep a watcher on ``layout``'s record folders in this process (idempotent); ``True`` when one runs.

    ``False`` (never an error) when it cannot start: :func:`index_db.refresh` then walks as without one.
    """
    with _GUARD:
        state = _STATES.get(str(layout.root))
        if state is not None and state.watch.alive:
            return True
        return _restart(layout) is not None


def _restart(layout: Layout) -> _State | None:
    """(Re)start the watcher of ``layout`` on the source folders that exist now (caller holds _GUARD)."""
    from git_memzoi.core import fswatch

    key = str(layout.root)
    old = _STATES.pop(key, None)
    if old is not None:
        old.watch.stop()
    roots = _roots(layout)
    stats = tuple(_stat(root) for root in roots)
    present = [root for root, stat in zip(roots, stats, strict=True) if stat is not None]
    started = fswatch.start(present) if present else None
    if started is None:
        return None
    state = _STATES[key] = _State(started, roots, tuple(None if s is None else s[1] for s in stats))
    return state


def unwatch(layout: Layout | None = None) -> None:
    """Stop the watcher of ``layout`` (of every layout when ``None``); refreshes walk again. Idempotent."""
    with _GUARD:
        for key in list(_STATES) if layout is None else [str(layout.root)]:
            state = _STATES.pop(key, None)
            if state is not None:
                state.watch.stop()


def watching(layout: Layout) -> bool:
    """``True`` while a live watcher serves ``layout`` (for tests and the benchmark)."""
    state = _STATES.get(str(layout.root))
    return state is not None and state.watch.alive


def begin(layout: Layout) -> Ticket | None:
    """Called by ``refresh`` before anything else: ``None`` without a watcher (walk, do not settle); else a
    :class:`Ticket`, ``fresh`` when the walk may be skipped. Restarts the watcher when a source folder
    appeared, vanished or was replaced since it started (its watch would be on the old folder), or died."""
    state = _STATES.get(str(layout.root))
    if state is None:
        return None
    roots = tuple(_stat(root) for root in state.roots)
    if (
        tuple(None if s is None else s[1] for s in roots) != state.inodes
        or not state.watch.alive
        or _roots(layout) != state.roots  # a memkeep store appeared or moved
    ):
        with _GUARD:
            state = _restart(layout)
        if state is None:
            return None
        roots = tuple(_stat(root) for root in state.roots)
    ticket = Ticket(
        False,
        0,
        state.watch,
        state.watch.generation,
        atomic.releases(layout.lock),
        roots,
        time.monotonic(),
        file_time_ns(),
    )
    last = state.settled
    if (
        last is None
        or last.ticket.watch is not state.watch
        or last.ticket.generation != ticket.generation
        or last.ticket.releases != ticket.releases
        or last.ticket.roots != roots
        or ticket.at - last.ticket.at > MAX_TRUST_S
        or _index_stat(layout) != last.index
        or any(_stat(path) != stat for path, stat in last.folders)
    ):
        return ticket
    return dataclasses.replace(ticket, fresh=True, scanned=last.ticket.scanned)


def settle(layout: Layout, ticket: Ticket | None, scanned: int, folders: list[tuple[str, int, int]]) -> None:
    """Called by ``refresh`` after a walk that left the index matching it: remember ``ticket`` (taken before
    that walk) with the walk's file count and its subfolders ``(path, mtime_ns, inode)`` (each stat taken
    before the walk listed that folder).

    Git's "racily clean" rule for folders: one whose mtime is within :data:`RACY_NS` of the ticket's wall
    time could change again within the same timestamp tick, unseen; then nothing is remembered and the next
    refresh walks again.
    """
    state = _STATES.get(str(layout.root))
    if ticket is None or state is None or state.watch is not ticket.watch or not ticket.watch.alive:
        return
    mtimes = [mtime for _, mtime, _ in folders] + [stat[0] for stat in ticket.roots if stat is not None]
    if any(mtime >= ticket.wall_ns - RACY_NS for mtime in mtimes):
        state.settled = None
        return
    kept = dataclasses.replace(ticket, scanned=scanned)
    state.settled = _Settled(kept, tuple((path, (mtime, ino)) for path, mtime, ino in folders), _index_stat(layout))
