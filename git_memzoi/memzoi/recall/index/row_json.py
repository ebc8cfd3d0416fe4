"""What an index row reads back as (pure): the record JSON of memzoi-spec.md §4, a row's sortable time, and the
SQL function of a path query.

Split from :mod:`~git_memzoi.memzoi.recall.index.rows` (which turns record files into rows and needs the record
parser) so that reading the index imports no parser (issue 17, "Start-up").
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from git_memzoi.core import clock

if TYPE_CHECKING:
    from git_memzoi.memzoi.recall.schema import RecordJson

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def micros(timestamp: str) -> int:
    """Microseconds since 1970 of a validated record timestamp (the index's sortable time)."""
    parsed = clock.parse_instant(timestamp)
    assert parsed is not None  # validated by record_from_fields
    return (parsed - EPOCH) // dt.timedelta(microseconds=1)


def instant_micros(instant: dt.datetime) -> int:
    """:func:`micros` of an aware datetime as a record would write it (:func:`~git_memzoi.core.clock.format_instant`):
    the as-of instant of a query."""
    return micros(clock.format_instant(instant))


class _Capture(TypedDict, total=False):
    capture: dict[str, Any]


def record_json(row: Mapping[str, Any]) -> RecordJson:
    """The record JSON of memzoi-spec.md §4 (``memory_type``, ``scope_kind`` ...) from an index row."""
    capture: _Capture = {} if row["capture"] is None else {"capture": json.loads(row["capture"])}
    return {
        "id": row["id"],
        "memory_type": row["type"],
        "lane": row["lane"],
        "destination": row["destination"],
        "scope_kind": row["scope_kind"],
        "scope_id": row["scope_id"],
        "visibility": row["visibility"],
        "title": row["title"],
        "body": row["body"],
        "status": row["status"],
        "confidence": row["confidence"],
        "source_kind": row["source_kind"],
        "source_ref": row["source_ref"],
        "proposal_id": row["proposal_id"],
        **capture,  # between proposal_id and content_hash, where the record JSON has always had it
        "content_hash": row["content_hash"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "supersedes_id": row["supersedes_id"],
        "retention": json.loads(row["retention"]),
        "origin": json.loads(row["origin"]),
        "lineage": None if row["lineage"] is None else json.loads(row["lineage"]),
        **_extras(row),  # type: ignore[typeddict-item]
    }


def _extras(row: Mapping[str, Any]) -> dict[str, Any]:
    """The record JSON's optional keys, present only when set (so records without them read as before):
    ``valid_from`` / ``valid_to`` (records/validity.py) and ``locked: true`` (records/lock.py)."""
    out: dict[str, Any] = {k: row[k] for k in ("valid_from", "valid_to") if row.get(k) is not None}
    if row.get("locked"):
        out["locked"] = True
    return out


def applies_to_matcher(path_match: Callable[[str, str], bool]) -> Callable[[str, str], bool]:
    """The SQL function of one path query: whether a row's ``applies_to`` (a JSON list) holds a path that
    ``path_match(stored, requested)`` accepts. Memoized per stored value: values repeat across rows (100 distinct
    among 10,000 records in ``evals/bench/memzoi_recall_both.py``), and each costs a JSON parse and a glob match."""
    hits: dict[str, bool] = {}

    def matches(stored: str, requested: str) -> bool:
        if stored not in hits:
            hits[stored] = any(path_match(p, requested) for p in json.loads(stored))
        return hits[stored]

    return matches
