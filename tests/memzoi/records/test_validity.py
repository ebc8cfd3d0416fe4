"""Business validity (issue 19, vault-memory F07): the half-open ``[valid_from, valid_to)`` interval of a record, its
accepted forms and every boundary value of the rules (records/validity.py). Pure: no repository."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from git_memzoi.errors import InputError
from git_memzoi.memzoi.records import validity
from git_memzoi.memzoi.records.validity import Interval, ValidityError

UTC = dt.UTC


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-07-01", "2026-07-01T00:00:00+00:00"),  # a date is 00:00 UTC that day
        ("2026-07-01T09:30:00Z", "2026-07-01T09:30:00+00:00"),
        ("2026-07-01T09:30Z", "2026-07-01T09:30:00+00:00"),  # seconds are optional
        ("2026-07-01T11:30:00+02:00", "2026-07-01T09:30:00+00:00"),  # converted to UTC
        ("2026-07-01T09:30:00.123Z", "2026-07-01T09:30:00.123000+00:00"),  # milliseconds: the finest allowed
        ("2026-07-01t09:30:00z", "2026-07-01T09:30:00+00:00"),
        (dt.date(2026, 7, 1), "2026-07-01T00:00:00+00:00"),  # YAML's reading of an unquoted date
        (dt.datetime(2026, 7, 1, 9, 30, 0, 123000, tzinfo=UTC), "2026-07-01T09:30:00.123000+00:00"),
    ],
)
def test_accepted_bounds(value: Any, expected: str) -> None:
    parsed = validity.parse_bound(value, "valid_from")
    assert parsed is not None and parsed.isoformat() == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("2026-07-01T09:30:00", "valid_to: '2026-07-01T09:30:00' has no zone; add Z or ±hh:mm"),
        ("2026-02-30", "valid_to: '2026-02-30' is not a calendar date"),
        ("2026-02-30T00:00:00Z", "valid_to: '2026-02-30T00:00:00Z' is not a calendar instant"),
        ("2026-07-01T24:00:00Z", "valid_to: '2026-07-01T24:00:00Z' is not a calendar instant"),
        ("2026-07-01T09:30:00.1234Z", "valid_to: '2026-07-01T09:30:00.1234Z' has more than millisecond precision"),
        ("next week", "valid_to: 'next week' must be " + validity.FORM),
        ("1899-12-31", "valid_to: outside the years 1900-8999"),
        (dt.datetime(2026, 7, 1, 9, 30), "valid_to: an instant needs an explicit zone (Z or ±hh:mm)"),
        (dt.datetime(2026, 7, 1, 9, 30, 0, 1000 + 1, tzinfo=UTC), "valid_to: at most millisecond precision"),
        (20260701, "valid_to: must be " + validity.FORM),
        (True, "valid_to: must be " + validity.FORM),
    ],
)
def test_refused_bounds(value: Any, message: str) -> None:
    with pytest.raises(ValidityError) as caught:
        validity.parse_bound(value, "valid_to")
    assert (caught.value.code, caught.value.message) == ("invalid_validity", message)


def test_from_must_be_before_to_and_one_millisecond_is_enough() -> None:
    with pytest.raises(ValidityError) as equal:
        validity.interval({"valid_from": "2026-07-01", "valid_to": "2026-07-01T00:00:00Z"}, "r.md")
    assert equal.value.message == "r.md: valid_from must be before valid_to (the interval [from, to) is half-open)"
    with pytest.raises(ValidityError):
        validity.interval({"valid_from": "2026-07-02", "valid_to": "2026-07-01"})
    span = validity.interval({"valid_from": "2026-07-01T00:00:00.000Z", "valid_to": "2026-07-01T00:00:00.001Z"})
    assert span.micros() == (1782864000000000, 1782864000001000)


def test_half_open_membership_at_every_boundary() -> None:
    span = validity.interval({"valid_from": "2026-07-01", "valid_to": "2026-07-11"})
    assert span.contains(at("2026-07-01T00:00:00Z"))  # start inclusive
    assert not span.contains(at("2026-06-30T23:59:59.999Z"))
    assert span.contains(at("2026-07-10T23:59:59.999Z"))
    assert not span.contains(at("2026-07-11T00:00:00Z"))  # end exclusive: a date end is that day's midnight
    assert [span.state(at(t)) for t in ("2026-06-30T12:00:00Z", "2026-07-05T00:00:00Z", "2026-07-11T00:00:00Z")] == [
        "not_yet_valid",
        "valid",
        "no_longer_valid",
    ]
    assert Interval().contains(at("1900-01-01T00:00:00Z")) and Interval().micros() == (None, None)


def test_missing_and_null_bounds_are_open() -> None:
    assert validity.interval({}) == Interval()
    assert validity.interval({"valid_from": None, "valid_to": "2026-07-11"}).start is None


def test_options_name_the_flag_and_refuse_before_anything() -> None:
    assert validity.options("2026-07-01", None) == {"valid_from": "2026-07-01"}
    assert validity.options(None, None) == {}
    with pytest.raises(ValidityError) as caught:
        validity.options(None, "2026-07-11T00:00:00")
    assert caught.value.message == "--valid-to: '2026-07-11T00:00:00' has no zone; add Z or ±hh:mm"
    with pytest.raises(ValidityError) as order:
        validity.options("2026-07-11", "2026-07-11")
    assert order.value.message == "--valid-from must be before --valid-to (the interval [from, to) is half-open)"


def test_as_of_takes_the_same_forms_and_its_own_code() -> None:
    assert validity.parse_as_of(None) is None
    assert validity.parse_as_of("2026-07-11") == dt.datetime(2026, 7, 11, tzinfo=UTC)
    with pytest.raises(InputError) as caught:
        validity.parse_as_of("2026-07-11T00:00:00")
    assert (caught.value.code, caught.value.message) == (
        "invalid_as_of",
        "--as-of: '2026-07-11T00:00:00' has no zone; add Z or ±hh:mm",
    )


def test_normalized_keeps_strings_and_writes_yaml_values_in_utc() -> None:
    assert validity.normalized("2026-07-01T11:30:00+02:00") == "2026-07-01T11:30:00+02:00"
    assert validity.normalized(dt.date(2026, 7, 1)) == "2026-07-01"
    assert validity.normalized(dt.datetime(2026, 7, 1, 9, 30, tzinfo=UTC)) == "2026-07-01T09:30:00Z"
    assert validity.normalized(dt.datetime(2026, 7, 1, 9, 30, 0, 5000, tzinfo=UTC)) == "2026-07-01T09:30:00.005Z"
