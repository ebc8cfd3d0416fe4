"""The lifecycle event log: one JSON object per line in ``.memzoi/local/events.jsonl`` (append-only; io).

Seed "Event JSONL export": each event has ``id``, ``event_type``, ``actor``, ``payload``, ``record_id``,
``proposal_id`` and ``created_at``. The log is operational runtime state, not canonical memory and not rebuild
input. Writers call :func:`append` while they hold the lifecycle lock.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.records.okf import format_timestamp


def log_path(layout: Layout) -> Path:
    """``.memzoi/local/events.jsonl``."""
    return layout.local / "events.jsonl"


def append(
    layout: Layout,
    event_type: str,
    actor: str,
    now: dt.datetime,
    payload: Mapping[str, Any] | None = None,
    *,
    record_id: str | None = None,
    proposal_id: str | None = None,
) -> dict[str, Any]:
    """Append one event (fsynced) and return it; O(1) however long the log is.

    The id is ``evt_<offset>``: the log's size in bytes before this line, unique and increasing for appends
    made under the lifecycle lock (read-only commands append without it; ``O_APPEND`` keeps their lines whole).
    Payloads must never hold blocked or private content: callers pass ids, counts and classifications only.
    """
    path = log_path(layout)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        event = {
            "id": f"evt_{os.fstat(fd).st_size:012d}",
            "event_type": event_type,
            "actor": actor,
            "payload": dict(payload or {}),
            "record_id": record_id,
            "proposal_id": proposal_id,
            "created_at": format_timestamp(now),
        }
        line = json.dumps(event, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n"
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return event


def export(layout: Layout) -> Iterator[str]:
    """Every event as one compact JSON line (without the newline); nothing for an empty or missing log."""
    for line in _lines(log_path(layout)):
        try:
            yield json.dumps(json.loads(line), ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        except ValueError:
            continue  # a torn last line from a crash is skipped, never echoed


def _lines(path: Path) -> Iterator[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    yield line
    except FileNotFoundError:
        return
