"""The pieces of a lifecycle change (pure checks and the bytes to write; no writes): :class:`Step`, the target check
and the two record steps every write path builds (split from :mod:`~git_memzoi.memzoi.proposals.lifecycle`, which
re-exports them, for size). A record whose stored file says ``locked: true`` is refused by :func:`check_target`
and :func:`status_step` before anything else (``record_locked``, :mod:`git_memzoi.memzoi.records.lock`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from git_memzoi.errors import InputError
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.proposals.entries import Entry
from git_memzoi.memzoi.proposals.packets import (
    Packet,
    PacketError,
    SensitivityBlocked,
    base_record_id,
    project_record,
    record_identity,
)
from git_memzoi.memzoi.records import lock, okf
from git_memzoi.memzoi.records import store as record_store
from git_memzoi.memzoi.records.ids import new_record_id
from git_memzoi.memzoi.records.okf import Record, format_timestamp, parse_timestamp


class TargetError(InputError):
    """A supersede/tombstone target that fails a check: missing, inactive, private, cross-scope or newer."""

    default_code = "invalid_target"


@dataclass(frozen=True)
class Step:
    """One file change of a guarded operation: write ``data`` to ``path``, or delete ``path`` when ``None``."""

    path: Path
    data: bytes | None


def check_target(
    layout: Layout,
    target_id: str,
    *,
    scope_kind: str | None,
    scope_id: str | None,
    not_after: dt.datetime | None,
    where: str = "target",
) -> Record:
    """The active record ``target_id``, checked before any mutation (memzoi-spec.md §3 Apply).

    Args:
        scope_kind, scope_id: the scope the change claims; the target must have exactly this scope
            (``scope_kind=None`` skips the scope check).
        not_after: the target must not have been updated after this instant (the proposal's ``proposed_at``).
        where: prefix for messages, e.g. ``".memzoi/proposals/pending/x.md: supersedes"``.

    Raises:
        RecordLocked: the target's stored file says ``locked: true`` (``record_locked``; checked first, on disk).
        TargetError: codes ``target_missing``, ``target_inactive``, ``target_cross_scope``, ``target_newer``.
        RecordError: the target file is not a valid record.
    """
    lock.require_unlocked(layout, target_id, f"changing it ({where})")
    try:
        record = record_store.load(layout, target_id)
    except InputError as exc:
        if exc.code not in ("unknown_record", "bad_id"):
            raise
        hint = record_store.longer_ids_hint(layout, target_id)
        raise TargetError(f"{where}: target record {target_id!r} does not exist{hint}", "target_missing") from None
    if record.status != "active":
        raise TargetError(f"{where}: target record {target_id!r} is {record.status}, not active", "target_inactive")
    if scope_kind is not None and (record.scope, record.scope_id) != (scope_kind, scope_id):
        raise TargetError(
            f"{where}: target record {target_id!r} has scope {_scope(record.scope, record.scope_id)}, "
            f"not {_scope(scope_kind, scope_id)}",
            "target_cross_scope",
        )
    updated = parse_timestamp(record.updated_at)
    if not_after is not None and updated is not None and updated > not_after:
        raise TargetError(
            f"{where}: target record {target_id!r} was updated at {record.updated_at}, after the "
            f"proposal ({format_timestamp(not_after)})",
            "target_newer",
        )
    return record


def _scope(kind: str, scope_id: str | None) -> str:
    return f"{kind}/{scope_id}" if scope_id else kind


def status_step(layout: Layout, record_id: str, status: str) -> Step:
    """The byte-stable rewrite of one record's ``status`` line (everything else, evidence included, kept).

    Raises:
        RecordLocked: the record's stored file says ``locked: true`` (records/lock.py).
    """
    lock.require_unlocked(layout, record_id, f"setting its status to {status}")
    path, _old, new = record_store.update_fields(layout, record_id, {"status": status})
    return Step(path, new)


def record_step(layout: Layout, record: Record, *, scan: bool = True) -> Step:
    """The write of a new record file, checked to read back as the same record and to hold no credential
    (``prohibited_content_detected``) before anything is written. ``scan=False`` skips the credential scan, for a
    record projected from a packet whose whole text this process scanned a moment ago (a bulk import)."""
    from git_memzoi.memzoi.records.secrets import require_clean, require_clean_fields

    text = okf.render(record)
    path = record_store.record_path(layout, record.id)
    data = text.encode("utf-8")
    parts, fields = record_store.parse_fields(data)
    okf.record_from_fields(record.id, path.relative_to(layout.root).as_posix(), fields, parts.body)
    if not scan:
        return Step(path, data)
    # the file does not exist yet: name the field (and its line) the text came from, then check the rest
    where = f"new record {record.id}"
    require_clean_fields(
        {
            "title": record.title,
            "body": record.body,
            "source_ref": record.source_ref,
            "applies_to": record.applies_to,
            "tags": record.tags,
        },
        where,
    )
    require_clean(text, where, document=True)
    return Step(path, data)


# ------------------------------------------------------------------------------------------------ packets


def applicable(entry: Entry) -> Packet:
    """The packet of a pending entry that may be applied: repo-safe first, then parsed, then ``proposed``.

    Raises:
        SensitivityBlocked: a redacted (non-repo-safe) packet. PacketError: unreadable, or not ``proposed``.
    """
    if entry.redacted:
        raise SensitivityBlocked("proposal_files_apply", entry.pre.sensitivity)
    if entry.packet is None:
        raise entry.problem or PacketError(entry.rel, "file", "cannot be read")
    if entry.packet.status != "proposed":
        raise PacketError(entry.rel, "status", f"a pending packet must be proposed, not {entry.packet.status}")
    return entry.packet


def packet_target(layout: Layout, entry: Entry, packet: Packet) -> Record | None:
    """The checked target of a supersede/tombstone packet (:func:`check_target`); ``None`` for a create.

    Raises:
        TargetError, RecordError: as :func:`check_target`.
    """
    target_id = packet.target_id
    if packet.action == "create" or target_id is None:
        return None
    where = f"{entry.rel}: {'supersedes' if packet.action == 'supersede' else 'proposal.target'}"
    return check_target(
        layout,
        target_id,
        scope_kind=packet.scope_kind,
        scope_id=packet.scope_id,
        not_after=parse_timestamp(packet.proposed_at),
        where=where,
    )


def packet_steps(
    layout: Layout,
    packet: Packet,
    target: Record | None,
    *,
    reserved: Collection[str] = (),
    style: str | None = None,
    scan: bool = True,
) -> tuple[list[Step], str]:
    """The record steps of applying ``packet`` (the target's status rewrite, the new record) and the record id;
    ``reserved`` and ``style`` as :func:`~git_memzoi.memzoi.records.ids.new_record_id` takes them, ``scan`` as
    :func:`record_step`.

    Raises:
        PacketError: the packet does not project to a valid record. InputError: a credential in the record
            (``prohibited_content_detected``).
    """
    if packet.action == "tombstone" and target is not None:
        return [status_step(layout, target.id, "tombstoned")], target.id
    record_id = new_record_id(layout, base_record_id(packet), record_identity(packet), reserved=reserved, style=style)
    record = project_record(
        packet,
        record_id,
        supersedes=target.id if target else None,
        path=record_store.record_path(layout, record_id).relative_to(layout.root).as_posix(),
    )
    steps = [status_step(layout, target.id, "superseded")] if target is not None else []
    return [*steps, record_step(layout, record, scan=scan)], record_id
