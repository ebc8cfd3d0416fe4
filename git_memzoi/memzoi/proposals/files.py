"""File-backed proposal packets under ``.memzoi/proposals/`` (io): inventory, list/show/validate, apply, reject.

memzoi-spec.md §3 and seed "Proposal file review commands". One inventory serves every operation: it refuses
symlinked proposal roots before reading anything, skips hidden and symlinked files, reads ``*.md`` only, and
requires packet and file identities to be unique across ``pending/`` and ``resolved/*`` (so a resolved identity
can never come back to pending). Each file's sensitivity is preflighted from raw top-level lines before the rest
is parsed; a non-repo-safe packet is only ever seen as its redacted receipt (``redacted-identity-…`` ids, no
title, body, source, scope or authorship), and can be looked up by either original alias, which is hashed. A
repo-safe packet holding a credential is withheld whole: its entry carries ``prohibited_content_detected`` (the
field named, never the value) instead of the packet, so show, validate, apply and reject all refuse it.

Commands that need one packet or the identities in use (show, apply, reject, a new packet) use :func:`identities`:
the same tokens and uniqueness check, reading only files changed since the derived identity cache was written.

Writes (:func:`apply_packet`, :func:`reject_packet`, :func:`write_pending_packet`) hold the lifecycle lock and
go through ``lifecycle.run_steps`` (journaled, rolled back on a reported failure; see ``lifecycle`` for crash
repair: :func:`pending_transactions` and :func:`repair` are re-exported here for ``doctor``). The values these
commands take and return (Entry, Inventory, Issue, the results) are :mod:`~git_memzoi.memzoi.proposals.entries`'s,
re-exported here too.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Collection
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, cast

from git_memzoi.core import atomic, safe_read
from git_memzoi.core.atomic import write_bytes_atomic
from git_memzoi.core.hashing import short_hash
from git_memzoi.errors import InputError, MemzoiError
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.proposals import lifecycle
from git_memzoi.memzoi.proposals.entries import (
    NOT_FOUND,
    ApplyResult,
    DuplicateIdentity,
    Entry,
    Inventory,
    Issue,
    ProposalNotFound,
    RejectResult,
)
from git_memzoi.memzoi.proposals.lifecycle import Step, pending_transactions, repair
from git_memzoi.memzoi.proposals.packets import (
    REPO_SAFE,
    Packet,
    PacketError,
    Resolution,
    SensitivityBlocked,
    candidates,
    check_shape,
    identifier_problem,
    identity_token,
    parse,
    render,
)
from git_memzoi.memzoi.proposals.receipts import is_receipt, preflight, receipt
from git_memzoi.memzoi.proposals.roots import packet_roots, pending_file_ids
from git_memzoi.memzoi.proposals.steps import applicable as _applicable
from git_memzoi.memzoi.proposals.steps import packet_steps as _record_steps
from git_memzoi.memzoi.proposals.steps import packet_target as _target
from git_memzoi.memzoi.records import events
from git_memzoi.memzoi.records import store as record_store
from git_memzoi.memzoi.records.okf import Record, format_timestamp

if TYPE_CHECKING:
    from git_memzoi.memzoi.workspace import Workspace

__all__ = [
    "ApplyResult",
    "DuplicateIdentity",
    "Entry",
    "Identities",
    "Inventory",
    "Issue",
    "ProposalNotFound",
    "RejectResult",
    "apply_packet",
    "first_free_id",
    "identities",
    "inventory",
    "list_packets",
    "pending_file_ids",
    "pending_transactions",
    "reject_packet",
    "repair",
    "show_packet",
    "validate",
    "write_pending_packet",
]

MAX_PACKET_BYTES = safe_read.MAX_FILE_BYTES
STATES = ("pending", "applied", "rejected")
IDENTITY_CACHE = "packet-identities.json"


# ------------------------------------------------------------------------------------------------ inventory


def inventory(layout: Layout, *, pending_only: bool = False) -> Inventory:
    """Read every packet under ``.memzoi/proposals/`` (read-only); ``pending_only``: only ``pending/`` (what waits
    for review, however long the resolved history), identities then not cross-checked.

    Raises:
        InputError: a proposal root is a symlink or not a folder (``symlinked_root``, ``bad_layout``).
        DuplicateIdentity: two packets share an identity.
    """
    entries = []
    roots = packet_roots(layout)
    for state, root in roots[:1] if pending_only else roots:
        for file in record_store.markdown_files(root):
            with contextlib.suppress(FileNotFoundError):  # moved by a concurrent apply or reject: not there now
                entries.append(_entry(layout, state, root, file))
    if not pending_only:
        _check_unique(entries)
    return Inventory(tuple(entries))


def _entry(layout: Layout, state: str, root: Path, file: Path) -> Entry:
    rel = file.relative_to(layout.root).as_posix()
    file_id = file.relative_to(root).as_posix()[: -len(".md")]
    try:
        data = safe_read.read_bytes(file, MAX_PACKET_BYTES)
    except safe_read.FileRefused as exc:  # a FIFO (never opened), a link, a file too large: no content to classify
        pre = replace(preflight(file_id, b""), sensitivity=REPO_SAFE)  # so it is listed by its path, as broken
        return Entry(state, file, rel, pre, None, exc.renamed(rel), frozenset({identity_token(file_id)}))
    pre = preflight(file_id, data)
    if not pre.repo_safe:
        stand_in = receipt(pre)
        return Entry(state, file, rel, pre, stand_in, None, frozenset({stand_in.id, stand_in.file_id}))
    tokens = {identity_token(pre.file_id)} | ({identity_token(pre.raw_id)} if pre.raw_id else set())
    try:
        packet = parse(pre.file_id, rel, data)
    except InputError as exc:
        return Entry(state, file, rel, pre, None, exc, frozenset(tokens))
    held = _credential(rel, data)
    if held is not None:  # withheld from every reader; validate, apply and reject name the field, never the value
        return Entry(state, file, rel, pre, None, held, packet.tokens)
    return Entry(state, file, rel, pre, packet, None, packet.tokens)


def _credential(rel: str, data: bytes) -> PacketError | None:
    """``prohibited_content_detected`` naming the field of the first credential in a packet file, if any (a file
    hand-edited or committed with ``--no-verify``; the writers refuse one)."""
    from git_memzoi.memzoi.records.secrets import REFUSAL, classify, locate

    text = data.decode("utf-8", "replace")
    found = classify(text, personal=False)
    if not found:
        return None
    why = f"holds a credential ({found[0].rule}; not printed): remove it, {REFUSAL}"
    return PacketError(rel, locate(text, found[0].line), why, "prohibited_content_detected")


def _check_unique(entries: list[Entry]) -> None:
    owner: dict[str, Entry] = {}
    for entry in entries:
        for token in sorted(entry.tokens):
            other = owner.setdefault(token, entry)
            if other is not entry:
                raise DuplicateIdentity(
                    f"proposal identity is not unique: {_describe(other)} and {_describe(entry)} "
                    "share a packet or file id; a resolved identity cannot return to pending"
                )


def _describe(entry: Entry) -> str:
    return entry.shown_path or f"a redacted {entry.state} packet ({entry.shown_file_id})"


# ------------------------------------------------------------------------------------------------ identity lookups


class _Known(NamedTuple):
    """One packet file's identity tokens; ``entry`` is set when this call read the file (it changed)."""

    state: str
    root: Path
    path: str
    tokens: Collection[str]
    entry: Entry | None


@dataclass
class Identities:
    """Every packet file's identity tokens, checked unique (see :func:`identities`)."""

    layout: Layout
    known: tuple[_Known, ...]
    cache: dict[str, list[object]]
    stale: bool

    def save(self) -> None:
        """Rewrite the cache if a file was read or removed (after a successful write, holding the lock)."""
        if self.stale:
            _write_cache(self.layout, self.cache)

    def find(self, identity: str) -> Entry:
        """:meth:`Inventory.find`, parsing only the packet found. Raises ProposalNotFound."""
        token = identity_token(identity.strip())
        for k in self.known:
            if token in k.tokens:
                try:
                    return k.entry or _entry(self.layout, k.state, k.root, Path(k.path))
                except FileNotFoundError:  # moved meanwhile by a process that did not hold the lock
                    break
        raise ProposalNotFound(NOT_FOUND)

    def taken(self) -> frozenset[str]:
        """Every identity token in use (as :meth:`Inventory.taken`)."""
        return frozenset(t for k in self.known for t in k.tokens)

    def pending(self) -> tuple[Entry, ...]:
        """The pending entries (as :meth:`Inventory.pending`), parsing only pending files the listing did not read
        (one moved since the listing is left out)."""
        out = []
        for k in self.known:
            if k.state == "pending":
                with contextlib.suppress(FileNotFoundError):
                    out.append(k.entry or _entry(self.layout, k.state, k.root, Path(k.path)))
        return tuple(out)

    def remember(self, written: Collection[tuple[Path, Collection[str]]], gone: Collection[Path] = ()) -> None:
        """Note in the cache the packet files a bulk write just wrote (path, tokens) and removed, so the next
        listing reads none of them again; :meth:`save` writes it."""
        for path in gone:
            self.cache.pop(short_hash(_rel(self.layout, path).encode("utf-8"), 32), None)
        for path, tokens in written:
            st = os.stat(path)
            key = short_hash(_rel(self.layout, path).encode("utf-8"), 32)
            self.cache[key] = [st.st_size, st.st_mtime_ns, st.st_ino, *sorted(tokens)]
        self.stale = True


def identities(layout: Layout) -> Identities:
    """Every packet file's identity tokens as :func:`inventory` computes them, re-reading only files changed since
    the derived cache (keyed by path hashes: a redacted file name is part of an identity) was written: same size,
    mtime_ns and inode, and older than the cache (git's racily-clean rule). Writers :meth:`~Identities.save` it.

    Raises:
        InputError, DuplicateIdentity: as :func:`inventory` (which raises the duplicate, with its message).
    """
    memo = _within_hold(layout)
    if memo is not None:
        return memo
    roots = packet_roots(layout)  # refused before anything is read
    cached, cache_mtime = _read_cache(layout.identity_cache)
    known: list[_Known] = []
    fresh: dict[str, list[object]] = {}
    for state, root in roots:
        files: list[tuple[str, str, list[int]]] = []
        record_store.signed_markdown_files(str(root), f"{_rel(layout, root)}/", files)
        for rel, path, signature in files:
            key = short_hash(rel.encode("utf-8"), 32)
            hit = cached.pop(key, None)
            if (
                type(hit) is list
                and hit[:3] == signature
                and signature[1] < cache_mtime
                and all(type(t) is str for t in hit[3:])
            ):
                known.append(_Known(state, root, path, cast("list[str]", hit[3:]), None))  # all str: checked above
                fresh[key] = hit
            else:
                try:
                    entry = _entry(layout, state, root, Path(path))
                except FileNotFoundError:  # moved by a concurrent apply or reject since the listing
                    continue
                known.append(_Known(state, root, path, entry.tokens, entry))
                fresh[key] = [*signature, *sorted(entry.tokens)]
    tokens = [t for k in known for t in k.tokens]  # each entry's tokens are a set: repeats are across files
    if len(tokens) != len(set(tokens)):
        inventory(layout)  # raises DuplicateIdentity, naming both files exactly as every other command does
    listed = Identities(layout, tuple(known), fresh, bool(cached) or any(k.entry is not None for k in known))
    _remember_within_hold(listed)
    return listed


# Per repository: (the lifecycle lock's hold, atomic.mark() after the listing, the listing). Packet files change
# only under the lock: while this thread keeps the hold, the listing stays true until this process writes in a
# packet folder (propose --apply lists once for the new packet and its apply, issue 17 "writes").
_HELD_LISTING: dict[str, tuple[int, int, Identities]] = {}


def _within_hold(layout: Layout) -> Identities | None:
    """The listing this hold made, when no packet folder changed since (:func:`atomic.folders_since`)."""
    memo = _HELD_LISTING.get(str(layout.root))
    if memo is None or memo[0] != atomic.hold(layout.lock):
        return None
    proposals = os.path.realpath(layout.base / "proposals")
    changed = atomic.folders_since(memo[1])
    return None if any(f == proposals or f.startswith(proposals + os.sep) for f in changed) else memo[2]


def _remember_within_hold(listed: Identities) -> None:
    layout = listed.layout
    held = atomic.hold(layout.lock)
    if held is None:
        _HELD_LISTING.pop(str(layout.root), None)
    else:
        _HELD_LISTING[str(layout.root)] = (held, atomic.mark(), listed)


def _read_cache(path: Path) -> tuple[dict[str, list[object]], int]:
    """(files, the cache's own mtime_ns); nothing when missing, unreadable or of another shape."""
    try:
        with safe_read.open_stream(path) as handle:  # in the git directory; still never a FIFO's open
            mtime, data = os.fstat(handle.fileno()).st_mtime_ns, json.loads(handle.read())
        files = data["files"] if data["version"] == 1 else None
        return (files if isinstance(files, dict) else {}), mtime
    except (OSError, ValueError, LookupError, TypeError, AttributeError):
        return {}, 0


def _write_cache(layout: Layout, files: dict[str, list[object]]) -> None:
    data = json.dumps({"version": 1, "files": files}, separators=(",", ":")).encode("utf-8")
    with contextlib.suppress(OSError, MemzoiError):  # a derived cache: the next writer tries again
        write_bytes_atomic(
            layout.identity_cache, data, root=layout.root_for(layout.identity_cache), parents=True, durable=False
        )


# ------------------------------------------------------------------------------------------------ read-only commands


def list_packets(layout: Layout) -> tuple[Entry, ...]:
    """``proposal-files list``: the pending inbox (read-only)."""
    return inventory(layout).pending()


def show_packet(layout: Layout, identity: str) -> Entry:
    """``proposal-files show``: one packet, pending or resolved, by id, file id or redacted alias (read-only).

    Raises:
        ProposalNotFound: no packet has that identity.
    """
    return identities(layout).find(identity)


def validate(layout: Layout) -> tuple[tuple[Entry, tuple[Issue, ...]], ...]:
    """``proposal-files validate``: every pending packet with the issues that would stop ``apply`` (read-only).

    Includes target existence, active state, scope and freshness for repo-safe supersede/tombstone packets;
    a non-repo-safe packet gets one classification-only issue.
    """
    return tuple((entry, _issues(layout, entry)) for entry in inventory(layout).pending())


def _issues(layout: Layout, entry: Entry) -> tuple[Issue, ...]:
    try:
        packet = _applicable(entry)
        check_shape(packet, entry.rel)
        try:
            _target(layout, entry, packet)
        except lifecycle.TargetError as exc:
            field = "supersedes" if packet.action == "supersede" else "proposal.target"
            return (Issue(exc.code, field, exc.message),)
    except SensitivityBlocked as exc:
        return (Issue(exc.code, "sensitivity", exc.message),)
    except InputError as exc:
        return (Issue(exc.code, getattr(exc, "field", ""), exc.message),)
    return ()


# ------------------------------------------------------------------------------------------------ apply


def apply_packet(ws: Workspace, proposal_id: str, *, actor: str) -> ApplyResult:
    """Apply the pending packet ``proposal_id`` (packet id, file id, or a redacted alias) under the lifecycle lock.

    Only a ``status: proposed``, ``sensitivity: repo-safe`` packet is applied; the record changes and the move of
    the packet to ``resolved/applied/`` happen as one journaled, rolled-back-on-failure operation. Applying an
    already applied packet is a no-op (``replayed``). Takes the lock itself: never call it while holding it.

    Raises:
        SensitivityBlocked: the packet is not repo-safe (content-free; ``code`` ``repo_sensitivity_required``).
        PacketError: the packet is malformed or has the wrong action shape (names file and field).
        TargetError: a supersede/tombstone target is missing, inactive, cross-scope or newer than the proposal.
        InputError: unknown id (``unknown_proposal``), already rejected (``opposite_outcome``), duplicate identity.
    """
    layout = ws.layout
    with lifecycle.guarded(layout):
        known = identities(layout)
        entry = known.find(proposal_id)
        if entry.state != "pending":
            return _replay_apply(ws, entry, actor)
        packet = _applicable(entry)
        check_shape(packet, entry.rel)
        target = _target(layout, entry, packet)
        steps, record_id = _record_steps(layout, packet, target)
        now = ws.clock.now()
        resolution = Resolution(
            "applied", actor, format_timestamp(now), record_id=record_id, target_id=target.id if target else None
        )
        dest = layout.resolved("applied") / f"{packet.file_id}.md"
        resolved = replace(packet, status="applied", resolution=resolution)
        steps += [Step(dest, render(resolved).encode("utf-8")), Step(entry.path, None)]
        written = lifecycle.run_steps(layout, "proposal_files_apply", steps)
        known.save()
        events.append(
            layout,
            "proposal_file_applied",
            actor,
            now,
            {"action": packet.action, "target_id": resolution.target_id},
            record_id=record_id,
            proposal_id=packet.id,
        )
    return ApplyResult(
        packet.id, packet.file_id, packet.action, record_id, resolution.target_id, False, _rel(layout, dest), written
    )


def _replay_apply(ws: Workspace, entry: Entry, actor: str) -> ApplyResult:
    if entry.state == "rejected":
        raise InputError("that proposal packet was already rejected; it cannot be applied", "opposite_outcome")
    packet = entry.packet
    if packet is None or packet.resolution is None or packet.resolution.record_id is None:
        raise entry.problem or PacketError(entry.rel, "resolution", "an applied packet needs a record_id")
    res = packet.resolution
    drift = _drift(ws.layout, packet, res.record_id or "", res.target_id)
    events.append(
        ws.layout,
        "proposal_file_apply_replayed",
        actor,
        ws.clock.now(),
        {"drift": len(drift)},
        record_id=res.record_id,
        proposal_id=packet.id,
    )
    return ApplyResult(
        packet.id, packet.file_id, packet.action, res.record_id or "", res.target_id, True, entry.rel, (), drift
    )


def _drift(layout: Layout, packet: Packet, record_id: str, target_id: str | None) -> tuple[str, ...]:
    """What no longer matches an applied packet (current canonical bytes are the source of truth)."""
    found: list[str] = []
    expect: dict[str, list[tuple[str | None, str]]] = {
        "tombstone": [(record_id, "tombstoned")],
        "supersede": [(target_id, "superseded")],
    }
    for rid, status in expect.get(packet.action, []):
        record = _load_or_none(layout, rid)
        if record is None or record.status != status:
            found.append(f"record {rid} is {record.status if record else 'missing'}, expected {status}")
    if packet.action != "tombstone":
        record = _load_or_none(layout, record_id)
        if record is None:
            found.append(f"record {record_id} is missing")
        elif record.proposal_id != packet.id or record.scope != packet.scope_kind:
            found.append(f"record {record_id} no longer carries this packet's lineage and scope")
    return tuple(found)


def _load_or_none(layout: Layout, record_id: str | None) -> Record | None:
    try:
        return record_store.load(layout, record_id) if record_id else None
    except InputError:
        return None


# ------------------------------------------------------------------------------------------------ reject


def reject_packet(ws: Workspace, proposal_id: str, *, reason: str, actor: str) -> RejectResult:
    """Move the pending packet ``proposal_id`` to ``resolved/rejected/`` with ``reason``; no record is created.

    A non-repo-safe packet is archived as its redacted receipt (``redacted-identity-…`` ids, hashes only).
    Rejecting an already rejected packet is an auditable no-op (``replayed``).

    Raises:
        InputError: an empty reason (``missing_reason``), unknown id, already applied (``opposite_outcome``).
        PacketError: a repo-safe packet that does not parse (it cannot be archived).
    """
    reason = (reason or "").strip()
    if not reason:
        raise InputError("--reason must not be empty", "missing_reason")
    layout = ws.layout
    with lifecycle.guarded(layout):
        known = identities(layout)
        entry = known.find(proposal_id)
        if entry.state == "applied":
            raise InputError("that proposal packet was already applied; it cannot be rejected", "opposite_outcome")
        if entry.state == "rejected":
            return _replay_reject(ws, entry, actor)
        packet = entry.packet
        if packet is None:
            raise entry.problem or PacketError(entry.rel, "file", "cannot be read")
        if not entry.redacted and packet.status != "proposed":
            raise PacketError(entry.rel, "status", f"a pending packet must be proposed, not {packet.status}")
        now = ws.clock.now()
        resolved = replace(
            packet, status="rejected", resolution=Resolution("rejected", actor, format_timestamp(now), reason=reason)
        )
        dest = layout.resolved("rejected") / f"{packet.file_id}.md"
        steps = [Step(dest, render(resolved).encode("utf-8")), Step(entry.path, None)]
        written = lifecycle.run_steps(layout, "proposal_files_reject", steps)
        known.save()
        if entry.redacted:  # the original file name is part of the redacted identity
            written = tuple(p for p in written if p != entry.rel)
        events.append(
            layout,
            "proposal_file_rejected",
            actor,
            now,
            {"redacted": entry.redacted, "classification": entry.pre.sensitivity},
            proposal_id=packet.id,
        )
    return RejectResult(packet.id, packet.file_id, entry.redacted, False, reason, _rel(layout, dest), written)


def _replay_reject(ws: Workspace, entry: Entry, actor: str) -> RejectResult:
    packet = entry.packet
    if packet is None:
        raise entry.problem or PacketError(entry.rel, "file", "cannot be read")
    reason = packet.resolution.reason if packet.resolution and packet.resolution.reason else ""
    redacted = is_receipt(packet)
    events.append(ws.layout, "proposal_file_reject_replayed", actor, ws.clock.now(), {}, proposal_id=packet.id)
    return RejectResult(packet.id, packet.file_id, redacted, True, reason, entry.rel)


# ------------------------------------------------------------------------------------------------ writer


def write_pending_packet(ws: Workspace, packet: Packet) -> tuple[str, Path]:
    """Reserve an identity for ``packet`` and install it in ``pending/``, holding the lifecycle lock.

    The identity is ``packet.id``, else ``<id>-2``, ``<id>-3``, … (the first free one across pending and
    resolved); the packet's id and file id both become it, its status ``proposed``. The packet must be repo-safe
    and valid; build it with :class:`~git_memzoi.memzoi.proposals.packets.Packet` (``file_id`` is ignored; set
    ``created_by``, which the create writer emits). Takes the lock itself: never call it while holding it.

    Returns:
        (file_id, absolute path of the new pending file).

    Raises:
        SensitivityBlocked: the packet is not repo-safe. PacketError: the rendered packet does not validate.
        InputError: ``packet.id`` is not a proposal identifier (``bad_id``), or the packet holds a credential
        (``prohibited_content_detected``).
    """
    from git_memzoi.memzoi.records.secrets import require_clean

    if packet.sensitivity != "repo-safe":
        raise SensitivityBlocked("write_pending_packet", packet.sensitivity)
    problem = identifier_problem(packet.id)
    if problem:
        raise InputError(f"proposal id: {problem}", "bad_id")
    layout = ws.layout
    with lifecycle.guarded(layout):
        known = identities(layout)
        taken = known.taken()
        file_id = first_free_id(layout, packet.id, taken)
        path = layout.pending / f"{file_id}.md"
        fresh = replace(packet, id=file_id, file_id=file_id, status="proposed", resolution=None)
        text = render(fresh)
        require_clean(text, f"new proposal {file_id}", document=True)  # not written yet: name the field
        data = text.encode("utf-8")
        check_shape(parse(file_id, _rel(layout, path), data), _rel(layout, path))
        lifecycle.write_step(layout, Step(path, data))
        known.save()
        entry = _entry(layout, "pending", layout.pending, path)  # the listing, plus this file, for its apply
        _remember_within_hold(
            replace(known, known=(*known.known, _Known("pending", layout.pending, str(path), entry.tokens, entry)))
        )
        events.append(
            layout, "proposal_file_written", ws.actor, ws.clock.now(), {"action": packet.action}, proposal_id=file_id
        )
    return file_id, path


def first_free_id(layout: Layout, base: str, taken: Collection[str]) -> str:
    """The identity a new packet ``base`` gets: ``base``, else ``base-2``, … (the first one no packet file in
    pending or resolved holds and not in ``taken``, a set of :func:`identity_token` values)."""
    return next(c for c in candidates(base) if _free(layout, c, taken))


def _free(layout: Layout, candidate: str, taken: Collection[str]) -> bool:
    if identity_token(candidate) in taken:
        return False
    paths = [layout.pending / f"{candidate}.md"] + [layout.resolved(s) / f"{candidate}.md" for s in STATES[1:]]
    return not any(p.exists() or p.is_symlink() for p in paths)


def _rel(layout: Layout, path: Path) -> str:
    return path.relative_to(layout.root).as_posix()
