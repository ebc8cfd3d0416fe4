"""`git memzoi` commands of the recall area: search, context, handoff, precheck and show.

Each command parses its options, calls one function of :mod:`git_memzoi.memzoi.recall.search`,
:mod:`~git_memzoi.memzoi.recall.pack`, :mod:`~git_memzoi.memzoi.recall.precheck` or :mod:`~git_memzoi.memzoi.recall.show`, and
renders the result as text or ``--json``. All of them read only; all but ``show`` (which refuses an id naming no
record) exit 0, whatever they find.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from git_memzoi.cli.app import emit_json, json_option
from git_memzoi.cli.workspace import open_workspace

if TYPE_CHECKING:
    from git_memzoi.memzoi import Workspace, recall_schema, record_show

_budget = click.option(
    "--token-budget",
    type=click.IntRange(min=0),
    default=None,
    help="Size limit in approx_words (default 400; 0 gives an empty pack).",
)
_local = click.option("--include-local", is_flag=True, help="Also recall private local records.")
_session = click.option("--include-session", is_flag=True, help="Also recall session checkpoints.")
_store = click.option(
    "--store",
    type=click.Choice(["records", "entries", "all"]),
    default="all",
    show_default=True,
    help="Which memory to read: memzoi records, memkeep entries (agent-memory/entries/), or both.",
)
_as_of = click.option(
    "--as-of",
    "as_of",
    default=None,
    metavar="WHEN",
    help="Recall as of this instant (ISO 8601 with a zone, or a date = 00:00Z; default now).",
)
_history = click.option(
    "--include-superseded", is_flag=True, help="Also recall superseded records (a historical query)."
)
_mode = click.option(
    "--mode",
    type=click.Choice(["lexical", "semantic", "hybrid"]),
    default=None,
    help="How text is matched: BM25 words, meaning (needs git-memzoi[semantic]), or both fused by RRF "
    "(default: [recall] mode, else hybrid when a model is installed, else lexical).",
)


def _opened(
    ctx: click.Context, path: str | None, as_of: str | None = None, include_superseded: bool = False
) -> tuple[Workspace, str | None]:
    """The command's workspace (recalling as of ``--as-of``, with ``--include-superseded``; a bad ``--as-of`` is
    ``invalid_as_of``, exit 2) and its ``--path`` made repository-relative as a git pathspec is (relative to the
    start directory), refused (exit 2, ``path_outside_repo``) before anything is read or the index refreshed
    when it leaves the repository."""
    from git_memzoi.cli.workspace import start_dir
    from git_memzoi.core.paths import request_path
    from git_memzoi.memzoi import validity

    when = validity.parse_as_of(as_of)
    ws = open_workspace(ctx).viewing(when, include_superseded)
    return ws, request_path(path, ws.layout.root, start_dir(ctx))


def _notes(notes: list[recall_schema.NoteJson]) -> None:
    for note in notes:  # a path that names nothing: said on stderr, never silently
        click.echo(f"warning: {note['message']} ({note['code']})", err=True)


def _where(cite: recall_schema.CitationJson) -> str:
    return f"{cite.get('file')}:{cite.get('line')}"


def _source(store: str, cite: recall_schema.CitationJson) -> str:
    """Where a warning's claim comes from, as precheck prints it: an entry's file and line, a record's source
    (kind and ref) when it has one, else its file (never ``- -``)."""
    if store == "entry":
        return f"memkeep entry {_where(cite)}"
    named = " ".join(str(part) for part in (cite.get("source_kind"), cite.get("source_ref")) if part)
    return named or f"record {_where(cite) if cite.get('file') else cite['record_id']}"


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
@click.option(
    "--path",
    default=None,
    help="Only memories bound to this path (an ancestor, descendant or /** glob; relative to the current directory).",
)
@_store
@_mode
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="At most this many results (0 means 10, at most 100).",
)
@_as_of
@_history
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
    store: str,
    mode: str | None,
    limit: int,
    as_of: str | None,
    include_superseded: bool,
    as_json: bool,
) -> None:
    """Full-text search over current repository records and memkeep entries (never local or session ones).

    Words are OR-ed, records holding every word first; a hyphenated or dotted word (pre-edit, node.js) is one
    phrase. Any text is a valid query. Suspect memories are marked, and come after trusted ones of equal rank.
    --mode semantic matches by meaning, --mode hybrid fuses both rankings; --json gives each hit's scores.

    Example: git memzoi search "database migration" --type decision --path src/db/ --json
    """
    from git_memzoi.memzoi import search as run

    ws, path = _opened(ctx, path, as_of, include_superseded)
    response = run.search(
        ws,
        query,
        scope_kind=scope_kind,
        scope_id=scope_id,
        memory_type=memory_type,
        lane=lane,
        path=path,
        limit=limit,
        store=store,
        mode=mode,
    )
    if as_json:
        emit_json(response.to_json())
        return
    _notes(list(response.notes))
    if not response.results:
        click.echo("No matching memories.")
    shares = run.relevance([found["score"] for found in response.results])
    for found, share in zip(response.results, shares, strict=True):
        record = found["record"]
        entry = f"\tentry {_where(found['citations'][0])}" if found["store"] == "entry" else ""
        replaced = "\tSUPERSEDED" if record.get("status") == "superseded" else ""  # --include-superseded history
        click.echo(
            f"{record['id']}\t{record['memory_type']}\t{share:.2f}\t{record['title']}"
            + entry
            + replaced
            + _suspect_note(found["suspect"])
        )
    for warning in response.warnings:  # a withheld record, a mode fallback: said on stderr, as context does
        click.echo(f"warning: {warning}", err=True)


@click.command()
@click.option("--task", required=True, help="What the agent is about to do.")
@click.option("--path", default=None, help="The file or folder the task is about (relative to the current directory).")
@_budget
@_local
@_session
@_store
@_as_of
@_history
@click.option(
    "--expand", is_flag=True, help="Also pack the records the candidates' relations reach (same budget; cited)."
)
@_mode
@json_option
@click.pass_context
def context(
    ctx: click.Context,
    task: str,
    path: str | None,
    token_budget: int | None,
    include_local: bool,
    include_session: bool,
    store: str,
    as_of: str | None,
    include_superseded: bool,
    expand: bool,
    mode: str | None,
    as_json: bool,
) -> None:
    """Build a prompt-ready context pack for a task, within a size budget; repository records and memkeep
    entries only unless --include-local / --include-session. A suspect memory is packed only after the trusted
    ones of the same relevance; warnings go to stderr.

    Example: git memzoi context --task "add a migration" --path src/db/ --token-budget 800 --json
    """
    from git_memzoi.memzoi import context_pack as run

    ws, path = _opened(ctx, path, as_of, include_superseded)
    pack = run.build(
        ws,
        task,
        path=path,
        token_budget=token_budget,
        include_local=include_local,
        include_session=include_session,
        store=store,
        expand=expand,
        mode=mode,
    )
    if as_json:
        emit_json(pack.to_json())
        return
    _notes(pack.payload["notes"])
    for warning in pack.payload["warnings"]:
        click.echo(f"warning: {warning}", err=True)
    click.echo(pack.prompt or _empty_pack(pack.payload["budget"]))


def _empty_pack(budget: Mapping[str, Any]) -> str:
    """What an empty pack (its ``budget`` object) says instead of a bare empty line: nothing matched, or nothing
    fitted the budget."""
    if not budget["candidate_records"]:
        return "No matching memories."
    return f"No matching memory fits the token budget ({budget['effective']}): raise --token-budget."


@click.command()
@click.option("--task", default=None, help="What the next agent should continue.")
@click.option("--path", default=None, help="The file or folder the work is about (alone: the task names it).")
@_budget
@_local
@_session
@_store
@_as_of
@_history
@_mode
@json_option
@click.pass_context
def handoff(
    ctx: click.Context,
    task: str | None,
    path: str | None,
    token_budget: int | None,
    include_local: bool,
    include_session: bool,
    store: str,
    as_of: str | None,
    include_superseded: bool,
    mode: str | None,
    as_json: bool,
) -> None:
    """Hand work over to another agent: the context pack plus the open review inbox counts (git memzoi review).

    Needs --task or --path.

    Example: git memzoi handoff --path src/auth/ --json
    """
    from git_memzoi.memzoi import handoff_pack as run

    ws, path = _opened(ctx, path, as_of, include_superseded)
    result = run.handoff(
        ws,
        task=task,
        path=path,
        token_budget=token_budget,
        include_local=include_local,
        include_session=include_session,
        store=store,
        mode=mode,
    )
    if as_json:
        emit_json(result.to_json())
    else:
        context = result.payload["context"]
        _notes(context["notes"])
        click.echo(result.text() if context["prompt"] else result.text() + _empty_pack(context["budget"]))


@click.command()
@click.option("--path", default=None, help="The file or folder about to change (relative to the current directory).")
@click.option("--action", default=None, help="What is about to be done, in words.")
@click.option("--command", "command_text", default=None, help="The command about to run.")
@click.option("--scope-kind", default=None, help="Only records of this scope kind.")
@_store
@_as_of
@_history
@_mode
@json_option
@click.pass_context
def precheck(
    ctx: click.Context,
    path: str | None,
    action: str | None,
    command_text: str | None,
    scope_kind: str | None,
    store: str,
    as_of: str | None,
    include_superseded: bool,
    mode: str | None,
    as_json: bool,
) -> None:
    """List the risks, warnings and failed attempts that apply to a planned change, and the memkeep entries
    whose scope covers the path, each with its citation.

    Needs --path, --action or --command. Suspect memories are cited as such and listed first, for review.

    Example: git memzoi precheck --path src/billing/settle.py --action "reorder settlement"
    """
    from git_memzoi.memzoi import precheck as run

    ws, path = _opened(ctx, path, as_of, include_superseded)
    result = run.precheck(
        ws, path=path, action=action, command=command_text, scope_kind=scope_kind, store=store, mode=mode
    )
    if as_json:
        emit_json(result.to_json())
        return
    _notes(list(result.notes))
    if not result.warnings:
        click.echo("No memory warnings.")
    for warning in result.warnings:
        cite = warning["citations"][0]
        where = f" ({cite['path']})" if cite["path"] else ""
        click.echo(f"[{warning['severity']}] {warning['record_id']}{where}: {warning['message'].splitlines()[0]}")
        click.echo(f"  source: {_source(warning['store'], cite)}")
        if warning["superseded"]:  # --include-superseded history: never current guidance
            click.echo("  SUPERSEDED: replaced by a newer record; read it as history")
        if warning["suspect"]:
            reasons = warning["suspect"]["reasons"]
            click.echo("  SUSPECT: " + "; ".join(f"{r['reason']}: {r['message']}" for r in reasons))
        click.echo(f"  next: {warning['suggested_next_step']}")


@click.command()
@click.argument("target")
@click.option(
    "--projection",
    metavar="metadata|sections|full",
    default=None,
    help="A compact read: metadata (no body), sections (the --heading sections) or full (the body as one slice); "
    "each slice with its byte offsets and line range in the file (exit 2: invalid_projection).",
)
@click.option(
    "--heading",
    "headings",
    metavar="PATH",
    multiple=True,
    help="A section to show, by its heading titles from the outermost down (Use pnpm/Context; \\/ for a slash "
    "in a title); repeatable, implies --projection sections (exit 2: target_not_found, ambiguous_target).",
)
@click.option(
    "--max-chars",
    type=int,  # a negative budget is the tool's bad_max_chars, as over MCP, not a usage error
    default=None,
    help="One budget for all the body text shown, in UTF-16 code units (sections default to 6000); "
    "the JSON says truncated and budget_used.",
)
@_store
@_as_of
@json_option
@click.pass_context
def show(
    ctx: click.Context,
    target: str,
    projection: str | None,
    headings: tuple[str, ...],
    max_chars: int | None,
    store: str,
    as_of: str | None,
    as_json: bool,
) -> None:
    """Show one repository record or memkeep entry: its fields, body, lineage, envelope and suspect reasons.

    TARGET is an id or a prefix naming exactly one (exit 2: target_not_found, ambiguous_target).

    Example: git memzoi show use-pnpm --heading "Use pnpm/Context" --max-chars 400 --json
    """
    from git_memzoi.memzoi import record_show as run

    ws, _ = _opened(ctx, None, as_of)
    paths = [run.parse_heading_path(h) for h in headings]
    shown = run.show(
        ws,
        target,
        max_chars=max_chars,
        store=store,
        projection=projection,
        heading_paths=paths,
    )
    if as_json:
        emit_json(shown.to_json())
        return
    fields = shown.fields
    title = fields.get("title") if shown.store == "record" else (shown.body.strip().splitlines() or [""])[0]
    click.echo(f"{shown.id}\t{fields.get('type')}\t{fields.get('status')}\t{title}")
    click.echo(f"file: {shown.path}")
    if not shown.valid_at:
        click.echo("not valid at the as-of instant (valid_from / valid_to)")
    if shown.supersedes or shown.superseded_by:
        click.echo(f"supersedes: {', '.join(shown.supersedes) or '-'}")
        click.echo(f"superseded by: {', '.join(shown.superseded_by) or '-'}")
    if shown.suspect:
        reasons = shown.suspect["reasons"]
        click.echo("SUSPECT: " + "; ".join(f"{r['reason']}: {r['message']}" for r in reasons))
    if shown.compact is not None:
        _slices(shown)
        return
    click.echo("")
    click.echo(shown.body.rstrip("\n"))
    if shown.truncated:
        click.echo(f"[truncated: {shown.budget_used} of {shown.body_chars} characters]")
    _statements(shown.statements)


def _statements(found: Mapping[str, Any] | None) -> None:
    """A record's categorized statements after its body: one line each, or why there are none to trust."""
    if not found or not (found["statements"] or found["state"] != "indexed"):
        return
    click.echo("")
    if found["state"] != "indexed":
        click.echo(f"statements: {found['state']} (the file changed since it was indexed; run the command again)")
    for item in found["statements"]:
        start, end = item["lines"]
        where = f"line {start}" if start == end else f"lines {start}-{end}"
        click.echo(f"[{item['category']}] {item['text'].splitlines()[0]} ({where})")


def _slices(shown: record_show.Shown) -> None:
    """Each slice under a line naming its heading path, lines and bytes; then what was cut or left out."""
    compact = shown.compact
    assert compact is not None
    for part in compact.slices:
        name = "/".join(part.heading_path) if part.heading_path is not None else "body"
        click.echo("")
        click.echo(f"--- {name} (lines {part.start_line}-{part.end_line}, bytes {part.start_byte}-{part.end_byte})")
        click.echo(part.text.rstrip("\n"))
        if part.truncated:
            click.echo(f"[truncated: {part.chars} of {part.original_chars} characters]")
    for gone in compact.excluded:
        name = "/".join(gone.heading_path) if gone.heading_path is not None else "body"
        click.echo(f"[excluded: {name} (lines {gone.start_line}-{gone.end_line}): {gone.reason}]")
    limit = "unlimited" if compact.budget_limit is None else compact.budget_limit
    click.echo(f"[{compact.projection}: {compact.budget_used} of {limit} characters used]")


def register(cli: click.Group) -> None:
    """Add the recall commands to ``git memzoi``."""
    for command in (search, context, handoff, precheck, show):
        cli.add_command(command)
