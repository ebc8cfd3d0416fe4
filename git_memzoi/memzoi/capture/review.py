"""``git memzoi capture review|apply`` (io): one decision per candidate, then the accepted and edited routeable
candidates written as pending proposal packets or runtime records (memzoi-spec.md §9.7).

review never writes memory state. apply takes the lifecycle lock, recomputes the plan and the review from the live
sources and inventory, and writes nothing unless both match the supplied artifacts and ids exactly.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import MemzoiError
from git_memzoi.memzoi.capture.plan import PLAN_SCHEMA, plan_request, proposal_id
from git_memzoi.memzoi.capture.profiles.markdown import CaptureError, canonical_hash
from git_memzoi.memzoi.workspace import Workspace

if TYPE_CHECKING:
    from git_memzoi.memzoi.capture.schema import PlanJson

REVIEW_INPUT_SCHEMA = "memzoi/capture-review-input-v1"
REVIEW_SCHEMA = "memzoi/capture-review-v1"
APPLY_SCHEMA = "memzoi/capture-apply-result-v1"
PROVENANCE_SCHEMA = "memzoi/capture-provenance-v1"
OUTCOMES = ("accept", "reject", "edit", "defer")
DESTINATIONS = ("repo", "local", "session")
MEMORY_KEYS = ("type", "lane", "title", "body", "scope", "tags")
# content classes that must never go to the repo (vocab.CONTENT_CLASSES minus the repo-safe ones)
PRIVATE_CLASSES = frozenset(
    {
        "raw_transcript",
        "private_personal_data",
        "screen_or_activity_history",
        "private_endpoint",
        "undisclosed_vulnerability",
        "unminimized_private_evidence",
        "temporary_task_state",
        "local_only_state",
    }
)


def _replan(ws: Workspace, supplied: Mapping[str, Any], source_bytes: Mapping[str, bytes]) -> PlanJson:
    """The live plan for a supplied plan's request; ``stale_capture_plan`` / ``artifact_modified`` on drift."""
    if supplied.get("schema") != PLAN_SCHEMA or supplied.get("status") == "blocked":
        code = "blocked_plan" if supplied.get("status") == "blocked" else "invalid_artifact"
        raise CaptureError("only a ready capture plan can be reviewed or applied", code)
    try:
        live = plan_request(ws, supplied["request"], source_bytes)
    except (KeyError, TypeError, AttributeError):
        raise CaptureError("the plan's request is not a supported capture request", "invalid_artifact") from None
    if live["plan_id"] != supplied.get("plan_id"):
        raise CaptureError(
            "stale capture plan: the source or memory inventory changed; plan again", "stale_capture_plan"
        )
    if live != supplied:
        raise CaptureError("the plan artifact was edited after planning", "artifact_modified")
    return live


# ------------------------------------------------------------------------------------------------ review


def review(
    ws: Workspace,
    supplied_plan: Mapping[str, Any],
    decisions: dict[str, Any],
    *,
    reviewed_by: str | None,
    reviewed_at: str | None,
    prior: dict[str, Any] | None = None,
    source_bytes: Mapping[str, bytes] | None = None,
) -> dict[str, Any]:
    """``capture review``: the review JSON for one decision per candidate (reads only; re-validates the plan).

    Args:
        reviewed_by: who reviewed; ``None``: git's ``user.name`` of the repository (issue 20: the printed
            command must run as printed), refused (``invalid_review``) when that is not set either.
        reviewed_at: an RFC 3339 time; ``None``: the workspace clock's now (``MEMZOI_NOW`` pins it).
        prior: the earlier review named by the decisions' ``prior_review_id`` (``--prior-review-file``); the new
            decisions may only replace its deferred ones, and the prior must not itself have a prior (one hop).
        source_bytes: source id → the ``--source-bytes`` of a ``supplied_bytes`` source.

    Raises:
        CaptureError: stale or edited plan, invalid decisions (``invalid_review``), a prior review that does not
            fit (``invalid_prior_review``), prohibited content in an edit (``prohibited_content_detected``).
    """
    from git_memzoi.memzoi.records.okf import format_timestamp, parse_timestamp

    live = _replan(ws, supplied_plan, source_bytes or {})
    reviewed_by = _git_user(ws) if reviewed_by is None else reviewed_by
    reviewed_at = format_timestamp(ws.clock.now()) if reviewed_at is None else reviewed_at
    if not reviewed_by.strip():
        raise CaptureError("--reviewed-by must not be empty", "invalid_review")
    if parse_timestamp(reviewed_at) is None or "T" not in reviewed_at.upper():
        raise CaptureError("--reviewed-at must be an RFC 3339 time", "invalid_review")
    _keys(decisions, "decisions file", ("schema", "plan_id", "decisions"), ("prior_review_id",))
    if decisions["schema"] != REVIEW_INPUT_SCHEMA or decisions["plan_id"] != live["plan_id"]:
        raise CaptureError("the decisions name another schema or plan", "invalid_review")
    by_id = {c["candidate_id"]: c for c in live["candidates"]}
    given = decisions["decisions"] if isinstance(decisions["decisions"], list) else None
    if given is None or sorted(str(d.get("candidate_id")) for d in given if isinstance(d, dict)) != sorted(by_id):
        raise CaptureError("there must be exactly one decision per candidate", "invalid_review")
    out = [_decide(by_id[d["candidate_id"]], d) for d in sorted(given, key=lambda d: d["candidate_id"])]
    _check_prior(live, decisions, out, prior)
    writes = [d["reviewed_candidate"]["classification"]["destination"] for d in out if "reviewed_candidate" in d]
    private = any(w != "repo" for w in writes) or any(d["outcome"] == "defer" for d in out)
    body = {
        "schema": REVIEW_SCHEMA,
        "plan_id": live["plan_id"],
        "data_class": "private" if private else "repo_safe",
        "reviewed_by": reviewed_by,
        "reviewed_at": reviewed_at,
        "decisions": out,
    }
    if "prior_review_id" in decisions:
        body["prior_review_id"] = decisions["prior_review_id"]
    return {"review_id": "review_" + canonical_hash(body)[:32], **body}


def _check_prior(
    live: PlanJson, decisions: dict[str, Any], out: list[dict[str, Any]], prior: dict[str, Any] | None
) -> None:
    """A prior review may only have its deferred decisions replaced, one hop back (memzoi-spec.md §9.7)."""
    named = decisions.get("prior_review_id")
    if named is None and prior is None:
        return
    if named is None or prior is None or prior.get("review_id") != named:
        raise CaptureError("prior_review_id and --prior-review-file must name the same review", "invalid_prior_review")
    if prior.get("schema") != REVIEW_SCHEMA or prior.get("plan_id") != live["plan_id"]:
        raise CaptureError("the prior review belongs to another plan", "invalid_prior_review")
    if "prior_review_id" in prior:
        raise CaptureError("a prior review may not itself replace a review (one hop only)", "invalid_prior_review")
    before = {d.get("candidate_id"): d for d in prior.get("decisions", []) if isinstance(d, dict)}
    for decision in out:
        old = before.get(decision["candidate_id"])
        if old is None:
            raise CaptureError("the prior review does not cover every candidate", "invalid_prior_review")
        if old.get("outcome") != "defer" and old != decision:
            raise CaptureError("only deferred decisions of a prior review may be replaced", "invalid_prior_review")


def _keys(value: Any, what: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    if not isinstance(value, dict):
        raise CaptureError(f"{what}: expected an object", "invalid_review")
    unknown = sorted(set(value) - set(required) - set(optional))
    missing = [k for k in required if k not in value]
    if unknown or missing:
        raise CaptureError(f"{what}: unknown {unknown} / missing {missing} fields", "invalid_review")


def _decide(candidate: Mapping[str, Any], d: dict[str, Any]) -> dict[str, Any]:
    edit_keys = ("memory", "requested_destination", "content_class")
    _keys(d, "decision", ("candidate_id", "outcome"), ("reason_code", *edit_keys))
    outcome, kind = d["outcome"], candidate["action"]["kind"]
    if outcome not in OUTCOMES:
        raise CaptureError(f"decision outcome must be one of {', '.join(OUTCOMES)}", "invalid_review")
    entry = {"candidate_id": candidate["candidate_id"], "outcome": outcome}
    if "reason_code" in d:
        entry["reason_code"] = str(d["reason_code"])
    if outcome != "edit":
        if any(k in d for k in edit_keys):
            raise CaptureError(f"{outcome} takes no edit fields", "invalid_review")
        if outcome == "accept" and kind not in ("create_proposal", "create_runtime"):
            raise CaptureError(f"a {kind} candidate cannot be accepted; edit, reject or defer it", "invalid_review")
        return entry
    if kind in ("duplicate", "conflict", "blocked"):
        raise CaptureError(f"a {kind} candidate cannot be edited", "invalid_review")
    entry["reviewed_candidate"] = _edited(candidate, d)
    return entry


def _edited(candidate: Mapping[str, Any], d: dict[str, Any]) -> dict[str, Any]:
    """The reviewed candidate of an ``edit``: the draft re-checked by policy and routed."""
    from git_memzoi.memzoi.records.secrets import classify

    memory, destination = d.get("memory"), d.get("requested_destination")
    _keys(memory, "memory", MEMORY_KEYS)
    assert isinstance(memory, dict)
    if not all(isinstance(memory[k], str) and memory[k].strip() for k in ("type", "lane", "title", "body")):
        raise CaptureError("memory: type, lane, title and body are non-empty strings", "invalid_review")
    _keys(memory["scope"], "memory.scope", ("kind", "id", "paths"))
    if destination not in DESTINATIONS:
        raise CaptureError(f"requested_destination must be one of {', '.join(DESTINATIONS)}", "invalid_review")
    content_class = d.get("content_class") or (
        "general_repo_knowledge"
        if destination == "repo"
        else {"local": "local_only_state", "session": "temporary_task_state"}[destination]
    )
    if destination == "repo" and content_class in PRIVATE_CLASSES:
        raise CaptureError(f"content_class {content_class} cannot go to the repo", "invalid_review")
    if classify(json.dumps(memory, ensure_ascii=False)):
        raise CaptureError("the edited memory holds prohibited content", "prohibited_content_detected")
    claim_id = "claim_" + canonical_hash(memory)[:32]
    ident = "candidate_" + canonical_hash({"claim": claim_id, "evidence": candidate["evidence"]})[:32]
    action: dict[str, Any] = (
        {"kind": "create_proposal", "proposal_id": proposal_id(memory["title"], ident)}
        if destination == "repo"
        else {"kind": "create_runtime", "route": f"runtime_{destination}"}
    )
    classification = {
        "destination": destination,
        "destination_reason": "reviewer_edit",
        "sensitivity": "repo-safe" if destination == "repo" else "private",
        "sensitivity_reason": "reviewer_classification",
        "content_class": content_class,
        "policy": {"rechecked": True},
    }
    return {
        "claim_id": claim_id,
        "candidate_id": ident,
        "memory": memory,
        "classification": classification,
        "action": action,
    }


# ------------------------------------------------------------------------------------------------ apply


def apply(
    ws: Workspace,
    supplied_plan: Mapping[str, Any],
    supplied_review: dict[str, Any],
    *,
    plan_id: str,
    review_id: str,
    prior: dict[str, Any] | None = None,
    source_bytes: Mapping[str, bytes] | None = None,
) -> dict[str, Any]:
    """``capture apply``: write the accepted and edited routeable candidates, or nothing.

    ``prior`` and ``source_bytes`` are as for :func:`review` (a review that replaced a prior one is re-validated
    against that prior).

    Under the lifecycle lock the plan and the review are recomputed from the live source and inventory; any
    difference (``stale_capture_plan``, ``artifact_modified``, ``id_mismatch``, ``proposal_id_taken``) is raised
    before the first write. The writes are one ``lifecycle.operation``: all of them, or (after a failure, or a
    kill and the next guarded command) none. The review's terminal decisions are remembered in the same operation
    (:mod:`~git_memzoi.memzoi.capture.decisions`; ``decisions_remembered`` counts them).
    """
    from git_memzoi.memzoi.capture import decisions as decisions_store
    from git_memzoi.memzoi.proposals import lifecycle

    if (
        supplied_plan.get("plan_id") != plan_id
        or supplied_review.get("review_id") != review_id
        or supplied_review.get("plan_id") != plan_id
    ):
        raise CaptureError("--plan-id / --review-id do not name the supplied artifacts", "id_mismatch")
    # one operation: a failure or a kill (then the next guarded command) removes every file it wrote
    with lifecycle.operation(ws.layout, "capture_apply"):
        live = _replan(ws, supplied_plan, source_bytes or {})
        decisions = {
            "schema": REVIEW_INPUT_SCHEMA,
            "plan_id": plan_id,
            "decisions": [_input_of(d) for d in supplied_review.get("decisions", [])],
        }
        if "prior_review_id" in supplied_review:
            decisions["prior_review_id"] = supplied_review["prior_review_id"]
        again = review(
            ws,
            live,
            decisions,
            reviewed_by=str(supplied_review.get("reviewed_by", "")),
            reviewed_at=str(supplied_review.get("reviewed_at", "")),
            prior=prior,
            source_bytes=source_bytes,
        )
        if again != supplied_review:
            raise CaptureError("the review artifact was edited after review", "artifact_modified")
        todo = [(d, _chosen(live, d)) for d in again["decisions"] if d["outcome"] in ("accept", "edit")]
        _check_free(ws, [c for _, c in todo if c["action"]["kind"] == "create_proposal"])
        prepared = [_prepare(ws, live, again, d, c) for d, c in todo]  # every write validated before the first
        writes = _write_all(ws, [c for _, c in todo], prepared)
        remembered = decisions_store.record(ws, live, again)  # the next plan shows a rejection as such
    return {
        "schema": APPLY_SCHEMA,
        "plan_id": plan_id,
        "review_id": review_id,
        "writes": writes,
        "decisions_remembered": remembered,
    }


def _input_of(decision: dict[str, Any]) -> dict[str, Any]:
    out = {"candidate_id": decision.get("candidate_id"), "outcome": decision.get("outcome")}
    if "reason_code" in decision:
        out["reason_code"] = decision["reason_code"]
    edited = decision.get("reviewed_candidate")
    if isinstance(edited, dict):
        out["memory"] = edited.get("memory")
        out["requested_destination"] = edited.get("classification", {}).get("destination")
        out["content_class"] = edited.get("classification", {}).get("content_class")
    return out


def _chosen(live: PlanJson, decision: dict[str, Any]) -> Mapping[str, Any]:
    original = next(c for c in live["candidates"] if c["candidate_id"] == decision["candidate_id"])
    chosen: Mapping[str, Any] = decision.get("reviewed_candidate") or original
    return chosen


def _check_free(ws: Workspace, candidates: list[Mapping[str, Any]]) -> None:
    from git_memzoi.memzoi.proposals import files as proposal_files
    from git_memzoi.memzoi.proposals.packets import identity_token

    taken = proposal_files.inventory(ws.layout).taken()
    for c in candidates:
        if identity_token(c["action"]["proposal_id"]) in taken:
            raise CaptureError("stale capture review: a reserved proposal id is already used", "proposal_id_taken")


def _provenance(
    live: PlanJson, rev: dict[str, Any], decision: dict[str, Any], chosen: Mapping[str, Any]
) -> dict[str, Any]:
    original = next(c for c in live["candidates"] if c["candidate_id"] == decision["candidate_id"])
    out = {
        "schema": PROVENANCE_SCHEMA,
        "plan_id": live["plan_id"],
        "review_id": rev["review_id"],
        "claim_id": original["claim_id"],
        "reviewed_claim_id": chosen["claim_id"],
        "candidate_id": original["candidate_id"],
        "reviewed_candidate_id": chosen["candidate_id"],
        "extraction": original["extraction"],
        "evidence": original["evidence"],
        "confidence": original["confidence"],
        "classification": chosen["classification"],
        "destination": chosen["classification"]["destination"],
        "sensitivity": chosen["classification"]["sensitivity"],
        "review_outcome": decision["outcome"],
        "reviewed_by": rev["reviewed_by"],
        "reviewed_at": rev["reviewed_at"],
        "routed_by": "memzoi-capture",
    }
    if "reason_code" in decision:
        out["review_reason_code"] = decision["reason_code"]
    return out


def bound_paths(
    paths: Sequence[str], evidence: Sequence[Mapping[str, Any]], envelope: Mapping[str, Any] | None
) -> tuple[str, ...]:
    """The ``applies_to`` paths of a captured proposal: the plan's scope paths, with the files the evidence came
    from (a Markdown profile scopes every candidate to its notes file) replaced by the paths the candidate names
    (its envelope's scope) when it names any, so ``precheck --path src/app.py`` finds a captured risk about
    `src/app.py` (a fresh user's walk: it was bound to notes.md alone). Sorted, deduplicated."""
    named = [str(p) for p in (envelope or {}).get("scope", ())]
    if not named:
        return tuple(paths)
    sources = {str(e.get("locator", {}).get("path")) for e in evidence if isinstance(e.get("locator"), Mapping)}
    return tuple(sorted({*(p for p in paths if p not in sources), *named}))


def _prepare(
    ws: Workspace, live: PlanJson, rev: dict[str, Any], decision: dict[str, Any], chosen: Mapping[str, Any]
) -> Any:
    """The packet or runtime draft of one write, validated the way its writer will validate it."""
    from git_memzoi.memzoi.capture.watch import envelope_for
    from git_memzoi.memzoi.proposals import packets
    from git_memzoi.memzoi.records import okf
    from git_memzoi.memzoi.runtime import local

    memory, provenance = chosen["memory"], _provenance(live, rev, decision, chosen)
    scope = memory["scope"]
    if chosen["action"]["kind"] == "create_proposal":
        # the original evidence: an edited candidate keeps it in its provenance only
        envelope = envelope_for(ws.layout.root, {**chosen, "evidence": provenance["evidence"]}, ws.clock.today())
        now = okf.format_timestamp(ws.clock.now())
        proposal_id = chosen["action"]["proposal_id"]
        packet = packets.Packet(
            id=proposal_id,
            file_id=proposal_id,
            type=memory["type"],
            lane=memory["lane"],
            title=memory["title"],
            body=memory["body"],
            action="create",
            proposed_by=ws.actor,
            proposed_at=now,
            timestamp=now,
            reason="memzoi capture",
            scope_kind=scope["kind"],
            scope_id=scope["id"],
            paths=bound_paths(scope["paths"], provenance["evidence"], envelope),
            tags=tuple(memory["tags"]),
            created_by=ws.actor,
            sensitivity="repo-safe",
            content_class=chosen["classification"]["content_class"],
            capture=provenance,
            retention={"occurred_at": now} if memory["lane"] == "episodic" else {},
            origin={"origin_key": f"memzoi-capture:{chosen['candidate_id']}", "route": "capture"},
            memkeep=envelope,
        )
        where = f"capture candidate {chosen['candidate_id']}"
        try:
            packets.check_shape(packets.parse(proposal_id, where, packets.render(packet).encode("utf-8")), where)
        except MemzoiError as exc:
            raise CaptureError(f"{where}: the proposal would not validate ({exc})", "invalid_review") from None
        return packet
    draft = local.Draft(
        chosen["classification"]["destination"],
        memory["type"],
        memory["lane"],
        memory["title"],
        memory["body"],
        "capture",
        scope["kind"],
        scope["id"],
        tuple(scope["paths"]),
        tuple(memory["tags"]),
        chosen["classification"]["content_class"],
        provenance,
    )
    try:
        local.check_draft(ws, draft)
    except MemzoiError as exc:
        raise CaptureError(f"the runtime record would not validate ({exc})", "invalid_review") from None
    return draft


def _write_all(ws: Workspace, chosen: Sequence[Mapping[str, Any]], prepared: Sequence[Any]) -> list[dict[str, Any]]:
    """The writes of every accepted candidate, in order: the packets as one batch (one identity listing, one
    journal save, one event append: :mod:`~git_memzoi.memzoi.proposals.bulk`), then each runtime record."""
    from git_memzoi.memzoi.proposals import bulk, packets
    from git_memzoi.memzoi.records import events

    log: list[events.Event] = []
    batch = [item for item in prepared if isinstance(item, packets.Packet)]
    entries = iter(bulk.write_pending(ws, batch, log))
    events.append_many(ws.layout, log, ws.clock.now())
    writes = []
    for c, item in zip(chosen, prepared, strict=True):
        if isinstance(item, packets.Packet):
            entry = next(entries)
            writes.append(
                {
                    "kind": "proposal_file",
                    "candidate_id": c["candidate_id"],
                    "proposal_id": entry.pre.file_id,
                    "path": entry.rel,
                }
            )
        else:
            writes.append(_write(ws, c, item))
    return writes


def _write(ws: Workspace, chosen: Mapping[str, Any], item: Any) -> dict[str, Any]:
    from git_memzoi.memzoi.runtime import local

    written = local.write_draft(ws, item, "capture_runtime_written")
    return {
        "kind": "runtime_record",
        "candidate_id": chosen["candidate_id"],
        "record_id": written.record["id"],
        "destination": item.destination,
    }


def _git_user(ws: Workspace) -> str:
    """The repository's ``git config user.name``, the reviewer ``capture review`` defaults to."""
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    name = Pygit2RepoView(ws.layout.root).config_value("user.name")
    if not name or not name.strip():
        raise CaptureError("name the reviewer: --reviewed-by NAME (git config user.name is not set)", "invalid_review")
    return name.strip()
