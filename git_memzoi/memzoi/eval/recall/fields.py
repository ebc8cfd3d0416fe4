"""Typed readers for the fields of an eval corpus (pure): each checks one value and raises :class:`CorpusError`
naming where it is (``cases[3].query``) and the stable code."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from typing import Any

from git_memzoi.errors import InputError


class CorpusError(InputError):
    """A corpus or fixture that is not valid ``memzoi-recall-corpus/v2``: where, why, and a stable code (exit 2)."""

    default_code = "corpus_invalid_value"

    def __init__(self, where: str, reason: str, code: str | None = None) -> None:
        super().__init__(f"{where}: {reason}", code)
        self.where, self.reason = where, reason


def keys(where: str, value: Any, allowed: Sequence[str], required: Sequence[str]) -> None:
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


def list_of(where: str, value: Any) -> list[Any]:
    """``value`` as a list; raises unless it is one."""
    if not isinstance(value, list):
        raise CorpusError(where, "must be a list")
    return value


def ids(where: str, value: Any) -> tuple[str, ...]:
    """``value`` as a tuple of non-empty strings (a list of ids; their existence is checked later)."""
    return tuple(string(f"{where}[{n}]", item) for n, item in enumerate(list_of(where, value)))


def unique(where: str, values: Sequence[str], code: str) -> None:
    """Raise ``code`` when ``values`` repeat one."""
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise CorpusError(where, f"{value!r} is listed twice", code)
        seen.add(value)


def string(where: str, value: Any, *, strip: bool = True) -> str:
    """``value`` as a non-empty string without NUL, stripped unless ``strip`` is false."""
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise CorpusError(where, "must be a non-empty string")
    return value.strip() if strip else value


def line(where: str, value: Any) -> str:
    """``value`` as one non-empty line."""
    text = string(where, value)
    if "\n" in text or "\r" in text:
        raise CorpusError(where, "must be one line")
    return text


def optional(where: str, value: Any) -> str | None:
    """``None``, or ``value`` as a non-empty string."""
    return None if value is None else string(where, value)


def record_id(where: str, value: Any) -> str:
    """``value`` as a concept id (the record id grammar)."""
    from git_memzoi.memzoi.records.okf import concept_id_problem

    text = string(where, value)
    problem = concept_id_problem(text)
    if problem:
        raise CorpusError(where, f"{text!r} is not a record id: {problem}")
    return text


def choice(where: str, value: Any, allowed: Sequence[str]) -> str:
    """``value``, which must be one of ``allowed``."""
    if value not in allowed:
        raise CorpusError(where, f"must be one of {', '.join(allowed)}")
    return str(value)


def boolean(where: str, value: Any) -> bool:
    """``value``, which must be a YAML boolean."""
    if not isinstance(value, bool):
        raise CorpusError(where, "must be true or false")
    return value


def integer(where: str, value: Any, low: int, high: int | None) -> int:
    """``value`` as an integer in ``[low, high]`` (``high`` ``None``: unbounded); booleans refused."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        raise CorpusError(where, f"must be an integer from {low}" + (f" to {high}" if high is not None else ""))
    return value


def number(where: str, value: Any) -> float:
    """``value`` as a float; integers are accepted, booleans and NaN refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise CorpusError(where, "must be a number")
    return float(value)


def instant(where: str, value: Any) -> dt.datetime:
    """``value`` as an aware UTC datetime; it must be an RFC 3339 instant with a zone."""
    from git_memzoi.memzoi.records.okf import parse_timestamp

    parsed = parse_timestamp(value)
    if parsed is None:
        raise CorpusError(where, "must be an RFC 3339 instant with a zone, e.g. 2026-07-10T12:00:00Z")
    return parsed.astimezone(dt.UTC)
