"""`git memzoi` commands of the recall area: search, context, handoff and precheck.

Each command parses its options, calls one function of :mod:`git_memzoi.memzoi.recall.search`,
:mod:`~git_memzoi.memzoi.recall.pack` or :mod:`~git_memzoi.memzoi.recall.precheck`, and renders the result as text or
``--json``. All of them read only and exit 0, whatever they find.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from git_memzoi.cli.app import emit_json, json_option
from git_memzoi.cli.workspace import open_workspace

if TYPE_CHECKING:
    from git_memzoi.memzoi import Workspace, recall_schema

_budget = click.option(
    "--token-budget",
    type=click.IntRange(min=0),
    default=None,
    help="Size limit in approx_words (default 400; 0 gives an empty pack).",
)
_local = click.option("--include-local", is_flag=True, help="Also recall private local records.")
_session = click.option("--include-session", is_flag=True, help="Also recall session checkpoints.")


def _opened(ctx: click.Context, path: str | None) -> tuple[Workspace, str | None]:
    """The command's workspace and its ``--path`` made repository-relative, refused (exit 2, ``path_outside_repo``)
    before anything is read or the index refreshed when it leaves the repository."""
    from git_memzoi.core.paths import request_path

    ws = open_workspace(ctx)
    return ws, request_path(path, ws.layout.root)


def _suspect_note(suspect: recall_schema.SuspectJson | None) -> str:
    if not suspect:
        return ""
    return "\tSUSPECT: " + ", ".join(r["reason"] for r in suspect["reasons"])


@click.command()
@click.argument("query")
@click.option("--scope-kind", default=None, help="Only records of this scope kind (repo, team, ...).")
@click.option("--scope-id", default=None, help="Only records of this scope id (e.g. team-alpha).")
@click.option("--type", "memory_type", default=None, help="Only records of this memory type.")
@click.option("--lane", default=None, help="Only records of this lane.")
@click.option("--path", default=None, help="Only records bound to this path (an ancestor, descendant or /** glob).")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="At most this many results (0 means 10, at most 100).",
)
@json_option
@click.pass_context
def search(
    ctx: click.Context,
    query: str,
    scope_kind: str | None,
    scope_id: str | None,
    memory_type: str | None,
    lane: str | None,
    path: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Full-text search over current repository records (never local or session ones).

    Words are OR-ed, records holding every word first; a hyphenated or dotted word (pre-edit, node.js) is one
    phrase. Any text is a valid query.

    Example: git memzoi search "database migration" --type decision --path src/db/ --json
    """
    from git_memzoi.memzoi import search as run

    ws, path = _opened(ctx, path)
    response = run.search(
        ws,
        query,
        scope_kind=scope_kind,
        scope_id=scope_id,
        memory_type=memory_type,
        lane=lane,
        path=path,
        limit=limit,
    )
    if as_json:
        emit_json(response.to_json())
        return
    if not response.results:
        click.echo("No matching memories.")
    for found in response.results:
        record = found["record"]
        click.echo(
            f"{record['id']}\t{record['memory_type']}\t{found['score']:.3f}\t{record['title']}"
            + _suspect_note(found["suspect"])
        )
    for warning in response.warnings:  # a withheld record: said on stderr, as context does
        click.echo(f"warning: {warning}", err=True)


@click.command()
@click.option("--task", required=True, help="What the agent is about to do.")
@click.option("--path", default=None, help="The file or folder the task is about.")
@_budget
@_local
@_session
@json_option
@click.pass_context
def context(
    ctx: click.Context,
    task: str,
    path: str | None,
    token_budget: int | None,
    include_local: bool,
    include_session: bool,
    as_json: bool,
) -> None:
    """Build a prompt-ready context pack for a task, within a size budget; repository records only unless
    --include-local / --include-session. Suspect records rank last; warnings go to stderr.

    Example: git memzoi context --task "add a migration" --path src/db/ --token-budget 800 --json
    """
    from git_memzoi.memzoi import context_pack as run

    ws, path = _opened(ctx, path)
    pack = run.build(
        ws,
        task,
        path=path,
        token_budget=token_budget,
        include_local=include_local,
        include_session=include_session,
    )
    if as_json:
        emit_json(pack.to_json())
        return
    for warning in pack.payload["warnings"]:
        click.echo(f"warning: {warning}", err=True)
    click.echo(pack.prompt)


@click.command()
@click.option("--task", default=None, help="What the next agent should continue.")
@click.option("--path", default=None, help="The file or folder the work is about (alone: the task names it).")
@_budget
@_local
@_session
@json_option
@click.pass_context
def handoff(
    ctx: click.Context,
    task: str | None,
    path: str | None,
    token_budget: int | None,
    include_local: bool,
    include_session: bool,
    as_json: bool,
) -> None:
    """Hand work over to another agent: the context pack plus the open proposal inbox counts.

    Needs --task or --path.

    Example: git memzoi handoff --path src/auth/ --json
    """
    from git_memzoi.memzoi import context_pack as run

    ws, path = _opened(ctx, path)
    result = run.handoff(
        ws,
        task=task,
        path=path,
        token_budget=token_budget,
        include_local=include_local,
        include_session=include_session,
    )
    if as_json:
        emit_json(result.to_json())
    else:
        click.echo(result.text())


@click.command()
@click.option("--path", default=None, help="The file or folder about to change.")
@click.option("--action", default=None, help="What is about to be done, in words.")
@click.option("--command", "command_text", default=None, help="The command about to run.")
@click.option("--scope-kind", default=None, help="Only records of this scope kind.")
@json_option
@click.pass_context
def precheck(
    ctx: click.Context,
    path: str | None,
    action: str | None,
    command_text: str | None,
    scope_kind: str | None,
    as_json: bool,
) -> None:
    """List the risks, warnings and failed attempts that apply to a planned change, each with its citation.

    Needs --path, --action or --command. Suspect memories are cited as such.

    Example: git memzoi precheck --path src/billing/settle.py --action "reorder settlement"
    """
    from git_memzoi.memzoi import precheck as run

    ws, path = _opened(ctx, path)
    result = run.precheck(ws, path=path, action=action, command=command_text, scope_kind=scope_kind)
    if as_json:
        emit_json(result.to_json())
        return
    if not result.warnings:
        click.echo("No memory warnings.")
    for warning in result.warnings:
        cite = warning["citations"][0]
        where = f" ({cite['path']})" if cite["path"] else ""
        click.echo(f"[{warning['severity']}] {warning['record_id']}{where}: {warning['message'].splitlines()[0]}")
        click.echo(f"  source: {cite['source_kind'] or '-'} {cite['source_ref'] or '-'}")
        if warning["suspect"]:
            reasons = warning["suspect"]["reasons"]
            click.echo("  SUSPECT: " + "; ".join(f"{r['reason']}: {r['message']}" for r in reasons))
        click.echo(f"  next: {warning['suggested_next_step']}")


def register(cli: click.Group) -> None:
    """Add the recall commands to ``git memzoi``."""
    for command in (search, context, handoff, precheck):
        cli.add_command(command)
