"""The proposal inbox (io): propose, approve, reject and apply memory proposals (seed "Status values").

Upstream keeps this inbox in a database; here the working tree is the only store, so a proposal is two files:
its content, an OKF create packet (repo-safe: in ``.memzoi/proposals/pending/`` via
``proposal_files.write_pending_packet``; anything else: privately in :attr:`Layout.private_proposals`
(``.git/memzoi/local/proposals/``), never git-visible, never appliable), and its workflow state :attr:`Layout.inbox` ``/<id>.json`` (status, packet file id,
who approved, rejected or applied it and when, the reason; classifications only, never a title or a body).
Transitions only move forward: repeating approve or reject of the current state changes nothing, ``applied`` and
``rejected`` are terminal, the opposite outcome is refused. Where the packet lives wins over the state file: a
packet applied or rejected directly through ``proposal-files`` reads as applied or rejected.
Ids are ``prop_`` + a UUIDv7-shaped value derived, not drawn (:func:`proposal_id`): the clock's ``now()`` in
milliseconds and BLAKE3 bits of the normalized proposal, so one proposal at one instant has one id.
Listing, counting and the verbs by any id (these proposals and the file packets of session end, capture and
import together) are :mod:`~git_memzoi.memzoi.proposals.review`'s.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.core import safe_read
from git_memzoi.core.hashing import content_hash
from git_memzoi.errors import InputError
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.proposals.drafts import (  # re-exported for callers of the inbox: see __all__
    ID_PATTERN,
    REPO_SAFE,
    Draft,
    build_packet,
    check_id,
    make_draft,
    proposal_id,
)
from git_memzoi.memzoi.records import events, vocab
from git_memzoi.memzoi.records.okf import format_timestamp

# lifecycle, the writers' machinery (~20 ms of imports), is imported by the functions that write: a reader such as
# the session-start hook lists and counts proposals without it.

if TYPE_CHECKING:
    from git_memzoi.memzoi.proposals.files import ApplyResult
    from git_memzoi.memzoi.proposals.packets import Packet
    from git_memzoi.memzoi.records.envelope import Sealed, WatchRequest
    from git_memzoi.memzoi.records.policy import ApprovalPolicy
    from git_memzoi.memzoi.workspace import Workspace

# the names of drafts this module re-exports (its own public names are exported as ever)
__all__ = ["ID_PATTERN", "REPO_SAFE", "Draft", "build_packet", "check_id", "make_draft", "proposal_id"]

SCHEMA = "memzoi/inbox-proposal-v1"
STATUS_FILTERS = ("open", *vocab.INBOX_STATUSES, "all")


class ProposalNotFound(InputError):
    """No inbox proposal with that id (exit 2)."""

    default_code = "unknown_proposal"


class TransitionRefused(InputError):
    """A status change the inbox never makes: reopening a terminal proposal, the opposite outcome (exit 2)."""

    default_code = "invalid_transition"


@dataclass(frozen=True)
class Proposal:
    """One inbox proposal's workflow state. ``location`` is ``pending`` (the git-visible packet folder) or
    ``private`` (:attr:`Layout.private_proposals`); ``packet_missing`` is true when its packet file is gone."""

    id: str
    status: str
    sensitivity: str
    type: str
    lane: str
    scope_kind: str
    visibility: str
    source_kind: str | None
    file_id: str
    location: str
    content_hash: str
    proposed_by: str
    created_at: str
    updated_at: str
    approval_mode: str
    approval_source: str
    approved_by: str | None = None
    approved_at: str | None = None
    rejected_by: str | None = None
    rejected_at: str | None = None
    reason: str | None = None
    applied_by: str | None = None
    applied_at: str | None = None
    record_id: str | None = None
    packet_missing: bool = False

    @property
    def repo_safe(self) -> bool:
        """Whether the proposal may be applied into repo records."""
        return self.sensitivity == REPO_SAFE and self.location == "pending"

    @property
    def is_open(self) -> bool:
        """pending, validated or approved."""
        return self.status in vocab.OPEN_INBOX_STATUSES

    def as_json(self) -> dict[str, Any]:
        """The state as ``--json`` shows it, plus ``repo_safe``."""
        return {**asdict(self), "repo_safe": self.repo_safe}


def state_dir(layout: Layout) -> Path:
    """:attr:`Layout.inbox`: one JSON state file per proposal (packets that are not repo-safe live in
    :attr:`Layout.private_proposals`, never git-visible); private memory, shared by every worktree."""
    return layout.inbox


def packet_path(layout: Layout, proposal: Proposal) -> Path:
    """Where the proposal's packet is now: private, pending, resolved/applied or resolved/rejected."""
    name = f"{proposal.file_id}.md"
    if proposal.location == "private":
        return layout.private_proposals / name
    folders = (layout.pending, layout.resolved("applied"), layout.resolved("rejected"))
    return next((f / name for f in folders if (f / name).is_file()), layout.pending / name)


def load(layout: Layout, prop_id: str) -> Proposal:
    """The proposal ``prop_id``, reconciled with where its packet is.

    Raises:
        InputError: malformed id or state file (``bad_proposal_id``, ``invalid_inbox_state``); ProposalNotFound.
    """
    path = state_dir(layout) / f"{check_id(prop_id)}.json"
    if not path.is_file() or path.is_symlink():
        raise ProposalNotFound(f"no proposal {prop_id} in the inbox (see `git memzoi proposals list --status all`)")
    return _reconcile(layout, _read_state(path, prop_id))


def _load_unresolved(layout: Layout, prop_id: str) -> Proposal:
    """:func:`load` without reading the resolution of a packet just applied: the caller overwrites every field
    it would fill (status, applied_by, applied_at, record_id), so only ``packet_missing`` is reconciled."""
    proposal = _read_state(state_dir(layout) / f"{check_id(prop_id)}.json", prop_id)
    return replace(proposal, packet_missing=not packet_path(layout, proposal).is_file())


def _read_state(path: Path, prop_id: str) -> Proposal:
    names = set(Proposal.__dataclass_fields__)
    try:
        data = safe_read.load_json(safe_read.read_text(path))  # a FIFO is refused unopened (not_a_regular_file)
        if not isinstance(data, dict) or data.pop("schema", None) != SCHEMA or data.get("id") != prop_id:
            raise ValueError("unexpected schema or id")
        proposal = Proposal(**{k: v for k, v in data.items() if k in names})
        if proposal.status not in vocab.INBOX_STATUSES or proposal.sensitivity not in vocab.SENSITIVITIES:
            raise ValueError("unknown status or sensitivity")
    except (ValueError, TypeError) as exc:
        raise InputError(f"{path}: not a readable inbox state file ({exc})", "invalid_inbox_state") from None
    return proposal


def _reconcile(layout: Layout, proposal: Proposal) -> Proposal:
    path = packet_path(layout, proposal)
    if not path.is_file():
        return replace(proposal, packet_missing=True)
    outcome = path.parent.name if path.parent.parent.name == "resolved" else None
    if outcome is None or proposal.status == outcome:
        return proposal
    packet = _parse(path, proposal.file_id)  # resolved directly through proposal-files
    res = asdict(packet.resolution) if packet is not None and packet.resolution is not None else {}
    by, at = res.get("resolved_by"), res.get("resolved_at")
    if outcome == "applied":
        return replace(proposal, status=outcome, applied_by=by, applied_at=at, record_id=res.get("record_id"))
    return replace(proposal, status=outcome, rejected_by=by, rejected_at=at, reason=res.get("reason"))


def _parse(path: Path, file_id: str) -> Packet | None:
    from git_memzoi.memzoi.proposals import packets

    try:
        return packets.parse(file_id, path.name, safe_read.read_bytes(path))
    except (InputError, OSError):
        return None


def _save(layout: Layout, proposal: Proposal) -> None:
    from git_memzoi.memzoi.proposals import lifecycle

    stored = {"schema": SCHEMA, **asdict(replace(proposal, packet_missing=False))}
    text = json.dumps(stored, indent=2, ensure_ascii=False) + "\n"
    lifecycle.write_step(layout, lifecycle.Step(state_dir(layout) / f"{proposal.id}.json", text.encode("utf-8")))


def iter_proposals(layout: Layout) -> Iterator[Proposal | InputError]:
    """Every proposal in id (= creation) order; an unreadable state file yields its error instead."""
    folder = state_dir(layout)
    for path in sorted(folder.glob("prop_*.json")) if folder.is_dir() else ():
        prop_id = path.name[: -len(".json")]
        if path.is_symlink() or not ID_PATTERN.match(prop_id):
            continue
        try:
            yield _reconcile(layout, _read_state(path, prop_id))
        except InputError as exc:
            yield exc


@dataclass(frozen=True)
class Shown:
    """``proposals show``: the state, the packet and its path (the packet ``None`` when withheld or unreadable,
    the path ``None`` when not repo-safe); ``withheld``: the content is kept back (not repo-safe, or it holds a
    credential)."""

    proposal: Proposal
    packet: Packet | None
    path: str | None
    withheld: bool = False


def show(layout: Layout, prop_id: str) -> Shown:
    """One proposal with its packet; a packet that is not repo-safe is withheld (path and content), and so is
    one that holds a credential (its content)."""
    proposal = load(layout, prop_id)
    path = packet_path(layout, proposal).relative_to(layout.root).as_posix() if proposal.repo_safe else None
    packet = read_packet(layout, proposal)
    held = not proposal.repo_safe or (packet is None and _holds_credential(packet_path(layout, proposal)))
    return Shown(proposal, packet, path, held)


def read_packet(layout: Layout, proposal: Proposal) -> Packet | None:
    """The packet when repo-safe, readable and free of credentials, else ``None``: private content and secrets
    (a packet hand-edited or committed with ``--no-verify``) are never returned, never echoed."""
    path = packet_path(layout, proposal)
    if not proposal.repo_safe or _holds_credential(path):
        return None
    return _parse(path, proposal.file_id)


def _holds_credential(path: Path) -> bool:
    from git_memzoi.memzoi.records.secrets import classify

    try:
        return bool(classify(path.read_bytes().decode("utf-8", "replace"), personal=False))
    except OSError:
        return False


@dataclass(frozen=True)
class Outcome:
    """What one inbox operation did: the proposal afterwards, whether it changed, the apply result if any."""

    proposal: Proposal
    changed: bool
    applied: ApplyResult | None = None


@dataclass(frozen=True)
class ProposeResult:
    """``propose``: the proposal, whether it is new, the policy that decided approval, and any apply."""

    proposal: Proposal
    created: bool
    policy: ApprovalPolicy
    auto_approved: bool
    applied: ApplyResult | None = None
    warnings: tuple[str, ...] = ()
    watch: Sealed | None = None  # the envelope the record is written with, and whether anything watches it


def propose(
    ws: Workspace,
    draft: Draft,
    *,
    memzoi_home: Path | None,
    override: str | None = None,
    apply: bool = False,
    watch: WatchRequest | None = None,
    actor_kind: str = "human",
) -> ProposeResult:
    """Record ``draft`` with the earned envelope ``watch`` asks for (default: scope = its ``applies_to``, anchor =
    HEAD, verified today; :func:`~git_memzoi.memzoi.records.envelope.seal`); approve it when the policy
    (``memzoi_home`` config < repo config < ``override``, see :mod:`~git_memzoi.memzoi.records.policy`) is
    ``auto``; apply it with ``apply``. Auto-approval means approved, not applied; a draft that is not repo-safe is
    kept privately and stays pending, as it can never be applied. ``actor_kind`` is ``human`` (the CLI: policy
    default ``auto``) or ``agent`` (MCP, hooks: default ``manual``, so the proposal waits for review; an agent's
    ``apply`` or ``auto`` override is refused, ``agent_self_approval``).

    Raises:
        InputError: ``apply`` with ``override="manual"`` (``conflicting_options``); PolicyError: bad config.
        SensitivityBlocked: ``apply`` of a draft that is not repo-safe. PacketError: not a valid packet.
        InputError: the draft holds a credential (``prohibited_content_detected``; never echoed), or
            ``--anchor`` names no commit (``unknown_rev``).
        (Every check runs before anything is written.)
    """
    from git_memzoi.memzoi.proposals import lifecycle, packets
    from git_memzoi.memzoi.records.envelope import WatchRequest as Request
    from git_memzoi.memzoi.records.envelope import seal
    from git_memzoi.memzoi.records.policy import resolve
    from git_memzoi.memzoi.records.secrets import require_clean, require_clean_fields

    if apply and override == "manual":
        raise InputError("--apply cannot be combined with --manual", "conflicting_options")
    if apply and actor_kind == "agent":
        raise InputError("an agent cannot apply its own proposal; a human reviews it", "agent_self_approval")
    if apply and draft.visibility == "private":
        raise _private_visibility()
    if apply and not draft.repo_safe:
        raise packets.SensitivityBlocked("propose_apply", draft.sensitivity)
    policy = resolve(ws.layout.config, memzoi_home, override, actor_kind=actor_kind)
    now = ws.clock.now()
    prop_id = proposal_id(now, draft.identity())
    sealed = seal(ws.layout.root, watch or Request(), draft.applies_to, ws.clock.today())
    packet = build_packet(draft, prop_id, now, memkeep=sealed.envelope)
    text = packets.render(packet)
    packets.parse(prop_id, f"{prop_id}.md", text.encode("utf-8"))  # validate before writing anything
    # the fields as the user gave them first ("body line 1"), then the rendered packet (derived fields)
    require_clean_fields(
        {
            "title": draft.title,
            "body": draft.body,
            "source_ref": draft.source_ref,
            "--applies-to": list(draft.applies_to) or None,
            "--tag": list(draft.tags) or None,
        },
        "the proposal",
    )
    require_clean(text, "the proposal", document=True)
    # one operation: killed part-way, the next guarded command rolls all of it back (packet, state, record)
    with lifecycle.operation(ws.layout, "propose_apply" if apply else "propose"):
        try:
            proposal, created = load(ws.layout, prop_id), False
        except ProposalNotFound:
            proposal, created = _create(ws, draft, packet, text, policy, now), True
        auto = (policy.mode == "auto" or apply) and proposal.repo_safe and proposal.status in ("pending", "validated")
        if auto:
            proposal = approve(ws, prop_id, actor=draft.actor, auto=True).proposal
        applied = None
        if apply:
            outcome = apply_proposal(ws, prop_id, actor=draft.actor, operation="propose_apply")
            proposal, applied = outcome.proposal, outcome.applied
    warnings = _warnings(draft, policy) + _missing_targets(ws, draft)
    return ProposeResult(proposal, created, policy, auto, applied, warnings, sealed)


def _private_visibility() -> InputError:
    """The refusal of any repo write of a proposal marked ``visibility: private`` (issue 20; exit 2)."""
    return InputError(
        "a proposal with visibility private is never written as repo memory: keep it with `git memzoi local add`,"
        " or propose it with --visibility repo",
        "private_visibility",
    )


def _missing_targets(ws: Workspace, draft: Draft) -> tuple[str, ...]:
    """A warning per record id a relation of ``draft`` names that no current repository record has: kept (the
    record may come later), but said now, since the new record is ``dependency_suspect`` until it exists."""
    wanted = sorted({r.target for r in draft.relations if not r.targets_path})
    if not wanted:
        return ()
    from git_memzoi.memzoi.recall.linked import current_rows

    known = current_rows(ws, wanted)
    return tuple(
        f"relation target {t!r} names no current repository record (broken_relation until it exists)"
        for t in wanted
        if t not in known
    )


def _warnings(draft: Draft, policy: ApprovalPolicy) -> tuple[str, ...]:
    private = (
        f"not auto-approved: sensitivity {draft.sensitivity} is not repo-safe, so the proposal is kept "
        "privately and can never be applied to the repo"
    )
    visibility = (
        f"visibility {draft.visibility} is kept in the inbox only: proposal packets carry no "
        "visibility, and an applied record is written with visibility repo"
    )
    kept = "visibility private: the proposal is kept privately and can never be applied to the repo"
    return tuple(
        w
        for w, on in (
            (kept, draft.visibility == "private"),
            (private, policy.mode == "auto" and not draft.repo_safe and draft.visibility != "private"),
            (visibility, draft.visibility != "repo" and draft.repo_safe),
        )
        if on
    )


def _create(
    ws: Workspace, draft: Draft, packet: Packet, text: str, policy: ApprovalPolicy, now: dt.datetime
) -> Proposal:
    from git_memzoi.memzoi.proposals import lifecycle

    with lifecycle.operation(ws.layout, "propose"):  # the packet install and the state file as one
        return _create_locked(ws, draft, packet, text, policy, now)


def _create_locked(
    ws: Workspace, draft: Draft, packet: Packet, text: str, policy: ApprovalPolicy, now: dt.datetime
) -> Proposal:
    from git_memzoi.memzoi.proposals import lifecycle

    layout, stamp, file_id = ws.layout, format_timestamp(now), packet.id
    if draft.repo_safe and not _adoptable(layout.pending / f"{packet.id}.md", text):
        from git_memzoi.memzoi.proposals.files import write_pending_packet

        file_id, _ = write_pending_packet(ws, packet)
    proposal = Proposal(
        id=packet.id,
        status="pending",
        sensitivity=draft.sensitivity,
        type=draft.type,
        lane=draft.lane,
        scope_kind=draft.scope_kind,
        visibility=draft.visibility,
        source_kind=draft.source_kind,
        file_id=file_id,
        location="pending" if draft.repo_safe else "private",
        proposed_by=draft.actor,
        created_at=stamp,
        content_hash=content_hash(draft.body.encode("utf-8")).removeprefix("blake3:"),
        updated_at=stamp,
        approval_mode=policy.mode,
        approval_source=policy.source,
    )
    if not draft.repo_safe:
        lifecycle.write_step(layout, lifecycle.Step(packet_path(layout, proposal), text.encode("utf-8")))
    _save(layout, proposal)
    payload = {
        "sensitivity": draft.sensitivity,
        "location": proposal.location,
        "file_id": file_id,
        "approval_mode": policy.mode,
        "approval_source": policy.source,
    }
    events.append(layout, "proposal.proposed", draft.actor, now, payload, proposal_id=packet.id)
    return proposal  # a failure above rolls back the pending packet too: the caller's operation


def _adoptable(path: Path, text: str) -> bool:
    # A pending packet with exactly these bytes but no state file is this proposal from an interrupted run.
    try:
        return safe_read.read_bytes(path) == text.encode("utf-8")
    except (OSError, InputError):  # missing, or no regular file (a link, a FIFO: never opened)
        return False


def approve(ws: Workspace, prop_id: str, *, actor: str, auto: bool = False) -> Outcome:
    """pending|validated → approved; approving an approved proposal changes nothing.

    Raises:
        TransitionRefused: applied or rejected (``proposal_applied``, ``proposal_rejected``). SensitivityBlocked:
            not repo-safe, so never approvable for a repo write. ProposalNotFound, InputError: bad id.
    """
    from git_memzoi.memzoi.proposals import lifecycle
    from git_memzoi.memzoi.proposals.packets import SensitivityBlocked

    with lifecycle.guarded(ws.layout):
        proposal = load(ws.layout, prop_id)
        _refuse_terminal(proposal, "be approved")
        if proposal.status == "approved":
            return Outcome(proposal, changed=False)
        if not proposal.repo_safe:
            raise (
                _private_visibility()
                if proposal.visibility == "private"
                else SensitivityBlocked("approve", proposal.sensitivity)
            )
        now = ws.clock.now()
        stamp = format_timestamp(now)
        proposal = replace(proposal, status="approved", approved_by=actor, approved_at=stamp, updated_at=stamp)
        _save(ws.layout, proposal)
        events.append(ws.layout, "proposal.approved", actor, now, {"auto": auto}, proposal_id=proposal.id)
    return Outcome(proposal, changed=True)


def reject(ws: Workspace, prop_id: str, *, reason: str, actor: str) -> Outcome:
    """pending|validated|approved → rejected, with a reason; rejecting a rejected proposal changes nothing.

    A repo-safe proposal's packet moves to ``resolved/rejected/`` through ``proposal_files.reject_packet``; a
    private one stays where it is (git never sees it). The reason is kept in the state file, not in events.

    Raises:
        InputError: empty reason (``missing_reason``), bad id. TransitionRefused: applied (``proposal_applied``).
    """
    from git_memzoi.memzoi.proposals import lifecycle

    clean = (reason or "").strip()
    if not clean:
        raise InputError("reject needs a non-empty --reason", "missing_reason")
    with lifecycle.operation(ws.layout, "reject"):  # the packet move and the state file as one
        return _reject_locked(ws, prop_id, clean, actor)


def _reject_locked(ws: Workspace, prop_id: str, clean: str, actor: str) -> Outcome:
    proposal = load(ws.layout, prop_id)
    if proposal.status == "rejected":
        return Outcome(proposal, changed=False)
    _refuse_terminal(proposal, "be rejected")
    if proposal.repo_safe and not proposal.packet_missing:
        from git_memzoi.memzoi.proposals.files import reject_packet

        reject_packet(ws, proposal.file_id, reason=clean, actor=actor)
    now = ws.clock.now()
    stamp = format_timestamp(now)
    proposal = replace(
        load(ws.layout, prop_id),
        status="rejected",
        rejected_by=actor,
        rejected_at=stamp,
        reason=clean,
        updated_at=stamp,
    )
    _save(ws.layout, proposal)
    events.append(ws.layout, "proposal.rejected", actor, now, {}, proposal_id=proposal.id)
    return Outcome(proposal, changed=True)


def apply_proposal(ws: Workspace, prop_id: str, *, actor: str, operation: str = "apply") -> Outcome:
    """approved → applied: the packet becomes a canonical record through ``proposal_files.apply_packet``.

    Applying an applied proposal changes nothing. A proposal that is not repo-safe is refused with the
    content-free :class:`~git_memzoi.memzoi.proposals.packets.SensitivityBlocked` error.

    Raises:
        SensitivityBlocked: not repo-safe. TransitionRefused: not approved yet (``proposal_not_approved``) or
            rejected (``proposal_rejected``). PacketError, TargetError: from the apply. InputError: bad id.
    """
    from git_memzoi.memzoi.proposals import lifecycle

    # One operation over the packet apply and the inbox state, so no crash window between.
    with lifecycle.operation(ws.layout, operation):
        return _apply_locked(ws, prop_id, actor=actor, operation=operation)


def _apply_locked(ws: Workspace, prop_id: str, *, actor: str, operation: str) -> Outcome:
    from git_memzoi.memzoi.proposals.files import apply_packet
    from git_memzoi.memzoi.proposals.packets import SensitivityBlocked

    proposal = load(ws.layout, prop_id)
    if not proposal.repo_safe:
        raise (
            _private_visibility()
            if proposal.visibility == "private"
            else SensitivityBlocked(operation, proposal.sensitivity)
        )
    if proposal.status == "applied":
        return Outcome(proposal, changed=False)
    _refuse_terminal(proposal, "be applied")
    if proposal.status != "approved":
        raise TransitionRefused(
            f"proposal {prop_id} is {proposal.status}; approve it first (`git memzoi approve {prop_id}`)",
            "proposal_not_approved",
        )
    result = apply_packet(ws, proposal.file_id, actor=actor)
    now = ws.clock.now()
    stamp = format_timestamp(now)
    proposal = replace(
        _load_unresolved(ws.layout, prop_id),
        status="applied",
        applied_by=actor,
        applied_at=stamp,
        record_id=result.record_id,
        updated_at=stamp,
    )
    _save(ws.layout, proposal)
    events.append(
        ws.layout,
        "proposal.applied",
        actor,
        now,
        {"file_id": result.file_id},
        record_id=result.record_id,
        proposal_id=proposal.id,
    )
    return Outcome(proposal, changed=True, applied=result)


def _refuse_terminal(proposal: Proposal, verb: str) -> None:
    if proposal.status == "applied":
        raise TransitionRefused(
            f"proposal {proposal.id} is already applied (record {proposal.record_id}) and "
            f"cannot {verb}; supersede or tombstone the record instead",
            "proposal_applied",
        )
    if proposal.status == "rejected":
        raise TransitionRefused(
            f"proposal {proposal.id} was rejected and cannot {verb}; rejected proposals are never reopened",
            "proposal_rejected",
        )
