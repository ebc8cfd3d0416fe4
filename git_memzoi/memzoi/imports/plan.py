"""``git memzoi import plan|apply`` (io): classified import of an explicit ``memzoi/import-v1`` manifest (seed
"Classified import"; the duplicate and prohibited-content rules it shares with capture: memzoi-spec.md §9.6, §9.8).

A manifest names its sources and candidates; every candidate already carries its destination and the reason for
it. Nothing is inferred from prose: only the narrow type/lane inference of the seed. ``plan`` reads the manifest
and the memory inventory and returns the ``memzoi/import-plan-v1`` plan (id ``import_…``, a hash of the actor and
the normalized plan); it never writes. ``apply`` takes the lifecycle lock, recomputes the plan, and writes nothing
unless the recomputed id equals the one given: repo candidates become pending proposal packets, local and
session candidates private runtime records. The plan lives here, the manifest parser in
:mod:`~git_memzoi.memzoi.imports.manifest` (re-exported) and the write path in :mod:`~git_memzoi.memzoi.imports.apply`.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from git_memzoi.core import safe_read
from git_memzoi.errors import MemzoiError
from git_memzoi.memzoi.capture.profiles.markdown import canonical_hash
from git_memzoi.memzoi.imports.manifest import (
    MANIFEST_VERSION,
    Candidate,
    ImportManifestError,
    Manifest,
    body_hash,
    check_path,
    infer_kind,
    parse_manifest,
    read_manifest,
)
from git_memzoi.memzoi.workspace import Workspace

# the manifest's names this module re-exports (its own public names are exported as ever)
__all__ = [
    "MANIFEST_VERSION",
    "Candidate",
    "ImportManifestError",
    "Manifest",
    "body_hash",
    "check_path",
    "infer_kind",
    "parse_manifest",
    "read_manifest",
]

PLAN_SCHEMA = "memzoi/import-plan-v1"
# destination → (plane, write route, review): the seed's policy mapping ("Memory planes and destinations")
POLICY = {
    "repo": ("git", "file_backed_proposal", "proposal_review"),
    "local": ("runtime", "runtime_local", "no_review"),
    "session": ("runtime", "runtime_session", "no_review"),
    "discard": (None, "no_write", "no_review"),
    "needs_review": (None, "no_write", "human_decision"),
}
MATCH_ORDER = ("canonical_record", "pending_proposal", "runtime_record", "earlier_candidate")
SPLIT_REASON = (
    "another repo candidate in this manifest is not repo-safe; split the manifest so repo-safe "
    "candidates retain their evidence sources"
)
UNSAFE_TITLE = "Redacted non-repo-safe import candidate"
UNSAFE_BODY = "Original non-repo-safe import candidate content was redacted."
UNSAFE_REASON = "non-repo-safe repo candidate requires classification or rerouting"
BLOCKED_TITLE = "Redacted import candidate"
BLOCKED_BODY = "Original import candidate content was redacted: the manifest holds prohibited content."
BLOCKED_REASON = "prohibited content detected in this manifest; remove it and plan again"


# ------------------------------------------------------------------------------------------------ the plan


def plan(ws: Workspace, raw: Any, *, actor: str) -> dict[str, Any]:
    """``import plan``: the ``memzoi/import-plan-v1`` plan of a raw manifest document (reads only).

    Args:
        raw: the parsed manifest document (:func:`read_manifest`).
        actor: who plans (trimmed, non-empty); part of the plan fingerprint.

    Returns:
        ``{schema, plan_id, status: ready|blocked, data_class: repo_safe|private|blocked, sources, summary,
        candidates, diagnostics}`` (seed "Plan and apply semantics").

    Raises:
        ImportManifestError: an invalid manifest or actor, or a candidate that would not validate as the packet
            or runtime record it routes to.
    """
    who = check_actor(actor)
    manifest = parse_manifest(raw)
    findings = prohibited(manifest)
    if findings:
        body = _blocked(manifest, findings)
    else:
        existing, taken = inventory(ws)
        body = _ready(ws, manifest, existing, taken)
    out = {"schema": PLAN_SCHEMA, "plan_id": "import_" + canonical_hash({"actor": who, "plan": body})[:32], **body}
    if not findings:
        prepare(ws, out, who)  # every routed candidate must validate as what apply would write
    return out


def check_actor(actor: str) -> str:
    """The trimmed actor. Raises ImportManifestError ``invalid_actor`` when it is empty."""
    if not isinstance(actor, str) or not actor.strip():
        raise ImportManifestError("--actor must not be empty", "invalid_actor")
    return actor.strip()


def prohibited(manifest: Manifest) -> list[dict[str, Any]]:
    """Safe diagnostics for prohibited content (:func:`~git_memzoi.memzoi.records.secrets.classify`) in any source locator
    or candidate field: ``{code: prohibited_content_detected, field, line_start, detector, class}`` and, for a
    candidate, its ``index``; never the matched text. Empty when the manifest is clear."""
    from git_memzoi.memzoi.records.secrets import classify

    fields: list[tuple[int | None, str, str]] = []
    for n, source in enumerate(manifest.sources):
        fields += [(None, f"sources[{n}].{k}", v) for k, v in source.items()]
    for c in manifest.candidates:
        texts = [("reason", c.reason), ("title", c.title), ("body", c.body)]
        texts += [(f"tags[{n}]", t) for n, t in enumerate(c.tags)]
        texts += [(f"scope.paths[{n}]", p) for n, p in enumerate(c.scope["paths"])]
        texts += [("scope.id", c.scope["id"])] if c.scope["id"] is not None else []
        fields += [(c.index, name, text) for name, text in texts]
    out = []
    for index, name, text in fields:
        for f in classify(text):
            entry = {
                "code": "prohibited_content_detected",
                "field": name,
                "line_start": f.line,
                "detector": f.rule,
                "class": f.kind,
            }
            out.append(entry if index is None else {"index": index, **entry})
    return out


def _policy(destination: str) -> dict[str, Any]:
    plane, route, review = POLICY[destination]
    return {"destination": destination, "plane": plane, "write_route": route, "review": review}


def _entry(
    c: Candidate,
    duplicates: list[dict[str, Any]],
    action: dict[str, Any],
    *,
    redact: tuple[str, str, str] | None = None,
) -> dict[str, Any]:
    """One plan candidate; ``redact`` = (placeholder title, body, reason) hides every content field."""
    title, body, reason = redact or (c.title, c.body, c.reason)
    scope = {"kind": c.scope["kind"], "id": None, "paths": []} if redact else c.scope
    watch = {} if redact or c.watch is None else {"watch": c.watch}  # absent unless given: import-v1 plans unchanged
    return {
        "index": c.index,
        "classification": {"destination": c.destination, "reason": reason},
        "policy": _policy(c.destination),
        "type": c.type,
        "lane": c.lane,
        "title": title,
        "body": body,
        "sensitivity": c.sensitivity,
        "scope": scope,
        "tags": [] if redact else c.tags,
        "content_hash": c.content_hash,
        "duplicates": duplicates,
        "action": action,
        **watch,
    }


def _blocked(manifest: Manifest, findings: list[dict[str, Any]]) -> dict[str, Any]:
    """The redacted plan of a manifest holding prohibited content: no sources, every candidate a placeholder with
    a ``blocked`` action, only safe diagnostics (as capture's blocked plan, memzoi-spec.md §9.6)."""
    candidates = [
        _entry(
            c, [], {"kind": "blocked", "reason": BLOCKED_REASON}, redact=(BLOCKED_TITLE, BLOCKED_BODY, BLOCKED_REASON)
        )
        for c in manifest.candidates
    ]
    return {
        "status": "blocked",
        "data_class": "blocked",
        "sources": [],
        "summary": _summary(candidates),
        "candidates": candidates,
        "diagnostics": findings,
    }


def _ready(ws: Workspace, manifest: Manifest, existing: list[dict[str, Any]], taken: set[str]) -> dict[str, Any]:
    unsafe = any(c.destination == "repo" and c.sensitivity != "repo-safe" for c in manifest.candidates)
    by_hash: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in existing:
        match = {"kind": item["kind"], "id": item["id"], "destination": item["destination"], "candidate_index": None}
        if match not in by_hash[item["hash"]]:
            by_hash[item["hash"]].append(match)
    prior: dict[str, int] = {}
    reserved = set(taken)
    candidates = []
    for c in manifest.candidates:
        non_repo_safe = c.destination == "repo" and c.sensitivity != "repo-safe"
        blocked_repo = c.destination == "repo" and unsafe
        duplicates = [] if blocked_repo else list(by_hash.get(c.content_hash, []))
        if not blocked_repo and c.content_hash in prior:
            earlier = prior[c.content_hash]
            duplicates.append(
                {
                    "kind": "earlier_candidate",
                    "id": f"candidate-{earlier}",
                    "destination": None,
                    "candidate_index": earlier,
                }
            )
        duplicates.sort(key=_match_key)
        action: dict[str, Any]
        if blocked_repo:
            action = {
                "kind": "blocked",
                "reason": _sensitivity_reason(c.sensitivity) if non_repo_safe else SPLIT_REASON,
            }
        elif duplicates:
            action = {"kind": "duplicate", "matches": duplicates}
        elif c.destination == "repo":
            proposal_id = reserve_proposal_id(c.title, reserved)
            path = (ws.layout.pending / f"{proposal_id}.md").relative_to(ws.layout.root).as_posix()
            action = {"kind": "create_proposal", "proposal_id": proposal_id, "path": path}
        elif c.destination in ("local", "session"):
            action = {"kind": "create_runtime", "route": POLICY[c.destination][1]}
        elif c.destination == "needs_review":
            action = {"kind": "blocked", "reason": c.reason}
        else:
            action = {"kind": "no_write", "reason": c.reason}
        if not blocked_repo:
            prior.setdefault(c.content_hash, c.index)
        candidates.append(
            _entry(c, duplicates, action, redact=(UNSAFE_TITLE, UNSAFE_BODY, UNSAFE_REASON) if non_repo_safe else None)
        )
    private = any(c.destination != "repo" or c.sensitivity != "repo-safe" for c in manifest.candidates)
    return {
        "status": "ready",
        "data_class": "private" if private else "repo_safe",
        "sources": [] if unsafe else manifest.sources,
        "summary": _summary(candidates),
        "candidates": candidates,
        "diagnostics": [],
    }


def _match_key(m: dict[str, Any]) -> tuple[int, str, str, int]:
    return (
        MATCH_ORDER.index(m["kind"]),
        m["id"],
        m["destination"] or "",
        -1 if m["candidate_index"] is None else m["candidate_index"],
    )


def _sensitivity_reason(sensitivity: str) -> str:
    return (
        f"repo destination requires sensitivity repo-safe; got {sensitivity}; classify the candidate as "
        "repo-safe or choose a non-repo destination"
    )


def _summary(candidates: list[dict[str, Any]]) -> dict[str, int]:
    """The seed's seven counters; ``needs_review`` counts every ``blocked`` action."""
    kinds = [(c["action"]["kind"], c["action"].get("route")) for c in candidates]
    return {
        "total": len(candidates),
        "create_proposals": sum(k == "create_proposal" for k, _ in kinds),
        "local_writes": kinds.count(("create_runtime", "runtime_local")),
        "session_writes": kinds.count(("create_runtime", "runtime_session")),
        "duplicates": sum(k == "duplicate" for k, _ in kinds),
        "discarded": sum(k == "no_write" for k, _ in kinds),
        "needs_review": sum(k == "blocked" for k, _ in kinds),
    }


def reserve_proposal_id(title: str, reserved: set[str]) -> str:
    """The first free ``mem_import_<slug>``, ``…-2``, … for ``title``, by identity token; adds it to ``reserved``
    (identity tokens of every packet in pending and resolved, plus those reserved earlier in the same plan)."""
    from git_memzoi.memzoi.proposals.packets import candidates, identity_token
    from git_memzoi.memzoi.records.okf import concept_slug

    base = "mem_import_" + (concept_slug(title)[:64].strip("-") or "memory")
    chosen = next(c for c in candidates(base) if identity_token(c) not in reserved)
    reserved.add(identity_token(chosen))
    return chosen


def inventory(ws: Workspace) -> tuple[list[dict[str, Any]], set[str]]:
    """What an import is compared with (read-only): active canonical records, pending repo-safe packets and active
    runtime records as ``{kind, id, destination, hash}`` (hash: :func:`body_hash`), sorted by kind then id; and
    every proposal identity token in use (pending and resolved).

    Raises:
        InputError: a proposal root is a symlink or not a folder; DuplicateIdentity: two packets share an id.
    """
    from git_memzoi.memzoi.proposals import files as proposal_files
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.records import store as record_store

    layout = ws.layout
    items: list[dict[str, Any]] = []
    for r in record_store.scan(layout).records:
        if r.status == "active":
            items.append({"kind": "canonical_record", "id": r.id, "destination": "repo", "hash": body_hash(r.body)})
    packets = proposal_files.identities(layout)  # reads only packet files changed since its cache was saved
    for entry in packets.pending():
        p = entry.packet
        if p is not None and not entry.redacted:
            items.append({"kind": "pending_proposal", "id": p.id, "destination": "repo", "hash": body_hash(p.body)})
    for destination in ("local", "session"):
        directory = index_db.runtime_dir(layout, destination)
        for file in sorted(directory.glob("*.md")) if directory.is_dir() and not directory.is_symlink() else ():
            try:
                r = index_db.parse_record(file.stem, layout.label(file), safe_read.read_bytes(file))
            except (OSError, MemzoiError):  # an unreadable runtime file is no inventory item (as capture)
                continue
            if r.status == "active":
                items.append(
                    {"kind": "runtime_record", "id": r.id, "destination": destination, "hash": body_hash(r.body)}
                )
    items.sort(key=lambda i: (MATCH_ORDER.index(i["kind"]), i["id"]))
    return items, set(packets.taken())


# ------------------------------------------------------------------------------------------------ files


def source_file(ws: Workspace, path: Path) -> str | None:
    """The manifest path relative to the project root when it resolves under it; ``None`` when it is outside or
    either path cannot be resolved."""
    try:
        resolved, root = path.resolve(strict=True), ws.layout.root.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    return resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else None


def plan_file(ws: Workspace, path: Path, *, actor: str = "cli") -> dict[str, Any]:
    """``import plan --from-file``: :func:`plan` of the manifest at ``path`` plus ``mode: "plan"``, ``actor`` and
    ``source_file``; no ``writes`` field. Raises ImportManifestError as :func:`read_manifest` and :func:`plan`."""
    raw = read_manifest(path)
    out = plan(ws, raw, actor=actor)
    return {**out, "mode": "plan", "actor": check_actor(actor), "source_file": source_file(ws, path)}


def prepare(ws: Workspace, live: dict[str, Any], actor: str, *, validate: bool = True) -> list[tuple[int, Any]]:
    """``(index, packet or runtime draft)`` of every ``create_proposal`` / ``create_runtime`` candidate of a
    ready plan, each validated the way its writer validates it (nothing is written). ``validate=False`` leaves
    the packets to their writer, which validates each again (``import apply``, after :func:`plan` checked them).

    Raises:
        ImportManifestError: a candidate would not validate (``invalid_import_manifest``, naming the field).
    """
    from git_memzoi.memzoi.proposals import packets
    from git_memzoi.memzoi.records import envelope, okf
    from git_memzoi.memzoi.runtime import local

    now = okf.format_timestamp(ws.clock.now())
    out: list[tuple[int, Any]] = []
    for c in live["candidates"]:
        kind, scope, where = c["action"]["kind"], c["scope"], f"candidates[{c['index']}]"
        try:
            if kind == "create_proposal":
                proposal_id = c["action"]["proposal_id"]
                watch = c.get("watch")
                request = envelope.make_request(**watch) if watch is not None else None
                today = ws.clock.today()
                sealed = envelope.seal(ws.layout.root, request, scope["paths"], today) if request else None
                packet = packets.Packet(
                    id=proposal_id,
                    file_id=proposal_id,
                    type=c["type"],
                    lane=c["lane"],
                    title=c["title"],
                    body=c["body"],
                    action="create",
                    proposed_by=actor,
                    proposed_at=now,
                    timestamp=now,
                    reason=c["classification"]["reason"],
                    scope_kind=scope["kind"],
                    scope_id=scope["id"],
                    paths=tuple(scope["paths"]),
                    tags=tuple(c["tags"]),
                    created_by=actor,
                    sources=tuple(packets.Source(**s) for s in live["sources"]),
                    sensitivity="repo-safe",
                    content_class="general_repo_knowledge",
                    retention={"session": {"started_at": now}, "episodic": {"occurred_at": now}}.get(c["lane"], {}),
                    origin={"origin_key": f"memzoi-import:{live['plan_id']}:{c['index']}", "route": "import"},
                    memkeep=sealed.envelope if sealed is not None else None,
                )
                if validate:
                    rendered = packets.render(packet).encode("utf-8")
                    packets.check_shape(packets.parse(proposal_id, where, rendered), where)
                out.append((c["index"], packet))
            elif kind == "create_runtime":
                draft = local.Draft(
                    c["classification"]["destination"],
                    c["type"],
                    c["lane"],
                    c["title"],
                    c["body"],
                    "import",
                    scope["kind"],
                    scope["id"],
                    tuple(scope["paths"]),
                    tuple(c["tags"]),
                )
                local.check_draft(ws, draft)
                out.append((c["index"], draft))
        except MemzoiError as exc:
            field = getattr(exc, "field", None)
            what = "proposal packet" if kind == "create_proposal" else "runtime record"
            raise ImportManifestError(
                f"{where}: would not validate as a {what}" + (f" (field {field})" if isinstance(field, str) else "")
            ) from None
    return out
