"""`git memzoi` commands of the proposal inbox: ``propose``, ``proposals list|show|apply``, ``approve``,
``reject`` and ``apply`` (seed "CLI commands"; the core is :mod:`git_memzoi.memzoi.proposals.inbox`).

Commands parse, call one core function and render. This module is where ``MEMZOI_HOME`` is read.
A refused repo write (content that is not repo-safe) prints the seed's content-free envelope under ``--json``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from git_memzoi.cli.app import ID, actor_option, emit_json, json_option
from git_memzoi.cli.memzoi_packets import guard_sensitivity, packet_json, watch_options, watch_request
from git_memzoi.cli.workspace import open_workspace

if TYPE_CHECKING:
    from git_memzoi.memzoi import inbox, layout, proposal_files

__all__ = ["inbox_counts", "register"]


def inbox_counts(layout: layout.Layout) -> dict[str, int]:
    """Open inbox counts ``{"open", "pending", "validated", "approved"}`` (for ``handoff``'s proposal_inbox)."""
    from git_memzoi.memzoi import inbox

    return inbox.inbox_counts(layout)


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


def _line(proposal: inbox.Proposal, title: str | None) -> str:
    shown = title if title is not None else f"[content withheld: {proposal.sensitivity}]"
    return f"{proposal.id}  {proposal.status:<9} {proposal.sensitivity:<21} {proposal.type:<14} {shown}"


def _outcome(verb: str, outcome: inbox.Outcome, as_json: bool) -> None:
    proposal = outcome.proposal
    if as_json:
        emit_json(
            {
                "ok": True,
                "proposal": proposal.as_json(),
                "changed": outcome.changed,
                "applied": _apply_json(outcome.applied),
            }
        )
    elif not outcome.changed:
        click.echo(f"{proposal.id} is already {proposal.status}; nothing changed")
    elif outcome.applied is not None:
        click.echo(f"applied {proposal.id} as record {outcome.applied.record_id}")
    else:
        click.echo(f"{verb} {proposal.id}")


@click.command()
@click.option("--type", "memory_type", default=None, help="Memory type (default: fact).")
@click.option("--scope-kind", default=None, help="personal, repo, project, team, org, agent, imported_untrusted.")
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
@watch_options
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
    visibility: str | None,
    sensitivity: str | None,
    source_kind: str | None,
    source_ref: str | None,
    applies_to: tuple[str, ...],
    scope_globs: tuple[str, ...],
    anchor: str | None,
    ttl_days: int | None,
    check_cmd: str | None,
    check_safe: bool,
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
    if as_json:
        emit_json(
            {
                "ok": True,
                "proposal": p.as_json(),
                "created": result.created,
                "policy": result.policy.to_json(),
                "auto_approved": result.auto_approved,
                "applied": _apply_json(result.applied),
                "warnings": list(result.warnings),
                "watch": result.watch.as_json() if result.watch is not None else None,
            }
        )
        return
    how = f"approval {result.policy.mode} from {result.policy.source}"
    click.echo(f"{'proposed' if result.created else 'already proposed'} {p.id}: {p.status} ({how})")
    if result.applied is not None:
        click.echo(f"applied as record {result.applied.record_id}")


@click.group()
def proposals() -> None:
    """List, show and bulk-apply the proposal inbox."""


@proposals.command("list")
@click.option(
    "--status", default="open", show_default=True, help="open, pending, validated, approved, rejected, applied or all."
)
@json_option
@click.pass_context
def list_command(ctx: click.Context, status: str, as_json: bool) -> None:
    """List proposals by status (content of proposals that are not repo-safe is withheld).

    Example: git memzoi proposals list --status all --json
    """
    from git_memzoi.memzoi import inbox

    listing = inbox.list_proposals(open_workspace(ctx).layout, status)
    for problem in listing.problems:
        click.echo(f"warning: {problem}", err=True)
    if as_json:
        emit_json(
            {
                "ok": True,
                "status": listing.status,
                "count": len(listing.items),
                "proposals": [{**p.as_json(), "title": t} for p, t in listing.items],
                "problems": list(listing.problems),
            }
        )
        return
    if not listing.items:
        click.echo("no proposals" if listing.status == "all" else f"no {listing.status} proposals")
    for proposal, title in listing.items:
        click.echo(_line(proposal, title))


@proposals.command("show")
@click.argument("proposal_id", type=ID)
@json_option
@click.pass_context
def show_command(ctx: click.Context, proposal_id: str, as_json: bool) -> None:
    """Show one proposal's state and packet.

    Example: git memzoi proposals show prop_0197f... --json
    """
    from git_memzoi.memzoi import inbox

    shown = inbox.show(open_workspace(ctx).layout, proposal_id)
    p = shown.proposal
    if as_json:
        packet = packet_json(shown.packet) if shown.packet is not None else None
        emit_json(
            {"ok": True, "proposal": p.as_json(), "path": shown.path, "packet": packet, "withheld": shown.withheld}
        )
        return
    click.echo(_line(p, shown.packet.title if shown.packet else None))
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
        click.echo(f"\n{shown.packet.body}")


@proposals.command("apply")
@click.option("--all-approved", is_flag=True, help="Apply every approved proposal (required).")
@actor_option
@json_option
@click.pass_context
def apply_all(ctx: click.Context, all_approved: bool, actor: str | None, as_json: bool) -> None:
    """Apply every approved proposal into canonical records; exit 1 when one fails.

    Example: git memzoi proposals apply --all-approved
    """
    from git_memzoi.errors import InputError
    from git_memzoi.memzoi import inbox

    if not all_approved:
        raise InputError("pass --all-approved to apply every approved proposal", "missing_all_approved")
    result = inbox.apply_all_approved(open_workspace(ctx, actor=actor), actor=actor or "cli")
    if as_json:
        applied = [{"proposal_id": o.proposal.id, **(_apply_json(o.applied) or {})} for o in result.applied]
        failed = [{"proposal_id": i, "code": e.code, "message": e.message} for i, e in result.failed]
        emit_json({"ok": not result.failed, "applied": applied, "failed": failed})
    else:
        for o in result.applied:
            click.echo(f"applied {o.proposal.id} as record {o.proposal.record_id}")
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
    """Approve a pending or validated proposal (approved is not applied).

    Example: git memzoi approve prop_0197f...
    """
    from git_memzoi.memzoi import inbox

    ws = open_workspace(ctx, actor=actor)
    outcome = guard_sensitivity(ctx, as_json, lambda: inbox.approve(ws, proposal_id, actor=actor or "cli"))
    _outcome("approved", outcome, as_json)


@click.command()
@click.argument("proposal_id", type=ID)
@click.option("--reason", default=None, help="Why it is rejected (required).")
@actor_option
@json_option
@click.pass_context
def reject(ctx: click.Context, proposal_id: str, reason: str | None, actor: str | None, as_json: bool) -> None:
    """Reject a proposal; it is closed for good and nothing is written to the records.

    Example: git memzoi reject prop_0197f... --reason "duplicate of use-uv"
    """
    from git_memzoi.memzoi import inbox

    outcome = inbox.reject(open_workspace(ctx, actor=actor), proposal_id, reason=reason or "", actor=actor or "cli")
    _outcome("rejected", outcome, as_json)


@click.command()
@click.argument("proposal_id", type=ID)
@actor_option
@json_option
@click.pass_context
def apply(ctx: click.Context, proposal_id: str, actor: str | None, as_json: bool) -> None:
    """Apply an approved, repo-safe proposal into canonical .memzoi/records/.

    Example: git memzoi apply prop_0197f... --json
    """
    from git_memzoi.memzoi import inbox

    ws = open_workspace(ctx, actor=actor)
    outcome = guard_sensitivity(ctx, as_json, lambda: inbox.apply_proposal(ws, proposal_id, actor=actor or "cli"))
    _outcome("applied", outcome, as_json)


def register(cli: click.Group) -> None:
    """Add this area's commands to ``cli``."""
    for command in (propose, proposals, approve, reject, apply):
        cli.add_command(command)
