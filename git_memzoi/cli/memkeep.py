"""``git memkeep``: the Earned Memory command line (memkeep README "Commands")."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from git_memzoi import __version__
from git_memzoi.cli.app import ID, AppGroup, add_help_command, emit_json, environment, json_option
from git_memzoi.core import jsonout

if TYPE_CHECKING:
    from git_memzoi.memkeep.api import Options, StatusResult

_STORE_KEYS = ("store", "store_dir", "directory")


def store_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--store``, ``--store-dir`` and ``-C``, accepted before or after the subcommand."""
    func = click.option(
        "-C", "directory", metavar="DIR", type=click.Path(file_okay=False), help="Run as if started in DIR."
    )(func)
    func = click.option(
        "--store-dir",
        metavar="NAME",
        help="Store folder name, looked for from the current folder (or -C DIR) up to the repository root "
        "(default: store_dir in .memkeep.yml, else agent-memory).",
    )(func)
    return click.option(
        "--store", metavar="PATH", help="Explicit store path, bypassing discovery (default: $MEMKEEP_STORE)."
    )(func)


def _options(ctx: click.Context, **given: Any) -> Options:
    from git_memzoi.core import clock as clocks
    from git_memzoi.memkeep.api import Options

    # The command line wins wherever it is given (after the subcommand, then before it), then the environment.
    merged = {k: given.get(k) or (ctx.obj or {}).get(k) for k in _STORE_KEYS}
    merged["store"] = merged["store"] or environment("MEMKEEP_STORE")
    start = Path(merged["directory"]) if merged["directory"] else Path.cwd()
    clock = clocks.from_environment(os.environ, instant=False)  # memkeep reads days only
    return Options(start=start, store=merged["store"], store_dir=merged["store_dir"], clock=clock)


@click.group("git-memkeep", cls=AppGroup, context_settings={"help_option_names": ["-h", "--help"]})
@store_options
@click.version_option(__version__, prog_name="git-memkeep")
@click.pass_context
def cli(ctx: click.Context, /, **global_options: Any) -> None:
    """Earned Memory: claims with evidence, a git anchor and a scope; staleness computed from git.

    Exit codes: 0 clean, 1 violation or suspect, 2 usage or tool error. Help: git memkeep -h, or
    git memkeep help [COMMAND] (under git, --help asks for a man page).
    """
    ctx.obj = global_options


@cli.command()
@store_options
@json_option
@click.pass_context
def index(ctx: click.Context, /, as_json: bool, **given: Any) -> None:
    """Regenerate INDEX.md from the entries' frontmatter; exit 1 when an unreadable entry was left out.

    Example: git memkeep index --store ./somewhere/else
    """
    from git_memzoi.cli import render
    from git_memzoi.memkeep import api

    result = api.index(_options(ctx, **given))
    emit_json(api.schema.index_json(result)) if as_json else click.echo(render.index_text(result))
    ctx.exit(1 if result.unreadable else 0)  # an entry left out of INDEX.md is a violation, as lint says


@cli.command()
@store_options
@json_option
@click.option(
    "--hook",
    "hook_event",
    metavar="EVENT",
    help="Print Claude Code hook output for EVENT (SessionStart, Stop: JSON; PreCompact: plain text); always exit 0. "
    "Not with --json.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "github", "sarif"]),
    default="text",
    help="github: workflow annotations (and $GITHUB_STEP_SUMMARY); sarif: a SARIF 2.1.0 log.",
)
@click.pass_context
def status(ctx: click.Context, /, as_json: bool, hook_event: str | None, fmt: str, **given: Any) -> None:
    """Compute the suspect set: scope hits, expired TTLs, suspect dependencies, unreachable anchors.

    Example: git memkeep status --json   (in CI: git memkeep status --format github)
    """
    from git_memzoi.cli import render
    from git_memzoi.memkeep import api

    if hook_event is not None:
        if as_json or fmt != "text":
            raise click.UsageError("--hook prints its own JSON envelope; leave out --json and --format", ctx=ctx)
        _hook(ctx, hook_event, given)
        return
    if as_json and fmt != "text":
        raise click.UsageError("--json and --format are alternatives; pick one", ctx=ctx)
    result = api.status(_options(ctx, **given))
    if fmt != "text":
        _ci_format(fmt, result)
    elif as_json:
        with api.no_cyclic_gc():  # the output is one verdict object per suspect: see no_cyclic_gc
            _emit_status_json(api.schema.status_json(result))
    else:
        click.echo(render.status_text(result))
    ctx.exit(result.exit_code)


def _emit_status_json(payload: Mapping[str, Any]) -> None:
    """:func:`emit_json`, for the largest output: the payload is a fresh tree (no cycle to check for), and
    JSON escapes every control character, so there is no ANSI sequence to strip (``color=True`` skips that pass
    over the whole text). The bytes are the same."""
    click.echo(jsonout.dumps(payload, fresh=True), color=True)


def _ci_format(fmt: str, result: StatusResult) -> None:
    from git_memzoi.core import safe_read
    from git_memzoi.errors import InputError
    from git_memzoi.integrations import ci_report
    from git_memzoi.integrations.team_review import review_items

    review = review_items(result)  # merged branches' INDEX.md drift and conflicting claims
    texts = {}  # each finding's entry file, so its annotation / SARIF region names the line of its field
    for rel in ci_report.finding_paths(result):
        try:
            texts[rel] = safe_read.read_text(result.store.root / rel, errors="replace")
        except (OSError, InputError):  # gone, or no regular file of at most 256 KiB: no line to name
            continue
    if fmt == "sarif":
        click.echo(jsonout.dumps(ci_report.sarif(result, texts, review), indent=2))
        return
    click.echo(ci_report.github(result, texts=texts, code=_changed_code(result), review=review))
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(ci_report.summary_markdown(result, review))


def _changed_code(result: StatusResult, max_bytes: int = 1_000_000) -> dict[str, list[tuple[int, int]]]:
    """The changed line ranges (HEAD side) of each file a ``scope_hit`` verdict names, since that entry's anchor:
    where ``--format github`` puts a notice on the code. Deleted, binary and larger-than-``max_bytes`` files get
    none (there is no line to point at, or it costs too much)."""
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView
    from git_memzoi.integrations import ci_report

    head = result.report.head
    pairs = sorted(
        {
            (str(v.evidence.get("anchor", "")), path)
            for v in result.report.verdicts
            if v.reason == "scope_hit"
            for path in v.evidence.get("files", ())
        }
    )
    if not head or not pairs:
        return {}
    view = Pygit2RepoView(result.store.root)
    out: dict[str, list[tuple[int, int]]] = {}
    for anchor, path in pairs:
        new = view.tree_blob(head, path)
        if new is None or len(new) > max_bytes or b"\0" in new:
            continue
        try:
            old = view.tree_blob(anchor, path) if anchor else None
        except (KeyError, ValueError):  # an anchor git no longer has: no old side to compare with
            continue
        if old is not None and (len(old) > max_bytes or b"\0" in old):
            continue
        before = old.decode("utf-8", "replace") if old is not None else None
        out.setdefault(path, []).extend(ci_report.changed_ranges(before, new.decode("utf-8", "replace")))
    return out


def _hook(ctx: click.Context, event: str, given: dict[str, Any]) -> None:
    """Never fail the agent's session: any error becomes silence on stdout and one line on stderr."""
    from git_memzoi.cli import render
    from git_memzoi.errors import MemzoiError
    from git_memzoi.integrations.claude_code import hook_output, unknown_event_warning
    from git_memzoi.memkeep import api

    warning = unknown_event_warning(event)
    if warning:
        click.echo(f"git-memkeep: warning: {warning}", err=True)
    hook_input = _hook_input()
    try:
        out = hook_output(event, render.hook_text(api.status(_options(ctx, **given))), hook_input)
    except MemzoiError as exc:
        click.echo(f"git-memkeep: {exc.message}", err=True)
        out = None
    if out is not None:
        click.echo(out)
    ctx.exit(0)


def _hook_input() -> dict[str, Any]:
    """The hook's JSON on stdin (``{}`` on a terminal, empty or unreadable input: a hook never fails on it)."""
    import sys

    from git_memzoi.core.safe_read import load_json

    try:
        raw = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
        given = load_json(raw) if raw.strip() else {}  # 100,000 levels of nesting are invalid input, not a crash
    except (OSError, ValueError):
        return {}
    return given if isinstance(given, dict) else {}


@cli.command()
@store_options
@json_option
@click.option("--fix", is_flag=True, help="Regenerate INDEX.md when it has drifted.")
@click.option("--skip-without-store", is_flag=True, hidden=True)  # the pre-commit framework's memkeep-lint hook
@click.pass_context
def lint(ctx: click.Context, /, as_json: bool, fix: bool, skip_without_store: bool, **given: Any) -> None:
    """Validate the envelope, taxonomies, explains graph, size caps and INDEX consistency.

    Example: git memkeep lint --fix
    """
    from git_memzoi.cli import render
    from git_memzoi.memkeep import api

    try:
        result = api.lint(_options(ctx, **given), fix=fix)
    except api.StoreNotFound:
        if not skip_without_store:
            raise
        # a repository with .memzoi/ alone, or no memory yet: the published hook must not block its commits
        click.echo("memkeep: no memkeep store in this repository; nothing to lint")
        ctx.exit(0)
    emit_json(api.schema.lint_json(result)) if as_json else click.echo(render.lint_text(result))
    ctx.exit(result.exit_code)


@cli.command()
@click.argument("entry_id", required=False, metavar="[ID]", type=ID)
@store_options
@json_option
@click.option("--all-safe", is_flag=True, help="Re-check every suspect entry whose check is marked safe.")
@click.option("--dry-run", is_flag=True, help="Show what would run; run and write nothing.")
@click.option("--manual", is_flag=True, help="Record a re-test done by hand (anchor := HEAD, verified_at := today).")
@click.pass_context
def verify(
    ctx: click.Context,
    /,
    entry_id: str | None,
    as_json: bool,
    all_safe: bool,
    dry_run: bool,
    manual: bool,
    **given: Any,
) -> None:
    """Re-run an entry's check: pass heals it (anchor := HEAD, verified_at := today), fail marks it stale.

    Example: git memkeep verify --all-safe --dry-run
    """
    from git_memzoi.cli import render
    from git_memzoi.memkeep import api

    result = api.verify(_options(ctx, **given), entry_id, all_safe=all_safe, dry_run=dry_run, manual=manual)
    emit_json(api.schema.verify_json(result)) if as_json else click.echo(render.verify_text(result))
    ctx.exit(result.exit_code)


@cli.command("merge-driver")
@click.argument("ancestor", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("current", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("other", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("path")
@click.pass_context
def merge_driver(ctx: click.Context, ancestor: Path, current: Path, other: Path, path: str) -> None:
    """git's merge driver for INDEX.md (the same as `git memzoi merge-driver`): merges the index lines of both
    sides three ways, writes the result over %A and exits 0.

    Example: git memkeep merge-driver %O %A %B %P
    """
    from git_memzoi.integrations import derived_merge

    ctx.exit(derived_merge.run(ancestor, current, other, path).exit_code)


add_help_command(cli)


def main() -> None:
    """Console script ``git-memkeep``, also run as ``python -m git_memzoi.cli.memkeep``: the Claude Code hooks
    call it so, with the interpreter pinned at install, since Claude Code may run them without our ``PATH``."""
    cli(prog_name="git-memkeep")


if __name__ == "__main__":
    main()
