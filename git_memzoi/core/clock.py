"""The injectable clock: pure code takes a :class:`Clock`; only :class:`SystemClock` reads the real time.

It is also the one parser of the instants and days a user gives (``MEMZOI_NOW``, ``MEMZOI_TODAY``, an eval
corpus's ``evaluated_at``, a record's timestamps; issue 13, "Exit 3 where exit 2 is right"): an RFC 3339 instant
needs a zone, and every instant and day lies between :data:`EARLIEST` and :data:`LATEST`, so the arithmetic
done on them (retention windows of days, leases of hours, a zone's offset) can never leave Python's date range.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

from git_memzoi.core.patterns import lazy
from git_memzoi.errors import InputError

# The supported span: far beyond any memory's lifetime, and far enough inside 0001..9999 that adding a retention
# window or converting a zone cannot overflow (9999-12-31T23:59:59Z + 24 h raised OverflowError: exit 3).
EARLIEST = dt.datetime(1900, 1, 1, tzinfo=dt.UTC)
LATEST = dt.datetime(9000, 1, 1, tzinfo=dt.UTC)
_T = TypeVar("_T")
_DAY = lazy(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)


class ClockError(InputError):
    """``MEMZOI_TODAY`` or ``MEMZOI_NOW`` is not a valid day or instant (exit 2, ``invalid_clock``)."""

    default_code = "invalid_clock"


@functools.lru_cache(
    maxsize=8192
)  # a store repeats its instants (a rebuild parses three a record); datetimes are immutable
def parse_instant(value: str) -> dt.datetime | None:
    """``value`` as an aware datetime when it is an RFC 3339 instant with a zone (``2026-07-10T12:00:00Z``,
    ``…+02:00``) between :data:`EARLIEST` and :data:`LATEST`; else ``None`` (no zone, not a date, out of range)."""
    if len(value) < 20 or value[10] not in "Tt " or not _DAY.fullmatch(value[:10]):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        return None
    return parsed if in_range(parsed) else None


def format_instant(value: dt.datetime) -> str:
    """``value`` as RFC 3339 in UTC with a ``Z`` (whole seconds unless it has microseconds): how records write
    instants (memzoi-spec.md §2.1)."""
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def in_range(value: dt.datetime) -> bool:
    """Whether ``value`` is aware and lies between :data:`EARLIEST` and :data:`LATEST` (a naive one is not)."""
    return value.tzinfo is not None and value.utcoffset() is not None and EARLIEST <= value < LATEST


def parse_day(value: str) -> dt.date | None:
    """``value`` as a date when it is ``YYYY-MM-DD`` between :data:`EARLIEST` and :data:`LATEST`; else ``None``."""
    if not _DAY.fullmatch(value):
        return None
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        return None
    return day if EARLIEST.date() <= day < LATEST.date() else None


def from_environment(environ: Mapping[str, str], *, instant: bool = True) -> SystemClock:
    """The :class:`SystemClock` the environment pins: ``MEMZOI_TODAY`` (a day) and, with ``instant``,
    ``MEMZOI_NOW`` (an instant with a zone); unset or empty variables leave the real clock.

    Raises:
        ClockError: a variable that is not a valid day or instant, naming it and the form it needs.
    """
    return SystemClock(environ.get("MEMZOI_TODAY") or None, (environ.get("MEMZOI_NOW") or None) if instant else None)


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
        """Pin the day to ``pinned`` (``YYYY-MM-DD``) and the instant to ``pinned_now`` (RFC 3339 with a zone).

        Raises:
            ClockError: either is not valid or lies outside :data:`EARLIEST`..:data:`LATEST`.
        """
        self._pinned = _pinned(pinned, "MEMZOI_TODAY", parse_day, "a day YYYY-MM-DD") if pinned else None
        self._now = (
            _pinned(
                pinned_now, "MEMZOI_NOW", parse_instant, "an RFC 3339 instant with a zone, e.g. 2026-07-10T12:00:00Z"
            )
            if pinned_now
            else None
        )
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


def _pinned(value: str, name: str, parse: Callable[[str], _T | None], form: str) -> _T:
    parsed = parse(value)
    if parsed is None:
        shown = repr(value[:40]) + ("…" if len(value) > 40 else "")  # repr: one line, whatever the bytes were
        span = f"{EARLIEST.year}-{LATEST.year - 1}"
        raise ClockError(f"{name}={shown} is not valid: it must be {form}, in the years {span}")
    return parsed


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
