"""``git memzoi capture plan`` (io): the plan of one named source under one of the four deterministic profiles
(memzoi-spec.md §9).

A plan never writes memory state: it reads the source and the memory inventory and returns a JSON artifact whose
id (``capture_…``) is a hash of its content. Candidates are classified against the inventory (duplicate,
conflict) and routed as their profile says: a pending proposal for repo guidance, a runtime record for local and
session memory, ``needs_review`` for anything a reviewer must classify first. Review and apply live in
:mod:`~git_memzoi.memzoi.capture.review`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from git_memzoi.core import safe_read
from git_memzoi.errors import MemzoiError
from git_memzoi.memzoi.capture import decisions, sources
from git_memzoi.memzoi.capture.decisions import memory_hash
from git_memzoi.memzoi.capture.profiles import markdown as md
from git_memzoi.memzoi.capture.profiles.markdown import CaptureError, canonical_hash
from git_memzoi.memzoi.capture.sources import REQUEST_SCHEMA
from git_memzoi.memzoi.workspace import Workspace

if TYPE_CHECKING:
    from git_memzoi.memzoi.capture.schema import (
        ActionJson,
        CandidateJson,
        ClassificationJson,
        DiagnosticJson,
        ExtractedJson,
        MatchJson,
        PlanBodyJson,
        PlanJson,
        PlanSummaryJson,
        PreconditionsJson,
    )

PLAN_SCHEMA = "memzoi/capture-plan-v1"

# where each routed destination lands: (sensitivity, action)
_ROUTES = {
    "repo": ("repo-safe", "create_proposal"),
    "local": ("private", "create_runtime"),
    "session": ("private", "create_runtime"),
}


def plan(ws: Workspace, source: str, source_id: str = "source-1") -> PlanJson:
    """``capture plan --source``: the markdown-deterministic plan of one project-relative ``.md`` file.

    Raises:
        CaptureError: a rejected path or source (``unsafe_source_path``, ``unsupported_media_type``,
            ``source_not_found``, ``source_too_large``, ``invalid_encoding``, ``capture_limit_exceeded``, …).
    """
    md.check_source_id(source_id)
    md.check_source_path(source)
    request = {
        "schema": REQUEST_SCHEMA,
        "sources": [
            {"source_id": source_id, "locator": {"kind": "project_path", "path": source}, "media_type": "text/markdown"}
        ],
        "extractor": {"profile": md.PROFILE},
    }
    return plan_request(ws, request)


def plan_request(ws: Workspace, request: Any, supplied: Mapping[str, bytes] | None = None) -> PlanJson:
    """``capture plan --request-file``: the plan of a strict capture request (reads only).

    Args:
        request: a ``memzoi/capture-request-v1`` mapping with one source.
        supplied: source id → the bytes given with ``--source-bytes`` for a ``supplied_bytes`` locator.

    Raises:
        CaptureError: ``invalid_capture_request`` (unknown keys), ``unsupported_capture_profile``, and every
            source and extractor rule of the profile.
    """
    profile, _, loaded = sources.load_request(ws, request, supplied or {})
    return _assemble(ws, request, profile, loaded)


def plan_or_blocked(ws: Workspace, request: Any, supplied: Mapping[str, bytes] | None = None) -> PlanJson:
    """:func:`plan_request`, except that a source that fails preflight or an extractor safeguard becomes the
    redacted blocked plan upstream prints (diagnostic ``source_preflight_failed`` / ``extractor_safeguard_failed``).

    Request-shape errors still raise.
    """
    try:
        return plan_request(ws, request, supplied)
    except CaptureError as exc:
        if exc.code in sources.PREFLIGHT_CODES:
            code = "source_preflight_failed"
        elif exc.code == "extractor_safeguard_failed":
            code = exc.code
        else:
            raise
        profile, source = sources.check_request(request)
        diagnostic: DiagnosticJson = {
            "code": code,
            "source_id": source["source_id"],
            "line_start": 0,
            "reason": exc.code,
        }
        return _blocked(profile, [diagnostic])


def _blocked(profile: str, diagnostics: list[DiagnosticJson], extractor: dict[str, Any] | None = None) -> PlanJson:
    """The redacted blocked plan: no sources, candidates or evidence, only safe diagnostics (§9.6)."""
    body: PlanBodyJson = {
        "schema": PLAN_SCHEMA,
        "status": "blocked",
        "data_class": "blocked",
        "request": {"schema": REQUEST_SCHEMA, "extractor": {"profile": profile}},
        "candidates": [],
        "summary": _summary([], 1, blocked=True),
        "diagnostics": diagnostics,
    }
    if extractor is not None:
        body["extractor"] = extractor
    return {"plan_id": "capture_" + canonical_hash(body)[:32], **body}


def _assemble(ws: Workspace, request: dict[str, Any], profile: str, loaded: sources.Loaded) -> PlanJson:
    """The plan of one extracted source: classified against the inventory, or the redacted blocked plan."""
    extraction = loaded.extraction
    if extraction.blocked:
        return _blocked(profile, extraction.diagnostics, loaded.extractor)
    inventory, reviewed = _inventory(ws), decisions.load(ws.layout)
    candidates = [
        _classify(c, inventory, extraction.candidates[:i], reviewed) for i, c in enumerate(extraction.candidates)
    ]
    preconditions: PreconditionsJson = {
        "source_content_hash": loaded.snapshot["source_content_hash"],
        "inventory_hash": "blake3:" + canonical_hash(inventory),
    }
    # a blocked candidate is redacted (no private text), so only local, session and unresolved ones make it private
    private = any(c["classification"]["destination"] not in ("repo", "blocked") for c in candidates)
    body: PlanBodyJson = {
        "schema": PLAN_SCHEMA,
        "status": "ready",
        "data_class": "private" if private else "repo_safe",
        "request": request,
        "sources": [loaded.snapshot],
        "safeguards": {"prohibited_content": "clear"},
        "preconditions": preconditions,
        "extractor": loaded.extractor,
        "candidates": candidates,
        "summary": _summary(candidates, 1),
        "diagnostics": extraction.diagnostics,
    }
    return {"plan_id": "capture_" + canonical_hash(body)[:32], **body}


def _summary(candidates: list[CandidateJson], sources: int, *, blocked: bool = False) -> PlanSummaryJson:
    """The plan's counts; ``needs_review`` counts every candidate a reviewer must resolve: no-write ones and
    conflicts (upstream's capture-v1 baseline counts them so)."""
    kinds = [c["action"]["kind"] for c in candidates]
    return {
        "sources": sources,
        "candidates": len(candidates),
        "create_proposals": kinds.count("create_proposal"),
        "runtime_writes": kinds.count("create_runtime"),
        "duplicates": kinds.count("duplicate"),
        "conflicts": kinds.count("conflict"),
        "needs_review": kinds.count("no_write") + kinds.count("conflict"),
        "blocked": 1 if blocked else kinds.count("blocked"),
        "previously_rejected": kinds.count("previously_rejected"),
    }


def _inventory(ws: Workspace) -> list[dict[str, Any]]:
    """Active canonical records, pending packets and active runtime records, as match stubs (read-only)."""
    from git_memzoi.memzoi.proposals import files as proposal_files
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.records import store as record_store

    layout = ws.layout
    items: list[dict[str, Any]] = []
    for r in record_store.scan(layout).records:
        if r.status == "active":
            items.append(_stub("canonical_record", r.id, "repo", r, r.status, r.updated_at))
    for entry in proposal_files.inventory(layout).pending():
        p = entry.packet
        if p is not None and not entry.redacted:
            items.append(_stub("pending_proposal", p.file_id, "repo", p, p.status, p.proposed_at))
    for destination in ("local", "session"):
        directory = index_db.runtime_dir(layout, destination)
        for file in sorted(directory.glob("*.md")) if directory.is_dir() and not directory.is_symlink() else ():
            rel = layout.label(file)  # absolute from a linked worktree: private memory is shared
            try:
                r = index_db.parse_record(file.stem, rel, safe_read.read_bytes(file))  # a FIFO: refused unopened
            except (OSError, MemzoiError):  # an unreadable runtime file is no inventory item, never fatal
                continue
            if r.status == "active":
                items.append(_stub("runtime_record", r.id, destination, r, r.status, r.updated_at))
    return items


def _stub(kind: str, ident: str, destination: str, item: Any, status: str, updated: str) -> dict[str, Any]:
    return {
        "kind": kind,
        "id": ident,
        "destination": destination,
        "status": status,
        "updated_at": updated,
        "content_hash": memory_hash(item.type, item.title, item.body),
        "title": item.title.strip(),
    }


def _classify(
    c: ExtractedJson,
    inventory: list[dict[str, Any]],
    earlier: list[ExtractedJson],
    reviewed: Mapping[str, Mapping[str, Any]] | None = None,
) -> CandidateJson:
    """Route one extracted candidate (memzoi-spec.md §9.6).

    A candidate holding a fenced credential → ``blocked`` (destination and sensitivity ``blocked``, already
    redacted by its profile). Exact matches in the inventory or among earlier candidates → ``duplicate`` (the
    route's destination kept); content a reviewer rejected before (``reviewed``: content hash → the remembered
    decision, :mod:`~git_memzoi.memzoi.capture.decisions`) → ``previously_rejected`` (no write; an ``edit`` in a
    new review overrides it); the same title with a different body → ``conflict`` (destination ``needs_review``);
    otherwise the profile's ``routed_destination``: repo → a pending proposal, local/session → a runtime record,
    ``None`` → ``needs_review`` until a reviewer edits it to a destination.
    """
    memory = c["memory"]
    own = memory_hash(memory["type"], memory["title"], memory["body"])
    pool = inventory + [
        {
            "kind": "earlier_candidate",
            "id": e["candidate_id"],
            "destination": "needs_review",
            "status": "planned",
            "updated_at": None,
            "title": e["memory"]["title"].strip(),
            "content_hash": memory_hash(e["memory"]["type"], e["memory"]["title"], e["memory"]["body"]),
        }
        for e in earlier
    ]
    title = memory["title"].strip().casefold()
    dupes = [_match(m) for m in pool if m["content_hash"] == own]
    conflicts = [_match(m) for m in pool if m["title"].casefold() == title and m["content_hash"] != own]
    routed = c["routed_destination"]
    destination = routed if routed in _ROUTES else "needs_review"
    sensitivity, kind = _ROUTES.get(routed or "", ("unknown", "no_write"))
    action: ActionJson
    before = (reviewed or {}).get(own)
    if "prohibited" in c:
        return _blocked_candidate(c)
    if dupes:
        action = {"kind": "duplicate", "matches": dupes, "match_count": len(dupes)}
    elif before is not None and before.get("outcome") == "reject":
        action = {
            "kind": "previously_rejected",
            "reason_code": "rejected_in_review",
            "review_id": str(before.get("review_id")),
            "reviewed_at": str(before.get("reviewed_at")),
        }
    elif conflicts:
        action, destination = {"kind": "conflict", "matches": conflicts, "match_count": len(conflicts)}, "needs_review"
    elif kind == "create_proposal":
        action = {"kind": kind, "proposal_id": proposal_id(memory["title"], c["candidate_id"])}
    elif kind == "create_runtime":
        action = {"kind": kind, "route": f"runtime_{routed}"}
    else:
        action = {"kind": "no_write", "reason_code": c.get("reason_code", "needs_review")}
    classification: ClassificationJson = {
        "destination": destination,
        "destination_reason": c.get("destination_reason")
        or ("profile_route" if routed in _ROUTES else "explicit_classification_required"),
        "sensitivity": sensitivity,
        "sensitivity_reason": "profile_route" if routed in _ROUTES else "unclassified_capture",
        "content_class": c.get("content_class")
        or (
            {"repo": "general_repo_knowledge", "local": "local_only_state", "session": "temporary_task_state"}.get(
                routed or ""
            )
        ),
        "policy": {"suggested_destination": c.get("suggested_destination", routed)},
    }
    out = {k: v for k, v in c.items() if k not in _ROUTING_KEYS}  # the extracted keys, in the profile's order
    return cast("CandidateJson", {**out, "classification": classification, "action": action})


def _blocked_candidate(c: ExtractedJson) -> CandidateJson:
    """A candidate whose section holds a fenced credential: no write, nothing to edit; reject or defer it."""
    prohibited = c["prohibited"]
    classification: ClassificationJson = {
        "destination": "blocked",
        "destination_reason": "prohibited_content_detected",
        "sensitivity": "blocked",
        "sensitivity_reason": "prohibited_content_detected",
        "content_class": None,
        "policy": {"suggested_destination": c.get("suggested_destination")},
    }
    action: ActionJson = {
        "kind": "blocked",
        "reason_code": "prohibited_content_detected",
        "line_start": prohibited["line_start"],
        "detectors": prohibited["detectors"],
    }
    out = {k: v for k, v in c.items() if k not in _ROUTING_KEYS}
    return cast("CandidateJson", {**out, "classification": classification, "action": action})


# extractor hints consumed by :func:`_classify`, never part of the plan's candidate
_ROUTING_KEYS = (
    "routed_destination",
    "suggested_destination",
    "reason_code",
    "destination_reason",
    "content_class",
    "prohibited",
)


def proposal_id(title: str, ident: str) -> str:
    """The pending-proposal id reserved for a candidate: ``capture-<title slug>-<8 hex of its id>``."""
    from git_memzoi.memzoi.records.okf import concept_slug

    slug = concept_slug(title)[:60].strip("-") or "capture"
    return f"capture-{slug}-{ident.split('_', 1)[1][:8]}"


def _match(m: dict[str, Any]) -> MatchJson:
    return cast("MatchJson", {k: m[k] for k in ("kind", "id", "destination", "content_hash", "status", "updated_at")})
