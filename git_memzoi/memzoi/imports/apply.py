"""``git memzoi import apply`` (io): the guarded write path of a classified import (seed "Classified import",
"Plan and apply semantics"; split from :mod:`~git_memzoi.memzoi.imports.plan` for size).

Under the lifecycle lock the plan is recomputed from the manifest and the live inventory; a different plan id
(``stale_import_plan``) or a blocked plan (``blocked_import_plan``) is refused before the first write. Every
routed candidate is built and validated first; then repo candidates become ``status: proposed`` packets under
``.memzoi/proposals/pending/`` (never canonical records) and local/session candidates private runtime records
in one journaled operation. When a later write fails, every file this attempt created is removed.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from git_memzoi.errors import MemzoiError
from git_memzoi.memzoi.imports import plan as importer
from git_memzoi.memzoi.workspace import Workspace
from git_memzoi.memzoi.imports.plan import ImportManifestError


def prepare(ws: Workspace, live: dict[str, Any], actor: str) -> list[tuple[int, Any]]:
    """``(index, packet or runtime draft)`` of every ``create_proposal`` / ``create_runtime`` candidate of a
    ready plan, each validated the way its writer validates it (nothing is written).

    Raises:
        ImportManifestError: a candidate would not validate (``invalid_import_manifest``, naming the field).
    """
    from git_memzoi.memzoi.records import okf
    from git_memzoi.memzoi.proposals import packets
    from git_memzoi.memzoi.runtime import local

    now = okf.format_timestamp(ws.clock.now())
    out: list[tuple[int, Any]] = []
    for c in live["candidates"]:
        kind, scope, where = c["action"]["kind"], c["scope"], f"candidates[{c['index']}]"
        try:
            if kind == "create_proposal":
                proposal_id = c["action"]["proposal_id"]
                packet = packets.Packet(
                    id=proposal_id, file_id=proposal_id, type=c["type"], lane=c["lane"], title=c["title"],
                    body=c["body"], action="create", proposed_by=actor, proposed_at=now, timestamp=now,
                    reason=c["classification"]["reason"], scope_kind=scope["kind"], scope_id=scope["id"],
                    paths=tuple(scope["paths"]), tags=tuple(c["tags"]), created_by=actor,
                    sources=tuple(packets.Source(**s) for s in live["sources"]), sensitivity="repo-safe",
                    content_class="general_repo_knowledge",
                    retention={"session": {"started_at": now}, "episodic": {"occurred_at": now}}.get(c["lane"], {}),
                    origin={"origin_key": f"memzoi-import:{live['plan_id']}:{c['index']}", "route": "import"},
                )  # fmt: skip
                rendered = packets.render(packet).encode("utf-8")
                packets.check_shape(packets.parse(proposal_id, where, rendered), where)
                out.append((c["index"], packet))
            elif kind == "create_runtime":
                draft = local.Draft(c["classification"]["destination"], c["type"], c["lane"], c["title"],
                                      c["body"], "import", scope["kind"], scope["id"], tuple(scope["paths"]),
                                      tuple(c["tags"]))  # fmt: skip
                local.check_draft(ws, draft)
                out.append((c["index"], draft))
        except MemzoiError as exc:
            field = getattr(exc, "field", None)
            what = "proposal packet" if kind == "create_proposal" else "runtime record"
            raise ImportManifestError(f"{where}: would not validate as a {what}"
                                      + (f" (field {field})" if isinstance(field, str) else "")) from None  # fmt: skip
    return out


def apply(ws: Workspace, raw: Any, *, plan_id: str, actor: str = "cli") -> dict[str, Any]:
    """``import apply``: write the plan of ``raw`` when its recomputed id is ``plan_id``, else nothing.

    Args:
        raw: the parsed manifest document (:func:`~git_memzoi.memzoi.imports.plan.read_manifest`).
        plan_id: the ``import_…`` id the reviewer saw. actor: as planned (part of the fingerprint).

    Returns:
        The recomputed plan plus ``mode: "apply"``, ``actor``, ``expected_plan_id`` and ``writes``:
        ``{kind: proposal_file, index, proposal_id, path}`` / ``{kind: runtime_record, index, record_id,
        destination}`` in candidate order.

    Raises:
        ImportManifestError: an invalid manifest or actor; ``stale_import_plan`` (wrong or stale id);
            ``blocked_import_plan`` (prohibited content). Nothing is written in any of these cases.
        MemzoiError: a write failed (files created by this attempt are removed first).
    """
    from git_memzoi.core.atomic import lifecycle_lock

    who = importer.check_actor(actor)
    importer.parse_manifest(raw)  # a bad manifest fails before the lock
    with lifecycle_lock(ws.layout.lock):  # re-entrant: the writers below take it again in this thread
        live = importer.plan(ws, raw, actor=who)
        if live["plan_id"] != plan_id.strip():
            raise ImportManifestError("stale import plan: the manifest, the actor or the memory inventory changed "
                                      "since --plan-id was planned; plan again", "stale_import_plan")  # fmt: skip
        if live["status"] == "blocked":
            raise ImportManifestError("a blocked import plan cannot be applied; remove the prohibited content and "
                                      "plan again", "blocked_import_plan")  # fmt: skip
        writes = _write(ws, live, prepare(ws, live, who))
    return {**live, "mode": "apply", "actor": who, "expected_plan_id": plan_id, "writes": writes}


def _write(ws: Workspace, live: dict[str, Any], items: list[tuple[int, Any]]) -> list[dict[str, Any]]:
    """Install the packets, then the runtime records as one journaled step list; on failure remove them all."""
    from git_memzoi.memzoi.records import events
    from git_memzoi.memzoi.proposals import lifecycle
    from git_memzoi.memzoi.proposals import packets
    from git_memzoi.memzoi.proposals import files as proposal_files
    from git_memzoi.memzoi.runtime import local

    created: list[Path] = []
    writes: list[dict[str, Any]] = []
    try:
        for index, packet in ((i, p) for i, p in items if isinstance(p, packets.Packet)):
            file_id, path = proposal_files.write_pending_packet(ws, packet)
            created.append(path)
            if file_id != packet.id:  # cannot happen under the lock: the plan reserved it against this inventory
                raise ImportManifestError("stale import plan: a reserved proposal id is taken", "stale_import_plan")
            writes.append({"kind": "proposal_file", "index": index, "proposal_id": file_id,
                           "path": path.relative_to(ws.layout.root).as_posix()})  # fmt: skip
        drafts = [(i, d) for i, d in items if isinstance(d, local.Draft)]
        if drafts:
            with lifecycle.guarded(ws.layout):
                taken: set[str] = set()
                steps = []
                for index, draft in drafts:
                    path, data, written = local.reserve(ws, draft, taken)
                    steps.append(lifecycle.Step(path, data))
                    writes.append({"kind": "runtime_record", "index": index, "record_id": written.record["id"],
                                   "destination": draft.destination})  # fmt: skip
                lifecycle.run_steps(ws.layout, "import_apply", steps)  # a failure restores every runtime file
                created += [step.path for step in steps]
        now = ws.clock.now()
        for w in writes:
            if w["kind"] == "runtime_record":
                events.append(ws.layout, "import_runtime_written", ws.actor, now,
                              {"destination": w["destination"], "route": "import"}, record_id=w["record_id"])  # fmt: skip
        events.append(ws.layout, "import_applied", ws.actor, now, {
            "plan_id": live["plan_id"], "candidates": len(live["candidates"]),
            "proposal_ids": [w["proposal_id"] for w in writes if w["kind"] == "proposal_file"],
            "record_ids": [w["record_id"] for w in writes if w["kind"] == "runtime_record"]})  # fmt: skip
    except BaseException:
        for path in reversed(created):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        raise
    return sorted(writes, key=lambda w: w["index"])
