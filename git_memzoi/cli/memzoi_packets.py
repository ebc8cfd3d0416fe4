"""`git memzoi` commands of the packets area: ``proposal-files`` (list, show, validate, apply, reject),
``supersede`` and ``tombstone``. Each command parses, calls one core function and renders; no logic here.

A sensitivity-blocked write prints one line on stderr and, under ``--json``, the content-free envelope
``{"ok": false, "error": {"code": "repo_sensitivity_required", ...}}`` on stdout, then exits 1
(:func:`guard_sensitivity`; other areas may reuse it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from git_memzoi.cli.app import ID, actor_option, emit_json, json_option, one_line
from git_memzoi.cli.memzoi_related import relation_option, relations_of
from git_memzoi.cli.workspace import open_workspace

if TYPE_CHECKING:
    from git_memzoi.memzoi import packets
    from git_memzoi.memzoi import proposal_files as pf

SCHEMA_VERSION = 1
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
_SCOPE_HELP = "A path glob whose change makes the record suspect (repeatable; default: {})."
_WATCH_OPTIONS = (
    click.option("--anchor", default=None, metavar="REV", help="The commit the claim holds at (default: HEAD)."),
    click.option("--ttl-days", type=int, default=None, metavar="N", help="Suspect after N days without a verify."),
    click.option("--check", "check_cmd", default=None, metavar="CMD", help="A shell command re-testing the claim."),
    click.option("--check-safe", is_flag=True, help="The --check is read-only: verify --all-safe may run it."),
)


def watch_options(command: F, scope_default: str = "the --applies-to paths") -> F:
    """Add the earned-envelope options (``--scope``, ``--anchor``, ``--ttl-days``, ``--check``, ``--check-safe``)
    of a command that writes a record; the command passes them to :func:`watch_request`. ``scope_default`` says
    in ``--scope``'s help where the scope comes from without it."""
    scope = click.option(
        "--scope", "scope_globs", multiple=True, metavar="GLOB", help=_SCOPE_HELP.format(scope_default)
    )
    for option in reversed((scope, *_WATCH_OPTIONS)):
        command = option(command)
    return command


def replacement_watch_options(command: F) -> F:
    """:func:`watch_options` of ``supersede``, whose replacement keeps the replaced record's scope, ttl and check
    (and its ``applies_to``)."""
    return watch_options(command, "the replaced record's scope, kept with its --ttl-days and --check")


def validity_options(command: F) -> F:
    """Add ``--valid-from`` / ``--valid-to`` (business validity, half-open; records/validity.py)."""
    for option in (
        click.option(
            "--valid-to", default=None, metavar="WHEN", help="Valid until (exclusive): ISO 8601 with a zone, or a date."
        ),
        click.option(
            "--valid-from",
            default=None,
            metavar="WHEN",
            help="Valid from (inclusive): ISO 8601 with a zone, or a date.",
        ),
    ):
        command = option(command)
    return command


def watch_request(
    scope_globs: tuple[str, ...], anchor: str | None, ttl_days: int | None, check_cmd: str | None, check_safe: bool
) -> Any:
    """The validated :class:`~git_memzoi.memzoi.records.envelope.WatchRequest` of the options (InputError, exit 2)."""
    from git_memzoi.memzoi import envelope

    return envelope.make_request(
        scope=scope_globs, anchor=anchor, ttl_days=ttl_days, check=check_cmd, check_safe=check_safe
    )


def guard_sensitivity(ctx: click.Context, as_json: bool, call: Callable[[], T]) -> T:
    """Run ``call``; turn a :class:`~git_memzoi.memzoi.proposals.packets.SensitivityBlocked` into the content-free
    envelope (stdout, with ``--json``), one stderr line, and its exit code (1)."""
    from git_memzoi.memzoi import packets

    try:
        return call()
    except packets.SensitivityBlocked as exc:
        prog = ctx.find_root().info_name or "git-memzoi"
        click.echo(f"{prog}: error: {one_line(exc.message)}", err=True)
        if as_json:
            emit_json(exc.envelope())
        ctx.exit(int(exc.exit_code))
        raise AssertionError("unreachable") from None


# ------------------------------------------------------------------------------------------------ proposal-files


@click.group("proposal-files")
def proposal_files() -> None:
    """List, show, validate, apply and reject proposal packets under .memzoi/proposals/.

    Example: git memzoi proposal-files list
    """


@proposal_files.command("list")
@json_option
@click.pass_context
def list_cmd(ctx: click.Context, as_json: bool) -> None:
    """List the pending packets (non-repo-safe ones only as redacted receipts).

    Example: git memzoi proposal-files list --json
    """
    from git_memzoi.memzoi import proposal_files as pf

    entries = pf.list_packets(open_workspace(ctx).layout)
    if as_json:
        emit_json({"schema_version": SCHEMA_VERSION, "proposals": [_entry_json(e) for e in entries]})
        return
    for e in entries:
        click.echo(_entry_line(e))
    click.echo(f"{len(entries)} pending proposal packet{'s' if len(entries) != 1 else ''}")


@proposal_files.command("show")
@click.argument("proposal_id", type=ID)
@json_option
@click.pass_context
def show_cmd(ctx: click.Context, proposal_id: str, as_json: bool) -> None:
    """Show one packet, pending or resolved, by id, file id or original alias.

    Example: git memzoi proposal-files show mem_auth_guidance
    """
    from git_memzoi.memzoi import proposal_files as pf

    entry = pf.show_packet(open_workspace(ctx).layout, proposal_id)
    if entry.packet is None and entry.problem is not None:
        raise entry.problem
    assert entry.packet is not None
    if as_json:
        emit_json(
            {
                "schema_version": SCHEMA_VERSION,
                "state": entry.state,
                "path": entry.shown_path,
                "redacted": entry.redacted,
                "classification": entry.pre.sensitivity,
                "proposal": packet_json(entry.packet),
            }
        )
        return
    click.echo(_show_text(entry))


@proposal_files.command("validate")
@json_option
@click.pass_context
def validate_cmd(ctx: click.Context, as_json: bool) -> None:
    """Check every pending packet as apply would, including supersede/tombstone targets (exit 1 if invalid).

    Example: git memzoi proposal-files validate
    """
    from git_memzoi.memzoi import proposal_files as pf

    checks = pf.validate(open_workspace(ctx).layout)
    invalid = sum(1 for _, issues in checks if issues)
    if as_json:
        emit_json(
            {
                "schema_version": SCHEMA_VERSION,
                "valid": not invalid,
                "proposals": [
                    {**_ids(e), "valid": not issues, "issues": [_issue_json(i) for i in issues]} for e, issues in checks
                ],
            }
        )
    else:
        for e, issues in checks:
            label = e.shown_id or e.shown_file_id  # a file read as no packet (a FIFO) has no id: its file id
            click.echo(f"ok       {label}" if not issues else f"invalid  {label}  {_issue_text(issues[0])}")
        click.echo(f"{len(checks)} pending, {invalid} invalid")
    if invalid:
        ctx.exit(1)


@proposal_files.command("apply")
@click.argument("proposal_ids", nargs=-1, required=True, type=ID, metavar="PROPOSAL_ID...")
@actor_option
@json_option
@click.pass_context
def apply_cmd(ctx: click.Context, proposal_ids: tuple[str, ...], actor: str | None, as_json: bool) -> None:
    """Apply repo-safe pending packets: write their record changes and move them to resolved/applied/.

    Several ids are applied in one operation (all or nothing: one lock, one journal, one event append, one
    index refresh); --json then prints {"ok", "schema_version", "results": [...]}, one object per id.

    Example: git memzoi proposal-files apply mem_auth_guidance --actor reviewer
    """
    from git_memzoi.memzoi import proposal_bulk
    from git_memzoi.memzoi import proposal_files as pf

    c = open_workspace(ctx, actor=actor)
    if len(proposal_ids) > 1:
        many = guard_sensitivity(ctx, as_json, lambda: proposal_bulk.apply_named(c, proposal_ids, actor=c.actor))
        if as_json:
            emit_json({"ok": True, "schema_version": SCHEMA_VERSION, "results": [_apply_json(r) for r in many.results]})
            return
        for r in many.results:
            _apply_text(r)
        return
    (proposal_id,) = proposal_ids
    r = guard_sensitivity(ctx, as_json, lambda: pf.apply_packet(c, proposal_id, actor=c.actor))
    if as_json:
        emit_json({"schema_version": SCHEMA_VERSION, **_apply_json(r)})
        return
    _apply_text(r)


def _apply_json(r: pf.ApplyResult) -> dict[str, Any]:
    return {
        "proposal_id": r.proposal_id,
        "file_id": r.file_id,
        "action": r.action,
        "record_id": r.record_id,
        "target_id": r.target_id,
        "replayed": r.replayed,
        "resolved_path": r.resolved_path,
        "written": list(r.written),
        "drift": list(r.drift),
    }


def _apply_text(r: pf.ApplyResult) -> None:
    for note in r.drift:
        click.echo(f"warning: {note}", err=True)
    if r.replayed:
        click.echo(f"{r.proposal_id} was already applied (record {r.record_id}); nothing changed")
    elif r.action == "create":
        click.echo(f"applied {r.proposal_id}: created record {r.record_id}")
    elif r.action == "supersede":
        click.echo(f"applied {r.proposal_id}: record {r.record_id} supersedes {r.target_id}")
    else:
        click.echo(f"applied {r.proposal_id}: tombstoned record {r.record_id}")


@proposal_files.command("reject")
@click.argument("proposal_id", type=ID)
@click.option("--reason", required=True, help="Why the packet is rejected (kept in the resolved packet).")
@actor_option
@json_option
@click.pass_context
def reject_cmd(ctx: click.Context, proposal_id: str, reason: str, actor: str | None, as_json: bool) -> None:
    """Reject a pending packet: move it to resolved/rejected/ (a non-repo-safe one as a redacted receipt).

    Example: git memzoi proposal-files reject mem_auth_guidance --reason "duplicate of an ADR"
    """
    from git_memzoi.memzoi import proposal_files as pf

    c = open_workspace(ctx, actor=actor)
    r = pf.reject_packet(c, proposal_id, reason=reason, actor=c.actor)
    if as_json:
        emit_json(
            {
                "schema_version": SCHEMA_VERSION,
                "proposal_id": r.proposal_id,
                "file_id": r.file_id,
                "redacted": r.redacted,
                "replayed": r.replayed,
                "reason": r.reason,
                "resolved_path": r.resolved_path,
                "written": list(r.written),
            }
        )
    elif r.replayed:
        click.echo(f"{r.proposal_id} was already rejected; nothing changed")
    else:
        click.echo(f"rejected {r.proposal_id}" + (" (archived as a redacted receipt)" if r.redacted else ""))


# ------------------------------------------------------------------------------------------------ lifecycle


@click.command("supersede")
@click.argument("record_id", type=ID)
@click.option("--title", required=True, help="Title of the replacement record.")
@click.option("--body", required=True, help="Body of the replacement record.")
@click.option("--type", "record_type", default=None, help="Memory type (default: the target's).")
@click.option("--scope-kind", default=None, help="Must equal the target's scope kind.")
@click.option("--visibility", default=None, help="Visibility (default: the target's; never private).")
@click.option("--sensitivity", default="unknown", show_default=True, help="Must be repo-safe to write.")
@click.option("--source-kind", default=None, help="Evidence kind, e.g. pr, issue, commit.")
@click.option("--source-ref", default=None, help="Evidence locator, e.g. a URL.")
@replacement_watch_options
@validity_options
@relation_option
@actor_option
@json_option
@click.pass_context
def supersede_cmd(
    ctx: click.Context,
    record_id: str,
    title: str,
    body: str,
    record_type: str | None,
    scope_kind: str | None,
    visibility: str | None,
    sensitivity: str,
    source_kind: str | None,
    source_ref: str | None,
    scope_globs: tuple[str, ...],
    anchor: str | None,
    ttl_days: int | None,
    check_cmd: str | None,
    check_safe: bool,
    valid_from: str | None,
    valid_to: str | None,
    relation_args: tuple[str, ...],
    actor: str | None,
    as_json: bool,
) -> None:
    """Atomically supersede an active, non-private repo record with a same-scope repo-safe replacement.

    The replacement keeps the target's relations unless --relation gives its own.

    Example: git memzoi supersede use-npm --title "Use pnpm" --body "..." --sensitivity repo-safe
    """
    from git_memzoi.memzoi import lifecycle

    watch = watch_request(scope_globs, anchor, ttl_days, check_cmd, check_safe)
    relations = relations_of(relation_args)
    c = open_workspace(ctx, actor=actor)
    r = guard_sensitivity(
        ctx,
        as_json,
        lambda: lifecycle.supersede(
            c,
            record_id,
            title=title,
            body=body,
            actor=c.actor,
            record_type=record_type,
            scope_kind=scope_kind,
            visibility=visibility,
            sensitivity=sensitivity,
            source_kind=source_kind,
            source_ref=source_ref,
            watch=watch,
            valid_from=valid_from,
            valid_to=valid_to,
            relations=relations,
        ),
    )
    if as_json:
        emit_json(
            {
                "schema_version": SCHEMA_VERSION,
                "record_id": r.record_id,
                "superseded": r.target_id,
                "written": list(r.written),
                "watch": r.watch.as_json() if r.watch is not None else None,
            }
        )
    else:
        click.echo(f"superseded {r.target_id} with {r.record_id}")


@click.command("tombstone")
@click.argument("record_id", type=ID)
@click.option("--reason", required=True, help="Why the record no longer holds (logged).")
@actor_option
@json_option
@click.pass_context
def tombstone_cmd(ctx: click.Context, record_id: str, reason: str, actor: str | None, as_json: bool) -> None:
    """Atomically tombstone an active, non-private repo record (its evidence is kept).

    Example: git memzoi tombstone use-npm --reason "we moved to pnpm"
    """
    from git_memzoi.memzoi import lifecycle

    c = open_workspace(ctx, actor=actor)
    r = lifecycle.tombstone(c, record_id, reason=reason, actor=c.actor)
    if as_json:
        emit_json(
            {
                "schema_version": SCHEMA_VERSION,
                "record_id": r.record_id,
                "status": "tombstoned",
                "written": list(r.written),
            }
        )
    else:
        click.echo(f"tombstoned {r.record_id}")


@click.command("verify")
@click.argument("record_id", required=False, metavar="[RECORD_ID]")
@click.option("--all-safe", is_flag=True, help="Re-check every suspect record whose check is marked safe.")
@click.option("--dry-run", is_flag=True, help="Show what would run; run and write nothing.")
@click.option("--manual", is_flag=True, help="Record a re-test done by hand (anchor := HEAD, verified_at := today).")
@actor_option
@json_option
@click.pass_context
def verify_cmd(
    ctx: click.Context,
    record_id: str | None,
    all_safe: bool,
    dry_run: bool,
    manual: bool,
    actor: str | None,
    as_json: bool,
) -> None:
    """Re-test a record's claim: a pass re-anchors it at HEAD (verified today), a fail marks it stale.

    The same contract as git memkeep verify, on the memkeep envelope of a record (see propose --check).

    Example: git memzoi verify signer-keeps-keys-in-order --manual
    """
    from git_memzoi.cli import render
    from git_memzoi.memkeep import api
    from git_memzoi.memzoi import record_verify

    c = open_workspace(ctx, actor=actor)
    result = record_verify.verify(c, record_id, all_safe=all_safe, dry_run=dry_run, manual=manual)
    emit_json(api.schema.verify_json(result)) if as_json else click.echo(render.verify_text(result, "record"))
    ctx.exit(result.exit_code)


def register(cli: click.Group) -> None:
    """Add this area's commands to ``cli``."""
    cli.add_command(proposal_files)
    cli.add_command(supersede_cmd)
    cli.add_command(tombstone_cmd)
    cli.add_command(verify_cmd)


# ------------------------------------------------------------------------------------------------ rendering


def packet_json(packet: packets.Packet) -> dict[str, Any]:
    """``packet`` as one JSON object in the writer's key order, with the trimmed ``body``."""
    from git_memzoi.memzoi import packets

    def present(mapping: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in mapping.items() if v is not None}

    def plain(value: Any) -> Any:
        return None if value is None else json.loads(json.dumps(value, default=str))

    res = packet.resolution
    return {
        "id": packet.id,
        "file_id": packet.file_id,
        "kind": "proposal",
        "profile": "memzoi",
        "type": packet.type,
        "lane": packet.lane,
        "title": packet.title,
        "description": packet.description,
        "status": packet.status,
        "proposal": present(
            {
                "action": packet.action,
                "proposed_by": packet.proposed_by,
                "proposed_at": packet.proposed_at,
                "reason": packet.reason,
                "confidence": packet.confidence,
                "target": packet.target,
            }
        ),
        "scope": {"kind": packet.scope_kind, "id": packet.scope_id, "paths": list(packet.paths)},
        "tags": list(packet.tags),
        "timestamp": packet.timestamp,
        "created_by": packet.created_by,
        "sources": [present({k: getattr(s, k) for k in packets.SOURCE_KEYS}) for s in packet.sources],
        "supersedes": list(packet.supersedes),
        "sensitivity": packet.sensitivity,
        "content_class": packet.content_class,
        "resolution": None if res is None else present({k: getattr(res, k) for k in packets.RESOLUTION_KEYS}),
        "capture": plain(packet.capture),
        "retention": plain(packet.retention),
        "origin": plain(packet.origin),
        "lineage": plain(packet.lineage),
        "memkeep": plain(packet.memkeep),
        "validity": plain(packet.validity),
        "relations": plain(packet.relations),
        "body": packet.body,
    }


def review_lines(packet: packets.Packet) -> list[str]:
    """What applying ``packet`` writes besides its text, as indented lines for a reviewer: its earned envelope
    (anchor, watched scope, ttl, and the check, which ``git memzoi verify --all-safe`` runs when marked safe: a
    command proposed by an agent must be seen before it is approved), business validity and relations."""
    from git_memzoi.memkeep import api as memkeep

    envelope = dict(packet.memkeep or {})
    lines = [f"  {key}: {envelope[key]}" for key in ("anchor", "ttl_days") if envelope.get(key) is not None]
    if envelope.get("scope"):
        lines.append(f"  watched scope: {', '.join(str(p) for p in envelope['scope'])}")
    check = memkeep.parse_check(envelope.get("check"), "check")
    if check is not None:
        said = "safe: `git memzoi verify --all-safe` runs it" if check.safe else "not safe: run only by `verify ID`"
        lines.append(f"  check: {check.run}  ({said})")
    lines += [f"  {key}: {value}" for key, value in (packet.validity or {}).items()]
    if packet.relations:
        lines.append(f"  relations: {json.dumps(packet.relations, default=str)}")
    return lines


def _ids(e: pf.Entry) -> dict[str, Any]:
    return {
        "id": e.shown_id,
        "file_id": e.shown_file_id,
        "path": e.shown_path,
        "redacted": e.redacted,
        "classification": e.pre.sensitivity,
    }


def _entry_json(e: pf.Entry) -> dict[str, Any]:
    p = e.packet
    problem = None if e.problem is None else {"code": e.problem.code, "message": e.problem.message}
    return {
        **_ids(e),
        "state": e.state,
        "status": p.status if p else None,
        "action": p.action if p else None,
        "type": p.type if p else None,
        "title": p.title if p else None,
        "problem": problem,
    }


def _entry_line(e: pf.Entry) -> str:
    if e.redacted:
        return f"{e.shown_id or e.shown_file_id}  redacted  (sensitivity {e.pre.sensitivity}; content withheld)"
    if e.packet is None:
        what = "withheld" if e.problem is not None and e.problem.code == "prohibited_content_detected" else "unreadable"
        return f"{e.rel}  {what}: {e.problem.message if e.problem else 'unknown problem'}"
    return f"{e.packet.id}  {e.packet.action}  {e.packet.status}  {e.packet.title}"


def _show_text(e: pf.Entry) -> str:
    p = e.packet
    assert p is not None
    lines = [
        f"{p.id}  ({e.state}{', redacted' if e.redacted else ''})",
        f"title: {p.title}",
        f"action: {p.action}   status: {p.status}   sensitivity: {e.pre.sensitivity}",
        f"scope: {p.scope_kind}{'/' + p.scope_id if p.scope_id else ''}",
    ]
    if p.target_id:
        lines.append(f"target: {p.target_id}")
    if p.resolution:
        lines.append(f"resolution: {p.resolution.outcome} by {p.resolution.resolved_by} at {p.resolution.resolved_at}")
    return "\n".join([*lines, "", p.body])


def _issue_json(i: pf.Issue) -> dict[str, str]:
    return {"code": i.code, "field": i.field, "message": i.message}


def _issue_text(i: pf.Issue) -> str:
    return f"{i.code}: {i.message}"
