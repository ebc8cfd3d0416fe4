"""A file-system watcher that counts changes below some directory trees (io; the only ``watchdog`` importer).

Long-running processes (the MCP server) use it to skip a stat walk while nothing changed; see
:mod:`git_memzoi.memzoi.recall.index.watch` for the freshness rule built on it. ``watchdog`` is imported only by
:func:`start`, so a one-shot CLI command never pays for it. Only Linux inotify is used: watchdog's fallbacks
(polling, kqueue: one descriptor per file) would cost more than the walk they replace, and FSEvents / Windows
are untested here, so :func:`start` returns ``None`` there and the caller keeps walking.

Events come from watchdog's threads, so one reaches :attr:`Watch.generation` shortly *after* the change
(typically well under a millisecond, longer when the process is busy). Callers that need a change seen at
once must also check something synchronous (directory mtimes, their own write counter).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Sequence
from typing import Any

# Every kind of event except opened / closed-without-writing / accessed: reading a file is not a change.
_CHANGES = (
    "FileCreatedEvent",
    "FileDeletedEvent",
    "FileModifiedEvent",
    "FileMovedEvent",
    "FileClosedEvent",
    "DirCreatedEvent",
    "DirDeletedEvent",
    "DirModifiedEvent",
    "DirMovedEvent",
)


class Watch:
    """A running watcher on directory trees (recursive), started by :func:`start`.

    :attr:`generation` grows with every change event, and also when watchdog logs a warning or error (an
    inotify queue overflow loses events; a watch that could not be added misses them). :attr:`alive` is
    ``False`` once :meth:`stop` ran or a watcher thread died; the counter then means nothing.
    """

    def __init__(self, roots: tuple[str, ...]) -> None:
        self.roots = roots
        self._count = 0
        self._stopped = False
        self._observer: Any = None

    @property
    def generation(self) -> int:
        """Change events seen so far (a counter: compare two readings, never interpret the number)."""
        return self._count

    @property
    def alive(self) -> bool:
        """``True`` while the observer and every emitter thread run (never raises)."""
        observer = self._observer
        try:
            return (
                not self._stopped
                and observer is not None
                and observer.is_alive()
                and all(emitter.is_alive() for emitter in observer.emitters)
            )
        except Exception:
            return False

    def bump(self) -> None:
        """Count one change (called from watchdog's threads; also usable to distrust the watch once)."""
        self._count += 1

    def stop(self) -> None:
        """Stop the watcher threads (idempotent, never raises); :attr:`alive` is ``False`` afterwards."""
        self._stopped = True
        _ALARM.forget(self)
        observer, self._observer = self._observer, None
        if observer is not None:
            with contextlib.suppress(Exception):  # already dead or never started: nothing left to stop
                observer.stop()
                observer.join(timeout=2.0)


class _Alarm(logging.Handler):
    """Bumps every live watch when watchdog logs a warning (queue overflow, watch limit): events may be lost."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.watches: list[Watch] = []
        self.guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        for watch in list(self.watches):
            watch.bump()

    def forget(self, watch: Watch) -> None:
        with self.guard:
            if watch in self.watches:
                self.watches.remove(watch)


_ALARM = _Alarm()


def start(roots: Sequence[str]) -> Watch | None:
    """Watch the directory trees ``roots`` (absolute paths of existing directories) for changes.

    Returns the running :class:`Watch` once every inotify watch is in place (so a change made after this
    returns is counted), or ``None`` when watching is not possible here: no ``watchdog``, not Linux, an inotify
    instance or watch limit reached, a root missing. Never raises: the caller then does without.
    """
    watch = Watch(tuple(roots))
    try:
        from watchdog import events
        from watchdog.observers.inotify import InotifyObserver

        class Handler(events.FileSystemEventHandler):
            def on_any_event(self, event: events.FileSystemEvent) -> None:
                watch.bump()

        observer = InotifyObserver()
        handler = Handler()
        kinds = [getattr(events, name) for name in _CHANGES]
        for root in watch.roots:
            observer.schedule(handler, root, recursive=True, event_filter=kinds)
        observer.daemon = True
        with _ALARM.guard:
            if _ALARM not in logging.getLogger("watchdog").handlers:
                logging.getLogger("watchdog").addHandler(_ALARM)
            _ALARM.watches.append(watch)
        watch._observer = observer
        observer.start()  # the emitters add their inotify watches before start() returns
    except Exception:
        watch.stop()
        return None
    if not watch.alive:
        watch.stop()
        return None
    return watch
