"""``git memzoi capture plan|review|apply`` (io) for the markdown-deterministic profile (memzoi-spec.md §9).

plan and review never write memory state: they read the source and the memory inventory and return JSON
artifacts whose ids (``capture_…``, ``review_…``) are hashes of their content. apply takes the lifecycle lock,
recomputes the plan and the review from the live source and inventory, and writes nothing unless both match the
supplied artifacts and ids exactly; then repo candidates become pending proposal packets and local/session ones
runtime records.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from git_memzoi.core.hashing import content_hash
from git_memzoi.errors import MemzoiError
from git_memzoi.memzoi import capture_markdown as md
from git_memzoi.memzoi.api import Context
from git_memzoi.memzoi.capture_markdown import CaptureError, canonical_hash

PLAN_SCHEMA = "memzoi/capture-plan-v1"
REQUEST_SCHEMA = "memzoi/capture-request-v1"
REVIEW_INPUT_SCHEMA = "memzoi/capture-review-input-v1"
REVIEW_SCHEMA = "memzoi/capture-review-v1"
APPLY_SCHEMA = "memzoi/capture-apply-result-v1"
PROVENANCE_SCHEMA = "memzoi/capture-provenance-v1"
MAX_ARTIFACT_BYTES = 2 * 1024 * 1024
OUTCOMES = ("accept", "reject", "edit", "defer")
DESTINATIONS = ("repo", "local", "session")
MEMORY_KEYS = ("type", "lane", "title", "body", "scope", "tags")
# content classes that must never go to the repo (vocab.CONTENT_CLASSES minus the repo-safe ones)
PRIVATE_CLASSES = frozenset({"raw_transcript", "private_personal_data", "screen_or_activity_history",
                             "private_endpoint", "undisclosed_vulnerability", "unminimized_private_evidence",
                             "temporary_task_state", "local_only_state"})  # fmt: skip


# ------------------------------------------------------------------------------------------------ plan


def plan(ctx: Context, source: str, source_id: str = "source-1") -> dict[str, Any]:
    """``capture plan --source``: the plan JSON for one project-relative Markdown file (reads only).

    Raises:
        CaptureError: a rejected path or source (``unsafe_source_path``, ``unsupported_media_type``,
            ``source_not_found``, ``source_too_large``, ``invalid_encoding``, ``capture_limit_exceeded``, …).
    """
    md.check_source_id(source_id)
    data = read_source(ctx.layout.root, md.check_source_path(source))
    locator = {"kind": "project_path", "path": source}
    request = {"schema": REQUEST_SCHEMA, "sources": [{"source_id": source_id, "locator": locator,
               "media_type": "text/markdown"}], "extractor": {"profile": md.PROFILE}}  # fmt: skip
    extraction = md.extract(source_id, source, data)
    extractor = {**md.EXTRACTOR, "configuration_hash": "blake3:" + canonical_hash({"prefixes": md.PREFIXES})}
    snapshot = {"source_id": source_id, "locator": locator, "media_type": "text/markdown",
                "byte_length": len(data), "source_content_hash": content_hash(data)}  # fmt: skip
    return _assemble(ctx, request, snapshot, extraction, extractor)


def _assemble(ctx: Context, request: dict[str, Any], snapshot: dict[str, Any], extraction: md.Extraction,
              extractor: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """The plan of one extracted source: classified against the inventory, or the redacted blocked plan."""
    profile = request["extractor"]["profile"]
    if extraction.blocked:
        body: dict[str, Any] = {"schema": PLAN_SCHEMA, "status": "blocked", "data_class": "blocked",
                                "request": {"schema": REQUEST_SCHEMA, "extractor": {"profile": profile}},
                                "extractor": extractor, "candidates": [], "summary": _summary([], 1, blocked=True),
                                "diagnostics": extraction.diagnostics}  # fmt: skip
        return {"plan_id": "capture_" + canonical_hash(body)[:32], **body}
    inventory = _inventory(ctx)
    candidates = [_classify(c, inventory, extraction.candidates[:i]) for i, c in enumerate(extraction.candidates)]
    preconditions = {"source_content_hash": snapshot["source_content_hash"],
                     "inventory_hash": "blake3:" + canonical_hash(inventory)}  # fmt: skip
    private = any(c["classification"]["destination"] != "repo" for c in candidates)
    body = {"schema": PLAN_SCHEMA, "status": "ready", "data_class": "private" if private else "repo_safe",
            "request": request, "sources": [snapshot], "safeguards": {"prohibited_content": "clear"},
            "preconditions": preconditions, "extractor": extractor, "candidates": candidates,
            "summary": _summary(candidates, 1), "diagnostics": extraction.diagnostics}  # fmt: skip
    return {"plan_id": "capture_" + canonical_hash(body)[:32], **body}


def plan_request(ctx: Context, request: Any) -> dict[str, Any]:
    """``capture plan --request-file``: the plan of a strict ``memzoi/capture-request-v1`` request (reads only).

    One source; ``markdown-deterministic`` takes a ``project_path`` (the same plan as ``--source``),
    ``git-change-deterministic`` a ``git_range`` of pinned full commit ids. Unknown keys are rejected
    (``invalid_capture_request``); other profiles and locator kinds are ``unsupported_capture_profile``.
    """
    from git_memzoi.memzoi import capture_gitchange as gc

    def strict(value: Any, what: str, keys: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(value, dict) or sorted(value) != sorted(keys):
            raise CaptureError(f"{what}: exactly the keys {', '.join(keys)}", "invalid_capture_request")
        return value

    strict(request, "request", ("schema", "sources", "extractor"))
    if request["schema"] != REQUEST_SCHEMA:
        raise CaptureError(f"request.schema must be {REQUEST_SCHEMA}", "invalid_capture_request")
    profile = strict(request["extractor"], "request.extractor", ("profile",))["profile"]
    if not isinstance(request["sources"], list) or len(request["sources"]) != 1:
        raise CaptureError("request.sources holds exactly one source", "invalid_capture_request")
    source = strict(request["sources"][0], "request.sources[0]", ("source_id", "locator", "media_type"))
    if not isinstance(source["source_id"], str):
        raise CaptureError("source_id must be a string", "invalid_source_id")
    md.check_source_id(source["source_id"])
    locator = source["locator"]
    kind = locator.get("kind") if isinstance(locator, dict) else None
    if profile == md.PROFILE and kind == "project_path":
        strict(locator, "locator", ("kind", "path"))
        if source["media_type"] != "text/markdown" or not isinstance(locator["path"], str):
            raise CaptureError("the markdown profile reads one text/markdown project_path", "unsupported_media_type")
        return plan(ctx, locator["path"], source["source_id"])
    if profile == gc.PROFILE and kind == "git_range":
        if source["media_type"] != "text/x-diff":
            raise CaptureError("a git_range source is text/x-diff", "unsupported_media_type")
        data, files, view = gc.load_range(ctx.layout.root, locator)
        extraction = gc.extract(source["source_id"], locator, data, files, view)
        extractor = {**gc.EXTRACTOR, "configuration_hash": "blake3:" + canonical_hash(
            {"prefixes": md.PREFIXES, "durable": sorted(gc.DURABLE), "max_files": gc.MAX_FILES,
             "max_hunks": gc.MAX_HUNKS, "context_lines": 3})}  # fmt: skip
        snapshot = {"source_id": source["source_id"], "locator": locator, "media_type": "text/x-diff",
                    "byte_length": len(data), "source_content_hash": content_hash(data)}  # fmt: skip
        return _assemble(ctx, request, snapshot, extraction, extractor)
    raise CaptureError(f"profile {profile!r} with a {kind!r} source is not supported", "unsupported_capture_profile")


def read_source(root: Path, rel: str) -> bytes:
    """The bytes of the project file ``rel``, refusing symlinks (any component), hard links, non-regular files
    and files over 1 MiB (codes ``unsafe_source_path``, ``source_not_found``, ``source_too_large``)."""
    import stat

    current = root
    for part in rel.split("/"):
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            raise CaptureError(f"{rel}: no such file", "source_not_found") from None
        if stat.S_ISLNK(info.st_mode):
            raise CaptureError(f"{rel}: capture never follows symbolic links", "unsafe_source_path")
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        raise CaptureError(f"{rel}: the source must be a regular file without hard links", "unsafe_source_path")
    if info.st_size > md.MAX_SOURCE_BYTES:
        raise CaptureError(f"{rel}: the source is larger than {md.MAX_SOURCE_BYTES} bytes", "source_too_large")
    fd = os.open(current, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(md.MAX_SOURCE_BYTES + 1)
    if len(data) > md.MAX_SOURCE_BYTES:
        raise CaptureError(f"{rel}: the source is larger than {md.MAX_SOURCE_BYTES} bytes", "source_too_large")
    return data


def _summary(candidates: list[dict[str, Any]], sources: int, *, blocked: bool = False) -> dict[str, int]:
    kinds = [c["action"]["kind"] for c in candidates]
    return {"sources": sources, "candidates": len(candidates), "create_proposals": kinds.count("create_proposal"),
            "runtime_writes": kinds.count("create_runtime"), "duplicates": kinds.count("duplicate"),
            "conflicts": kinds.count("conflict"), "needs_review": kinds.count("no_write"),
            "blocked": 1 if blocked else kinds.count("blocked")}  # fmt: skip


def memory_hash(memory_type: str, title: str, body: str) -> str:
    """The content identity used for duplicate matching: BLAKE3 of type, title and trimmed body."""
    return content_hash(f"{memory_type}\0{title.strip()}\0{body.strip()}".encode())


def _inventory(ctx: Context) -> list[dict[str, Any]]:
    """Active canonical records, pending packets and active runtime records, as match stubs (read-only)."""
    from git_memzoi.memzoi import index_db, proposal_files, record_store

    layout = ctx.layout
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
            rel = file.relative_to(layout.root).as_posix()
            try:
                r = index_db.parse_record(file.stem, rel, file.read_bytes())
            except (OSError, MemzoiError):  # an unreadable runtime file is no inventory item, never fatal
                continue
            if r.status == "active":
                items.append(_stub("runtime_record", r.id, destination, r, r.status, r.updated_at))
    return items


def _stub(kind: str, ident: str, destination: str, item: Any, status: str, updated: str) -> dict[str, Any]:
    return {"kind": kind, "id": ident, "destination": destination, "status": status, "updated_at": updated,
            "content_hash": memory_hash(item.type, item.title, item.body), "title": item.title.strip()}  # fmt: skip


def _classify(c: dict[str, Any], inventory: list[dict[str, Any]], earlier: list[dict[str, Any]]) -> dict[str, Any]:
    """Routing per the f0f8412 corpus: typed markdown → needs_review until a reviewer edits it to a destination;
    exact matches → duplicate; same title, different body → conflict."""
    memory = c["memory"]
    own = memory_hash(memory["type"], memory["title"], memory["body"])
    pool = inventory + [{"kind": "earlier_candidate", "id": e["candidate_id"], "destination": "needs_review",
                         "status": "planned", "updated_at": None, "title": e["memory"]["title"].strip(),
                         "content_hash": memory_hash(e["memory"]["type"], e["memory"]["title"],
                                                     e["memory"]["body"])} for e in earlier]  # fmt: skip
    title = memory["title"].strip().casefold()
    dupes = [_match(m) for m in pool if m["content_hash"] == own]
    conflicts = [_match(m) for m in pool if m["title"].casefold() == title and m["content_hash"] != own]
    if dupes:
        action: dict[str, Any] = {"kind": "duplicate", "matches": dupes, "match_count": len(dupes)}
    elif conflicts:
        action = {"kind": "conflict", "matches": conflicts, "match_count": len(conflicts)}
    else:
        action = {"kind": "no_write", "reason_code": "needs_review"}
    routed = c["routed_destination"]
    classification = {"destination": "needs_review", "destination_reason": "explicit_classification_required",
                      "sensitivity": "unknown", "sensitivity_reason": "unclassified_capture",
                      "content_class": None, "policy": {"suggested_destination": routed}}  # fmt: skip
    out = {k: v for k, v in c.items() if k != "routed_destination"}
    return {**out, "classification": classification, "action": action}


def _match(m: dict[str, Any]) -> dict[str, Any]:
    return {k: m[k] for k in ("kind", "id", "destination", "content_hash", "status", "updated_at")}


# ------------------------------------------------------------------------------------------------ artifacts


def _small_file(path: Path, what: str, code: str) -> bytes:
    """The bytes of a regular, non-symlink file of at most 2 MiB; else CaptureError ``code``."""
    import stat

    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise CaptureError(f"{path.name}: no such {what}", code) from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ARTIFACT_BYTES:
        raise CaptureError(f"{path.name}: {_with_article(what)} is a regular file of at most 2 MiB", code)
    return path.read_bytes()


def _with_article(what: str) -> str:
    """``an artifact`` / ``a request file``: the noun with its article."""
    return ("an " if what[0] in "aeiou" else "a ") + what


def read_artifact(path: Path, schema: str | None = None) -> dict[str, Any]:
    """A JSON artifact: a regular, non-symlink UTF-8 file ≤ 2 MiB holding one object (``invalid_artifact``)."""
    data = _small_file(path, "artifact", "invalid_artifact")
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise CaptureError(f"{path.name}: not UTF-8 JSON", "invalid_artifact") from None
    if not isinstance(value, dict) or (schema is not None and value.get("schema") != schema):
        raise CaptureError(f"{path.name}: expected a {schema} object", "invalid_artifact")
    return value


def read_request(path: Path) -> dict[str, Any]:
    """A capture request file: JSON, or YAML for ``.yaml``/``.yml`` (same file rules as artifacts; code
    ``invalid_capture_request`` for text that does not parse to one object)."""
    if path.suffix.lower() not in (".yaml", ".yml"):
        try:
            return read_artifact(path)
        except CaptureError as exc:
            raise CaptureError(str(exc), "invalid_capture_request") from None
    from git_memzoi.core import yamlio

    data = _small_file(path, "request file", "invalid_capture_request")
    try:
        fields, _ = yamlio.load_mapping(data.decode("utf-8"))
    except (UnicodeDecodeError, MemzoiError, ValueError):
        raise CaptureError(f"{path.name}: not a UTF-8 YAML mapping", "invalid_capture_request") from None
    return dict(yamlio.plain(fields))


def save_artifact(ctx: Context, path: Path, artifact: dict[str, Any]) -> Path:
    """Install ``artifact`` at ``path`` without replacing anything, where its data class allows.

    blocked → refused (stdout only); private → only under ``.memzoi/local/``; repo_safe → anywhere in or out of
    the project except under ``.memzoi/``. Codes ``unsafe_output_path``, ``output_exists``.
    """
    data_class = artifact.get("data_class")
    target = path.parent.resolve() / path.name
    memzoi = ctx.layout.base.resolve()
    local = ctx.layout.local.resolve()
    if data_class == "blocked":
        raise CaptureError("a blocked plan may only be printed to stdout", "unsafe_output_path")
    if data_class == "private" and not target.is_relative_to(local):
        raise CaptureError("a private artifact may only be saved under .memzoi/local/", "unsafe_output_path")
    if data_class != "private" and target.is_relative_to(memzoi):
        raise CaptureError("a repo-safe artifact is never saved under .memzoi/", "unsafe_output_path")
    if os.path.lexists(target):
        raise CaptureError(f"{path.name}: the output exists; capture never replaces a file", "output_exists")
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.parent / f".{target.name}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if data_class == "private" else 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(dump(artifact).encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temp, target)
        except FileExistsError:
            raise CaptureError(f"{path.name}: the output exists; capture never replaces a file",
                               "output_exists") from None  # fmt: skip
    finally:
        temp.unlink(missing_ok=True)
    return target


def dump(artifact: dict[str, Any]) -> str:
    """The artifact's file text: sorted-key, indented JSON and a final newline."""
    return json.dumps(artifact, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _replan(ctx: Context, supplied: dict[str, Any]) -> dict[str, Any]:
    """The live plan for a supplied plan's request; ``stale_capture_plan`` / ``artifact_modified`` on drift."""
    if supplied.get("schema") != PLAN_SCHEMA or supplied.get("status") == "blocked":
        code = "blocked_plan" if supplied.get("status") == "blocked" else "invalid_artifact"
        raise CaptureError("only a ready capture plan can be reviewed or applied", code)
    try:
        live = plan_request(ctx, supplied["request"])
    except (KeyError, TypeError, AttributeError):
        raise CaptureError("the plan's request is not a supported capture request", "invalid_artifact") from None
    if live["plan_id"] != supplied.get("plan_id"):
        raise CaptureError("stale capture plan: the source or memory inventory changed; plan again",
                           "stale_capture_plan")  # fmt: skip
    if live != supplied:
        raise CaptureError("the plan artifact was edited after planning", "artifact_modified")
    return live


# ------------------------------------------------------------------------------------------------ review


def review(ctx: Context, supplied_plan: dict[str, Any], decisions: dict[str, Any], *, reviewed_by: str,
           reviewed_at: str) -> dict[str, Any]:  # fmt: skip
    """``capture review``: the review JSON for one decision per candidate (reads only; re-validates the plan).

    Raises:
        CaptureError: stale or edited plan, invalid decisions (``invalid_review``), prohibited content in an
            edit (``prohibited_content_detected``).
    """
    from git_memzoi.memzoi.okf import parse_timestamp

    live = _replan(ctx, supplied_plan)
    if not reviewed_by.strip():
        raise CaptureError("--reviewed-by must not be empty", "invalid_review")
    if parse_timestamp(reviewed_at) is None or "T" not in reviewed_at.upper():
        raise CaptureError("--reviewed-at must be an RFC 3339 time", "invalid_review")
    _keys(decisions, "decisions file", ("schema", "plan_id", "decisions"), ("prior_review_id",))
    if decisions["schema"] != REVIEW_INPUT_SCHEMA or decisions["plan_id"] != live["plan_id"]:
        raise CaptureError("the decisions name another schema or plan", "invalid_review")
    if "prior_review_id" in decisions:
        raise CaptureError("prior reviews are not supported yet", "invalid_review")
    by_id = {c["candidate_id"]: c for c in live["candidates"]}
    given = decisions["decisions"] if isinstance(decisions["decisions"], list) else None
    if given is None or sorted(str(d.get("candidate_id")) for d in given if isinstance(d, dict)) != sorted(by_id):
        raise CaptureError("there must be exactly one decision per candidate", "invalid_review")
    out = [_decide(by_id[d["candidate_id"]], d) for d in sorted(given, key=lambda d: d["candidate_id"])]
    writes = [d["reviewed_candidate"]["classification"]["destination"] for d in out if "reviewed_candidate" in d]
    private = any(w != "repo" for w in writes) or any(d["outcome"] == "defer" for d in out)
    body = {"schema": REVIEW_SCHEMA, "plan_id": live["plan_id"], "data_class": "private" if private else "repo_safe",
            "reviewed_by": reviewed_by, "reviewed_at": reviewed_at, "decisions": out}  # fmt: skip
    return {"review_id": "review_" + canonical_hash(body)[:32], **body}


def _keys(value: Any, what: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    if not isinstance(value, dict):
        raise CaptureError(f"{what}: expected an object", "invalid_review")
    unknown = sorted(set(value) - set(required) - set(optional))
    missing = [k for k in required if k not in value]
    if unknown or missing:
        raise CaptureError(f"{what}: unknown {unknown} / missing {missing} fields", "invalid_review")


def _decide(candidate: dict[str, Any], d: dict[str, Any]) -> dict[str, Any]:
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


def _edited(candidate: dict[str, Any], d: dict[str, Any]) -> dict[str, Any]:
    """The reviewed candidate of an ``edit``: the draft re-checked by policy and routed."""
    from git_memzoi.memzoi.secrets import classify

    memory, destination = d.get("memory"), d.get("requested_destination")
    _keys(memory, "memory", MEMORY_KEYS)
    assert isinstance(memory, dict)
    if not all(isinstance(memory[k], str) and memory[k].strip() for k in ("type", "lane", "title", "body")):
        raise CaptureError("memory: type, lane, title and body are non-empty strings", "invalid_review")
    _keys(memory["scope"], "memory.scope", ("kind", "id", "paths"))
    if destination not in DESTINATIONS:
        raise CaptureError(f"requested_destination must be one of {', '.join(DESTINATIONS)}", "invalid_review")
    content_class = d.get("content_class") or ("general_repo_knowledge" if destination == "repo" else
                                               {"local": "local_only_state", "session": "temporary_task_state"}
                                               [destination])  # fmt: skip
    if destination == "repo" and content_class in PRIVATE_CLASSES:
        raise CaptureError(f"content_class {content_class} cannot go to the repo", "invalid_review")
    if classify(json.dumps(memory, ensure_ascii=False)):
        raise CaptureError("the edited memory holds prohibited content", "prohibited_content_detected")
    claim_id = "claim_" + canonical_hash(memory)[:32]
    ident = "candidate_" + canonical_hash({"claim": claim_id, "evidence": candidate["evidence"]})[:32]
    action: dict[str, Any] = ({"kind": "create_proposal", "proposal_id": _proposal_id(memory["title"], ident)}
                              if destination == "repo" else
                              {"kind": "create_runtime", "route": f"runtime_{destination}"})  # fmt: skip
    classification = {"destination": destination, "destination_reason": "reviewer_edit",
                      "sensitivity": "repo-safe" if destination == "repo" else "private",
                      "sensitivity_reason": "reviewer_classification", "content_class": content_class,
                      "policy": {"rechecked": True}}  # fmt: skip
    return {"claim_id": claim_id, "candidate_id": ident, "memory": memory, "classification": classification,
            "action": action}


def _proposal_id(title: str, ident: str) -> str:
    from git_memzoi.memzoi.okf import concept_slug

    slug = concept_slug(title)[:60].strip("-") or "capture"
    return f"capture-{slug}-{ident.split('_', 1)[1][:8]}"


# ------------------------------------------------------------------------------------------------ apply


def apply(ctx: Context, supplied_plan: dict[str, Any], supplied_review: dict[str, Any], *, plan_id: str,
          review_id: str) -> dict[str, Any]:  # fmt: skip
    """``capture apply``: write the accepted and edited routeable candidates, or nothing.

    Under the lifecycle lock the plan and the review are recomputed from the live source and inventory; any
    difference (``stale_capture_plan``, ``artifact_modified``, ``id_mismatch``, ``proposal_id_taken``) is raised
    before the first write.
    """
    from git_memzoi.core.atomic import lifecycle_lock

    if supplied_plan.get("plan_id") != plan_id or supplied_review.get("review_id") != review_id or \
            supplied_review.get("plan_id") != plan_id:  # fmt: skip
        raise CaptureError("--plan-id / --review-id do not name the supplied artifacts", "id_mismatch")
    with lifecycle_lock(ctx.layout.lock):  # re-entrant: the writers below take it again in this thread
        live = _replan(ctx, supplied_plan)
        decisions = {"schema": REVIEW_INPUT_SCHEMA, "plan_id": plan_id, "decisions": [
            {k: v for k, v in _input_of(d).items()} for d in supplied_review.get("decisions", [])]}  # fmt: skip
        again = review(ctx, live, decisions, reviewed_by=str(supplied_review.get("reviewed_by", "")),
                       reviewed_at=str(supplied_review.get("reviewed_at", "")))  # fmt: skip
        if again != supplied_review:
            raise CaptureError("the review artifact was edited after review", "artifact_modified")
        todo = [(d, _chosen(live, d)) for d in again["decisions"] if d["outcome"] in ("accept", "edit")]
        _check_free(ctx, [c for _, c in todo if c["action"]["kind"] == "create_proposal"])
        prepared = [_prepare(ctx, live, again, d, c) for d, c in todo]  # every write validated before the first
        writes = [_write(ctx, c, item) for (_, c), item in zip(todo, prepared, strict=True)]
    return {"schema": APPLY_SCHEMA, "plan_id": plan_id, "review_id": review_id, "writes": writes}


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


def _chosen(live: dict[str, Any], decision: dict[str, Any]) -> dict[str, Any]:
    original = next(c for c in live["candidates"] if c["candidate_id"] == decision["candidate_id"])
    return decision.get("reviewed_candidate") or original


def _check_free(ctx: Context, candidates: list[dict[str, Any]]) -> None:
    from git_memzoi.memzoi import proposal_files
    from git_memzoi.memzoi.packets import identity_token

    taken = proposal_files.inventory(ctx.layout).taken()
    for c in candidates:
        if identity_token(c["action"]["proposal_id"]) in taken:
            raise CaptureError("stale capture review: a reserved proposal id is already used", "proposal_id_taken")


def _provenance(live: dict[str, Any], rev: dict[str, Any], decision: dict[str, Any],
                chosen: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    original = next(c for c in live["candidates"] if c["candidate_id"] == decision["candidate_id"])
    out = {"schema": PROVENANCE_SCHEMA, "plan_id": live["plan_id"], "review_id": rev["review_id"],
           "claim_id": original["claim_id"], "reviewed_claim_id": chosen["claim_id"],
           "candidate_id": original["candidate_id"], "reviewed_candidate_id": chosen["candidate_id"],
           "extraction": original["extraction"], "evidence": original["evidence"],
           "confidence": original["confidence"], "classification": chosen["classification"],
           "destination": chosen["classification"]["destination"],
           "sensitivity": chosen["classification"]["sensitivity"], "review_outcome": decision["outcome"],
           "reviewed_by": rev["reviewed_by"], "reviewed_at": rev["reviewed_at"], "routed_by": "memzoi-capture"}  # fmt: skip
    if "reason_code" in decision:
        out["review_reason_code"] = decision["reason_code"]
    return out


def _prepare(ctx: Context, live: dict[str, Any], rev: dict[str, Any], decision: dict[str, Any],
             chosen: dict[str, Any]) -> Any:  # fmt: skip
    """The packet or runtime draft of one write, validated the way its writer will validate it."""
    from git_memzoi.memzoi import okf, packets, runtime

    memory, provenance = chosen["memory"], _provenance(live, rev, decision, chosen)
    scope = memory["scope"]
    if chosen["action"]["kind"] == "create_proposal":
        now = okf.format_timestamp(ctx.clock.now())
        proposal_id = chosen["action"]["proposal_id"]
        packet = packets.Packet(
            id=proposal_id, file_id=proposal_id, type=memory["type"], lane=memory["lane"], title=memory["title"],
            body=memory["body"], action="create", proposed_by=ctx.actor, proposed_at=now, timestamp=now,
            reason="memzoi capture", scope_kind=scope["kind"], scope_id=scope["id"], paths=tuple(scope["paths"]),
            tags=tuple(memory["tags"]), created_by=ctx.actor, sensitivity="repo-safe",
            content_class=chosen["classification"]["content_class"], capture=provenance,
            retention={"occurred_at": now} if memory["lane"] == "episodic" else {},
            origin={"origin_key": f"memzoi-capture:{chosen['candidate_id']}", "route": "capture"},
        )  # fmt: skip
        where = f"capture candidate {chosen['candidate_id']}"
        try:
            packets.check_shape(packets.parse(proposal_id, where, packets.render(packet).encode("utf-8")), where)
        except MemzoiError as exc:
            raise CaptureError(f"{where}: the proposal would not validate ({exc})", "invalid_review") from None
        return packet
    draft = runtime.Draft(chosen["classification"]["destination"], memory["type"], memory["lane"], memory["title"],
                          memory["body"], "capture", scope["kind"], scope["id"], tuple(scope["paths"]),
                          tuple(memory["tags"]), chosen["classification"]["content_class"])  # fmt: skip
    try:
        runtime.check_draft(ctx, draft)
    except MemzoiError as exc:
        raise CaptureError(f"the runtime record would not validate ({exc})", "invalid_review") from None
    return draft


def _write(ctx: Context, chosen: dict[str, Any], item: Any) -> dict[str, Any]:
    from git_memzoi.memzoi import packets, proposal_files, runtime

    if isinstance(item, packets.Packet):
        file_id, path = proposal_files.write_pending_packet(ctx, item)
        return {"kind": "proposal_file", "candidate_id": chosen["candidate_id"], "proposal_id": file_id,
                "path": path.relative_to(ctx.layout.root).as_posix()}  # fmt: skip
    written = runtime.write_draft(ctx, item, "capture_runtime_written")
    return {"kind": "runtime_record", "candidate_id": chosen["candidate_id"], "record_id": written.record["id"],
            "destination": item.destination}
