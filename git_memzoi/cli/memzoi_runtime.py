"""`git memzoi` commands of the runtime area: local memory, checkpoints, session-end, events and rebuild.

Each command parses its options, calls one function of :mod:`git_memzoi.memzoi.runtime.memory` (or the event log) and
renders the result as text or ``--json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from git_memzoi.cli.app import ID, actor_option, emit_json, json_option
from git_memzoi.cli.workspace import given_path, open_workspace

if TYPE_CHECKING:
    from git_memzoi.memzoi import recall_schema


def session_options(command: Any) -> Any:
    """``--session-id`` and ``--event-id``: the key that makes a session end or a checkpoint idempotent."""
    command = click.option(
        "--event-id",
        default=None,
        help="The event within the session (default: a digest of the payload); needs --session-id.",
    )(command)
    return click.option(
        "--session-id",
        default=None,
        help="The agent session this event belongs to (a hook's session_id); makes a replay reuse the result.",
    )(command)


def _record_line(record: recall_schema.RecordJson) -> str:
    return f"{record['id']}\t{record['memory_type']}\t{record['title']}"


@click.group()
def local() -> None:
    """Private local memory: records in the git directory (.git/memzoi/local/), shared by every worktree."""


@local.command("add")
@click.option("--type", "memory_type", required=True, help="Memory type: fact, preference, decision, ...")
@click.option("--title", required=True, help="One line.")
@click.option("--body", required=True, help="The memory itself.")
@actor_option
@json_option
@click.pass_context
def local_add(ctx: click.Context, memory_type: str, title: str, body: str, actor: str | None, as_json: bool) -> None:
    """Add a private local record (destination local, visibility private).

    Example: git memzoi local add --type preference --title "Terse answers" --body "Prefer short replies."
    """
    from git_memzoi.memzoi import local_memory

    written = local_memory.add_local(open_workspace(ctx, actor=actor), memory_type=memory_type, title=title, body=body)
    if as_json:
        emit_json(written.to_json())
    else:
        click.echo(f"created local record {written.record['id']} ({written.path})")


@local.command("list")
@json_option
@click.pass_context
def local_list(ctx: click.Context, as_json: bool) -> None:
    """List current local records, newest first.

    Example: git memzoi local list --json
    """
    from git_memzoi.memzoi import local_memory

    records = local_memory.list_records(open_workspace(ctx), "local")
    _render_list(records, "local", as_json)


@local.command("search")
@click.argument("query")
@click.option("--limit", type=int, default=10, show_default=True, help="At most this many results (max 100).")
@json_option
@click.pass_context
def local_search(ctx: click.Context, query: str, limit: int, as_json: bool) -> None:
    """Full-text search over current local records only.

    Example: git memzoi local search "package manager" --limit 5
    """
    from git_memzoi.memzoi import local_memory

    result = local_memory.search_local(open_workspace(ctx), query, limit=limit)
    if as_json:
        emit_json(result)
        return
    from git_memzoi.memzoi import search

    shares = search.relevance([item["score"] for item in result["results"]])
    for item, share in zip(result["results"], shares, strict=True):
        click.echo(f"{item['record']['id']}\t{share:.2f}\t{item['record']['title']}")
    if not result["results"]:
        click.echo("no matching local records")


@click.group()
def checkpoint() -> None:
    """Session checkpoints: private episode records of the current task."""


@checkpoint.command("add")
@click.option("--task", required=True, help="The task this checkpoint belongs to (its title).")
@click.option("--note", default=None, help="The checkpoint text.")
@click.option(
    "--from-file",
    "from_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Read the checkpoint text from this file.",
)
@session_options
@actor_option
@json_option
@click.pass_context
def checkpoint_add(
    ctx: click.Context,
    task: str,
    note: str | None,
    from_file: Path | None,
    session_id: str | None,
    event_id: str | None,
    actor: str | None,
    as_json: bool,
) -> None:
    """Add a session checkpoint holding only the explicit --note or --from-file content.

    With --session-id (and --event-id) a replay of the same event returns the first checkpoint (reused); the
    same ids with another payload exit 2 (checkpoint_mismatch).

    Example: git memzoi checkpoint add --task "Implement auth middleware" --note "Routes wired; tests next."
    """
    from git_memzoi.memzoi import checkpoints

    written = checkpoints.add_checkpoint(
        open_workspace(ctx, actor=actor),
        task=task,
        note=note,
        from_file=given_path(ctx, str(from_file)) if from_file is not None else None,  # relative to -C DIR
        session_id=session_id,
        event_id=event_id,
    )
    if as_json:
        emit_json(written.to_json())
    else:
        verb = "reused" if written.reused else "created"
        click.echo(f"{verb} checkpoint {written.record['id']} ({written.path})")


@checkpoint.command("list")
@json_option
@click.pass_context
def checkpoint_list(ctx: click.Context, as_json: bool) -> None:
    """List current session checkpoints, newest first.

    Example: git memzoi checkpoint list
    """
    from git_memzoi.memzoi import local_memory

    _render_list(local_memory.list_records(open_workspace(ctx), "session"), "session", as_json)


def _render_list(records: Sequence[recall_schema.RecordJson], destination: str, as_json: bool) -> None:
    if as_json:
        emit_json({"destination": destination, "count": len(records), "records": records})
        return
    for record in records:
        click.echo(_record_line(record))
    if not records:
        click.echo(f"no current {destination} records")


@click.command("session-end")
@click.option(
    "--from-file",
    "from_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Structured session-end YAML (task + candidates).",
)
@click.option(
    "--from-checkpoint", "from_checkpoint", type=ID, default=None, help="A checkpoint whose body is that YAML."
)
@session_options
@actor_option
@json_option
@click.pass_context
def session_end(
    ctx: click.Context,
    from_file: Path | None,
    from_checkpoint: str | None,
    session_id: str | None,
    event_id: str | None,
    actor: str | None,
    as_json: bool,
) -> None:
    """Promote explicit session-end candidates: repo → pending proposal files, local/session → runtime memory.

    A repo candidate that is not repo-safe blocks the whole batch (exit 1, nothing written, title redacted).
    With --session-id (and --event-id) a replay of the same batch returns the first result (reused: nothing is
    written twice); the same ids with another batch exit 2 (checkpoint_mismatch), and while that event runs in
    another process, exit 2 (checkpoint_in_progress: retry with the same ids).

    Example: git memzoi session-end --from-file notes.yml --session-id "$SESSION" --event-id end-1 --json
    """
    from git_memzoi.memzoi import session_end

    result = session_end.session_end(
        open_workspace(ctx, actor=actor),
        from_file=given_path(ctx, str(from_file)) if from_file is not None else None,  # relative to -C DIR
        from_checkpoint=from_checkpoint,
        session_id=session_id,
        event_id=event_id,
    )
    if as_json:
        emit_json(result.to_json())
    else:
        if result.reused and result.ids is not None:
            click.echo(f"reused: event {result.ids['event_id']} of session {result.ids['session_id']} already ran")
        for entry in result.results:
            click.echo(_entry_line(entry))
        if not result.ok:
            click.echo("blocked: a repo candidate is not repo-safe; nothing was written", err=True)
    if not result.ok:
        ctx.exit(1)


def _entry_line(entry: Any) -> str:
    head = f"candidate {entry['index']} ({entry['destination']}): "
    action = entry["action"]
    if action == "create_proposal":
        return head + f"proposal {entry['proposal_id']} ({entry['path']})"
    if action == "create_runtime":
        return head + f"{entry['route']} record {entry['record_id']}"
    if action == "blocked":
        return head + f"blocked, {entry['code']} (classification {entry['classification']}); title redacted"
    return head + f"{action} ({entry['reason']})"


@click.group()
def events() -> None:
    """The runtime event log (.git/memzoi/local/events.jsonl)."""


@events.command("export")
@click.option("--jsonl", "jsonl", is_flag=True, help="One compact JSON object per line: the only format, the default.")
@click.pass_context
def events_export(ctx: click.Context, jsonl: bool) -> None:
    """Export every event as JSON Lines; an empty log prints nothing.

    Example: git memzoi events export > events.jsonl
    """
    from git_memzoi.memzoi import events as event_log

    del jsonl  # accepted for scripts written when it was required
    for line in event_log.export(open_workspace(ctx).layout):
        click.echo(line)


@click.command()
@actor_option
@json_option
@click.pass_context
def rebuild(ctx: click.Context, actor: str | None, as_json: bool) -> None:
    """Rebuild this worktree's derived index (.git/memzoi/worktree/index.sqlite) from the record files; loses nothing.

    Example: git memzoi rebuild --json
    """
    from git_memzoi.memzoi import local_memory

    result = local_memory.rebuild(open_workspace(ctx, actor=actor))
    if as_json:
        emit_json(result.to_json())
        return
    counts = ", ".join(f"{n} {d}" for d, n in result.records.items())
    click.echo(
        f"rebuilt {result.path}: {counts} records; {len(result.unreadable)} unreadable; "
        f"{result.pending_proposals} pending proposal files kept"
    )
    for problem in result.unreadable:
        click.echo(f"unreadable: {problem.reason}", err=True)


def register(cli: click.Group) -> None:
    """Add this area's commands to ``cli``."""
    for command in (local, checkpoint, session_end, events, rebuild):
        cli.add_command(command)
