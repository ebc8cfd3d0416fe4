"""Private runtime memory (io): local records, session checkpoints and session-end promotion (seed "Local
runtime memory", "Session checkpoints", "Session-end promotion").

Runtime records are OKF record files under ``.memzoi/local/runtime/<local|session>/`` (git-ignored; never under
``.memzoi/records/``), read through the derived index. Every write is atomic, holds the lifecycle lock and
appends an event carrying ids and classifications only. Session-end reads explicit structured YAML only,
validates the whole batch before anything is written, and writes nothing at all when a repo candidate is not
repo-safe.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.core.atomic import lifecycle_lock, write_bytes_atomic
from git_memzoi.errors import InputError
from git_memzoi.memzoi import events, index_db, okf, vocab
from git_memzoi.memzoi.record_store import MAX_RECORD_BYTES
from git_memzoi.memzoi.retention import decide

if TYPE_CHECKING:
    from git_memzoi.memzoi.api import Context
    from git_memzoi.memzoi.packets import Packet

SOURCE_KIND = {"local": "memzoi-local", "session": "memzoi-checkpoint"}
CONTENT_CLASS = {"local": "local_only_state", "session": "temporary_task_state"}
MAX_INPUT_BYTES = 256 * 1024
REDACTED = "[redacted]"
TOP_KEYS = ("task", "candidates")
CANDIDATE_KEYS = ("destination", "type", "lane", "title", "body", "sensitivity", "content_class", "reason", "scope",
                  "tags")  # fmt: skip
SCOPE_KEYS = ("kind", "id", "paths")


class SessionEndError(InputError):
    """Session-end input that is not a valid batch: names the source and the field, never the content (exit 2)."""

    default_code = "invalid_session_end"


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
    """One runtime record written: its record JSON and repository-relative path."""

    record: Mapping[str, Any]
    path: str

    def to_json(self) -> dict[str, Any]:
        """The ``local add`` / ``checkpoint add`` ``--json`` object."""
        return {"ok": True, "record": dict(self.record), "path": self.path}


# ------------------------------------------------------------------------------------------------ local and checkpoints


def add_local(ctx: Context, *, memory_type: str, title: str, body: str) -> Written:
    """``local add``: write one private local record (destination local, source_kind memzoi-local).

    Raises:
        InputError: an unknown type, a title that is empty or not one line, an empty body; a credential in the
            title or body (``prohibited_content_detected``: the option and line named, never the value).
    """
    from git_memzoi.memzoi.secrets import require_clean_fields

    if memory_type not in vocab.TYPES:
        raise InputError(f"--type must be one of {', '.join(vocab.TYPES)}", "invalid_type")
    require_clean_fields({"--title": title, "--body": body}, "the local record", private=True)
    lane = {"procedure": "procedural", "episode": "episodic"}.get(memory_type, "semantic")
    draft = Draft("local", memory_type, lane, _title("--title", title), _body("--body", body), "local_memory")
    return _write_one(ctx, draft, "memory.local_created")


def add_checkpoint(ctx: Context, *, task: str, note: str | None = None, from_file: Path | None = None) -> Written:
    """``checkpoint add``: write one session checkpoint (type episode, lane session) holding only the explicit
    ``note`` or the content of ``from_file`` (exactly one of the two).

    Raises:
        InputError: both or neither of note/file, an unreadable or empty file, an empty task; a credential in the
            task, note or file (``prohibited_content_detected``: the option and line named, never the value).
    """
    from git_memzoi.memzoi.secrets import require_clean_fields

    if (note is None) == (from_file is None):
        raise InputError("give exactly one of --note or --from-file", "bad_usage")
    text = note if note is not None else read_input(from_file)  # type: ignore[arg-type]
    source = "--note" if note is not None else f"--from-file {from_file}"
    require_clean_fields({"--task": task, source: text}, "the checkpoint", private=True)
    draft = Draft("session", "episode", "session", _title("--task", task), _body("the note", text),
                  "checkpoint_create")  # fmt: skip
    return _write_one(ctx, draft, "memory.checkpoint_created")


def list_records(ctx: Context, destination: str) -> list[dict[str, Any]]:
    """``local list`` / ``checkpoint list``: current-assertion runtime records, newest first (record JSON)."""
    return [index_db.record_json(row) for row in index_db.list_rows(ctx.layout, destination, now=ctx.clock.now())]


def search_local(ctx: Context, query: str, *, limit: int = 10) -> dict[str, Any]:
    """``local search``: full-text search over current local records only (memzoi-spec.md §4 result shape).

    ``limit`` 0 means 10; at most 100. A query without any word finds nothing.
    """
    if limit < 0:
        raise InputError("--limit must be 0 or more", "bad_limit")
    limit = min(limit or 10, 100)
    fts = index_db.fts_query(query)
    rows = [] if fts is None else index_db.search_rows(
        ctx.layout, fts, now=ctx.clock.now(), destinations=("local",), limit=limit)  # fmt: skip
    results = [_result(row, query) for row in rows]
    with lifecycle_lock(ctx.layout.lock):
        events.append(ctx.layout, "memory.searched", ctx.actor, ctx.clock.now(),
                      {"destination": "local", "result_ids": [r["record"]["id"] for r in results]})  # fmt: skip
    return {"query": query, "destination": "local", "limit": limit, "results": results}


def _result(row: Mapping[str, Any], query: str) -> dict[str, Any]:
    record = index_db.record_json(row)
    paths = sorted(json.loads(row["applies_to"]))
    lowered = query.strip().lower()
    snippet = record["title"] if lowered and lowered in record["title"].lower() else record["body"][:240]
    citation = {
        "record_id": record["id"], "memory_type": record["memory_type"], "scope_kind": record["scope_kind"],
        "provenance": "git" if record["destination"] == "repo" else "runtime", "destination": record["destination"],
        "visibility": record["visibility"], "source_kind": record["source_kind"], "source_ref": record["source_ref"],
        "path": paths[0] if paths else None,
    }  # fmt: skip
    return {
        "record": record, "score": -row["rank"] + 0.0, "snippet": snippet, "rationale": "fts5 title/body match",
        "ranking": None, "paths": [{"path": p, "symbol": None, "line_start": None, "line_end": None} for p in paths],
        "citations": [citation],
    }  # fmt: skip


def rebuild(ctx: Context) -> index_db.RebuildResult:
    """``rebuild``: rebuild the derived index from the record files (canonical and runtime) and log it."""
    result = index_db.rebuild(ctx.layout)
    payload = {"records": dict(result.records), "unreadable": len(result.unreadable),
               "pending_proposals": result.pending_proposals}  # fmt: skip
    with lifecycle_lock(ctx.layout.lock):
        events.append(ctx.layout, "memory.index_rebuilt", ctx.actor, ctx.clock.now(), payload)
    return result


def read_input(path: Path) -> str:
    """The UTF-8 text of an explicit input file (at most 256 KiB).

    Raises:
        InputError: missing, not a regular file, too large, or not UTF-8 (the message names only the path).
    """
    if not path.is_file():
        raise InputError(f"{path}: no such file", "missing_input")
    if path.stat().st_size > MAX_INPUT_BYTES:
        raise InputError(f"{path}: larger than {MAX_INPUT_BYTES} bytes", "input_too_large")
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text", "not_utf8") from None


def _title(option: str, value: str) -> str:
    text = value.strip()
    if not text or "\n" in text or "\r" in text:
        raise InputError(f"{option} must be one non-empty line", "invalid_title")
    return text


def _body(what: str, value: str) -> str:
    if not value.strip():
        raise InputError(f"{what} must not be empty", "empty_body")
    return value.strip()


def check_draft(ctx: Context, draft: Draft) -> None:
    """Validate ``draft`` as the runtime record it would become, writing nothing.

    Raises:
        InputError: the record would not be valid.
    """
    _render(ctx, draft, _base_id(draft))


def write_draft(ctx: Context, draft: Draft, event_type: str) -> Written:
    """Write ``draft`` as one private runtime record (guarded, atomic) and log ``event_type``."""
    return _write_one(ctx, draft, event_type)


def _write_one(ctx: Context, draft: Draft, event_type: str) -> Written:
    from git_memzoi.memzoi import lifecycle

    _render(ctx, draft, _base_id(draft))  # validate before taking the lock
    with lifecycle.guarded(ctx.layout):
        path, data, written = reserve(ctx, draft, set())
        write_bytes_atomic(path, data)
        events.append(ctx.layout, event_type, ctx.actor, ctx.clock.now(),
                      {"destination": draft.destination, "memory_type": draft.type, "route": draft.route},
                      record_id=written.record["id"])  # fmt: skip
    return written


# ------------------------------------------------------------------------------------------------ runtime files


def _base_id(draft: Draft) -> str:
    slug = okf.concept_slug(draft.title)[:80].strip("-")
    if not slug:
        from git_memzoi.core.hashing import short_hash

        slug = short_hash(draft.title.encode("utf-8"), 12)
    return f"{draft.destination}-{slug}"


def _render(ctx: Context, draft: Draft, record_id: str) -> tuple[okf.Record, str]:
    """The record and its file text; re-parsed so a file we write is always one the index can read, and
    refused (``prohibited_content_detected``) when it holds a credential: private memory never stores one."""
    from git_memzoi.memzoi.secrets import require_clean, require_clean_fields

    now = okf.format_timestamp(ctx.clock.now())
    retention = {"session": {"started_at": now}, "episodic": {"occurred_at": now}}.get(draft.lane, {})
    origin_key = {"local_memory": "local-memory", "checkpoint_create": "checkpoint", "capture": "memzoi-capture",
                  "import": "memzoi-import"}.get(draft.route, "session-end")  # fmt: skip
    record = okf.Record(
        id=record_id, type=draft.type, lane=draft.lane, title=draft.title, scope=draft.scope, visibility="private",
        content_class=draft.content_class or CONTENT_CLASS[draft.destination], status="active", confidence=1.0,
        timestamp=now, updated=now, body=draft.body, retention=retention,
        origin={"origin_key": f"{origin_key}:{record_id}", "route": draft.route}, scope_id=draft.scope_id,
        source=SOURCE_KIND[draft.destination], applies_to=draft.applies_to, tags=draft.tags,
    )  # fmt: skip
    if draft.capture is not None:
        from dataclasses import replace

        from git_memzoi.memzoi.packets import capture_ref, compact_capture

        record = replace(record, source="memzoi-capture", source_ref=capture_ref(draft.capture),
                         capture=compact_capture(draft.capture))  # fmt: skip
    where = f"new {draft.destination} record {record_id}"
    require_clean_fields({"title": draft.title, "body": draft.body, "applies_to": draft.applies_to,
                          "tags": draft.tags}, where, private=True)  # fmt: skip
    text = okf.render(record)
    require_clean(text, where, document=True, private=True)
    if len(text.encode("utf-8")) > MAX_RECORD_BYTES:
        raise InputError(f"the record would be larger than {MAX_RECORD_BYTES} bytes", "record_too_large")
    rel = f".memzoi/local/runtime/{draft.destination}/{record_id}.md"
    parsed = index_db.parse_record(record_id, rel, text.encode("utf-8"))
    decide(parsed, ctx.clock.now())
    return parsed, text


def reserve(ctx: Context, draft: Draft, taken: set[str]) -> tuple[Path, bytes, Written]:
    """Reserve a free runtime record id (``<base>``, ``<base>-2`` …, not in ``taken`` nor on disk) and render it.

    Returns ``(path, file bytes, written)``; nothing is written: the caller holds the lifecycle lock, writes the
    batch and adds the id to ``taken``.
    """
    directory = index_db.runtime_dir(ctx.layout, draft.destination)
    directory.mkdir(parents=True, exist_ok=True)
    base = _base_id(draft)
    record_id, n = base, 1
    while record_id in taken or (directory / f"{record_id}.md").exists():
        n += 1
        record_id = f"{base}-{n}"
    taken.add(record_id)
    record, text = _render(ctx, draft, record_id)
    path = directory / f"{record_id}.md"
    rel = path.relative_to(ctx.layout.root).as_posix()
    return path, text.encode("utf-8"), Written(index_db.record_json(index_db.record_row(draft.destination, rel,
                                                                                          record)), rel)  # fmt: skip


def load_checkpoint(ctx: Context, checkpoint_id: str) -> okf.Record:
    """The session checkpoint ``checkpoint_id``.

    Raises:
        InputError: an id that is not a concept id, or no such checkpoint (``unknown_checkpoint``);
            RecordError: the checkpoint file is not a valid record.
    """
    if okf.concept_id_problem(checkpoint_id):
        raise InputError(f"{checkpoint_id!r} is not a checkpoint id", "unknown_checkpoint")
    path = index_db.runtime_dir(ctx.layout, "session") / f"{checkpoint_id}.md"
    if not path.is_file() or path.is_symlink():
        raise InputError(f"no checkpoint {checkpoint_id!r}; see `git memzoi checkpoint list`", "unknown_checkpoint")
    return index_db.parse_record(checkpoint_id, path.relative_to(ctx.layout.root).as_posix(), path.read_bytes())


# ------------------------------------------------------------------------------------------------ session-end


@dataclass(frozen=True)
class Candidate:
    """One validated session-end candidate (``sensitivity`` normalised: omitted means ``unknown``)."""

    index: int
    destination: str
    type: str | None
    lane: str | None
    title: str | None
    body: str | None
    sensitivity: str
    content_class: str | None
    reason: str | None
    scope_kind: str
    scope_id: str | None
    paths: tuple[str, ...]
    tags: tuple[str, ...]


@dataclass(frozen=True)
class SessionEndResult:
    """The outcome of ``session-end``: ``promoted`` (writes made) or ``blocked`` (nothing written)."""

    status: str
    task: str | None
    results: tuple[Mapping[str, Any], ...]
    writes: tuple[Mapping[str, Any], ...]

    @property
    def ok(self) -> bool:
        """False when the batch was blocked."""
        return self.status != "blocked"

    def to_json(self) -> dict[str, Any]:
        """The ``session-end --json`` object; a blocked one never holds a blocked candidate's title or body."""
        out: dict[str, Any] = {"ok": self.ok, "status": self.status}
        if self.ok:
            out["task"] = self.task
        else:
            out["error"] = {"code": "repo_sensitivity_required",
                            "message": "a repo candidate is not repo-safe; nothing was written for the whole batch",
                            "next_step": "classify the candidate as repo-safe, sanitize it, or route it to local "
                                         "or session memory"}  # fmt: skip
        out["results"] = [dict(r) for r in self.results]
        out["writes"] = [dict(w) for w in self.writes]
        return out


def session_end(ctx: Context, *, from_file: Path | None = None, from_checkpoint: str | None = None) -> SessionEndResult:
    """``session-end``: promote explicit structured candidates (seed "Session-end promotion").

    The whole batch is validated before any write. Any non-repo-safe repo candidate blocks the batch: nothing
    is written and that candidate's title is redacted. Otherwise repo candidates become pending proposal
    packets, local ones private local records and session ones checkpoints; discard and needs_review write
    nothing. If a later step fails, runtime files and proposal files created by this run are removed.

    Raises:
        SessionEndError: not structured YAML, unknown keys, invalid values (nothing written).
    """
    if (from_file is None) == (from_checkpoint is None):
        raise InputError("give exactly one of --from-file or --from-checkpoint", "bad_usage")
    if from_file is not None:
        label, text = str(from_file), read_input(from_file)
    else:
        assert from_checkpoint is not None
        label, text = f"checkpoint {from_checkpoint}", load_checkpoint(ctx, from_checkpoint).body
    task, candidates = parse_batch(label, text)
    blocked = [c for c in candidates if c.destination == "repo" and c.sensitivity != "repo-safe"]
    if blocked:
        return SessionEndResult("blocked", None, tuple(_blocked_entry(c, c in blocked) for c in candidates), ())
    packets = {c.index: _packet(ctx, c, task, label) for c in candidates if c.destination == "repo"}
    drafts = {c.index: _draft(c) for c in candidates if c.destination in ("local", "session")}
    for index, draft in drafts.items():
        try:
            _render(ctx, draft, _base_id(draft))
        except okf.RecordError as exc:
            raise SessionEndError(f"{label}: candidates[{index}]: {exc.field}: {exc.reason}") from None
        except InputError as exc:
            code = exc.code if exc.code == "prohibited_content_detected" else "invalid_session_end"
            raise SessionEndError(f"{label}: candidates[{index}]: {exc.message}", code) from None
    return _promote(ctx, task, candidates, packets, drafts)


def _promote(ctx: Context, task: str, candidates: Sequence[Candidate], packets: Mapping[int, Packet],
             drafts: Mapping[int, Draft]) -> SessionEndResult:  # fmt: skip
    from git_memzoi.memzoi import lifecycle, proposal_files

    created: list[Path] = []
    writes: dict[int, dict[str, Any]] = {}
    try:
        for index, packet in packets.items():  # write_pending_packet holds the lifecycle lock itself
            file_id, path = proposal_files.write_pending_packet(ctx, packet)
            created.append(path)
            writes[index] = {"kind": "proposal_file", "index": index, "proposal_id": file_id,
                             "path": path.relative_to(ctx.layout.root).as_posix()}  # fmt: skip
        with lifecycle.guarded(ctx.layout):
            taken: set[str] = set()
            steps: list[lifecycle.Step] = []
            for index, draft in drafts.items():
                path, data, written = reserve(ctx, draft, taken)
                steps.append(lifecycle.Step(path, data))
                writes[index] = {"kind": "runtime_record", "index": index, "record_id": written.record["id"],
                                 "destination": draft.destination}  # fmt: skip
            if steps:  # one journaled operation: a failure removes every runtime file it created
                lifecycle.run_steps(ctx.layout, "session_end", steps)
                created += [step.path for step in steps]
            _session_end_events(ctx, writes, len(candidates))
    except BaseException:
        with lifecycle_lock(ctx.layout.lock):
            for path in reversed(created):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
        raise
    results = tuple(_promoted_entry(c, writes.get(c.index)) for c in candidates)
    return SessionEndResult("promoted", task, results, tuple(writes[i] for i in sorted(writes)))


def _session_end_events(ctx: Context, writes: Mapping[int, Mapping[str, Any]], count: int) -> None:
    now = ctx.clock.now()
    for write in writes.values():
        if write["kind"] == "runtime_record":
            kind = "memory.local_created" if write["destination"] == "local" else "memory.checkpoint_created"
            events.append(ctx.layout, kind, ctx.actor, now, {"destination": write["destination"],
                          "route": "session_end"}, record_id=write["record_id"])  # fmt: skip
    payload = {
        "candidates": count,
        "proposal_ids": [w["proposal_id"] for w in writes.values() if w["kind"] == "proposal_file"],
        "record_ids": [w["record_id"] for w in writes.values() if w["kind"] == "runtime_record"],
        "no_write": count - len(writes),
    }
    events.append(ctx.layout, "memory.session_end_completed", ctx.actor, now, payload)


def _blocked_entry(c: Candidate, is_blocked: bool) -> dict[str, Any]:
    if is_blocked:
        return {"index": c.index, "destination": c.destination, "action": "blocked",
                "code": "repo_sensitivity_required", "classification": c.sensitivity, "title": REDACTED}  # fmt: skip
    return {"index": c.index, "destination": c.destination, "action": "not_written", "reason": "batch_blocked",
            "title": c.title}  # fmt: skip


def _promoted_entry(c: Candidate, write: Mapping[str, Any] | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"index": c.index, "destination": c.destination, "title": c.title}
    if write is None:
        entry.update(action="no_write", reason=c.destination)
    elif write["kind"] == "proposal_file":
        entry.update(action="create_proposal", proposal_id=write["proposal_id"], path=write["path"])
    else:
        entry.update(action="create_runtime", route=f"runtime_{c.destination}", record_id=write["record_id"])
    return entry


def _draft(c: Candidate) -> Draft:
    assert c.type and c.lane and c.title and c.body
    return Draft(c.destination, c.type, c.lane, c.title, c.body, "session_end", c.scope_kind, c.scope_id, c.paths,
                 c.tags, c.content_class)  # fmt: skip


def _packet(ctx: Context, c: Candidate, task: str, label: str) -> Packet:
    """The pending create packet of a repo-safe candidate, validated by rendering and parsing it back."""
    from git_memzoi.core.hashing import short_hash
    from git_memzoi.memzoi import packets
    from git_memzoi.memzoi.secrets import require_clean_fields

    assert c.type and c.lane and c.title and c.body
    now = okf.format_timestamp(ctx.clock.now())
    base = okf.concept_slug(c.title)[:80].strip("-") or "session-end-proposal"
    digest = short_hash(f"{task}\0{c.index}\0{c.title}\0{c.body}".encode(), 16)
    packet = packets.Packet(
        id=base, file_id=base, type=c.type, lane=c.lane, title=c.title, body=c.body, action="create",
        proposed_by=ctx.actor, proposed_at=now, timestamp=now, reason=c.reason, scope_kind=c.scope_kind,
        scope_id=c.scope_id, paths=c.paths, tags=c.tags, created_by=ctx.actor, sensitivity="repo-safe",
        content_class=c.content_class or "general_repo_knowledge",
        retention={"occurred_at": now} if c.lane == "episodic" else {},
        origin={"origin_key": f"session-end:{digest}", "route": "session_end"},
    )  # fmt: skip
    where = f"{label}: candidates[{c.index}]"
    try:
        parsed = packets.parse(base, where, packets.render(packet).encode("utf-8"))
        packets.check_shape(parsed, where)
    except InputError as exc:
        raise SessionEndError(exc.message, "invalid_session_end") from None
    require_clean_fields({"title": c.title, "body": c.body, "scope.paths": c.paths, "tags": c.tags}, where)
    return packet


def parse_batch(label: str, text: str) -> tuple[str, list[Candidate]]:
    """Validate session-end YAML: ``task`` and a ``candidates`` list, unknown keys rejected at every level.

    Raises:
        SessionEndError: free text, invalid YAML or any invalid candidate (messages name fields, not values).
    """
    from git_memzoi.core import yamlio

    try:
        data, _ = yamlio.load_mapping(text)
    except yamlio.YamlProblem as exc:
        where = f" (line {exc.line + 1})" if exc.line is not None else ""
        raise SessionEndError(f"{label}: not structured session-end YAML{where}: free-text notes are rejected; "
                              "give a mapping with task and candidates", "unstructured_input") from None  # fmt: skip
    _keys(label, "", data, TOP_KEYS, required=TOP_KEYS)
    task = _text(label, "task", data["task"])
    if not isinstance(data["candidates"], list):
        raise SessionEndError(f"{label}: candidates: must be a list")
    return task, [_candidate(label, n, item) for n, item in enumerate(data["candidates"])]


def _candidate(label: str, n: int, item: Any) -> Candidate:
    where = f"candidates[{n}]"
    if not isinstance(item, dict):
        raise SessionEndError(f"{label}: {where}: must be a mapping")
    _keys(label, where + ".", item, CANDIDATE_KEYS, required=("destination",))
    destination = _choice(label, f"{where}.destination", item["destination"], vocab.DESTINATIONS)
    writes = destination in ("repo", "local", "session")
    default_type = "episode" if destination == "session" else None
    memory_type = _choice(label, f"{where}.type", item.get("type", default_type), vocab.TYPES, optional=not writes)
    lane = _choice(label, f"{where}.lane", item.get("lane", "session" if destination == "session" else "semantic"),
                   vocab.LANES)  # fmt: skip
    if destination == "session" and lane != "session" or destination in ("repo", "local") and lane == "session":
        raise SessionEndError(f"{label}: {where}.lane: session candidates use lane session, others may not")
    content_class = item.get("content_class")
    if content_class is not None:
        content_class = _choice(label, f"{where}.content_class", str(content_class).replace("-", "_"),
                                vocab.CONTENT_CLASSES)  # fmt: skip
    scope = item.get("scope") or {}
    if not isinstance(scope, dict):
        raise SessionEndError(f"{label}: {where}.scope: must be a mapping of kind, id and paths")
    _keys(label, where + ".scope.", scope, SCOPE_KEYS, required=())
    paths = _strings(label, f"{where}.scope.paths", scope.get("paths"))
    for path in paths:
        if path.startswith("/") or ".." in path.split("/") or (len(path) > 1 and path[1] == ":"):
            raise SessionEndError(f"{label}: {where}.scope.paths: must be relative paths inside the repository")
    title = item.get("title")
    return Candidate(
        index=n, destination=destination, type=memory_type, lane=lane,
        title=_title_of(label, where, title, required=writes),
        body=_text(label, f"{where}.body", item.get("body"), optional=not writes),
        sensitivity=_choice(label, f"{where}.sensitivity", item.get("sensitivity", "unknown"), vocab.SENSITIVITIES),
        content_class=content_class, reason=_text(label, f"{where}.reason", item.get("reason"), optional=True),
        scope_kind=_choice(label, f"{where}.scope.kind", scope.get("kind", "repo"), vocab.SCOPE_KINDS),
        scope_id=_text(label, f"{where}.scope.id", scope.get("id"), optional=True), paths=paths,
        tags=_strings(label, f"{where}.tags", item.get("tags")),
    )  # fmt: skip


def _keys(label: str, prefix: str, value: Any, allowed: Sequence[str], *, required: Sequence[str]) -> None:
    if not isinstance(value, dict):
        raise SessionEndError(f"{label}: {prefix.rstrip('.') or 'input'}: must be a mapping")
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise SessionEndError(f"{label}: {prefix}{unknown[0]}: unknown key; allowed: {', '.join(allowed)}")
    for key in required:
        if key not in value:
            raise SessionEndError(f"{label}: {prefix}{key}: required")


def _choice(label: str, key: str, value: Any, allowed: Sequence[str], *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if value not in allowed:
        raise SessionEndError(f"{label}: {key}: must be one of {', '.join(allowed)}")
    return value


def _text(label: str, key: str, value: Any, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise SessionEndError(f"{label}: {key}: must be a non-empty string")
    return value.strip()


def _title_of(label: str, where: str, value: Any, *, required: bool) -> str | None:
    title = _text(label, f"{where}.title", value, optional=not required)
    if title is not None and ("\n" in title or "\r" in title):
        raise SessionEndError(f"{label}: {where}.title: must be one line")
    return title  # type: ignore[no-any-return]


def _strings(label: str, key: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise SessionEndError(f"{label}: {key}: must be a list of non-empty strings")
    return tuple(v.strip() for v in value)
