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


class SystemClock:
    """The real clock (UTC). ``MEMZOI_TODAY=YYYY-MM-DD`` pins it, for demos and reproducible runs."""

    def __init__(self, pinned: str | None = None) -> None:
        self._pinned = dt.date.fromisoformat(pinned) if pinned else None

    def today(self) -> dt.date:
        """Return the pinned date, else today's date in UTC."""
        if self._pinned is not None:
            return self._pinned
        return dt.datetime.now(dt.timezone.utc).date()


@dataclass(frozen=True)
class FixedClock:
    """A clock stuck at ``day``; for tests and evals."""

    day: dt.date

    def today(self) -> dt.date:
        """Return the fixed day."""
        return self.day
