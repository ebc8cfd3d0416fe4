"""Bulk proposal writes (io): install many pending packets, and apply many packets, in one lifecycle operation.

The one-packet writers (:func:`~git_memzoi.memzoi.proposals.files.write_pending_packet`,
:func:`~git_memzoi.memzoi.proposals.files.apply_packet`) each list the packet identities, take the lock, rewrite
the journal and fsync an event: one process per packet cost about 134 ms of CPU, 164 s for a 1,000-note import
(issue 17, "Bulk paths"). Here a batch does each of those once: one identity listing, one journal save for every
file of the batch (:func:`~git_memzoi.memzoi.proposals.lifecycle.write_steps`), one fsync'd append of all its
events (:func:`~git_memzoi.memzoi.records.events.append_many`), and one index refresh after the operation.

The checks are the one-packet ones, per packet and before anything is written: repo-safe sensitivity, the packet
shape, the target, the credential scan of each packet and each new record (``prohibited_content_detected``).
Every file is still written atomically; the whole batch runs inside the caller's
:func:`~git_memzoi.memzoi.proposals.lifecycle.operation`, so a failure rolls every file of it back, and so does
the next guarded command after a kill (DESIGN.md principle 3).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from git_memzoi.errors import InputError, MemzoiError
from git_memzoi.memzoi.proposals import files, lifecycle
from git_memzoi.memzoi.proposals.entries import ApplyResult, Entry
from git_memzoi.memzoi.proposals.packets import (
    Packet,
    Resolution,
    SensitivityBlocked,
    check_shape,
    identifier_problem,
    identity_token,
    parse,
    render,
)
from git_memzoi.memzoi.proposals.receipts import preflight
from git_memzoi.memzoi.proposals.steps import Step, TargetError, applicable, packet_steps, packet_target
from git_memzoi.memzoi.records import events, ids
from git_memzoi.memzoi.records.okf import format_timestamp

if TYPE_CHECKING:
    from git_memzoi.memzoi.workspace import Workspace


@dataclass(frozen=True)
class BulkApply:
    """What :func:`apply_named` did: one result per named packet (in the order named; ``replayed`` for one
    applied earlier) and the records the one index refresh read (``None`` when it was left to the next command)."""

    results: tuple[ApplyResult, ...]
    indexed: int | None


def write_pending(
    ws: Workspace,
    packets: Sequence[Packet],
    log: list[events.Event],
    *,
    install: bool = True,
    scanned: bool = False,
    known: files.Identities | None = None,
) -> list[Entry]:
    """Install ``packets`` in ``pending/`` as :func:`~git_memzoi.memzoi.proposals.files.write_pending_packet`
    does one (first free identity, ``status: proposed``, validated, scanned), in one batch; ``install=False``
    writes no file (the caller applies the entries at once, ``apply_entries(..., staged=True)``: a pending file
    that would be removed a moment later is never written). ``scanned``: this operation scanned every content
    field of the packets already (``import apply`` recomputes the import plan, which classifies each manifest
    field and refuses a plan with any finding, under the same lock); each packet's text is then not scanned a
    second time, only the actors the packets add. The caller runs a
    :func:`~git_memzoi.memzoi.proposals.lifecycle.operation` and appends ``log``, to which the batch's events are
    added, once its last file is written (:func:`~git_memzoi.memzoi.records.events.append_many`): a batch
    rolled back leaves no event behind. ``known``: the caller's identity listing, which learns the new files and
    which the caller saves (without it the packets are listed, and the listing saved, here).

    Returns:
        The pending entries written, in ``packets`` order (each packet's id is its file id).

    Raises:
        SensitivityBlocked, PacketError, InputError: as ``write_pending_packet``, before anything is written.
    """
    from git_memzoi.memzoi.records.secrets import require_clean

    layout = ws.layout
    listed = known or files.identities(layout)
    taken = set(listed.taken())
    if scanned:
        for actor in sorted({a for p in packets for a in (p.proposed_by, p.created_by) if a}):
            require_clean(actor, "--actor")
    entries: list[Entry] = []
    steps: list[Step] = []
    for packet in packets:
        if packet.sensitivity != "repo-safe":
            raise SensitivityBlocked("write_pending_packet", packet.sensitivity)
        problem = identifier_problem(packet.id)
        if problem:
            raise InputError(f"proposal id: {problem}", "bad_id")
        file_id = files.first_free_id(layout, packet.id, taken)
        taken.add(identity_token(file_id))
        path = layout.pending / f"{file_id}.md"
        rel = layout.label(path)
        text = render(replace(packet, id=file_id, file_id=file_id, status="proposed", resolution=None))
        if not scanned:
            require_clean(text, f"new proposal {file_id}", document=True)  # not written yet: name the field
        data = text.encode("utf-8")
        written = parse(file_id, rel, data)
        check_shape(written, rel)
        entries.append(Entry("pending", path, rel, preflight(file_id, data), written, None, written.tokens))
        steps.append(Step(path, data))
    if install:
        lifecycle.write_steps(layout, steps)
        listed.remember([(e.path, e.tokens) for e in entries])
        if known is None:
            listed.save()
    log += [("proposal_file_written", ws.actor, {"action": _packet(e).action}, None, _packet(e).id) for e in entries]
    return entries


def apply_entries(
    ws: Workspace,
    entries: Sequence[Entry],
    log: list[events.Event],
    *,
    actor: str,
    staged: bool = False,
    known: files.Identities | None = None,
) -> list[ApplyResult]:
    """Apply the pending ``entries`` as :func:`~git_memzoi.memzoi.proposals.files.apply_packet` applies one
    (record changes, the packet moved to ``resolved/applied/``), all or nothing: every packet is checked and
    every file built before the first write. The caller runs a
    :func:`~git_memzoi.memzoi.proposals.lifecycle.operation` and appends ``log`` (as :func:`write_pending`);
    ``known``, the caller's identity listing, learns the resolved files (the caller saves it).
    ``staged``: the entries are
    ``write_pending(..., install=False)``'s: their whole text was scanned for credentials just now, so their
    records (the same fields) are not scanned again, and they have no pending file to remove.

    Returns:
        One result per entry, in order.

    Raises:
        SensitivityBlocked: a packet is not repo-safe. PacketError: malformed, or not ``proposed``.
        TargetError: a target is missing, inactive, cross-scope or newer, or changed by an earlier packet of
            the batch (``target_inactive``). InputError: a credential in a new record. Nothing is written.
    """
    layout = ws.layout
    now = ws.clock.now()
    style = ids.id_style(layout)  # read once, not once a record
    reserved: set[str] = set()
    touched: set[str] = set()
    steps: list[Step] = []
    results: list[ApplyResult] = []
    for entry in entries:
        packet = applicable(entry)
        check_shape(packet, entry.rel)
        if packet.action != "create" and packet.target_id in touched:
            raise TargetError(
                f"{entry.rel}: target record {packet.target_id!r} is changed by another packet of this batch",
                "target_inactive",
            )
        target = packet_target(layout, entry, packet)
        own, record_id = packet_steps(layout, packet, target, reserved=reserved, style=style, scan=not staged)
        reserved.add(record_id)
        if target is not None:
            touched.add(target.id)
        resolution = Resolution(
            "applied", actor, format_timestamp(now), record_id=record_id, target_id=target.id if target else None
        )
        dest = layout.resolved("applied") / f"{packet.file_id}.md"
        resolved = replace(packet, status="applied", resolution=resolution)
        own += [Step(dest, render(resolved).encode("utf-8"))] + ([] if staged else [Step(entry.path, None)])
        steps += own
        written = tuple(layout.label(s.path) for s in own)
        results.append(
            ApplyResult(
                packet.id,
                packet.file_id,
                packet.action,
                record_id,
                resolution.target_id,
                False,
                layout.label(dest),
                written,
            )
        )
    lifecycle.write_steps(layout, steps)
    if known is not None:  # the caller saves it: the next listing reads none of these packets again
        moved = [(layout.resolved("applied") / f"{e.pre.file_id}.md", e.tokens) for e in entries]
        known.remember(moved, gone=[] if staged else [e.path for e in entries])
    log += [
        ("proposal_file_applied", actor, {"action": r.action, "target_id": r.target_id}, r.record_id, r.proposal_id)
        for r in results
    ]
    return results


def apply_named(ws: Workspace, proposal_ids: Sequence[str], *, actor: str) -> BulkApply:
    """``proposal-files apply ID ID …``: apply every named packet in one operation (one lock, one journal, one
    event append, one index refresh); a named packet applied earlier is a replayed no-op, as for one.

    Raises:
        InputError: an unknown id (``unknown_proposal``), one named twice (``duplicate_proposal``), a rejected
            one (``opposite_outcome``); and everything :func:`apply_entries` raises. Nothing is written then.
    """
    seen: set[str] = set()
    layout = ws.layout
    with lifecycle.operation(layout, "proposal_files_apply_many"):
        known = files.identities(layout)
        found: list[Entry] = []
        for name in proposal_ids:
            entry = known.find(name)
            if entry.state == "rejected":
                raise InputError("that proposal packet was already rejected; it cannot be applied", "opposite_outcome")
            key = entry.shown_file_id
            if key in seen:
                raise InputError("a proposal packet is named twice", "duplicate_proposal")
            seen.add(key)
            found.append(entry)
        pending = [e for e in found if e.state == "pending"]
        log: list[events.Event] = []
        applied = iter(apply_entries(ws, pending, log, actor=actor, known=known))
        results = [
            next(applied) if e.state == "pending" else files.apply_packet(ws, e.shown_file_id, actor=actor)
            for e in found
        ]
        known.save()
        events.append_many(layout, log, ws.clock.now())
    return BulkApply(tuple(results), refresh_index(ws))


def refresh_index(ws: Workspace) -> int | None:
    """The one index refresh a bulk write ends with (after its operation, so a busy index fails nothing): the
    record files it read, or ``None`` when the next command is left to do it."""
    from git_memzoi.memzoi.recall.index import db as index_db

    with contextlib.suppress(MemzoiError):
        done = index_db.refresh(ws.layout)
        return done.scanned if done.rebuilt else len(done.read)
    return None


def _packet(entry: Entry) -> Packet:
    assert entry.packet is not None  # written by write_pending from a parsed packet
    return entry.packet
