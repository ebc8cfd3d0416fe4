"""`git memzoi import plan|apply --from-file`: classified import of an explicit memzoi/import-v1 manifest.

Each command reads the manifest, calls one function of :mod:`git_memzoi.memzoi.imports.plan` and prints the plan
(``--json``: one object) or a short human summary. Errors are core exceptions, rendered by the app as one line.
"""

from __future__ import annotations

from typing import Any

import click

from git_memzoi.cli.app import emit_json, json_option
from git_memzoi.cli.workspace import given_path, open_workspace


def _show(result: dict[str, Any]) -> None:
    s = result["summary"]
    click.echo(f"import {result['mode']} {result['plan_id']} ({result['status']}, data class {result['data_class']})")
    click.echo(
        f"  {s['total']} candidate(s): {s['create_proposals']} proposal(s), {s['local_writes']} local, "
        f"{s['session_writes']} session, {s['duplicates']} duplicate(s), {s['discarded']} discarded, "
        f"{s['needs_review']} need review"
    )
    for c in result["candidates"]:
        action = c["action"]
        target = (
            action.get("proposal_id")
            or action.get("route")
            or action.get("reason")
            or ", ".join(f"{m['kind']} {m['id']}" for m in action.get("matches", ()))
        )
        click.echo(f"  [{c['index']}] {action['kind']:<15} {c['type']}: {c['title']} -> {target}")
    for d in result.get("diagnostics", ()):
        where = f"candidates[{d['index']}].{d['field']}" if "index" in d else d["field"]
        click.echo(f"  {d['code']} in {where} line {d['line_start']} ({d['detector']})")
    for w in result.get("writes", ()):
        applied = f" -> record {w['record_id']}" if w["kind"] == "proposal_file" and "record_id" in w else ""
        click.echo(f"  wrote [{w['index']}] {w['kind']} {w.get('proposal_id') or w.get('record_id')}{applied}")
    approval = result.get("approval")
    if approval is not None:
        click.echo(
            f"  approved: {approval['applied']} proposal(s) applied into records, "
            f"{approval['routed_to_review']} left for review (approval policy {approval['mode']}, {approval['source']})"
        )


@click.group("import")
def import_group() -> None:
    """Import explicitly classified memory from a manifest (plan, then apply the same plan id)."""


@import_group.command("plan")
@click.option("--from-file", "from_file", required=True, help="A memzoi/import-v1 manifest (YAML, or .json).")
@click.option("--actor", default="cli", show_default=True, help="Who imports; part of the plan id.")
@json_option
@click.pass_context
def plan(ctx: click.Context, from_file: str, actor: str, as_json: bool) -> None:
    """Plan an import: normalize, classify and check duplicates; writes nothing. Exits 1 when the plan is blocked.

    Example: git memzoi import plan --from-file imports/manifest.yml --json
    """
    from git_memzoi.memzoi import importer

    result = importer.plan_file(
        open_workspace(ctx, actor=actor.strip() or None), given_path(ctx, from_file), actor=actor
    )
    if as_json:
        emit_json(result)
    else:
        _show(result)
        if result["status"] == "ready":
            click.echo(f"apply with: git memzoi import apply --from-file {from_file} --plan-id {result['plan_id']}")
    ctx.exit(1 if result["status"] == "blocked" else 0)  # the plan is printed; the privacy gate refused it


@import_group.command("apply")
@click.option("--from-file", "from_file", required=True, help="The manifest that was planned.")
@click.option("--plan-id", required=True, help="The plan id shown by import plan (import_…).")
@click.option("--actor", default="cli", show_default=True, help="Who imports; must match the plan.")
@click.option(
    "--approve",
    is_flag=True,
    help="Approve the whole plan: apply its proposals into records too, unless the policy is manual.",
)
@json_option
@click.pass_context
def apply(ctx: click.Context, from_file: str, plan_id: str, actor: str, approve: bool, as_json: bool) -> None:
    """Write the planned pending proposals and runtime records, or nothing when the plan changed.

    Example: git memzoi import apply --from-file imports/manifest.yml --plan-id import_… --approve --json
    """
    from git_memzoi.cli.memzoi_inbox import memzoi_home
    from git_memzoi.memzoi import import_apply

    result = import_apply.apply_file(
        open_workspace(ctx, actor=actor.strip() or None),
        given_path(ctx, from_file),
        plan_id=plan_id,
        actor=actor,
        approve=approve,
        memzoi_home=memzoi_home() if approve else None,
    )
    if as_json:
        emit_json(result)
    else:
        _show(result)


def register(cli: click.Group) -> None:
    """Add this area's commands to ``cli``."""
    cli.add_command(import_group)
