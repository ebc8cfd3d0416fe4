"""Business validity: the optional ``valid_from`` / ``valid_to`` interval of a record or entry (pure).

vault-memory README "Business validity (F07)": a half-open interval ``[valid_from, valid_to)``, start inclusive,
end exclusive, a missing or ``null`` bound open. A bound is an ISO 8601 instant with an explicit zone
(``2026-07-01T09:30:00Z``, ``…+02:00``; seconds optional) or a date (``2026-07-01``, read as 00:00 UTC that day),
with at most millisecond precision, between the clock's supported years. Anything else - a zone-less
instant, an impossible date (``2026-02-30``), more than three fractional digits, ``from >= to`` - is
``invalid_validity``: refused at write time, and for a file edited by hand, a problem lint and doctor list
while recall leaves the file out.

One rule joins it to Memzoi's retention (memzoi-spec.md §2.3, :mod:`~git_memzoi.memzoi.records.retention`):
a record is recalled at instant ``t`` iff ``valid_from <= t < valid_to`` and ``t < expires`` - both ends are
the first instant at which the record is out, so a ``valid_to`` of today's midnight and an expiry boundary
equal to ``t`` both exclude it at ``t``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from git_memzoi.core import clock
from git_memzoi.core.patterns import lazy
from git_memzoi.errors import InputError

KEYS = ("valid_from", "valid_to")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_DATE = lazy(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
_INSTANT = lazy(
    r"(?P<day>[0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.(?P<frac>[0-9]+))?)?"
    r"(?P<zone>[Zz]|[+-][0-9]{2}:?[0-9]{2})",
    re.ASCII,
)
FORM = "an ISO 8601 instant with a zone (2026-07-01T00:00:00Z) or a date (2026-07-01), at most milliseconds"


class ValidityError(InputError):
    """A ``valid_from`` / ``valid_to`` that breaks the rules above (exit 2, ``invalid_validity``)."""

    default_code = "invalid_validity"


@dataclass(frozen=True)
class Interval:
    """A parsed interval: each bound an aware UTC datetime or ``None`` (open)."""

    start: dt.datetime | None = None
    end: dt.datetime | None = None

    def contains(self, at: dt.datetime) -> bool:
        """Whether ``at`` lies in ``[start, end)``."""
        return (self.start is None or self.start <= at) and (self.end is None or at < self.end)

    def micros(self) -> tuple[int | None, int | None]:
        """Both bounds as microseconds since 1970 (the index's columns), ``None`` for an open one."""
        return (_micros(self.start), _micros(self.end))

    def state(self, at: dt.datetime) -> str:
        """``not_yet_valid``, ``valid`` or ``no_longer_valid`` at ``at``."""
        if self.start is not None and at < self.start:
            return "not_yet_valid"
        return "valid" if self.end is None or at < self.end else "no_longer_valid"


def _micros(value: dt.datetime | None) -> int | None:
    return None if value is None else (value - _EPOCH) // dt.timedelta(microseconds=1)


def parse_bound(value: Any, name: str) -> dt.datetime | None:
    """One bound (a string as written, or the date / datetime YAML made of an unquoted one) as an aware UTC
    datetime; ``None`` for ``None`` (open).

    Raises:
        ValidityError: not of :data:`FORM`, naming ``name`` (never more than 40 characters of the value).
    """
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValidityError(f"{name}: an instant needs an explicit zone (Z or ±hh:mm)")
        if value.microsecond % 1000:
            raise ValidityError(f"{name}: at most millisecond precision")
        return _in_range(value.astimezone(dt.UTC), name)
    if isinstance(value, dt.date):
        return _in_range(dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC), name)
    if not isinstance(value, str):
        raise ValidityError(f"{name}: must be {FORM}")
    return _in_range(_parse_text(value.strip(), name), name)


def _parse_text(text: str, name: str) -> dt.datetime:
    shown = repr(text[:40])
    if _DATE.fullmatch(text):
        try:
            day = dt.date.fromisoformat(text)
        except ValueError:
            raise ValidityError(f"{name}: {shown} is not a calendar date") from None
        return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
    match = _INSTANT.fullmatch(text)
    if match is None:
        if _INSTANT.fullmatch(text + "Z"):
            raise ValidityError(f"{name}: {shown} has no zone; add Z or ±hh:mm")
        raise ValidityError(f"{name}: {shown} must be {FORM}")
    if match.group("frac") and len(match.group("frac")) > 3:
        raise ValidityError(f"{name}: {shown} has more than millisecond precision")
    try:
        parsed = dt.datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
    except ValueError:
        raise ValidityError(f"{name}: {shown} is not a calendar instant") from None
    return parsed.astimezone(dt.UTC)


def _in_range(value: dt.datetime, name: str) -> dt.datetime:
    if not clock.EARLIEST <= value < clock.LATEST:
        raise ValidityError(f"{name}: outside the years {clock.EARLIEST.year}-{clock.LATEST.year - 1}")
    return value


def interval(fields: Mapping[str, Any], where: str = "") -> Interval:
    """The interval of a record's or entry's frontmatter ``fields`` (absent keys: open).

    Raises:
        ValidityError: a bound breaks the rules, or ``valid_from >= valid_to``; ``where`` prefixes the message.
    """
    prefix = f"{where}: " if where else ""
    try:
        start = parse_bound(fields.get("valid_from"), "valid_from")
        end = parse_bound(fields.get("valid_to"), "valid_to")
    except ValidityError as exc:
        raise ValidityError(prefix + exc.message) from None
    if start is not None and end is not None and start >= end:
        raise ValidityError(f"{prefix}valid_from must be before valid_to (the interval [from, to) is half-open)")
    return Interval(start, end)


def normalized(value: Any) -> str | None:
    """The text a bound is stored as: a string kept as written, a YAML date or datetime as ISO 8601 (UTC ``Z``)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dt.datetime):
        text = value.astimezone(dt.UTC).isoformat(timespec="milliseconds" if value.microsecond else "seconds")
        return text.replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def options(valid_from: str | None, valid_to: str | None) -> dict[str, str]:
    """The frontmatter fields of ``--valid-from`` / ``--valid-to`` (only those given), checked first.

    Raises:
        ValidityError: see :func:`interval` (``invalid_validity``; nothing written).
    """
    given = {k: v for k, v in (("valid_from", valid_from), ("valid_to", valid_to)) if v is not None}
    try:
        interval(given)
    except ValidityError as exc:  # named as the user typed them
        text = exc.message.replace("valid_from", "--valid-from").replace("valid_to", "--valid-to")
        raise ValidityError(text) from None
    return {k: v.strip() for k, v in given.items()}


def of_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """``{valid_from, valid_to}`` as the record JSON shows them (``None``: open), from an index row."""
    return {"valid_from": row.get("valid_from"), "valid_to": row.get("valid_to")}


def parse_as_of(text: str | None) -> dt.datetime | None:
    """``--as-of WHEN`` (an instant with a zone or a date, the forms of a bound) as an aware UTC datetime;
    ``None`` for ``None`` (now).

    Raises:
        InputError: ``invalid_as_of``, naming the form it needs.
    """
    if text is None:
        return None
    try:
        return parse_bound(text, "--as-of")
    except ValidityError as exc:
        raise InputError(exc.message, "invalid_as_of") from None
