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
    from git_memzoi.memzoi.proposals import lifecycle

    who = importer.check_actor(actor)
    importer.parse_manifest(raw)  # a bad manifest fails before the lock
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
        writes = _write(ws, live, importer.prepare(ws, live, who))
    return {**live, "mode": "apply", "actor": who, "expected_plan_id": plan_id, "writes": writes}


def _write(ws: Workspace, live: dict[str, Any], items: list[tuple[int, Any]]) -> list[dict[str, Any]]:
    """Install the packets, then the runtime records as one journaled step list, inside the caller's operation
    (which removes them all on a failure)."""
    from git_memzoi.memzoi.proposals import files as proposal_files
    from git_memzoi.memzoi.proposals import packets
    from git_memzoi.memzoi.records import events
    from git_memzoi.memzoi.runtime import local

    writes: list[dict[str, Any]] = []
    for index, packet in ((i, p) for i, p in items if isinstance(p, packets.Packet)):
        file_id, path = proposal_files.write_pending_packet(ws, packet)
        if file_id != packet.id:  # cannot happen under the lock: the plan reserved it against this inventory
            raise ImportManifestError("stale import plan: a reserved proposal id is taken", "stale_import_plan")
        writes.append(
            {
                "kind": "proposal_file",
                "index": index,
                "proposal_id": file_id,
                "path": path.relative_to(ws.layout.root).as_posix(),
            }
        )
    drafts = ((i, d) for i, d in items if isinstance(d, local.Draft))
    writes += local.write_batch(ws, drafts, "import_apply").values()
    now = ws.clock.now()
    for w in writes:
        if w["kind"] == "runtime_record":
            events.append(
                ws.layout,
                "import_runtime_written",
                ws.actor,
                now,
                {"destination": w["destination"], "route": "import"},
                record_id=w["record_id"],
            )
    events.append(
        ws.layout,
        "import_applied",
        ws.actor,
        now,
        {
            "plan_id": live["plan_id"],
            "candidates": len(live["candidates"]),
            "proposal_ids": [w["proposal_id"] for w in writes if w["kind"] == "proposal_file"],
            "record_ids": [w["record_id"] for w in writes if w["kind"] == "runtime_record"],
        },
    )
    return sorted(writes, key=lambda w: w["index"])


def apply_file(ws: Workspace, path: Path, *, plan_id: str, actor: str = "cli") -> dict[str, Any]:
    """``import apply --from-file --plan-id``: :func:`apply` of the manifest at
    ``path`` plus ``source_file``. Raises ImportManifestError as :func:`~git_memzoi.memzoi.imports.plan.read_manifest` and that function."""
    return {
        **apply(ws, importer.read_manifest(path), plan_id=plan_id, actor=actor),
        "source_file": importer.source_file(ws, path),
    }
