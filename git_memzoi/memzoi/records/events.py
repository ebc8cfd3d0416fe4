"""The lifecycle event log: one JSON object per line in :attr:`Layout.events` (``.git/memzoi/local/events.jsonl``;
append-only; io).

Seed "Event JSONL export": each event has ``id``, ``event_type``, ``actor``, ``payload``, ``record_id``,
``proposal_id`` and ``created_at``. The log is operational runtime state, not canonical memory and not rebuild
input. Writers call :func:`append` while they hold the lifecycle lock.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from git_memzoi.core import safe_read
from git_memzoi.core.clock import format_instant as format_timestamp
from git_memzoi.memzoi.layout import Layout

# one event of :func:`append_many`: (event_type, actor, payload, record_id, proposal_id)
Event = tuple[str, str, Mapping[str, Any] | None, str | None, str | None]


def log_path(layout: Layout) -> Path:
    """The private, shared event log: :attr:`Layout.events`."""
    return layout.events


def append(
    layout: Layout,
    event_type: str,
    actor: str,
    now: dt.datetime,
    payload: Mapping[str, Any] | None = None,
    *,
    record_id: str | None = None,
    proposal_id: str | None = None,
    durable: bool = True,
) -> dict[str, Any]:
    """Append one event and return it; O(1) however long the log is.

    A lifecycle event is fsynced before this returns (``durable``). A read's audit event (search, context,
    precheck: ``durable=False``) is written without the fsync, which costs 0.6 ms on a quiet disk and tens under
    I/O load on every reply (issue 17, "Per-call overhead"): the kernel writes it out within seconds, and a power
    loss in that window can lose the last read audit lines, never a lifecycle event or the order of the log.

    The id is ``evt_<offset>``: the log's size in bytes before this line, unique and increasing for appends
    made under the lifecycle lock (read-only commands append without it; ``O_APPEND`` keeps their lines whole).
    Payloads must never hold blocked or private content: callers pass ids, counts and classifications only.

    Raises:
        UnsafePath: the log, or a folder above it, is a symlink (``unsafe_path``; nothing written).
        NotAFile: the log is not a regular file.
    """
    from git_memzoi.core.atomic import open_append

    check_log(layout)  # a FIFO or a folder there: refused, named as the user sees it
    fd = open_append(
        log_path(layout), root=layout.root_for(log_path(layout))
    )  # never through a symlink, never into a FIFO
    try:
        event, line = _line(os.fstat(fd).st_size, (event_type, actor, payload, record_id, proposal_id), now)
        os.write(fd, line)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    return event


def append_many(layout: Layout, items: Sequence[Event], now: dt.datetime) -> int:
    """Append many lifecycle events with one write and one fsync (a bulk apply's; :func:`append` one at a time
    costs an fsync each). Each item is ``(event_type, actor, payload, record_id, proposal_id)``; ids are
    ``evt_<offset>`` of each line, as :func:`append` gives them. Returns how many were appended.

    Raises:
        UnsafePath, NotAFile: as :func:`append` (nothing written).
    """
    from git_memzoi.core.atomic import open_append

    if not items:
        return 0
    check_log(layout)
    fd = open_append(log_path(layout), root=layout.root_for(log_path(layout)))
    try:
        offset, lines = os.fstat(fd).st_size, []
        for item in items:
            line = _line(offset, item, now)[1]
            lines.append(line)
            offset += len(line)
        data = b"".join(lines)
        while data:  # a short write to a regular file is rare but legal: finish it
            data = data[os.write(fd, data) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    return len(items)


def _line(offset: int, item: Event, now: dt.datetime) -> tuple[dict[str, Any], bytes]:
    """The event ``item`` appended at byte ``offset`` of the log, and its line (compact sorted JSON, UTF-8)."""
    event_type, actor, payload, record_id, proposal_id = item
    event = {
        "id": f"evt_{offset:012d}",
        "event_type": event_type,
        "actor": actor,
        "payload": dict(payload or {}),
        "record_id": record_id,
        "proposal_id": proposal_id,
        "created_at": format_timestamp(now),
    }
    return event, (json.dumps(event, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n").encode("utf-8")


def check_log(layout: Layout) -> None:
    """Refuse before a command's first write when the log cannot take an event: something other than a regular
    file is there (a FIFO would block the append that ends the command, after its other writes).

    Raises:
        FileRefused: ``not_a_regular_file`` (exit 2), naming the repository-relative path.
    """
    path = log_path(layout)
    try:
        safe_read.require_regular_or_absent(path)
    except safe_read.FileRefused as exc:
        raise exc.renamed(layout.label(path)) from None


def export(layout: Layout) -> Iterator[str]:
    """Every event as one compact JSON line (without the newline); nothing for an empty or missing log.

    Raises:
        FileRefused: the log is no regular file (``not_a_regular_file``: a FIFO is never opened).
    """
    path = log_path(layout)
    try:
        lines = _lines(path)
        first = next(lines, None)
    except safe_read.FileRefused as exc:
        raise exc.renamed(layout.label(path)) from None
    if first is None:
        return
    for line in itertools.chain((first,), lines):
        try:
            event = safe_read.load_json(line)
            yield json.dumps(event, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        except ValueError:
            continue  # a torn last line from a crash is skipped, never echoed


def _lines(path: Path) -> Iterator[str]:
    """The log's non-blank lines; a log that is a symlink or not a regular file is refused, never followed.

    Raises:
        UnsafePath: the log is a symlink. FileRefused: it is not a regular file (``not_a_regular_file``).
    """
    from git_memzoi.core.confine import UnsafePath

    try:
        handle = safe_read.open_stream(path)  # never through a link, and a FIFO is refused unopened
    except FileNotFoundError:
        return
    except safe_read.FileRefused as exc:
        if exc.code == safe_read.SYMLINK:
            raise UnsafePath(f"{path.name} is a symlink; the event log is not read through it") from None
        raise
    with handle:
        for raw in handle:
            line = raw.decode("utf-8", "replace")
            if line.strip():
                yield line
