"""``git memzoi import apply`` (io): the guarded write path of a classified import (seed "Classified import",
"Plan and apply semantics"; split from :mod:`~git_memzoi.memzoi.imports.plan` for size).

Under the lifecycle lock the plan is recomputed from the manifest and the live inventory; a different plan id
(``stale_import_plan``) or a blocked plan (``blocked_import_plan``) is refused before the first write. Every
routed candidate is built and validated first; then repo candidates become ``status: proposed`` packets under
``.memzoi/proposals/pending/`` (never canonical records) and local/session candidates private runtime records
in one journaled operation, all of it one ``lifecycle.operation``: when a later write fails, or the process is
killed, every file this attempt created is removed (at once, or by the next guarded command).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from git_memzoi.memzoi.imports import plan as importer
from git_memzoi.memzoi.imports.plan import ImportManifestError
from git_memzoi.memzoi.workspace import Workspace


def apply(
    ws: Workspace,
    raw: Any,
    *,
    plan_id: str,
    actor: str = "cli",
    approve: bool = False,
    memzoi_home: Path | None = None,
) -> dict[str, Any]:
    """``import apply``: write the plan of ``raw`` when its recomputed id is ``plan_id``, else nothing.

    Args:
        raw: the parsed manifest document (:func:`~git_memzoi.memzoi.imports.plan.read_manifest`).
        plan_id: the ``import_…`` id the reviewer saw. actor: as planned (part of the fingerprint).
        approve: ``--approve``, the reviewer's approval of the whole plan: under an ``auto`` approval policy
            (the human one: ``[workflow] proposal_approval``, resolved from ``memzoi_home`` and the repository,
            records/policy.py) every packet is applied too, in the same operation; under ``manual`` the packets
            stay pending for review, one by one (``approval.routed_to_review``).

    Returns:
        The recomputed plan plus ``mode: "apply"``, ``actor``, ``expected_plan_id`` and ``writes``:
        ``{kind: proposal_file, index, proposal_id, path}`` / ``{kind: runtime_record, index, record_id,
        destination}`` in candidate order; with ``approve`` also ``approval``: ``{mode, source, path, applied,
        routed_to_review}`` and, per applied packet, ``record_id`` in its write (whose ``path`` is then the
        resolved packet).

    Raises:
        ImportManifestError: an invalid manifest or actor; ``stale_import_plan`` (wrong or stale id);
            ``blocked_import_plan`` (prohibited content). Nothing is written in any of these cases.
        MemzoiError: a write failed (files created by this attempt are removed first). PolicyError: a bad
            workflow config (``approve``). With ``approve``, everything a packet apply raises (nothing written).
    """
    from git_memzoi.memzoi.proposals import lifecycle
    from git_memzoi.memzoi.records.policy import resolve

    who = importer.check_actor(actor)
    importer.parse_manifest(raw)  # a bad manifest fails before the lock
    policy = resolve(ws.layout.config, memzoi_home, None, actor_kind="human") if approve else None
    # One operation, planned after the lock's repairs: an apply killed part-way is rolled back by the next guarded
    # command (this one re-run included), so the inventory is the planned one again and the same id applies.
    with lifecycle.operation(ws.layout, "import_apply"):
        live = importer.plan(ws, raw, actor=who)
        if live["plan_id"] != plan_id.strip():
            raise ImportManifestError(
                "stale import plan: the manifest, the actor or the memory inventory changed "
                "since --plan-id was planned; plan again",
                "stale_import_plan",
            )
        if live["status"] == "blocked":
            raise ImportManifestError(
                "a blocked import plan cannot be applied; remove the prohibited content and plan again",
                "blocked_import_plan",
            )
        writes, applied = _write(
            ws, live, importer.prepare(ws, live, who, validate=False), policy is not None and policy.mode == "auto"
        )
    result = {**live, "mode": "apply", "actor": who, "expected_plan_id": plan_id, "writes": writes}
    if policy is not None:
        from git_memzoi.memzoi.proposals import bulk

        packets = sum(w["kind"] == "proposal_file" for w in writes)
        result["approval"] = {**policy.to_json(), "applied": applied, "routed_to_review": packets - applied}
        if applied:
            bulk.refresh_index(ws)  # once, after the operation: the next search finds the records at once
    return result


def _write(
    ws: Workspace, live: dict[str, Any], items: list[tuple[int, Any]], approved: bool
) -> tuple[list[dict[str, Any]], int]:
    """Install the packets (one batch), or when ``approved`` apply them (one batch, straight into
    ``resolved/applied/``), then the runtime records as one
    journaled step list, inside the caller's operation (which removes them all on a failure), and last append
    every event of it at once (one fsync; none when a write failed). Returns the writes and how many packets
    were applied."""
    from git_memzoi.memzoi.proposals import bulk, packets
    from git_memzoi.memzoi.proposals import files as proposal_files
    from git_memzoi.memzoi.records import events
    from git_memzoi.memzoi.runtime import local

    writes: list[dict[str, Any]] = []
    log: list[events.Event] = []
    routed = [(i, p) for i, p in items if isinstance(p, packets.Packet)]
    known = proposal_files.identities(ws.layout)  # one listing for both batches, saved once
    batch = [p for _, p in routed]
    entries = bulk.write_pending(ws, batch, log, install=not approved, scanned=approved, known=known)
    for (index, packet), entry in zip(routed, entries, strict=True):
        if entry.packet is None or entry.packet.id != packet.id:  # cannot happen under the lock: the plan reserved it
            raise ImportManifestError("stale import plan: a reserved proposal id is taken", "stale_import_plan")
        writes.append({"kind": "proposal_file", "index": index, "proposal_id": packet.id, "path": entry.rel})
    if approved and entries:
        done = bulk.apply_entries(ws, entries, log, actor=ws.actor, staged=True, known=known)
        for write, result in zip(writes, done, strict=True):
            write.update(path=result.resolved_path, record_id=result.record_id)
    known.save()
    drafts = ((i, d) for i, d in items if isinstance(d, local.Draft))
    writes += local.write_batch(ws, drafts, "import_apply").values()
    for w in writes:
        if w["kind"] == "runtime_record":
            route = {"destination": w["destination"], "route": "import"}
            log.append(("import_runtime_written", ws.actor, route, w["record_id"], None))
    summary = {
        "plan_id": live["plan_id"],
        "candidates": len(live["candidates"]),
        "proposal_ids": [w["proposal_id"] for w in writes if w["kind"] == "proposal_file"],
        "record_ids": [w["record_id"] for w in writes if w["kind"] == "runtime_record"],
        **({"applied": len(entries)} if approved else {}),
    }
    log.append(("import_applied", ws.actor, summary, None, None))
    events.append_many(ws.layout, log, ws.clock.now())
    return sorted(writes, key=lambda w: w["index"]), len(entries) if approved else 0


def apply_file(
    ws: Workspace,
    path: Path,
    *,
    plan_id: str,
    actor: str = "cli",
    approve: bool = False,
    memzoi_home: Path | None = None,
) -> dict[str, Any]:
    """``import apply --from-file --plan-id [--approve]``: :func:`apply` of the manifest at
    ``path`` plus ``source_file``. Raises ImportManifestError as :func:`~git_memzoi.memzoi.imports.plan.read_manifest` and that function."""
    return {
        **apply(
            ws, importer.read_manifest(path), plan_id=plan_id, actor=actor, approve=approve, memzoi_home=memzoi_home
        ),
        "source_file": importer.source_file(ws, path),
    }
