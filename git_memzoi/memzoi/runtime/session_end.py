"""Session-end promotion (io): a structured batch of candidates routed to repo proposals, local or session memory
(seed "Session-end promotion").

Session-end reads explicit structured YAML only, validates the whole batch before anything is written, and writes
nothing at all when a repo candidate is not repo-safe.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import InputError
from git_memzoi.memzoi.records import events, okf, vocab

if TYPE_CHECKING:
    from git_memzoi.memzoi.proposals.packets import Packet
    from git_memzoi.memzoi.runtime import replay
    from git_memzoi.memzoi.workspace import Workspace
from git_memzoi.memzoi.runtime.checkpoint import load_checkpoint
from git_memzoi.memzoi.runtime.local import (
    REDACTED,
    Draft,
    base_id,
    read_input,
    render_record,
    write_batch,
)

TOP_KEYS = ("task", "candidates")


CANDIDATE_KEYS = (
    "destination",
    "type",
    "lane",
    "title",
    "body",
    "sensitivity",
    "content_class",
    "reason",
    "scope",
    "tags",
)


SCOPE_KEYS = ("kind", "id", "paths")


class SessionEndError(InputError):
    """Session-end input that is not a valid batch: names the source and the field, never the content (exit 2)."""

    default_code = "invalid_session_end"


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
    """The outcome of ``session-end``: ``promoted`` (writes made) or ``blocked`` (nothing written). ``ids`` and
    ``reused`` are set for a keyed call (:mod:`~git_memzoi.memzoi.runtime.replay`): ``reused`` when the result is
    the one an earlier identical call made."""

    status: str
    task: str | None
    results: tuple[Mapping[str, Any], ...]
    writes: tuple[Mapping[str, Any], ...]
    ids: Mapping[str, str] | None = None
    reused: bool = False

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
            out["error"] = {
                "code": "repo_sensitivity_required",
                "message": "a repo candidate is not repo-safe; nothing was written for the whole batch",
                "next_step": "classify the candidate as repo-safe, sanitize it, or route it to local or session memory",
            }
        out["results"] = [dict(r) for r in self.results]
        out["writes"] = [dict(w) for w in self.writes]
        if self.ids is not None:
            out.update(self.ids, reused=self.reused)
        return out

    @classmethod
    def stored(cls, data: Mapping[str, Any], ids: Mapping[str, str]) -> SessionEndResult:
        """The result a keyed call stored (its ``--json`` object), returned again with ``reused``."""
        return cls(
            str(data["status"]),
            data.get("task"),
            tuple(data.get("results", ())),
            tuple(data.get("writes", ())),
            ids,
            True,
        )


def session_end(
    ws: Workspace,
    *,
    from_file: Path | None = None,
    from_checkpoint: str | None = None,
    session_id: str | None = None,
    event_id: str | None = None,
) -> SessionEndResult:
    """``session-end``: promote explicit structured candidates (seed "Session-end promotion").

    With ``session_id`` (and ``event_id``; default: the batch's digest) the call is idempotent
    (:mod:`~git_memzoi.memzoi.runtime.replay`): an identical replay returns the stored result, ``reused``.

    The whole batch is validated before any write. Any non-repo-safe repo candidate blocks the batch: nothing
    is written and that candidate's title is redacted. Otherwise repo candidates become pending proposal
    packets, local ones private local records and session ones checkpoints; discard and needs_review write
    nothing. If a later step fails, runtime files and proposal files created by this run are removed.

    Raises:
        SessionEndError: not structured YAML, unknown keys, invalid values (nothing written). CheckpointConflict:
            ``checkpoint_mismatch`` (the key ran with another batch), ``checkpoint_in_progress`` (nothing written).
    """
    from git_memzoi.memzoi.runtime import replay

    if (from_file is None) == (from_checkpoint is None):
        raise InputError("give exactly one of --from-file or --from-checkpoint", "bad_usage")
    if from_file is not None:
        label, text = str(from_file), read_input(from_file)
    else:
        assert from_checkpoint is not None
        label, text = f"checkpoint {from_checkpoint}", load_checkpoint(ws, from_checkpoint).body
    task, candidates = parse_batch(label, text)
    from dataclasses import asdict

    key = replay.key_for(
        "session_end", session_id, event_id, {"task": task, "candidates": [asdict(c) for c in candidates]}
    )
    prior = replay.lookup(ws.layout, key)
    if prior is not None and key is not None:
        return SessionEndResult.stored(prior, key.ids())
    blocked = [c for c in candidates if c.destination == "repo" and c.sensitivity != "repo-safe"]
    if blocked:
        return SessionEndResult("blocked", None, tuple(_blocked_entry(c, c in blocked) for c in candidates), ())
    packets = {c.index: _packet(ws, c, task, label) for c in candidates if c.destination == "repo"}
    drafts = {c.index: _draft(c) for c in candidates if c.destination in ("local", "session")}
    for index, draft in drafts.items():
        try:
            render_record(ws, draft, base_id(draft))
        except okf.RecordError as exc:
            raise SessionEndError(f"{label}: candidates[{index}]: {exc.field}: {exc.reason}") from None
        except InputError as exc:
            code = exc.code if exc.code == "prohibited_content_detected" else "invalid_session_end"
            raise SessionEndError(f"{label}: candidates[{index}]: {exc.message}", code) from None
    with replay.claimed(ws.layout, key):
        prior = replay.lookup(ws.layout, key)  # finished by another process between the first look and the claim
        if prior is not None and key is not None:
            return SessionEndResult.stored(prior, key.ids())
        return _promote(ws, task, candidates, packets, drafts, key)


def _promote(
    ws: Workspace,
    task: str,
    candidates: Sequence[Candidate],
    packets: Mapping[int, Packet],
    drafts: Mapping[int, Draft],
    key: replay.Key | None,
) -> SessionEndResult:
    from git_memzoi.memzoi.proposals import bulk, lifecycle
    from git_memzoi.memzoi.runtime import replay

    writes: dict[int, dict[str, Any]] = {}
    # one operation: a failure, or a kill and the next guarded command, removes every file it created
    with lifecycle.operation(ws.layout, "session_end"):
        log: list[events.Event] = []
        written = bulk.write_pending(ws, list(packets.values()), log)  # one batch: one listing, one journal save
        events.append_many(ws.layout, log, ws.clock.now())
        for index, entry in zip(packets, written, strict=True):
            writes[index] = {
                "kind": "proposal_file",
                "index": index,
                "proposal_id": entry.pre.file_id,
                "path": entry.rel,
            }
        writes.update(write_batch(ws, drafts.items(), "session_end"))
        _session_end_events(ws, writes, len(candidates))
        results = tuple(_promoted_entry(c, writes.get(c.index)) for c in candidates)
        ids = key.ids() if key is not None else None
        result = SessionEndResult("promoted", task, results, tuple(writes[i] for i in sorted(writes)), ids)
        if key is not None:  # last, in the same operation: a killed run loses its key with its writes
            lifecycle.write_step(ws.layout, replay.record_step(ws.layout, key, result.to_json()))
    return result


def _session_end_events(ws: Workspace, writes: Mapping[int, Mapping[str, Any]], count: int) -> None:
    now = ws.clock.now()
    for write in writes.values():
        if write["kind"] == "runtime_record":
            kind = "memory.local_created" if write["destination"] == "local" else "memory.checkpoint_created"
            events.append(
                ws.layout,
                kind,
                ws.actor,
                now,
                {"destination": write["destination"], "route": "session_end"},
                record_id=write["record_id"],
            )
    payload = {
        "candidates": count,
        "proposal_ids": [w["proposal_id"] for w in writes.values() if w["kind"] == "proposal_file"],
        "record_ids": [w["record_id"] for w in writes.values() if w["kind"] == "runtime_record"],
        "no_write": count - len(writes),
    }
    events.append(ws.layout, "memory.session_end_completed", ws.actor, now, payload)


def _blocked_entry(c: Candidate, is_blocked: bool) -> dict[str, Any]:
    if is_blocked:
        return {
            "index": c.index,
            "destination": c.destination,
            "action": "blocked",
            "code": "repo_sensitivity_required",
            "classification": c.sensitivity,
            "title": REDACTED,
        }
    return {
        "index": c.index,
        "destination": c.destination,
        "action": "not_written",
        "reason": "batch_blocked",
        "title": c.title,
    }


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
    return Draft(
        c.destination,
        c.type,
        c.lane,
        c.title,
        c.body,
        "session_end",
        c.scope_kind,
        c.scope_id,
        c.paths,
        c.tags,
        c.content_class,
    )


def _packet(ws: Workspace, c: Candidate, task: str, label: str) -> Packet:
    """The pending create packet of a repo-safe candidate, validated by rendering and parsing it back."""
    from git_memzoi.core.hashing import short_hash
    from git_memzoi.memzoi.proposals import packets
    from git_memzoi.memzoi.records.secrets import require_clean_fields

    assert c.type and c.lane and c.title and c.body
    now = okf.format_timestamp(ws.clock.now())
    base = okf.concept_slug(c.title)[:80].strip("-") or "session-end-proposal"
    digest = short_hash(f"{task}\0{c.index}\0{c.title}\0{c.body}".encode(), 16)
    packet = packets.Packet(
        id=base,
        file_id=base,
        type=c.type,
        lane=c.lane,
        title=c.title,
        body=c.body,
        action="create",
        proposed_by=ws.actor,
        proposed_at=now,
        timestamp=now,
        reason=c.reason,
        scope_kind=c.scope_kind,
        scope_id=c.scope_id,
        paths=c.paths,
        tags=c.tags,
        created_by=ws.actor,
        sensitivity="repo-safe",
        content_class=c.content_class or "general_repo_knowledge",
        retention={"occurred_at": now} if c.lane == "episodic" else {},
        origin={"origin_key": f"session-end:{digest}", "route": "session_end"},
    )
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
        data, _ = yamlio.load_mapping(text, "the session-end YAML", max_nodes=None)
    except yamlio.YamlProblem as exc:
        where = f" (line {exc.line + 1})" if exc.line is not None else ""
        if exc.code == yamlio.TOO_COMPLEX:  # anchors, nesting: structured, but refused unparsed
            raise SessionEndError(f"{label}: {exc.reason}{where}", exc.code) from None
        raise SessionEndError(
            f"{label}: not structured session-end YAML{where}: free-text notes are rejected; "
            "give a mapping with task and candidates",
            "unstructured_input",
        ) from None
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
    lane = _choice(
        label, f"{where}.lane", item.get("lane", "session" if destination == "session" else "semantic"), vocab.LANES
    )
    if (destination == "session" and lane != "session") or (destination in ("repo", "local") and lane == "session"):
        raise SessionEndError(f"{label}: {where}.lane: session candidates use lane session, others may not")
    content_class = item.get("content_class")
    if content_class is not None:
        content_class = _choice(
            label, f"{where}.content_class", str(content_class).replace("-", "_"), vocab.CONTENT_CLASSES
        )
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
        index=n,
        destination=destination,
        type=memory_type,
        lane=lane,
        title=_title_of(label, where, title, required=writes),
        body=_text(label, f"{where}.body", item.get("body"), optional=not writes),
        sensitivity=_choice(label, f"{where}.sensitivity", item.get("sensitivity", "unknown"), vocab.SENSITIVITIES),
        content_class=content_class,
        reason=_text(label, f"{where}.reason", item.get("reason"), optional=True),
        scope_kind=_choice(label, f"{where}.scope.kind", scope.get("kind", "repo"), vocab.SCOPE_KINDS),
        scope_id=_text(label, f"{where}.scope.id", scope.get("id"), optional=True),
        paths=paths,
        tags=_strings(label, f"{where}.tags", item.get("tags")),
    )


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
    return title


def _strings(label: str, key: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise SessionEndError(f"{label}: {key}: must be a list of non-empty strings")
    return tuple(v.strip() for v in value)
