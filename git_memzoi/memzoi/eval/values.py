"""The strict value checks both trust corpora share (``memzoi-recall-corpus/v2``, ``memzoi-capture-corpus/v1``;
pure): each takes where the value sits (``cases[3].query``) and the value, and returns the value checked or raises
a :class:`CorpusError` naming that place. Split out of the recall corpus, which re-exports :class:`CorpusError`.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Sequence
from typing import Any

from git_memzoi.errors import InputError


class CorpusError(InputError):
    """A trust corpus or fixture that is not valid: where, why, and a stable code (exit 2)."""

    default_code = "corpus_invalid_value"

    def __init__(self, where: str, reason: str, code: str | None = None) -> None:
        super().__init__(f"{where}: {reason}", code)
        self.where, self.reason = where, reason


def check_relative(where: str, text: str) -> None:
    """Raise unless ``text`` is a relative POSIX path without ``.``, ``..`` or empty segments."""
    if text.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", text) or "\\" in text or "\0" in text:
        raise CorpusError(where, f"{text!r} must be a relative POSIX path", "corpus_unsafe_fixture_path")
    if any(part in ("", ".", "..") for part in text.split("/")):
        raise CorpusError(where, f"{text!r} must not contain '..', '.' or empty segments", "corpus_unsafe_fixture_path")


def check_keys(where: str, value: Any, allowed: Sequence[str], required: Sequence[str]) -> None:
    """Raise unless ``value`` is a mapping with only ``allowed`` keys and every ``required`` one."""
    if not isinstance(value, dict):
        raise CorpusError(where, "must be a mapping")
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise CorpusError(
            f"{where}.{unknown[0]}" if where != "corpus" else unknown[0],
            f"unknown field; allowed: {', '.join(allowed)}",
            "corpus_unknown_field",
        )
    for key in required:
        if key not in value:
            raise CorpusError(
                f"{where}.{key}" if where != "corpus" else key, "required field is missing", "corpus_missing_field"
            )


def as_list(where: str, value: Any) -> list[Any]:
    """``value`` when it is a list."""
    if not isinstance(value, list):
        raise CorpusError(where, "must be a list")
    return value


def as_ids(where: str, value: Any) -> tuple[str, ...]:
    """The non-empty strings of the list ``value``, trimmed."""
    return tuple(as_text(f"{where}[{n}]", item) for n, item in enumerate(as_list(where, value)))


def check_unique(where: str, values: Sequence[str], code: str) -> None:
    """Raise (with ``code``) when a value is listed twice."""
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise CorpusError(where, f"{value!r} is listed twice", code)
        seen.add(value)


def as_text(where: str, value: Any, *, strip: bool = True) -> str:
    """A non-empty string without NUL, trimmed unless ``strip`` is false."""
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise CorpusError(where, "must be a non-empty string")
    return value.strip() if strip else value


def as_line(where: str, value: Any) -> str:
    """:func:`as_text` on one line."""
    text = as_text(where, value)
    if "\n" in text or "\r" in text:
        raise CorpusError(where, "must be one line")
    return text


def as_optional(where: str, value: Any) -> str | None:
    """:func:`as_text`, or ``None`` for ``None``."""
    return None if value is None else as_text(where, value)


def as_record_id(where: str, value: Any) -> str:
    """A valid record (concept) id."""
    from git_memzoi.memzoi.records.okf import concept_id_problem

    text = as_text(where, value)
    problem = concept_id_problem(text)
    if problem:
        raise CorpusError(where, f"{text!r} is not a record id: {problem}")
    return text


def as_choice(where: str, value: Any, allowed: Sequence[str]) -> str:
    """One of ``allowed``."""
    if value not in allowed:
        raise CorpusError(where, f"must be one of {', '.join(allowed)}")
    return str(value)


def as_bool(where: str, value: Any) -> bool:
    """``true`` or ``false``."""
    if not isinstance(value, bool):
        raise CorpusError(where, "must be true or false")
    return value


def as_integer(where: str, value: Any, low: int, high: int | None) -> int:
    """An integer from ``low`` (to ``high`` when given); a bool is not one."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        raise CorpusError(where, f"must be an integer from {low}" + (f" to {high}" if high is not None else ""))
    return value


def as_number(where: str, value: Any) -> float:
    """An int or float that is not NaN, as a float; a bool is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise CorpusError(where, "must be a number")
    return float(value)


def as_instant(where: str, value: Any) -> dt.datetime:
    """An RFC 3339 instant with a zone, in UTC."""
    from git_memzoi.memzoi.records.okf import parse_timestamp

    parsed = parse_timestamp(value)
    if parsed is None:
        raise CorpusError(
            where, "must be an RFC 3339 instant with a zone in the years 1900-8999, e.g. 2026-07-10T12:00:00Z"
        )
    return parsed.astimezone(dt.UTC)
