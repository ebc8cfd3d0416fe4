"""The injectable clock: pure code takes a :class:`Clock`; only :class:`SystemClock` reads the real time."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Protocol


class Clock(Protocol):
    """Source of "today" for TTL arithmetic (memkeep README "How staleness works": ttl_expired)."""

    def today(self) -> dt.date:
        """Return the current date in UTC."""
        ...

    def now(self) -> dt.datetime:
        """Return the current instant, timezone-aware (UTC)."""
        ...


class SystemClock:
    """The real clock (UTC). ``MEMZOI_TODAY=YYYY-MM-DD`` pins it, for demos and reproducible runs; a pinned
    ``MEMZOI_NOW`` (RFC 3339) pins the instant too."""

    def __init__(self, pinned: str | None = None, pinned_now: str | None = None) -> None:
        self._pinned = dt.date.fromisoformat(pinned) if pinned else None
        self._now = dt.datetime.fromisoformat(pinned_now.replace("Z", "+00:00")) if pinned_now else None
        if self._now is not None and self._pinned is None:
            self._pinned = self._now.astimezone(dt.UTC).date()

    def today(self) -> dt.date:
        """Return the pinned date, else today's date in UTC."""
        if self._pinned is not None:
            return self._pinned
        return dt.datetime.now(dt.UTC).date()

    def now(self) -> dt.datetime:
        """Return the pinned instant, else now in UTC (whole seconds)."""
        if self._now is not None:
            return self._now
        return dt.datetime.now(dt.UTC).replace(microsecond=0)


@dataclass(frozen=True)
class FixedClock:
    """A clock stuck at ``day`` (and at ``instant``, default that day's midnight UTC); for tests and evals."""

    day: dt.date
    instant: dt.datetime | None = None

    def today(self) -> dt.date:
        """Return the fixed day."""
        return self.day

    def now(self) -> dt.datetime:
        """Return the fixed instant."""
        if self.instant is not None:
            return self.instant
        return dt.datetime(self.day.year, self.day.month, self.day.day, tzinfo=dt.UTC)


def file_time_ns() -> int:
    """The real wall clock in nanoseconds, for comparing with file timestamps (mtimes follow the real clock,
    never a pinned or fixed one): the racy-timestamp checks of :mod:`git_memzoi.memzoi.recall.index.watch`."""
    import time

    return time.time_ns()
