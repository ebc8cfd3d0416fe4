"""`git memzoi related`: the records a record's relations reach (:mod:`git_memzoi.memzoi.recall.related`).

Parses the options, calls :func:`~git_memzoi.memzoi.recall.related.related` and renders its result as text or
``--json``. Read-only; exits 0 whatever it finds, 2 for bad options or an id naming no current record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from git_memzoi.cli.app import emit_json, json_option
from git_memzoi.cli.workspace import open_workspace

F = TypeVar("F", bound=Callable[..., Any])


@click.command()
@click.argument("record_id")
@click.option("--role", "roles", multiple=True, metavar="ROLE", help="Only relations of this role (repeatable).")
@click.option(
    "--direction",
    type=click.Choice(["outgoing", "incoming", "both"]),
    default="both",
    show_default=True,
    help="outgoing: the roles the record declares; incoming: the records declaring a role towards it.",
)
@click.option("--depth", type=click.IntRange(1, 2), default=1, show_default=True, help="Hops to follow (1 or 2).")
@json_option
@click.pass_context
def related(
    ctx: click.Context, record_id: str, roles: tuple[str, ...], direction: str, depth: int, as_json: bool
) -> None:
    """List the current records related to a record through its `relations:` (and those naming it), each with
    the relation that brought it; broken relations (an id no record has) are listed, never invented.

    Example: git memzoi related deploy-runbook --role depends_on --direction outgoing --depth 2 --json
    """
    from git_memzoi.memzoi import related as run

    found = run.related(open_workspace(ctx), record_id, roles=roles, direction=direction, depth=depth)
    if as_json:
        emit_json(found.to_json())
        return
    if not found.reached and not found.paths:
        click.echo("No related records.")
    for row, via in found.reached:
        arrow = "->" if via["direction"] == "outgoing" else "<-"
        mark = found.suspects.get(row["id"])
        note = "\tSUSPECT: " + ", ".join(r["reason"] for r in mark["reasons"]) if mark else ""
        click.echo(f"{via['hop']}\t{arrow} {via['role']}\t{row['id']}\t{row['title']}\t(via {via['from']}){note}")
    for owned in found.paths:
        click.echo(f"1\t-> {owned['role']}\t{owned['path']}\t(path)")
    for broken in found.broken:
        click.echo(
            f"warning: {broken['from']} {broken['role']} {broken['target']}: no such record "
            f"({broken['file']}:{broken['line']}; broken_relation)",
            err=True,
        )
    for left in found.excluded:
        click.echo(f"note: {_excluded(left)}", err=True)


def _excluded(item: dict[str, object]) -> str:
    if item["code"] == "stale_relation":
        return f"{item['file']} changed since it was indexed: its relations are not followed (stale_relation)"
    if item["code"] == "target_not_current":
        return f"{item['from']} {item['role']} {item['target']}: that record is {item['status']} (target_not_current)"
    return f"{item['record_id']} holds a credential and is left out (content_withheld)"


def relation_option(command: F) -> F:
    """Add the repeatable ``--relation ROLE=TARGET`` option of a command that writes a record; the command passes
    the values to :func:`relations_of`."""
    return click.option(
        "--relation",
        "relation_args",
        multiple=True,
        metavar="ROLE=TARGET",
        help="A relation of the record, e.g. depends_on=<record-id> or owns=<path glob> (repeatable).",
    )(command)


def relations_of(values: tuple[str, ...]) -> Any:
    """The validated relations of ``--relation`` values (``None`` when none was given; exit 2 with
    ``invalid_relation`` for a bad one, before anything is written)."""
    from git_memzoi.memzoi import record_relations

    return record_relations.from_options(values)


def register(cli: click.Group) -> None:
    """Add ``related`` to ``git memzoi``."""
    cli.add_command(related)
