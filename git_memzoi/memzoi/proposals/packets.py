"""Proposal packets: the file-backed review packets of memzoi-spec.md §3 (pure; reads no files).

The packet model and its validation (unknown keys rejected, action shapes, resolution consistency), the writer
in the spec's key order, identities (file ids, ``redacted-identity-…`` tokens, reservation candidates) and the
canonical record a packet applies as. The redacted receipt of a non-repo-safe packet is in ``receipts``.
Callers pass bytes in and get text out; the io lives in ``proposal_files``.
"""

from __future__ import annotations

import itertools
import re
import string
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from git_memzoi.core import frontmatter
from git_memzoi.core.hashing import content_hash
from git_memzoi.core.patterns import lazy
from git_memzoi.core.yamlio import TOO_COMPLEX
from git_memzoi.errors import ExitCode, InputError, MemzoiError
from git_memzoi.memzoi.records import okf_subset, vocab
from git_memzoi.memzoi.records.okf import (
    Record,
    RecordError,
    first_line,
    format_timestamp,
    parse_timestamp,
    scalar,
    yaml_lines,
)
from git_memzoi.memzoi.records.provenance import capture_ref, compact_capture

TOP_KEYS = (
    "id",
    "kind",
    "profile",
    "type",
    "lane",
    "title",
    "description",
    "status",
    "proposal",
    "scope",
    "tags",
    "timestamp",
    "created_by",
    "sources",
    "supersedes",
    "sensitivity",
    "content_class",
    "resolution",
    "capture",
    "retention",
    "origin",
    "lineage",
    "memkeep",
)
REQUIRED = (
    "id",
    "kind",
    "profile",
    "type",
    "lane",
    "title",
    "description",
    "status",
    "proposal",
    "scope",
    "timestamp",
    "content_class",
    "retention",
    "origin",
)
PROPOSAL_KEYS = ("action", "proposed_by", "proposed_at", "reason", "confidence", "target")
SCOPE_KEYS = ("kind", "id", "paths")
SOURCE_KEYS = ("path", "url", "ref")
RESOLUTION_KEYS = ("outcome", "resolved_by", "resolved_at", "reason", "record_id", "target_id")
REPO_SAFE = "repo-safe"
TOKEN_PREFIX = "redacted-identity-"
GUIDANCE = {
    "repo-safe": "repo-safe proposals may be applied after review",
    "local-only": "local-only proposals belong in the future local/runtime memory plane",
    "sensitive": "classify or sanitize sensitive content before applying it to the repo plane",
    "secret": "secret proposals must not become repo-shared memory",
    "raw-transcript": "raw transcripts must not become repo-shared memory",
    "private-personal-data": "private personal data must not become repo-shared memory",
    "temporary-state": "temporary task state belongs in local or session memory, not canonical repo memory",
    "unknown": "classify the proposal sensitivity before applying it to repo records",
}
_ID_SEGMENT = lazy(r"^[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?$")


class PacketError(InputError):
    """A packet that does not follow the profile: names the file and the field (exit 2)."""

    default_code = "invalid_proposal"

    def __init__(self, path: str, field_name: str, reason: str, code: str | None = None) -> None:
        super().__init__(f"{path}: {field_name}: {reason}", code)
        self.path, self.field, self.reason = path, field_name, reason


class SensitivityBlocked(MemzoiError):
    """A repo write refused because the content is not ``repo-safe`` (exit 1; never carries the content).

    ``operation`` names what was refused (``proposal_files_apply``, ``supersede``, ``apply``, ...);
    ``classification`` is the sensitivity value."""

    exit_code = ExitCode.FINDINGS
    default_code = "repo_sensitivity_required"

    def __init__(self, operation: str, classification: str) -> None:
        self.operation, self.classification = operation, classification
        self.next_step = GUIDANCE.get(classification, GUIDANCE["unknown"])
        if operation == "proposal_files_apply":
            text = f"proposal sensitivity {classification} cannot be applied into repo records; {self.next_step}"
        else:
            text = f"canonical repo apply requires sensitivity repo-safe; got {classification}; {self.next_step}"
        super().__init__(text)

    def envelope(self) -> dict[str, Any]:
        """The content-free ``--json`` error object: ``{"ok": false, "error": {code, operation, ...}}``."""
        error = {
            "code": self.code,
            "operation": self.operation,
            "classification": self.classification,
            "sensitivity": self.classification,
            "message": self.message,
            "next_step": self.next_step,
        }
        return {"ok": False, "error": error}


@dataclass(frozen=True)
class Source:
    """One ``sources`` entry; at least one of the three is non-empty."""

    path: str | None = None
    url: str | None = None
    ref: str | None = None

    def evidence(self) -> tuple[str, str] | None:
        """``(source kind, source ref)`` of this entry: its path, else url, else ref; ``None`` if all empty."""
        return next(((k, getattr(self, k).strip()) for k in SOURCE_KEYS if (getattr(self, k) or "").strip()), None)


@dataclass(frozen=True)
class Resolution:
    """How a resolved packet was resolved (``outcome`` ``applied`` or ``rejected``)."""

    outcome: str
    resolved_by: str
    resolved_at: str
    reason: str | None = None
    record_id: str | None = None
    target_id: str | None = None


@dataclass(frozen=True)
class Packet:
    """One proposal packet. ``file_id`` is the path below its root minus ``.md``; ``body`` has no H1, trimmed."""

    id: str
    file_id: str
    type: str
    lane: str
    title: str
    body: str
    action: str
    proposed_by: str
    proposed_at: str
    timestamp: str
    origin: Mapping[str, Any]
    description: str | None = None
    status: str = "proposed"
    reason: str | None = None
    confidence: str | None = None
    target: str | None = None
    scope_kind: str = "repo"
    scope_id: str | None = None
    paths: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    created_by: str | None = None
    sources: tuple[Source, ...] = ()
    supersedes: tuple[str, ...] = ()
    sensitivity: str = "unknown"
    content_class: str = "general_repo_knowledge"
    resolution: Resolution | None = None
    capture: Mapping[str, Any] | None = None
    retention: Mapping[str, Any] = field(default_factory=dict)
    lineage: Mapping[str, Any] | None = None
    memkeep: Mapping[str, Any] | None = None  # the earned envelope the record is written with (records/envelope.py)

    @property
    def target_id(self) -> str | None:
        """The record a supersede (``supersedes[0]``) or tombstone (``proposal.target``) acts on."""
        if self.action == "supersede":
            return self.supersedes[0] if self.supersedes else None
        return self.target if self.action == "tombstone" else None

    @property
    def tokens(self) -> frozenset[str]:
        """The identity tokens of the packet id and the file id (see :func:`identity_token`)."""
        return frozenset({identity_token(self.id), identity_token(self.file_id)})


# ------------------------------------------------------------------------------------------------ identity


def identifier_problem(value: str) -> str | None:
    """Why ``value`` is not a proposal identifier (``/``-separated ``[a-z0-9_-]`` segments, alphanumeric ends)."""
    if not value:
        return "empty id"
    for segment in value.split("/"):
        if not _ID_SEGMENT.match(segment):
            return (
                f"segment {segment!r} must be lowercase ASCII letters, digits, '-' and '_', starting and "
                "ending with a letter or digit"
            )
    return None


def identity_token(identity: str) -> str:
    """``redacted-identity-<blake3 hex of identity>``; a string that already is such a token is returned as is."""
    digest = identity[len(TOKEN_PREFIX) :] if identity.startswith(TOKEN_PREFIX) else ""
    if len(digest) == 64 and all(c in string.hexdigits for c in digest):
        return identity
    return TOKEN_PREFIX + _hex(identity.encode("utf-8"))


def candidates(base: str) -> Iterator[str]:
    """Identity candidates for a new packet: ``base``, ``base-2``, ``base-3``, … (unbounded)."""
    yield base
    yield from (f"{base}-{n}" for n in itertools.count(2))


def _hex(data: bytes) -> str:
    return content_hash(data).removeprefix("blake3:")


# ------------------------------------------------------------------------------------------------ parsing


def parse(file_id: str, path: str, data: bytes) -> Packet:
    """Parse and validate one packet file's bytes (``path`` is only used in messages).

    Raises:
        PacketError: the first problem found, naming ``path`` and the field.
    """
    try:
        parts = frontmatter.split(data)
        fields = okf_subset.load(parts.yaml_text) if parts.has_frontmatter else {}  # the writer's YAML, no ruamel
        if fields is None:
            fields = frontmatter.parse(data).fields
    except frontmatter.FrontmatterError as exc:  # a refused text keeps its code (yaml_too_complex)
        raise PacketError(path, "frontmatter", exc.message, exc.code if exc.code == TOO_COMPLEX else None) from None
    if not parts.has_frontmatter:
        raise PacketError(path, "frontmatter", "a packet starts with a --- frontmatter block")
    return packet_from_fields(file_id, path, fields, parts.body)


def packet_from_fields(file_id: str, path: str, fields: Mapping[str, Any], body: str) -> Packet:
    """Validate a packet's frontmatter and body (memzoi-spec.md §3) and build the :class:`Packet`.

    Action shapes are checked separately (:func:`check_shape`), so a mis-shaped packet can still be listed.

    Raises:
        PacketError: the first problem found, naming ``path`` and the field.
    """
    _identifier(path, "file name", file_id)
    f = dict(fields)
    unknown = sorted(set(f) - set(TOP_KEYS))
    if unknown:
        raise PacketError(path, unknown[0], "unknown field (proposal packets reject unknown keys)")
    for key in REQUIRED:
        if key not in f:
            raise PacketError(path, key, "required field is missing")
    packet_id = _identifier(path, "id", _text(path, "id", f["id"]))
    _choice(path, "kind", f["kind"], ("proposal",))
    if f["profile"] != "memzoi":
        raise PacketError(path, "profile", "must be 'memzoi'; pre-1.0 artifacts must be upgraded or removed")
    proposal = _mapping(path, "proposal", f["proposal"], PROPOSAL_KEYS)
    scope = _mapping(path, "scope", f["scope"], SCOPE_KEYS)
    title = _text(path, "title", f["title"])
    packet = Packet(
        id=packet_id,
        file_id=file_id,
        type=_choice(path, "type", f["type"], vocab.TYPES),
        lane=_choice(path, "lane", f["lane"], vocab.LANES),
        title=title,
        body=_body(path, title, body),
        action=_action(path, proposal.get("action")),
        proposed_by=_text(path, "proposal.proposed_by", proposal.get("proposed_by")),
        proposed_at=_time(path, "proposal.proposed_at", proposal.get("proposed_at")),
        timestamp=_time(path, "timestamp", f["timestamp"]),
        origin=_plain_mapping(path, "origin", f["origin"]),
        description=_text(path, "description", f["description"]),
        status=_choice(path, "status", f["status"], vocab.PACKET_STATUSES),
        reason=_optional(path, "proposal.reason", proposal.get("reason")),
        confidence=_optional(path, "proposal.confidence", proposal.get("confidence")),
        target=_optional(path, "proposal.target", proposal.get("target")),
        scope_kind=_choice(path, "scope.kind", scope.get("kind"), vocab.SCOPE_KINDS),
        scope_id=_optional(path, "scope.id", scope.get("id")),
        paths=_strings(path, "scope.paths", scope.get("paths")),
        tags=_strings(path, "tags", f.get("tags")),
        created_by=_optional(path, "created_by", f.get("created_by")),
        sources=_sources(path, f.get("sources")),
        supersedes=_strings(path, "supersedes", f.get("supersedes")),
        sensitivity=_choice(path, "sensitivity", f.get("sensitivity", "unknown"), vocab.SENSITIVITIES),
        content_class=_choice(path, "content_class", str(f["content_class"]).replace("-", "_"), vocab.CONTENT_CLASSES),
        resolution=_resolution(path, f.get("resolution")),
        capture=None if f.get("capture") is None else _plain_mapping(path, "capture", f["capture"]),
        retention=_plain_mapping(path, "retention", f["retention"]),
        lineage=None if f.get("lineage") is None else _plain_mapping(path, "lineage", f["lineage"]),
        memkeep=None if f.get("memkeep") is None else _plain_mapping(path, "memkeep", f["memkeep"]),
    )
    _check_resolution(path, packet)
    project_record(packet, packet.id, path=path)  # retention, origin, lineage and paths as the record checks them
    return packet


def _identifier(path: str, key: str, value: str) -> str:
    problem = identifier_problem(value)
    if problem:
        raise PacketError(path, key, problem)
    return value


def _choice(path: str, key: str, value: Any, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise PacketError(path, key, f"must be one of {', '.join(allowed)}")
    return str(value)


def _action(path: str, value: Any) -> str:
    if value == "update":
        raise PacketError(path, "proposal.action", "update is not supported; supersede the record instead")
    return _choice(path, "proposal.action", value, vocab.PACKET_ACTIONS)


def _text(path: str, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise PacketError(path, key, "must be a non-empty string")
    return value.strip()


def _optional(path: str, key: str, value: Any) -> str | None:
    return None if value is None else _text(path, key, value)


def _time(path: str, key: str, value: Any) -> str:
    parsed = parse_timestamp(value)
    if parsed is None:
        raise PacketError(path, key, "must be an RFC 3339 timestamp with a zone, e.g. 2026-07-01T00:00:00Z")
    return value.strip() if isinstance(value, str) else format_timestamp(parsed)


def _mapping(path: str, key: str, value: Any, allowed: Sequence[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PacketError(path, key, "must be a mapping")
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise PacketError(path, f"{key}.{unknown[0]}", f"unknown key; allowed: {', '.join(allowed)}")
    return value


def _plain_mapping(path: str, key: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PacketError(path, key, "must be a mapping" + (" (it may be {})" if key == "retention" else ""))
    return dict(value)


def _strings(path: str, key: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise PacketError(path, key, "must be a list of non-empty strings")
    return tuple(v.strip() for v in value)


def _sources(path: str, value: Any) -> tuple[Source, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise PacketError(path, "sources", "must be a list of {path|url|ref} mappings")
    found: list[Source] = []
    for n, item in enumerate(value):
        key = f"sources[{n}]"
        entry = _mapping(path, key, item, SOURCE_KEYS)
        texts = {k: _optional(path, f"{key}.{k}", entry.get(k)) for k in SOURCE_KEYS}
        if not any(texts.values()):
            raise PacketError(path, key, "needs a non-empty path, url or ref")
        source_path = texts["path"]
        if source_path and (
            source_path.startswith("/") or ".." in source_path.split("/") or re.match(r"^[A-Za-z]:", source_path)
        ):
            raise PacketError(path, f"{key}.path", "must be a relative path inside the repository")
        found.append(Source(texts["path"], texts["url"], texts["ref"]))
    return tuple(found)


def _resolution(path: str, value: Any) -> Resolution | None:
    if value is None:
        return None
    f = _mapping(path, "resolution", value, RESOLUTION_KEYS)
    return Resolution(
        outcome=_choice(path, "resolution.outcome", f.get("outcome"), ("applied", "rejected")),
        resolved_by=_text(path, "resolution.resolved_by", f.get("resolved_by")),
        resolved_at=_time(path, "resolution.resolved_at", f.get("resolved_at")),
        reason=_optional(path, "resolution.reason", f.get("reason")),
        record_id=_optional(path, "resolution.record_id", f.get("record_id")),
        target_id=_optional(path, "resolution.target_id", f.get("target_id")),
    )


def _check_resolution(path: str, packet: Packet) -> None:
    r = packet.resolution
    if packet.status == "proposed" and r is not None:
        raise PacketError(path, "resolution", "a proposed packet has no resolution")
    if packet.status != "proposed" and r is None:
        raise PacketError(path, "resolution", f"a {packet.status} packet needs resolution metadata")
    if packet.status == "applied" and r is not None and (r.outcome != "applied" or not r.record_id):
        raise PacketError(path, "resolution", "an applied packet needs outcome applied and a record_id")
    if packet.status == "rejected" and r is not None and (r.outcome != "rejected" or not r.reason or r.record_id):
        raise PacketError(path, "resolution", "a rejected packet needs outcome rejected, a reason and no record_id")


def _body(path: str, title: str, body: str) -> str:
    from git_memzoi.memzoi.records.okf import body_without_heading

    text = body_without_heading(title, body)
    if text is None:
        raise PacketError(path, "body", "the H1 heading must equal the title")
    if not text:
        raise PacketError(path, "body", "must not be empty after the H1 heading")
    return text


def shape_problem(packet: Packet) -> tuple[str, str] | None:
    """The first action-shape rule ``packet`` breaks, as ``(field, reason)``; ``None`` when it is well shaped."""
    a = packet.action
    if a == "create" and packet.target:
        return "proposal.target", "a create packet cannot name a target"
    if a == "create" and packet.supersedes:
        return "supersedes", "a create packet must have an empty supersedes list"
    if a == "supersede" and packet.target:
        return "proposal.target", "a supersede packet names its target in supersedes, not proposal.target"
    if a == "supersede" and len(packet.supersedes) != 1:
        return "supersedes", "a supersede packet needs exactly one supersedes entry"
    if a == "tombstone" and not packet.target:
        return "proposal.target", "a tombstone packet needs proposal.target"
    if a == "tombstone" and packet.supersedes:
        return "supersedes", "a tombstone packet cannot have supersedes entries"
    if a in ("supersede", "tombstone") and not packet.reason:
        return "proposal.reason", f"a {a} packet needs a reason"
    return None


def check_shape(packet: Packet, path: str) -> None:
    """Raise :class:`PacketError` (code ``invalid_action_shape``) when ``packet`` breaks an action-shape rule."""
    problem = shape_problem(packet)
    if problem:
        raise PacketError(path, problem[0], problem[1], "invalid_action_shape")


# ------------------------------------------------------------------------------------------------ records


def base_record_id(packet: Packet) -> str:
    """The record id a packet applies as, before collision suffixes: the title's concept slug, else the file
    id with ``_`` replaced by ``-``."""
    from git_memzoi.memzoi.records.okf import concept_slug

    return concept_slug(packet.title) or packet.file_id.replace("_", "-")


def record_identity(packet: Packet) -> tuple[str, ...]:
    """What the id suffix of the record ``packet`` applies as is derived from (records/ids.py): the packet's
    identity, action, target, title, body and timestamp; the same packet gives the same id on every branch."""
    return (
        "packet",
        packet.id,
        packet.file_id,
        packet.action,
        packet.target_id or "",
        packet.title,
        packet.body,
        packet.timestamp,
    )


def project_record(packet: Packet, record_id: str, *, supersedes: str | None = None, path: str = "") -> Record:
    """The active repo record ``packet`` applies as (memzoi-spec.md §3 Apply), validated like any record.

    Raises:
        PacketError: the packet's retention, origin, lineage or paths are not valid for a record.
    """
    from git_memzoi.memzoi.records import retention
    from git_memzoi.memzoi.records.okf import record_from_fields

    evidence = next((e for e in (s.evidence() for s in packet.sources) if e), None)
    fields: dict[str, Any] = {
        "id": record_id,
        "kind": "memory",
        "profile": "memzoi",
        "type": packet.type,
        "lane": packet.lane,
        "title": packet.title,
        "scope": packet.scope_kind,
        "visibility": "repo",
        "content_class": "general_repo_knowledge",
        "status": "active",
        "confidence": 1.0,
        "timestamp": packet.timestamp,
        "updated": packet.timestamp,
        "retention": dict(packet.retention),
        "origin": dict(packet.origin),
        "proposal_id": packet.id,
        "applies_to": list(packet.paths),
        "tags": list(packet.tags),
        "scope_id": packet.scope_id,
        "supersedes": supersedes,
        "source": evidence[0] if evidence else None,
        "source_ref": evidence[1] if evidence else None,
        "lineage": dict(packet.lineage) if packet.lineage is not None else None,
        "capture": compact_capture(packet.capture),
        "memkeep": dict(packet.memkeep) if packet.memkeep is not None else None,
    }
    if packet.capture is not None:
        fields["source"], fields["source_ref"] = "memzoi-capture", capture_ref(packet.capture)
    fields = {k: v for k, v in fields.items() if v is not None}
    try:
        record = record_from_fields(record_id, path, fields, packet.body)
        now = parse_timestamp(packet.timestamp)
        assert now is not None  # record_from_fields accepted the same value as the record's timestamp
        retention.decide(record, now)
    except RecordError as exc:
        raise PacketError(path, "scope.paths" if exc.field == "applies_to" else exc.field, exc.reason) from None
    except retention.RetentionError as exc:
        raise PacketError(path, "retention", exc.message.split(": ", 1)[-1]) from None
    return record


# ------------------------------------------------------------------------------------------------ writer


def render(packet: Packet) -> str:
    """The file text of ``packet`` in the writer's key order (memzoi-spec.md §3 Writer, plus ``resolution``)."""
    proposal = {
        "action": packet.action,
        "proposed_by": packet.proposed_by,
        "proposed_at": packet.proposed_at,
        "reason": packet.reason,
        "confidence": packet.confidence,
        "target": packet.target,
    }
    scope = {"kind": packet.scope_kind, "id": packet.scope_id, "paths": list(packet.paths) or None}
    lines = ["---"]
    for key, value in (
        ("id", packet.id),
        ("kind", "proposal"),
        ("profile", "memzoi"),
        ("type", packet.type),
        ("lane", packet.lane),
        ("title", packet.title),
        ("description", packet.description or first_line(packet.body)),
        ("status", packet.status),
    ):
        lines.append(f"{key}: {scalar(value)}")
    lines += yaml_lines("proposal", _present(proposal)) + yaml_lines("scope", _present(scope))
    if packet.tags:
        lines += yaml_lines("tags", list(packet.tags))
    lines.append(f"timestamp: {scalar(packet.timestamp)}")
    if packet.created_by is not None:
        lines.append(f"created_by: {scalar(packet.created_by)}")
    if packet.sources:
        lines += yaml_lines("sources", [_present({k: getattr(s, k) for k in SOURCE_KEYS}) for s in packet.sources])
    lines += yaml_lines("supersedes", list(packet.supersedes))
    lines += [f"sensitivity: {scalar(packet.sensitivity)}", f"content_class: {scalar(packet.content_class)}"]
    if packet.resolution is not None:
        lines += yaml_lines("resolution", _present({k: getattr(packet.resolution, k) for k in RESOLUTION_KEYS}))
    if packet.capture is not None:
        lines += yaml_lines("capture", packet.capture)
    lines += yaml_lines("retention", packet.retention) + yaml_lines("origin", packet.origin)
    for name, block in (("lineage", packet.lineage), ("memkeep", packet.memkeep)):
        if block is not None:
            lines += yaml_lines(name, block)
    lines += ["---", "", f"# {packet.title.strip()}", "", packet.body.strip(), ""]
    return "\n".join(lines)


def _present(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if v is not None}
