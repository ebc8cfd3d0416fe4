"""`git memzoi export`: reviewable projections of current repository memory (okf, agents-md, claude-md).

The command parses its options, calls :func:`git_memzoi.memzoi.export.export` and renders the result.
"""

from __future__ import annotations

import click

from git_memzoi.cli.app import emit_json, json_option

FORMATS = ("okf", "agents-md", "claude-md")


@click.command("export")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(FORMATS))
@click.option("--scope-kind", default="repo", show_default=True, help="Export records of this scope kind only.")
@click.option(
    "--file",
    "target",
    metavar="PATH",
    help="agents-md/claude-md: keep the projection as a marked block inside this repository file "
    "(e.g. AGENTS.md); text outside the markers is never changed.",
)
@json_option
@click.pass_context
def export_command(ctx: click.Context, fmt: str, scope_kind: str, target: str | None, as_json: bool) -> None:
    """Export current, non-private records into reviewable files under .memzoi/exports/.

    okf writes one file per record; agents-md and claude-md write one projection of the procedures,
    decisions, warnings, risks and failed attempts (the rest are counted as left out). Regenerating from unchanged records changes no byte.

    Example: git memzoi export agents-md --file AGENTS.md
    """
    from git_memzoi.cli.workspace import open_workspace
    from git_memzoi.memzoi import export

    result = export.export(open_workspace(ctx), fmt, scope_kind=scope_kind, target=target)
    if as_json:
        emit_json(result.to_json())
        return
    for change in result.files:
        click.echo(f"{change.action}\t{change.path}")
    skipped = f", {result.skipped_private} private skipped" if result.skipped_private else ""
    click.echo(f"exported {len(result.records)} {scope_kind} record(s) as {fmt}{skipped}")
    if result.left_out:
        kinds = ", ".join(f"{kind} {count}" for kind, count in result.left_out)
        total = sum(count for _, count in result.left_out)
        click.echo(
            f"left out {total} record(s) ({kinds}): {fmt} holds procedures, decisions, warnings, risks and failed attempts;"
            " the others stay in git memzoi search and context"
        )


def register(cli: click.Group) -> None:
    """Add ``export`` to the ``git memzoi`` group."""
    cli.add_command(export_command)
