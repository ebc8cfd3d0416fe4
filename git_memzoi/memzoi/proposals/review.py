"""The one review inbox (io): everything waiting for a reviewer, under one id scheme (issue 15 "One review inbox").

Two kinds of item wait for review, and this module is the only place that puts them together:

- inbox proposals (:mod:`~git_memzoi.memzoi.proposals.inbox`, ids ``prop_…``): a state file and a packet, in
  ``pending/`` when repo-safe, else kept privately;
- file packets in ``pending/`` that no inbox state owns, written by session end, capture, import or by hand (ids:
  the packet id; a packet that is not repo-safe only as its ``redacted-identity-…`` receipt id).

Every item has one id, a ``source`` (:data:`SOURCES`, read from the packet's ``origin.route``), a type, a title
when repo-safe and a creation time. ``approve``, ``reject``, ``apply`` and ``show`` accept either kind of id (and
a packet id or file id of an inbox proposal's packet); an id that names nothing is ``unknown_proposal`` (exit 2,
the id never echoed: it may be a redacted alias). A file packet has no approval step of its own: ``approve``
records one (a state file beside the inbox's, classifications only) so ``proposals apply --all-approved`` takes
it, and ``apply`` applies a pending or approved packet as ``proposal-files apply`` does.

Every count of waiting items (``handoff``, ``doctor``, the MCP ``review_inbox`` tool, the session-start
context) is :func:`pending_count` or :func:`counts`, so they always agree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from git_memzoi.core import safe_read
from git_memzoi.core.hashing import short_hash
from git_memzoi.errors import InputError, MemzoiError
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.proposals import inbox
from git_memzoi.memzoi.records import events, vocab
from git_memzoi.memzoi.records.okf import format_timestamp

# lifecycle, the writers' machinery, is imported by the verbs that write: a count or a listing needs none.

if TYPE_CHECKING:
    from git_memzoi.memzoi.proposals.entries import ApplyResult, Entry
    from git_memzoi.memzoi.proposals.packets import Packet
    from git_memzoi.memzoi.records.conflicts import Conflict
    from git_memzoi.memzoi.workspace import Workspace

# packet origin.route -> the source an item is listed with; anything else (a hand-written packet) is "file"
ROUTES = {"owner_command": "proposal", "session_end": "session-end", "capture": "capture", "import": "import"}
SOURCES = ("proposal", "session-end", "capture", "import", "file")
STATUS_FILTERS = inbox.STATUS_FILTERS
APPROVAL_SCHEMA = "memzoi/packet-approval-v1"
_WAITING = ("open", *vocab.OPEN_INBOX_STATUSES)  # status filters whose packets are all in pending/
NOT_FOUND = "no proposal or packet has that id (see `git memzoi review --status all`)"


class UnknownProposal(InputError):
    """No inbox proposal and no packet has that id (exit 2; the id is not echoed)."""

    default_code = "unknown_proposal"


@dataclass(frozen=True)
class Item:
    """One thing in the review inbox.

    ``id`` is the one id the verbs take (``prop_…`` or the packet id); ``source`` one of :data:`SOURCES`;
    ``status`` pending, validated, approved, rejected or applied; ``title`` and ``type`` are ``None`` when the
    content is withheld (not repo-safe, unreadable, or holding a credential: ``problem`` then names the code);
    ``created_at`` is RFC 3339 UTC (``None`` when withheld); ``path`` the repo-relative packet path when repo-safe;
    ``record_id`` the record an applied item became; ``proposal`` the inbox state of a ``prop_`` item."""

    id: str
    source: str
    status: str
    type: str | None
    title: str | None
    created_at: str | None
    sensitivity: str
    path: str | None
    proposal: inbox.Proposal | None = None
    problem: str | None = None
    record_id: str | None = None
    safe_check: str | None = None  # the command of a check marked safe: `verify --all-safe` runs it once applied

    @property
    def is_open(self) -> bool:
        """Waiting for a reviewer: pending, validated or approved (not yet applied)."""
        return self.status in vocab.OPEN_INBOX_STATUSES

    @property
    def private(self) -> bool:
        """A proposal marked ``visibility: private``: never written as repository memory, whatever its
        sensitivity (issue 20)."""
        return self.proposal is not None and self.proposal.visibility == "private"

    @property
    def repo_safe(self) -> bool:
        """Whether the content may reach the repository: repo-safe, and not marked private."""
        return self.sensitivity == inbox.REPO_SAFE and not self.private

    @property
    def withheld_because(self) -> str:
        """Why the content is withheld, in a word: the problem's code, ``visibility private``, or the
        sensitivity (``unknown``, ``private`` ...)."""
        return self.problem or ("visibility private" if self.private else self.sensitivity)

    def as_json(self) -> dict[str, Any]:
        """The item as ``review --json`` lists it (the inbox state under ``proposal``, else ``null``)."""
        return {
            "id": self.id,
            "source": self.source,
            "status": self.status,
            "type": self.type,
            "title": self.title,
            "created_at": self.created_at,
            "sensitivity": self.sensitivity,
            "repo_safe": self.repo_safe,
            "path": self.path,
            "problem": self.problem,
            "record_id": self.record_id,
            "safe_check": self.safe_check,
            "proposal": self.proposal.as_json() if self.proposal is not None else None,
        }


@dataclass(frozen=True)
class Listing:
    """``review`` / ``proposals list``: the items of one status filter, oldest first; ``problems``: unreadable
    inbox state files and packet folders that could not be read (their items are missing from ``items``)."""

    status: str
    items: tuple[Item, ...]
    problems: tuple[str, ...] = ()
    # conflicting claims merged branches left among the records (issue 16): resolved by a supersede or a
    # tombstone, not by a verb of the inbox, so they are listed beside the items, not counted among them
    conflicts: tuple[Conflict, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """``review --json`` (and the MCP ``review_inbox`` tool): ``{"ok", "status", "count", "proposals",
        "problems", "conflicts"}``, ``proposals`` being :meth:`Item.as_json` objects, oldest first, and
        ``conflicts`` :meth:`~git_memzoi.memzoi.records.conflicts.Conflict.as_json` objects."""
        return {
            "ok": True,
            "status": self.status,
            "count": len(self.items),
            "proposals": [i.as_json() for i in self.items],
            "problems": list(self.problems),
            "conflicts": [c.as_json() for c in self.conflicts],
        }


@dataclass(frozen=True)
class Counts:
    """The open review counts: ``open`` = pending + validated + approved, and ``open`` split by source."""

    open: int
    pending: int
    validated: int
    approved: int
    by_source: Mapping[str, int] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """``{"open", "pending", "validated", "approved", "by_source": {source: n}}``."""
        return {
            "open": self.open,
            "pending": self.pending,
            "validated": self.validated,
            "approved": self.approved,
            "by_source": dict(self.by_source),
        }


# ------------------------------------------------------------------------------------------------ listing


def list_items(layout: Layout, status: str = "open") -> Listing:
    """Every review item whose status matches ``status`` (``open``, one of ``vocab.INBOX_STATUSES`` or ``all``),
    oldest first (by creation time, then id). Read-only.

    Raises:
        InputError: an unknown status filter (``invalid_status``).
    """
    if status not in STATUS_FILTERS:
        raise InputError(f"status {status!r} is not one of {', '.join(STATUS_FILTERS)}", "invalid_status")

    def wanted(item_status: str) -> bool:
        return status in ("all", item_status) or (status == "open" and item_status in vocab.OPEN_INBOX_STATUSES)

    items: list[Item] = []
    problems: list[str] = []
    owned: set[str] = set()
    for proposal in inbox.iter_proposals(layout):
        if isinstance(proposal, InputError):
            problems.append(proposal.message)
            continue
        if proposal.location == "pending":
            owned.add(proposal.file_id)
        if wanted(proposal.status):  # its packet is read only when it is listed
            items.append(_proposal_item(layout, proposal))
    entries = _entries(layout, status, problems)
    marks = _approvals(layout)
    for entry in entries:
        item = None if _file_id(layout, entry) in owned else _entry_item(entry, marks)  # owned: listed above
        if item is not None and wanted(item.status):
            items.append(item)
    items.sort(key=lambda i: (i.created_at or "", i.id))
    return Listing(status, tuple(items), tuple(problems), _conflicts(layout, problems))


def _conflicts(layout: Layout, problems: list[str]) -> tuple[Conflict, ...]:
    """The conflicting claims among the records (:func:`~git_memzoi.memzoi.records.conflicts.find_conflicts`);
    none when the records cannot be read (a problem, named)."""
    from git_memzoi.memzoi.records import conflicts
    from git_memzoi.memzoi.workspace import Workspace

    try:
        return tuple(conflicts.find_conflicts(Workspace(layout)))
    except MemzoiError as exc:
        problems.append(f"conflicting claims not checked: {exc.message}")
        return ()


def _entries(layout: Layout, status: str, problems: list[str]) -> tuple[Entry, ...]:
    """The packets a listing needs: what waits is all in ``pending/``, so the resolved history is read only when
    asked for. A duplicate identity or a symlinked root is a problem, and what can still be read is listed."""
    from git_memzoi.memzoi.proposals import files

    try:
        return files.inventory(layout, pending_only=status in _WAITING).entries
    except InputError as exc:
        problems.append(exc.message)
    try:
        return files.inventory(layout, pending_only=True).entries
    except InputError:  # a symlinked root: nothing under it is read
        return ()


def list_pending(layout: Layout) -> Listing:
    """Everything waiting for a reviewer (the ``open`` listing of :func:`list_items`): what ``git memzoi review``
    prints. Stable entry point for other callers (the session-start context). Read-only; never raises for an
    unreadable file or folder (see :attr:`Listing.problems`)."""
    return list_items(layout, "open")


def pending_count(layout: Layout) -> int:
    """How many items wait for review: ``len(list_pending(layout).items)``, the one number ``handoff``,
    ``doctor``, MCP and the session-start context report. Read-only, never raises for unreadable files.

    Counted without parsing a packet (the session-start hook calls it): the open inbox proposals, plus the packet
    files in ``pending/`` that no inbox proposal owns (a packet file is one item whether or not it parses).
    """
    from git_memzoi.memzoi.proposals.roots import pending_file_ids

    proposals = [p for p in inbox.iter_proposals(layout) if isinstance(p, inbox.Proposal)]
    owned = {p.file_id for p in proposals if p.location == "pending"}
    try:
        pending = pending_file_ids(layout)
    except InputError:  # a symlinked root: nothing under it is read (list_pending lists nothing there either)
        pending = ()
    return sum(p.is_open for p in proposals) + sum(f not in owned for f in pending)


def counts(layout: Layout) -> Counts:
    """:func:`pending_count` split by status and by source (every source of :data:`SOURCES` present, 0 or more)."""
    return counts_of(list_pending(layout))


def counts_of(listing: Listing) -> Counts:
    """The :class:`Counts` of the open items of a listing already read (any status filter; so one read serves a
    count and a list: ``doctor`` reads ``all`` to check identities too)."""
    by_status = dict.fromkeys(vocab.OPEN_INBOX_STATUSES, 0)
    by_source = dict.fromkeys(SOURCES, 0)
    for item in listing.items:
        if item.is_open:
            by_status[item.status] += 1
            by_source[item.source] += 1
    total = sum(by_status.values())
    return Counts(total, by_status["pending"], by_status["validated"], by_status["approved"], by_source)


def _file_id(layout: Layout, entry: Entry) -> str:
    """The file id of a packet as its path says (a redacted entry shows a receipt's instead)."""
    root = layout.pending if entry.state == "pending" else layout.resolved(entry.state)
    return entry.path.relative_to(root).as_posix()[: -len(".md")]


def _proposal_item(layout: Layout, proposal: inbox.Proposal) -> Item:
    packet = inbox.read_packet(layout, proposal)
    path = inbox.packet_path(layout, proposal)
    rel = path.relative_to(layout.root).as_posix() if proposal.repo_safe and path.is_file() else None
    return Item(
        id=proposal.id,
        source="proposal",
        status=proposal.status,
        type=proposal.type,
        title=packet.title if packet is not None else None,
        created_at=proposal.created_at,
        sensitivity=proposal.sensitivity,
        path=rel,
        proposal=proposal,
        problem="packet_missing" if proposal.packet_missing else None,
        record_id=proposal.record_id,
        safe_check=_safe_check(packet) if rel is not None else None,
    )


def _safe_check(packet: Packet | None) -> str | None:
    """The command of ``packet``'s check when it is marked safe: a command a reviewer approves for
    ``verify --all-safe`` to run unattended, so every listing names it (a fresh user's walk: an agent's
    ``touch`` command was approved unseen)."""
    from git_memzoi.memkeep.entries import parse_check

    check = parse_check((packet.memkeep or {}).get("check"), "check") if packet is not None else None
    return check.run if check is not None and check.safe else None


def _entry_item(entry: Entry, marks: Mapping[str, Mapping[str, Any]]) -> Item:
    packet = None if entry.redacted else entry.packet
    status = "approved" if entry.state == "pending" and entry.shown_file_id in marks else entry.state
    route = packet.origin.get("route") if packet is not None and isinstance(packet.origin, Mapping) else None
    return Item(
        id=entry.shown_id or entry.shown_file_id,
        source=ROUTES.get(str(route), "file"),
        status=status,
        type=packet.type if packet is not None else None,
        title=packet.title if packet is not None else None,
        created_at=(packet.proposed_at or packet.timestamp) if packet is not None else None,
        sensitivity=entry.pre.sensitivity,
        path=entry.shown_path,
        problem=entry.problem.code if entry.problem is not None else None,
        record_id=packet.resolution.record_id if packet is not None and packet.resolution is not None else None,
        safe_check=_safe_check(packet),
    )


# ------------------------------------------------------------------------------------------------ packet approvals


def _approval_dir(layout: Layout) -> Path:
    """Approvals of file packets: one JSON file per packet, named by a hash of its file id (which may hold ``/``)."""
    return inbox.state_dir(layout) / "packets"


def _approval_path(layout: Layout, file_id: str) -> Path:
    return _approval_dir(layout) / f"{short_hash(file_id.encode('utf-8'), 32)}.json"


def _approvals(layout: Layout) -> dict[str, dict[str, Any]]:
    """file id -> approval mark, for every readable mark (an unreadable one reads as no approval)."""
    folder = _approval_dir(layout)
    marks: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            data = safe_read.load_json(safe_read.read_text(path))
        except (InputError, OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("schema") == APPROVAL_SCHEMA and isinstance(data.get("file_id"), str):
            marks[data["file_id"]] = data
    return marks


# ------------------------------------------------------------------------------------------------ one id scheme


class Target(NamedTuple):
    """What an id names: ``kind`` ``proposal`` (``id`` is the ``prop_`` id) or ``packet`` (a packet identity)."""

    kind: str
    id: str


def resolve(layout: Layout, identity: str) -> Target:
    """The inbox proposal or file packet ``identity`` names: a ``prop_`` id with a state file, else a packet id,
    file id or redacted alias (a packet an inbox proposal owns resolves to that proposal). Read-only.

    Raises:
        UnknownProposal: nothing has that id (``unknown_proposal``). InputError: unreadable packet folders.
    """
    from git_memzoi.memzoi.proposals import files
    from git_memzoi.memzoi.proposals.entries import ProposalNotFound

    ident = identity.strip()
    if inbox.ID_PATTERN.match(ident) and (inbox.state_dir(layout) / f"{ident}.json").is_file():
        return Target("proposal", ident)
    try:
        entry = files.identities(layout).find(ident)
    except ProposalNotFound:
        raise UnknownProposal(NOT_FOUND) from None
    owner = next(
        (
            p.id
            for p in inbox.iter_proposals(layout)
            if isinstance(p, inbox.Proposal) and p.location == "pending" and p.file_id == entry.shown_file_id
        ),
        None,
    )
    return Target("proposal", owner) if owner is not None else Target("packet", ident)


@dataclass(frozen=True)
class Outcome:
    """What one verb did: the item afterwards, whether it changed, the apply result if any."""

    item: Item
    changed: bool
    applied: ApplyResult | None = None


@dataclass(frozen=True)
class Shown:
    """``proposals show``: the item, and either the inbox's :class:`~inbox.Shown` or the packet's entry."""

    item: Item
    proposal: inbox.Shown | None = None
    entry: Entry | None = None


def show(layout: Layout, identity: str) -> Shown:
    """One item by any id, with its packet (withheld as :func:`inbox.show` and ``proposal-files show`` withhold).

    Raises:
        UnknownProposal, InputError: as :func:`resolve`; the packet's own problem when it cannot be read.
    """
    from git_memzoi.memzoi.proposals import files

    target = resolve(layout, identity)
    if target.kind == "proposal":
        shown = inbox.show(layout, target.id)
        return Shown(_proposal_item(layout, shown.proposal), proposal=shown)
    entry = files.show_packet(layout, target.id)
    if entry.packet is None and entry.problem is not None:
        raise entry.problem
    return Shown(_entry_item(entry, _approvals(layout)), entry=entry)


def approve(ws: Workspace, identity: str, *, actor: str) -> Outcome:
    """pending → approved, by any id (approved is not applied); approving an approved item changes nothing.

    A file packet's approval is a mark in the inbox's private state (file id, who, when): nothing git-visible
    changes. Raises: as :func:`inbox.approve` (``proposal_applied``, ``proposal_rejected``, SensitivityBlocked
    for content that is not repo-safe), UnknownProposal, and the packet's problem when it does not parse.
    """
    from git_memzoi.memzoi.proposals import lifecycle

    target = resolve(ws.layout, identity)
    if target.kind == "proposal":
        done = inbox.approve(ws, target.id, actor=actor)
        return Outcome(_proposal_item(ws.layout, done.proposal), done.changed)
    with lifecycle.operation(ws.layout, "approve"):
        return _approve_packet(ws, target.id, actor)


def _approve_packet(ws: Workspace, identity: str, actor: str) -> Outcome:
    from git_memzoi.memzoi.proposals import files, lifecycle
    from git_memzoi.memzoi.proposals.packets import SensitivityBlocked

    entry = files.identities(ws.layout).find(identity)
    _refuse_resolved(entry, "be approved")
    if entry.redacted:
        raise SensitivityBlocked("approve", entry.pre.sensitivity)
    if entry.packet is None:
        raise entry.problem or InputError("the packet cannot be read", "invalid_proposal")
    marks = _approvals(ws.layout)
    if entry.shown_file_id in marks:
        return Outcome(_entry_item(entry, marks), changed=False)
    now = ws.clock.now()
    mark = {
        "schema": APPROVAL_SCHEMA,
        "file_id": entry.shown_file_id,
        "approved_by": actor,
        "approved_at": format_timestamp(now),
    }
    text = json.dumps(mark, indent=2, ensure_ascii=False) + "\n"
    lifecycle.write_step(ws.layout, lifecycle.Step(_approval_path(ws.layout, mark["file_id"]), text.encode("utf-8")))
    events.append(ws.layout, "proposal_file_approved", actor, now, {}, proposal_id=entry.packet.id)
    return Outcome(_entry_item(entry, {**marks, mark["file_id"]: mark}), changed=True)


def _refuse_resolved(entry: Entry, verb: str) -> None:
    if entry.state == "applied":
        raise inbox.TransitionRefused(f"that packet is already applied and cannot {verb}", "proposal_applied")
    if entry.state == "rejected":
        raise inbox.TransitionRefused(f"that packet was rejected and cannot {verb}", "proposal_rejected")


def reject(ws: Workspace, identity: str, *, reason: str, actor: str) -> Outcome:
    """Close an item for good with ``reason``, by any id; nothing is written to the records. Rejecting a
    rejected item changes nothing.

    Raises:
        InputError: an empty reason (``missing_reason``), checked first. UnknownProposal. TransitionRefused /
            InputError: already applied (``proposal_applied``, ``opposite_outcome``).
    """
    from git_memzoi.memzoi.proposals import files, lifecycle

    if not (reason or "").strip():
        raise InputError("reject needs a non-empty --reason", "missing_reason")
    target = resolve(ws.layout, identity)
    if target.kind == "proposal":
        done = inbox.reject(ws, target.id, reason=reason, actor=actor)
        return Outcome(_proposal_item(ws.layout, done.proposal), done.changed)
    with lifecycle.operation(ws.layout, "reject"):  # the packet move and dropping its approval as one
        result = files.reject_packet(ws, target.id, reason=reason, actor=actor)
        _drop_approval(ws.layout, result.file_id)
    return Outcome(_resolved_item(ws.layout, result.file_id), changed=not result.replayed)


def apply(ws: Workspace, identity: str, *, actor: str, operation: str = "apply") -> Outcome:
    """Apply an item into canonical records, by any id: an inbox proposal once approved
    (:func:`inbox.apply_proposal`), a file packet when pending or approved (``proposal-files apply``).
    Applying an applied item changes nothing.

    Raises:
        as :func:`inbox.apply_proposal` and :func:`files.apply_packet` (SensitivityBlocked, ``proposal_not_approved``,
        ``proposal_rejected``, ``opposite_outcome``, PacketError, TargetError), UnknownProposal.
    """
    from git_memzoi.memzoi.proposals import files, lifecycle

    target = resolve(ws.layout, identity)
    if target.kind == "proposal":
        done = inbox.apply_proposal(ws, target.id, actor=actor, operation=operation)
        return Outcome(_proposal_item(ws.layout, done.proposal), done.changed, done.applied)
    with lifecycle.operation(ws.layout, operation):  # the apply and dropping the packet's approval as one
        result = files.apply_packet(ws, target.id, actor=actor)
        _drop_approval(ws.layout, result.file_id)
    return Outcome(_resolved_item(ws.layout, result.file_id), not result.replayed, result)


def _drop_approval(layout: Layout, file_id: str) -> None:
    """Remove a resolved packet's approval mark (its identity can never return to pending)."""
    from git_memzoi.memzoi.proposals import lifecycle

    path = _approval_path(layout, file_id)
    if path.is_file():
        lifecycle.write_step(layout, lifecycle.Step(path, None))


def _resolved_item(layout: Layout, file_id: str) -> Item:
    from git_memzoi.memzoi.proposals import files

    return _entry_item(files.show_packet(layout, file_id), {})


@dataclass(frozen=True)
class BulkResult:
    """``proposals apply --all-approved``: what was applied and what failed (id, error), oldest first."""

    applied: tuple[Outcome, ...]
    failed: tuple[tuple[str, MemzoiError], ...]


def apply_all_approved(ws: Workspace, *, actor: str) -> BulkResult:
    """Apply every approved item (inbox proposals and approved file packets), oldest first; a failure is
    reported and the others still run."""
    applied: list[Outcome] = []
    failed: list[tuple[str, MemzoiError]] = []
    for item in list_items(ws.layout, "approved").items:
        try:
            applied.append(apply(ws, item.id, actor=actor, operation="proposals_apply"))
        except MemzoiError as exc:
            failed.append((item.id, exc))
    return BulkResult(tuple(applied), tuple(failed))
