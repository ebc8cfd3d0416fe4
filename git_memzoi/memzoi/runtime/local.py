"""Private runtime memory (io): local records and the write path every runtime record takes (seed "Local
runtime memory").

Runtime records are OKF record files in :meth:`Layout.runtime`
(``<git common dir>/memzoi/local/runtime/<local|session>/``: shared by every worktree, never committed; never under
``.memzoi/records/``), read through the derived index. Every write is atomic, holds the lifecycle lock and appends
an event carrying ids and classifications only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.core.atomic import lifecycle_lock, make_dirs
from git_memzoi.errors import InputError
from git_memzoi.memzoi.recall.index import db as index_db
from git_memzoi.memzoi.records import events, okf, vocab
from git_memzoi.memzoi.records.retention import decide
from git_memzoi.memzoi.records.store import MAX_RECORD_BYTES

if TYPE_CHECKING:
    from git_memzoi.memzoi.recall.schema import RecordJson
    from git_memzoi.memzoi.runtime import replay
    from git_memzoi.memzoi.workspace import Workspace


SOURCE_KIND = {"local": "memzoi-local", "session": "memzoi-checkpoint"}


CONTENT_CLASS = {"local": "local_only_state", "session": "temporary_task_state"}


MAX_INPUT_BYTES = 256 * 1024


REDACTED = "[redacted]"


@dataclass(frozen=True)
class Draft:
    """A runtime record to write: everything but its final id, which is reserved under the lock."""

    destination: str
    type: str
    lane: str
    title: str
    body: str
    route: str
    scope: str = "repo"
    scope_id: str | None = None
    applies_to: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    content_class: str | None = None
    capture: Mapping[str, Any] | None = None  # capture provenance (memzoi-spec.md §9.7), kept without evidence text


@dataclass(frozen=True)
class Written:
    """One runtime record written: its record JSON and path (:meth:`Layout.label`); for a keyed checkpoint
    (:mod:`~git_memzoi.memzoi.runtime.replay`) its ids, and ``reused`` when an earlier identical call wrote it."""

    record: Mapping[str, Any]
    path: str
    ids: Mapping[str, str] | None = None
    reused: bool = False

    def to_json(self) -> dict[str, Any]:
        """The ``local add`` / ``checkpoint add`` ``--json`` object (``session_id``, ``event_id`` and ``reused``
        only for a keyed call)."""
        out = {"ok": True, "record": dict(self.record), "path": self.path}
        if self.ids is not None:
            out.update(self.ids, reused=self.reused)
        return out


def add_local(ws: Workspace, *, memory_type: str, title: str, body: str) -> Written:
    """``local add``: write one private local record (destination local, source_kind memzoi-local).

    Raises:
        InputError: an unknown type, a title that is empty or not one line, an empty body; a credential in the
            title or body (``prohibited_content_detected``: the option and line named, never the value).
    """
    from git_memzoi.memzoi.records.secrets import require_clean_fields

    if memory_type not in vocab.TYPES:
        raise InputError(f"--type must be one of {', '.join(vocab.TYPES)}", "invalid_type")
    require_clean_fields({"--title": title, "--body": body}, "the local record", private=True)
    lane = {"procedure": "procedural", "episode": "episodic"}.get(memory_type, "semantic")
    draft = Draft(
        "local", memory_type, lane, checked_title("--title", title), checked_body("--body", body), "local_memory"
    )
    return write_draft(ws, draft, "memory.local_created")


def list_records(ws: Workspace, destination: str) -> list[RecordJson]:
    """``local list`` / ``checkpoint list``: current-assertion runtime records, newest first (record JSON)."""
    return [index_db.record_json(row) for row in index_db.list_rows(ws.layout, destination, now=ws.clock.now())]


def search_local(ws: Workspace, query: str, *, limit: int = 10) -> dict[str, Any]:
    """``local search``: full-text search over current local records only (memzoi-spec.md §4 result shape).

    ``limit`` 0 means 10; at most 100. A query without any word finds nothing.
    """
    if limit < 0:
        raise InputError("--limit must be 0 or more", "bad_limit")
    limit = min(limit or 10, 100)
    fts = index_db.fts_query(query)
    rows = (
        []
        if fts is None
        else index_db.search_rows(ws.layout, fts, now=ws.clock.now(), destinations=("local",), limit=limit)
    )
    results = [_result(row, query) for row in rows]
    with lifecycle_lock(ws.layout.lock, root=ws.layout.private_root):
        events.append(
            ws.layout,
            "memory.searched",
            ws.actor,
            ws.clock.now(),
            {"destination": "local", "result_ids": [r["record"]["id"] for r in results]},
        )
    return {"query": query, "destination": "local", "limit": limit, "results": results}


def _result(row: Mapping[str, Any], query: str) -> dict[str, Any]:
    record = index_db.record_json(row)
    paths = sorted(json.loads(row["applies_to"]))
    lowered = query.strip().lower()
    snippet = record["title"] if lowered and lowered in record["title"].lower() else record["body"][:240]
    citation = {
        "record_id": record["id"],
        "memory_type": record["memory_type"],
        "scope_kind": record["scope_kind"],
        "provenance": "git" if record["destination"] == "repo" else "runtime",
        "destination": record["destination"],
        "visibility": record["visibility"],
        "source_kind": record["source_kind"],
        "source_ref": record["source_ref"],
        "path": paths[0] if paths else None,
    }
    return {
        "record": record,
        "score": -row["rank"] + 0.0,
        "snippet": snippet,
        "rationale": "fts5 title/body match",
        "ranking": None,
        "paths": [{"path": p, "symbol": None, "line_start": None, "line_end": None} for p in paths],
        "citations": [citation],
    }


def rebuild(ws: Workspace) -> index_db.RebuildResult:
    """``rebuild``: rebuild the derived index from the record files (canonical and runtime) and log it."""
    result = index_db.rebuild(ws.layout)
    payload = {
        "records": dict(result.records),
        "unreadable": len(result.unreadable),
        "pending_proposals": result.pending_proposals,
    }
    with lifecycle_lock(ws.layout.lock, root=ws.layout.private_root):
        events.append(ws.layout, "memory.index_rebuilt", ws.actor, ws.clock.now(), payload)
    return result


def read_input(path: Path) -> str:
    """The UTF-8 text of an explicit input file (at most 256 KiB).

    Raises:
        InputError: missing (``missing_input``), not a regular file (``not_a_regular_file``: a FIFO is never
            opened), too large (``input_too_large``), or not UTF-8 (the message names only the path).
    """
    from git_memzoi.core import safe_read

    try:
        data = safe_read.read_bytes(path, MAX_INPUT_BYTES, follow_symlinks=True)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file", "missing_input") from None
    except safe_read.FileRefused as exc:
        if exc.code == safe_read.TOO_LARGE:
            raise InputError(f"{path}: larger than {MAX_INPUT_BYTES} bytes", "input_too_large") from None
        raise
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})", "missing_input") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text", "not_utf8") from None


def checked_title(option: str, value: str) -> str:
    """``value`` stripped; raises InputError ``invalid_title`` unless it is one non-empty line."""
    text = value.strip()
    if not text or "\n" in text or "\r" in text:
        raise InputError(f"{option} must be one non-empty line", "invalid_title")
    return text


def checked_body(what: str, value: str) -> str:
    """``value`` stripped; raises InputError ``empty_body`` when it is blank (``what`` names it)."""
    if not value.strip():
        raise InputError(f"{what} must not be empty", "empty_body")
    return value.strip()


def check_draft(ws: Workspace, draft: Draft) -> None:
    """Validate ``draft`` as the runtime record it would become, writing nothing.

    Raises:
        InputError: the record would not be valid.
    """
    render_record(ws, draft, base_id(draft))


def write_draft(ws: Workspace, draft: Draft, event_type: str, key: replay.Key | None = None) -> Written:
    """Write ``draft`` as one private runtime record (guarded, atomic) and log ``event_type``; with ``key``, as one
    operation that also stores the result under it (:mod:`~git_memzoi.memzoi.runtime.replay`).

    Raises:
        InputError: the record would not be valid or holds a credential (nothing written).
    """
    from git_memzoi.memzoi.proposals import lifecycle
    from git_memzoi.memzoi.runtime import replay

    render_record(ws, draft, base_id(draft))  # validate before taking the lock
    hold = lifecycle.operation(ws.layout, draft.route) if key is not None else lifecycle.guarded(ws.layout)
    with hold:
        path, data, written = reserve(ws, draft, set())
        lifecycle.write_step(ws.layout, lifecycle.Step(path, data))
        events.append(
            ws.layout,
            event_type,
            ws.actor,
            ws.clock.now(),
            {"destination": draft.destination, "memory_type": draft.type, "route": draft.route},
            record_id=written.record["id"],
        )
        if key is not None:
            written = Written(written.record, written.path, key.ids(), False)
            lifecycle.write_step(ws.layout, replay.record_step(ws.layout, key, written.to_json()))
    return written


def base_id(draft: Draft) -> str:
    """The id a draft asks for before collisions are resolved: ``<destination>-<slug of the title>``."""
    slug = okf.concept_slug(draft.title)[:80].strip("-")
    if not slug:
        from git_memzoi.core.hashing import short_hash

        slug = short_hash(draft.title.encode("utf-8"), 12)
    return f"{draft.destination}-{slug}"


def render_record(ws: Workspace, draft: Draft, record_id: str) -> tuple[okf.Record, str]:
    """The record and its file text; re-parsed so a file we write is always one the index can read, and
    refused (``prohibited_content_detected``) when it holds a credential: private memory never stores one."""
    from git_memzoi.memzoi.records.secrets import require_clean, require_clean_fields

    now = okf.format_timestamp(ws.clock.now())
    retention = {"session": {"started_at": now}, "episodic": {"occurred_at": now}}.get(draft.lane, {})
    origin_key = {
        "local_memory": "local-memory",
        "checkpoint_create": "checkpoint",
        "capture": "memzoi-capture",
        "import": "memzoi-import",
    }.get(draft.route, "session-end")
    record = okf.Record(
        id=record_id,
        type=draft.type,
        lane=draft.lane,
        title=draft.title,
        scope=draft.scope,
        visibility="private",
        content_class=draft.content_class or CONTENT_CLASS[draft.destination],
        status="active",
        confidence=1.0,
        timestamp=now,
        updated=now,
        body=draft.body,
        retention=retention,
        origin={"origin_key": f"{origin_key}:{record_id}", "route": draft.route},
        scope_id=draft.scope_id,
        source=SOURCE_KIND[draft.destination],
        applies_to=draft.applies_to,
        tags=draft.tags,
    )
    if draft.capture is not None:
        from dataclasses import replace

        from git_memzoi.memzoi.records.provenance import capture_ref, compact_capture

        record = replace(
            record,
            source="memzoi-capture",
            source_ref=capture_ref(draft.capture),
            capture=compact_capture(draft.capture),
        )
    where = f"new {draft.destination} record {record_id}"
    require_clean_fields(
        {"title": draft.title, "body": draft.body, "applies_to": draft.applies_to, "tags": draft.tags},
        where,
        private=True,
    )
    text = okf.render(record)
    require_clean(text, where, document=True, private=True)
    if len(text.encode("utf-8")) > MAX_RECORD_BYTES:
        raise InputError(f"the record would be larger than {MAX_RECORD_BYTES} bytes", "record_too_large")
    rel = ws.layout.label(index_db.runtime_dir(ws.layout, draft.destination) / f"{record_id}.md")
    parsed = index_db.parse_record(record_id, rel, text.encode("utf-8"))
    decide(parsed, ws.clock.now())
    return parsed, text


def write_batch(ws: Workspace, drafts: Iterable[tuple[int, Draft]], operation: str) -> dict[int, dict[str, Any]]:
    """Write the runtime records ``drafts`` (``(index, draft)`` pairs) as one lifecycle batch named ``operation``,
    each under a free id (:func:`reserve`); the caller holds the lifecycle lock.

    Returns:
        per index, its write row ``{kind: "runtime_record", index, record_id, destination}``.
    """
    from git_memzoi.memzoi.proposals import lifecycle

    taken: set[str] = set()
    steps: list[lifecycle.Step] = []
    writes: dict[int, dict[str, Any]] = {}
    for index, draft in drafts:
        path, data, written = reserve(ws, draft, taken)
        steps.append(lifecycle.Step(path, data))
        writes[index] = {
            "kind": "runtime_record",
            "index": index,
            "record_id": written.record["id"],
            "destination": draft.destination,
        }
    if steps:
        lifecycle.run_steps(ws.layout, operation, steps)
    return writes


def reserve(ws: Workspace, draft: Draft, taken: set[str]) -> tuple[Path, bytes, Written]:
    """Reserve a free runtime record id (``<base>``, ``<base>-2`` …, not in ``taken`` nor on disk) and render it.

    Returns ``(path, file bytes, written)``; nothing is written: the caller holds the lifecycle lock, writes the
    batch and adds the id to ``taken``.
    """
    directory = index_db.runtime_dir(ws.layout, draft.destination)
    make_dirs(directory, root=ws.layout.root_for(directory))
    base = base_id(draft)
    record_id, n = base, 1
    while record_id in taken or (directory / f"{record_id}.md").exists():
        n += 1
        record_id = f"{base}-{n}"
    taken.add(record_id)
    record, text = render_record(ws, draft, record_id)
    path = directory / f"{record_id}.md"
    rel = ws.layout.label(path)
    return (
        path,
        text.encode("utf-8"),
        Written(index_db.record_json(index_db.record_row(draft.destination, rel, record)), rel),
    )
