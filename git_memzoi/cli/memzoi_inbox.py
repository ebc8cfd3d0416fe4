"""`git memzoi` commands of the review inbox: ``propose``, ``review``, ``proposals list|show|apply``, ``approve``,
``reject`` and ``apply`` (seed "CLI commands"; the cores are :mod:`git_memzoi.memzoi.proposals.inbox` for
``propose`` and :mod:`git_memzoi.memzoi.proposals.review` for the rest: inbox proposals and file packets under one
id scheme).

Commands parse, call one core function and render. This module is where ``MEMZOI_HOME`` is read.
A refused repo write (content that is not repo-safe) prints the seed's content-free envelope under ``--json``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from git_memzoi.cli.app import ID, actor_option, emit_json, json_option
from git_memzoi.cli.memzoi_packets import (
    guard_sensitivity,
    packet_json,
    review_lines,
    validity_options,
    watch_options,
    watch_request,
)
from git_memzoi.cli.memzoi_related import relation_option, relations_of
from git_memzoi.cli.workspace import open_workspace

if TYPE_CHECKING:
    from git_memzoi.memzoi import proposal_files, review

__all__ = ["register"]


def memzoi_home() -> Path:
    """``$MEMZOI_HOME``, else ``~/.memzoi``: where the user-global ``config.toml`` lives."""
    value = os.environ.get("MEMZOI_HOME")
    return Path(value) if value else Path.home() / ".memzoi"


def _apply_json(result: proposal_files.ApplyResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {
        "record_id": result.record_id,
        "file_id": result.file_id,
        "action": result.action,
        "resolved_path": result.resolved_path,
        "written": list(result.written),
        "replayed": result.replayed,
    }


def _line(item: review.Item) -> str:
    shown = item.title if item.title is not None else f"[content withheld: {item.withheld_because}]"
    check = f"  [safe check, run by verify --all-safe: {item.safe_check}]" if item.safe_check and item.is_open else ""
    return (
        f"{item.id}  {item.status:<9} {item.source:<11} {item.type or '-':<14} {item.created_at or '-':<20}  "
        f"{shown}{check}"
    )


def _outcome(verb: str, outcome: review.Outcome, as_json: bool) -> None:
    item = outcome.item
    if as_json:
        emit_json(
            {
                "id": item.id,
                "source": item.source,
                "status": item.status,
                "proposal": item.proposal.as_json() if item.proposal is not None else None,
                "item": item.as_json(),
                "changed": outcome.changed,
                "applied": _apply_json(outcome.applied),
            }
        )
    elif not outcome.changed:
        click.echo(f"{item.id} is already {item.status}; nothing changed")
    elif outcome.applied is not None:
        click.echo(f"applied {item.id} as record {outcome.applied.record_id}")
    else:
        click.echo(f"{verb} {item.id}")
    if not as_json and outcome.changed and item.safe_check and verb != "rejected":
        click.echo(f"  its check is marked safe: `git memzoi verify --all-safe` runs it: {item.safe_check}")


@click.command()
@click.option("--type", "memory_type", default=None, help="Memory type (default: fact).")
@click.option("--scope-kind", default=None, help="personal, repo, project, team, org, agent, imported_untrusted.")
@click.option("--scope-id", default=None, help="Which one of --scope-kind, e.g. a team's name (search --scope-id).")
@click.option("--visibility", default=None, help="public, private, repo, team, org (default: repo).")
@click.option("--sensitivity", default=None, help="repo-safe, local-only, ... (omitted: unknown).")
@click.option("--source-kind", default=None, help="Evidence kind: path, url, issue, ...")
@click.option("--source-ref", default=None, help="Evidence locator: a path, URL or ref.")
@click.option(
    "--applies-to",
    "applies_to",
    multiple=True,
    metavar="PATH",
    help="A repo-relative path or folder/** the memory is about (repeatable): what precheck --path, "
    "search --path and context --path match.",
)
@click.option("--tag", "tags", multiple=True, metavar="TAG", help="A tag search matches (repeatable), e.g. billing.")
@watch_options
@validity_options
@relation_option
@click.option("--title", default=None, help="One-line title.")
@click.option("--body", default=None, help="The memory itself.")
@actor_option
@click.option("--manual", is_flag=True, help="Leave the proposal pending, whatever the config says.")
@click.option("--auto-approve", is_flag=True, help="Approve it now, whatever the config says.")
@click.option("--apply", "apply_now", is_flag=True, help="Create, approve and apply (repo-safe only).")
@json_option
@click.pass_context
def propose(
    ctx: click.Context,
    memory_type: str | None,
    scope_kind: str | None,
    scope_id: str | None,
    visibility: str | None,
    sensitivity: str | None,
    source_kind: str | None,
    source_ref: str | None,
    applies_to: tuple[str, ...],
    tags: tuple[str, ...],
    scope_globs: tuple[str, ...],
    anchor: str | None,
    ttl_days: int | None,
    check_cmd: str | None,
    check_safe: bool,
    valid_from: str | None,
    valid_to: str | None,
    relation_args: tuple[str, ...],
    title: str | None,
    body: str | None,
    actor: str | None,
    manual: bool,
    auto_approve: bool,
    apply_now: bool,
    as_json: bool,
) -> None:
    """Propose a new memory record; the approval policy decides pending or approved (never applied).

    Example: git memzoi propose --type decision --sensitivity repo-safe --title "Use uv" --body "..."

    Example: git memzoi propose --type risk --applies-to scripts/release.sh --sensitivity repo-safe ...

    The record earns its freshness: it is anchored at --anchor (default HEAD) and turns suspect when a file in
    --scope (default: the --applies-to paths) changes, or after --ttl-days; git memzoi verify re-tests it.
    """
    from git_memzoi.errors import InputError
    from git_memzoi.memzoi import inbox

    if manual and auto_approve:
        raise InputError("--manual and --auto-approve cannot be combined", "conflicting_options")
    if apply_now and sensitivity is None:  # omitted is unknown, which apply always refuses: say so up front (exit 2)
        raise InputError(
            "--apply needs --sensitivity repo-safe: only repo-safe content is written to .memzoi/records/ "
            "(leave out --apply to propose it unclassified, for review)",
            "sensitivity_required",
        )
    draft = inbox.make_draft(
        title=title,
        body=body,
        type=memory_type,
        scope_kind=scope_kind,
        visibility=visibility,
        sensitivity=sensitivity,
        source_kind=source_kind,
        source_ref=source_ref,
        actor=actor,
        applies_to=applies_to,
        valid_from=valid_from,
        valid_to=valid_to,
        relations=relations_of(relation_args) or (),
        tags=tags,
        scope_id=scope_id,
    )
    watch = watch_request(scope_globs, anchor, ttl_days, check_cmd, check_safe)
    override = "manual" if manual else "auto" if auto_approve else None
    ws, home = open_workspace(ctx, actor=draft.actor), memzoi_home()
    result = guard_sensitivity(
        ctx,
        as_json,
        lambda: inbox.propose(ws, draft, memzoi_home=home, override=override, apply=apply_now, watch=watch),
    )
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    p = result.proposal
    blocker = None if draft.repo_safe else "--visibility private" if draft.visibility == "private" else "sensitivity"
    step = _next_step(p.id, p.status, result.applied is not None, blocker)
    if as_json:
        emit_json(
            {
                "proposal": p.as_json(),
                "created": result.created,
                "policy": result.policy.to_json(),
                "auto_approved": result.auto_approved,
                "applied": _apply_json(result.applied),
                "warnings": list(result.warnings),
                "watch": result.watch.as_json() if result.watch is not None else None,
                "next": step,
            }
        )
        return
    how = f"approval {result.policy.mode} from {result.policy.source}"
    click.echo(f"{'proposed' if result.created else 'already proposed'} {p.id}: {p.status} ({how})")
    if result.applied is not None:
        click.echo(f"applied as record {result.applied.record_id}")
    elif step:
        click.echo(f"next: {step}")


def _next_step(proposal_id: str, status: str, applied: bool, blocker: str | None = None) -> str | None:
    """The command that moves a new proposal on: approved is not written yet (issue 20: nothing said so). A
    proposal that cannot reach the repository (``blocker``: ``sensitivity`` when it is not repo-safe,
    ``--visibility private`` when marked private) can never be applied there, so its way on is to withdraw it
    and propose again without the blocker (a fresh user's walk found `approve && apply` printed for it, which then
    failed, and then the sensitivity named for a repo-safe proposal marked private)."""
    if applied:
        return None
    if blocker is not None and status in ("pending", "validated", "approved"):
        again = "with --sensitivity repo-safe" if blocker == "sensitivity" else "without --visibility private"
        return (
            f"git memzoi reject {proposal_id} --reason unclassified, then propose it again {again} "
            "(only repo-safe content not marked private can reach the repository)"
        )
    if status == "approved":
        return f"git memzoi apply {proposal_id}"
    if status in ("pending", "validated"):
        return f"git memzoi approve {proposal_id} && git memzoi apply {proposal_id}"
    return None


_STATUS_HELP = (
    "open (what waits: pending, validated, approved), pending, validated, approved, rejected, applied or all."
)


def _list(ctx: click.Context, status: str, as_json: bool) -> None:
    """``review`` and ``proposals list``: one listing, one rendering."""
    from git_memzoi.memzoi import review

    listing = review.list_items(open_workspace(ctx).layout, status)
    for problem in listing.problems:
        click.echo(f"warning: {problem}", err=True)
    if as_json:
        emit_json(listing.as_json())
        return
    if not listing.items:
        click.echo("nothing waits for review" if listing.status == "open" else f"no {listing.status} proposals")
    for item in listing.items:
        click.echo(_line(item))
    if listing.conflicts:
        click.echo(f"{len(listing.conflicts)} conflicting claim(s) among the records (supersede or tombstone one):")
    for conflict in listing.conflicts:
        click.echo(f"  [{conflict.kind}] {conflict.message}")


@click.command("review")
@click.option("--status", default="open", show_default=True, help=_STATUS_HELP)
@json_option
@click.pass_context
def review_command(ctx: click.Context, status: str, as_json: bool) -> None:
    """List everything waiting for review: proposals and the packets of session end, capture and import.

    One id per item (prop_... or the packet id), which approve, reject, apply and proposals show accept.
    Content that is not repo-safe is withheld.

    Example: git memzoi review --json
    """
    _list(ctx, status, as_json)


@click.group()
def proposals() -> None:
    """List, show and bulk-apply the review inbox (proposals and file packets)."""


@proposals.command("list")
@click.option("--status", default="open", show_default=True, help=_STATUS_HELP)
@json_option
@click.pass_context
def list_command(ctx: click.Context, status: str, as_json: bool) -> None:
    """List the review inbox by status: the same listing as git memzoi review.

    Example: git memzoi proposals list --status all --json
    """
    _list(ctx, status, as_json)


@proposals.command("show")
@click.argument("proposal_id", type=ID)
@json_option
@click.pass_context
def show_command(ctx: click.Context, proposal_id: str, as_json: bool) -> None:
    """Show one proposal or packet, by its prop_ id or packet id, with its content when repo-safe.

    Example: git memzoi proposals show prop_0197f... --json
    """
    from git_memzoi.memzoi import review

    shown = review.show(open_workspace(ctx).layout, proposal_id)
    if shown.proposal is not None:
        _show_proposal(shown.item, shown.proposal, as_json)
        return
    entry = shown.entry
    assert entry is not None and entry.packet is not None  # review.show raises the problem of an unreadable one
    if as_json:
        packet = None if entry.redacted else packet_json(entry.packet)
        emit_json(
            {
                "proposal": None,
                "item": shown.item.as_json(),
                "path": entry.shown_path,
                "packet": packet,
                "withheld": entry.redacted,
            }
        )
        return
    click.echo(_line(shown.item))
    if entry.shown_path:
        click.echo(f"  path: {entry.shown_path}")
    if not entry.redacted:
        for line in review_lines(entry.packet):
            click.echo(line)
        click.echo(f"\n{entry.packet.body}")


def _show_proposal(item: review.Item, shown: Any, as_json: bool) -> None:
    p = shown.proposal
    if as_json:
        packet = packet_json(shown.packet) if shown.packet is not None else None
        emit_json(
            {
                "proposal": p.as_json(),
                "item": item.as_json(),
                "path": shown.path,
                "packet": packet,
                "withheld": shown.withheld,
            }
        )
        return
    click.echo(_line(item))
    for key in (
        "file_id",
        "path",
        "proposed_by",
        "created_at",
        "approved_by",
        "approved_at",
        "rejected_by",
        "rejected_at",
        "reason",
        "applied_by",
        "applied_at",
        "record_id",
    ):
        value = shown.path if key == "path" else getattr(p, key)
        if value is not None:
            click.echo(f"  {key}: {value}")
    if shown.packet is not None:
        for line in review_lines(shown.packet):
            click.echo(line)
        click.echo(f"\n{shown.packet.body}")


@proposals.command("apply")
@click.option("--all-approved", is_flag=True, help="Apply every approved proposal and packet (required).")
@actor_option
@json_option
@click.pass_context
def apply_all(ctx: click.Context, all_approved: bool, actor: str | None, as_json: bool) -> None:
    """Apply every approved proposal and packet into canonical records; exit 1 when one fails.

    Example: git memzoi proposals apply --all-approved
    """
    from git_memzoi.errors import InputError
    from git_memzoi.memzoi import review

    if not all_approved:
        raise InputError("pass --all-approved to apply every approved proposal", "missing_all_approved")
    result = review.apply_all_approved(open_workspace(ctx, actor=actor), actor=actor or "cli")
    if as_json:
        applied = [{"proposal_id": o.item.id, **(_apply_json(o.applied) or {})} for o in result.applied]
        failed = [{"proposal_id": i, "code": e.code, "message": e.message} for i, e in result.failed]
        emit_json({"applied": applied, "failed": failed})
    else:
        for o in result.applied:
            record_id = o.applied.record_id if o.applied is not None else None
            click.echo(f"applied {o.item.id} as record {record_id}")
        for prop_id, error in result.failed:
            click.echo(f"failed  {prop_id}: {error.message}", err=True)
        click.echo(f"{len(result.applied)} applied, {len(result.failed)} failed")
    if result.failed:
        ctx.exit(1)


@click.command()
@click.argument("proposal_id", type=ID)
@actor_option
@json_option
@click.pass_context
def approve(ctx: click.Context, proposal_id: str, actor: str | None, as_json: bool) -> None:
    """Approve a pending proposal or packet, by its prop_ id or packet id (approved is not applied).

    Example: git memzoi approve prop_0197f...
    """
    from git_memzoi.memzoi import review

    ws = open_workspace(ctx, actor=actor)
    outcome = guard_sensitivity(ctx, as_json, lambda: review.approve(ws, proposal_id, actor=actor or "cli"))
    _outcome("approved", outcome, as_json)


@click.command()
@click.argument("proposal_id", type=ID)
@click.option("--reason", default=None, help="Why it is rejected (required).")
@actor_option
@json_option
@click.pass_context
def reject(ctx: click.Context, proposal_id: str, reason: str | None, actor: str | None, as_json: bool) -> None:
    """Reject a proposal or packet, by its prop_ id or packet id; closed for good, no record is written.

    Example: git memzoi reject prop_0197f... --reason "duplicate of use-uv"
    """
    from git_memzoi.memzoi import review

    outcome = review.reject(open_workspace(ctx, actor=actor), proposal_id, reason=reason or "", actor=actor or "cli")
    _outcome("rejected", outcome, as_json)


@click.command()
@click.argument("proposal_id", type=ID)
@actor_option
@json_option
@click.pass_context
def apply(ctx: click.Context, proposal_id: str, actor: str | None, as_json: bool) -> None:
    """Apply an approved proposal, or a pending or approved packet, into canonical .memzoi/records/.

    Example: git memzoi apply prop_0197f... --json
    """
    from git_memzoi.memzoi import review

    ws = open_workspace(ctx, actor=actor)
    outcome = guard_sensitivity(ctx, as_json, lambda: review.apply(ws, proposal_id, actor=actor or "cli"))
    _outcome("applied", outcome, as_json)


def register(cli: click.Group) -> None:
    """Add this area's commands to ``cli``."""
    for command in (propose, review_command, proposals, approve, reject, apply):
        cli.add_command(command)
