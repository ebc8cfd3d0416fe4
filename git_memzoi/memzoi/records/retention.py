"""Retention and expiry: when a record stops being a current assertion (memzoi-spec.md §2.3; pure).

Lane rules: semantic and procedural records expire only at ``explicit_expires_at``; episodic ones 30 days
after ``occurred_at``; session ones 24 h after their last activity, 7 days after start, or at close. The state
is ``query_only`` once now ≥ the boundary (inclusive). Canonical files are never rewritten on expiry.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from git_memzoi.errors import InputError
from git_memzoi.memzoi.records import validity
from git_memzoi.memzoi.records.okf import Record, format_timestamp, parse_timestamp

EPISODIC_WINDOW = dt.timedelta(days=30)
SESSION_LEASE = dt.timedelta(hours=24)
SESSION_MAX_AGE = dt.timedelta(days=7)


class RetentionError(InputError):
    """Retention facts that are not valid for the record's lane (an error, never "expired")."""

    default_code = "invalid_retention"


@dataclass(frozen=True)
class Decision:
    """``{state, effective_boundary, reason}``: ``current`` or ``query_only``, the boundary (UTC) and why."""

    state: str
    effective_boundary: str | None
    reason: str

    def as_json(self) -> dict[str, Any]:
        """The decision object of ``expiry --json``."""
        return {"state": self.state, "effective_boundary": self.effective_boundary, "reason": self.reason}


def decide(record: Record, now: dt.datetime) -> Decision:
    """Evaluate ``record``'s retention at ``now`` (an aware datetime).

    Raises:
        RetentionError: a fact the lane does not allow, or a missing required one.
    """
    facts = {k: parse_timestamp(v) for k, v in record.retention.items() if k != "episodic_extension"}
    candidates = _boundaries(record, facts)
    if not candidates:
        return Decision("current", None, "no_age_limit")
    boundary, reason = min(candidates, key=lambda c: c[0])
    state = "query_only" if now >= boundary else "current"
    return Decision(state, format_timestamp(boundary), reason)


def _boundaries(record: Record, facts: dict[str, dt.datetime | None]) -> list[tuple[dt.datetime, str]]:
    lane, present = record.lane, set(record.retention)
    found: list[tuple[dt.datetime, str]] = []
    explicit = facts.get("explicit_expires_at")
    if explicit:
        found.append((explicit, "explicit_expiry"))
    if lane in ("semantic", "procedural"):
        _only(record, present, {"explicit_expires_at"})
    elif lane == "episodic":
        _only(record, present, {"occurred_at", "explicit_expires_at"})
        occurred = _required(record, facts, "occurred_at")
        found.append((occurred + EPISODIC_WINDOW, "episodic_ordinary_window"))
    else:  # session
        _only(record, present, {"started_at", "last_continued_at", "closed_at", "explicit_expires_at"})
        started = _required(record, facts, "started_at")
        continued, closed = facts.get("last_continued_at"), facts.get("closed_at")
        if continued and not started <= continued < started + SESSION_MAX_AGE:
            raise RetentionError(f"{record.id}: last_continued_at must be within 7 days after started_at")
        if closed and closed < started:
            raise RetentionError(f"{record.id}: closed_at is before started_at")
        found.append(((continued or started) + SESSION_LEASE, "session_inactivity_lease"))
        found.append((started + SESSION_MAX_AGE, "session_maximum_age"))
        if closed:
            found.append((closed, "session_closed"))
    return found


def _only(record: Record, present: set[str], allowed: set[str]) -> None:
    extra = sorted(present - allowed)
    if extra:
        raise RetentionError(f"{record.id}: retention fact {extra[0]} is not valid for the {record.lane} lane")


def _required(record: Record, facts: dict[str, dt.datetime | None], key: str) -> dt.datetime:
    value = facts.get(key)
    if value is None:
        raise RetentionError(f"{record.id}: the {record.lane} lane needs retention.{key}")
    return value


def current_assertion(record: Record, now: dt.datetime) -> tuple[bool, list[dict[str, Any]]]:
    """Whether ``record`` is a current assertion (active, retention current, ``now`` inside its business validity)
    and the exclusions if not (``lifecycle_status``, ``retention``, ``validity``)."""
    exclusions: list[dict[str, Any]] = []
    if record.status != "active":
        exclusions.append({"kind": "lifecycle_status", "status": record.status})
    decision = decide(record, now)
    if decision.state != "current":
        exclusions.append({"kind": "retention", "reason": decision.reason})
    state = validity.interval({"valid_from": record.valid_from, "valid_to": record.valid_to}).state(now)
    if state != "valid":  # the one time rule of records/validity.py: both ends are the first instant it is out
        exclusions.append({"kind": "validity", "state": state})
    return not exclusions, exclusions


def explain(record: Record, now: dt.datetime) -> dict[str, Any]:
    """The ``expiry --json`` object for ``record`` at ``now`` (read-only)."""
    decision = decide(record, now)
    ok, exclusions = current_assertion(record, now)
    at = format_timestamp(now)
    if ok:
        reason = f"included in ordinary reads: retention is current at {at} and no current-assertion exclusion applies"
    else:
        reason = "excluded from ordinary reads by current-assertion exclusions: " + json.dumps(exclusions)
    return {
        "record": record.id,
        "evaluated_at": at,
        "retention": decision.as_json(),
        "current_assertion": ok,
        "exclusions": exclusions,
        "excluded_from_normal_reads": not ok,
        "reason": reason,
    }
