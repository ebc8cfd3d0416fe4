"""`git memzoi` commands that connect agents: ``mcp serve|config``, ``integrate ...`` and ``quickstart``.

Commands parse, call :mod:`git_memzoi.integrations.agents`, :mod:`git_memzoi.mcp.server` or the inbox core, and
render. ``mcp serve`` prints nothing itself: stdout belongs to the protocol (field report BR-03).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from git_memzoi.cli.app import emit_document, emit_json, json_option

SAMPLE: dict[str, Any] = {
    "title": "Project memory lives in .memzoi/records",
    "body": "Reviewed project memory is committed under .memzoi/records/. Agents propose new memories with "
    "`git memzoi propose`; a person applies them after review.",
    "type": "fact",
    "sensitivity": "repo-safe",
    "source_kind": "path",
    "source_ref": ".memzoi/records",
}


def _root(ctx: click.Context, project_root: str | None = None) -> Path:
    from git_memzoi.cli.workspace import start_dir
    from git_memzoi.memzoi import workspace

    return workspace.find_root(Path(project_root) if project_root else start_dir(ctx))


@click.group("mcp")
def mcp_group() -> None:
    """The MCP server (stdio) and its client configuration."""


@mcp_group.command("serve")
@click.option("--project-root", type=click.Path(file_okay=False), help="The repository to serve (default: here).")
@click.pass_context
def mcp_serve(ctx: click.Context, project_root: str | None) -> None:
    """Serve the memory tools over stdio (MCP); stdout carries only protocol messages, logs go to stderr.

    Example: git memzoi mcp serve --project-root .
    """
    from git_memzoi.mcp.load import server_module

    server_module().serve(_root(ctx, project_root))  # a missing folder or a non-repository is refused before serving


@mcp_group.command("config")
@click.option(
    "--project-root",
    type=click.Path(file_okay=False),
    default=None,
    help="The repository the server is for (default: here).",
)
@click.pass_context
def mcp_config(ctx: click.Context, project_root: str | None) -> None:
    """Print the client configuration (the .mcp.json shape) for this repository; writes nothing.

    Example: git memzoi mcp config --project-root . > .mcp.json
    """
    from git_memzoi.integrations import agents

    emit_document(agents.mcp_config(_root(ctx, project_root)))  # the file itself: no envelope


@click.group("integrate")
def integrate() -> None:
    """Connect coding agents: instruction blocks (AGENTS.md, CLAUDE.md) and Claude Code hooks."""


@integrate.command("list")
@json_option
def integrate_list(as_json: bool) -> None:
    """List the integration profiles, their default files and how the file is chosen.

    Example: git memzoi integrate list --json
    """
    from git_memzoi.integrations import agents

    described = agents.describe()
    if as_json:
        emit_json(described)
        return
    for p in described["profiles"]:
        click.echo(f"{p['profile']:<12} {p['kind']:<13} {p['default_file']:<22} {p['policy']}")


_profile = click.option("--profile", required=True, help="codex, claude, mcp (install: claude-code).")


@integrate.command("prompt")
@_profile
def integrate_prompt(profile: str) -> None:
    """Print guidance for an agent profile; writes nothing.

    Example: git memzoi integrate prompt --profile mcp
    """
    from git_memzoi.integrations import agents

    click.echo(agents.prompt(profile), nl=False)


@integrate.command("instructions")
@_profile
@click.option("--file", "file_name", default=None, help="The file to write (default: chosen by the profile).")
@json_option
@click.pass_context
def integrate_instructions(ctx: click.Context, profile: str, file_name: str | None, as_json: bool) -> None:
    """Write the memzoi block between its markers in AGENTS.md / CLAUDE.md; text outside them is kept.

    Example: git memzoi integrate instructions --profile codex --file AGENTS.md
    """
    from git_memzoi.integrations import agents

    result = agents.write_instructions(_root(ctx), profile, file_name)
    if as_json:
        emit_json(result.to_json())
    else:
        click.echo(f"{result.status} {result.file}: {result.reason}")


@integrate.command("install")
@_profile
@click.option(
    "--prompt-context",
    is_flag=True,
    help="Also add the UserPromptSubmit hook: a small context pack when the prompt matches memory.",
)
@click.option(
    "--checkpoint-transcript",
    is_flag=True,
    help="The PreCompact checkpoint also notes the last requests from the conversation transcript.",
)
@json_option
@click.pass_context
def integrate_install(
    ctx: click.Context, profile: str, prompt_context: bool, checkpoint_transcript: bool, as_json: bool
) -> None:
    """Merge the Claude Code hooks (SessionStart, PreCompact, Stop) into .claude/settings.json, and register the
    merge driver of the derived memory indexes (git config and .gitattributes, as `git memzoi hooks install`).

    Each hook runs this python by its absolute path, so it works without git-memkeep on PATH; run it again
    after the virtualenv moved: our earlier commands are replaced in place. Other settings and hooks are kept;
    running it again with nothing to change writes nothing.

    Example: git memzoi integrate install --profile claude-code
    """
    from git_memzoi.errors import InputError
    from git_memzoi.integrations import agents, merge_config

    if profile not in agents.INSTALL_PROFILES:
        raise InputError(f"install supports --profile claude-code, not {profile!r}", "unknown_profile")
    result = agents.install_claude_code(_root(ctx), prompt_context=prompt_context, transcript=checkpoint_transcript)
    merge = merge_config.install(_root(ctx))  # branches' derived indexes merge without a human (issue 16)
    if as_json:
        emit_json({**result.to_json(), "merge_driver": list(merge.actions)})
        return
    click.echo(f"{result.status} {result.file} (python: {result.python})")
    for line in result.added:
        event, _, command = line.partition(": ")
        click.echo(f"  added {event}: {agents.hook_name(command) or command}")
    for change in result.replaced:
        click.echo(f"  replaced {change.event}: {change.hook} (was: {change.old})")
    for action in merge.changes:  # an unchanged driver goes unsaid, like unchanged hooks
        click.echo(action)


def _hook_input(default_event: str) -> tuple[str, dict[str, Any]]:
    """The hook JSON on stdin (``{}`` when none or unreadable: a hook never fails the session) and its event."""
    from git_memzoi.core.safe_read import load_json

    given: Any = {}
    try:
        raw = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
        given = load_json(raw) if raw.strip() else {}  # 100,000 levels of nesting are invalid input, not a crash
    except (OSError, ValueError) as exc:
        click.echo(f"git-memzoi: warning: hook input ignored: {exc}", err=True)
    given = given if isinstance(given, dict) else {}
    return str(given.get("hook_event_name") or default_event), given


def _session_config(ctx: click.Context) -> Any:
    """The ``[session]`` settings (:mod:`git_memzoi.memzoi.runtime.session_config`); ``$MEMZOI_HOME`` as
    ``cli.memzoi_inbox.memzoi_home`` reads it, without importing that module into a hook."""
    import os

    from git_memzoi.memzoi import layout, session_config

    home = os.environ.get("MEMZOI_HOME")
    return session_config.load(layout.Layout(_root(ctx)).config, Path(home) if home else Path.home() / ".memzoi")


@integrate.command("session-context")
@click.option(
    "--budget-bytes",
    type=click.IntRange(min=0, max=4000),
    default=None,
    help="Size limit of the context in UTF-8 bytes (default: [session] context_budget_bytes, else 4000).",
)
@click.pass_context
def session_context(ctx: click.Context, budget_bytes: int | None) -> None:
    """Claude Code hook: print the session-start context as a SessionStart envelope; never fails the session.

    The context comes from the repository's state: the latest checkpoint, the risks bound to files this branch
    and the working tree changed, suspect and stale claims of both stores, the newest decisions and the open
    review count, each cited, within the byte budget. A repository without memory gets one line saying how to
    start; one with only memkeep entries (no .memzoi/) gets nothing (memkeep's own SessionStart hook reports it).

    Example: git memzoi integrate session-context < hook.json
    """
    from git_memzoi.cli.workspace import open_workspace
    from git_memzoi.errors import MemzoiError
    from git_memzoi.integrations.claude_code import hook_output
    from git_memzoi.memzoi import layout
    from git_memzoi.memzoi import session_context as core

    event, given = _hook_input("SessionStart")
    payload = None
    try:
        budget = budget_bytes if budget_bytes is not None else _session_config(ctx).context_budget_bytes
        budget = core.check_budget(core.DEFAULT_BUDGET_BYTES if budget is None else budget)
        built: core.SessionContext | None
        try:
            built = core.build(open_workspace(ctx), budget_bytes=budget)
        except layout.NotInitialized:  # no .memzoi/: silent beside a memkeep store, else how to start
            built = None if core.has_memkeep_store(_root(ctx)) else core.start_context(budget)
        payload = None if built is None else hook_output(event, built.text, given)
    except MemzoiError as exc:
        click.echo(f"git-memzoi: {exc.message}", err=True)
    if payload is not None:
        click.echo(payload)
    ctx.exit(0)


@integrate.command("prompt-context")
@click.option(
    "--token-budget",
    type=click.IntRange(min=0),
    default=200,
    show_default=True,
    help="Size limit of the pack in approx_words.",
)
@click.option(
    "--min-terms",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="How many of the prompt's key words a memory must hold to be relevant.",
)
@click.pass_context
def prompt_context(ctx: click.Context, token_budget: int, min_terms: int) -> None:
    """Claude Code UserPromptSubmit hook (opt-in): the context pack for the prompt's key words, printed only when
    a packed memory is relevant; otherwise nothing. Never fails the prompt.

    Example: git memzoi integrate prompt-context < hook.json
    """
    from git_memzoi.cli.workspace import open_workspace
    from git_memzoi.errors import MemzoiError
    from git_memzoi.integrations.claude_code import hook_output
    from git_memzoi.memzoi import layout
    from git_memzoi.memzoi import prompt_context as core

    event, given = _hook_input("UserPromptSubmit")
    prompt = given.get("prompt")
    payload = None
    if isinstance(prompt, str) and prompt.strip():
        try:
            found = core.build(open_workspace(ctx), prompt, token_budget=token_budget, min_terms=min_terms)
            payload = None if found is None else hook_output(event, found.text, given)
        except layout.NotInitialized:
            payload = None
        except MemzoiError as exc:
            click.echo(f"git-memzoi: {exc.message}", err=True)
    if payload is not None:
        click.echo(payload)
    ctx.exit(0)


@integrate.command("pre-compact")
@click.option(
    "--from-transcript",
    is_flag=True,
    help="Also note the last requests from the hook input's transcript_path (opt-in; also [session] "
    "checkpoint_transcript = true).",
)
@click.pass_context
def pre_compact(ctx: click.Context, from_transcript: bool) -> None:
    """Claude Code PreCompact hook: write a private session checkpoint of the branch and working tree (and, opted
    in, the last requests) so the next session-context starts with "Resuming: ..."; prints nothing on stdout
    (PreCompact's stdout would become compaction instructions). Never fails the compaction.

    Example: git memzoi integrate pre-compact < hook.json
    """
    from git_memzoi.cli.workspace import open_workspace
    from git_memzoi.errors import MemzoiError
    from git_memzoi.memzoi import compact_checkpoint as compact
    from git_memzoi.memzoi import layout

    _, given = _hook_input("PreCompact")
    try:
        opted = from_transcript or _session_config(ctx).checkpoint_transcript
        compact.write(open_workspace(ctx, actor="claude-code"), given, from_transcript=opted)
    except layout.NotInitialized:
        pass  # no .memzoi/: nowhere private to keep it
    except MemzoiError as exc:
        click.echo(f"git-memzoi: checkpoint not written: {exc.message}", err=True)
    ctx.exit(0)


@click.command()
@click.option("--apply-sample", is_flag=True, help="Also run init and propose + apply one sample repo-safe record.")
@json_option
@click.pass_context
def quickstart(ctx: click.Context, apply_sample: bool, as_json: bool) -> None:
    """The first steps, each checked in this repository: done, next or to do (writes nothing unless
    --apply-sample, which also runs init and applies one sample record first).

    Example: git memzoi quickstart --apply-sample
    """
    from git_memzoi.cli.workspace import start_dir
    from git_memzoi.integrations import quickstart as core

    sample = _apply_sample(ctx) if apply_sample else None
    found = core.survey(start_dir(ctx))
    if as_json:
        emit_json({**found.as_json(), "sample": sample})
        return
    marks = {"done": "[x]", "next": "[>]", "todo": "[ ]"}
    for number, step in enumerate(found.steps, 1):
        click.echo(f"{marks[found.status(step)]} {number}. {step.command}\n       {step.purpose}")
    ahead = found.next
    click.echo(f"next: {ahead.command}" if ahead else "every step is done")
    if sample is not None and sample["record_id"]:
        click.echo(f"sample: proposal {sample['proposal_id']} applied as record {sample['record_id']}")
    elif sample is not None:
        click.echo(f"sample: proposal {sample['proposal_id']} is {sample['status']}; nothing new written")


def _apply_sample(ctx: click.Context) -> dict[str, Any]:
    from git_memzoi.cli.memzoi_inbox import memzoi_home
    from git_memzoi.cli.workspace import open_workspace, start_dir
    from git_memzoi.memzoi import inbox, workspace

    init = workspace.init(start_dir(ctx))
    draft = inbox.make_draft(**SAMPLE, actor="quickstart")
    result = inbox.propose(open_workspace(ctx, actor=draft.actor), draft, memzoi_home=memzoi_home(), apply=True)
    applied = result.applied
    return {
        "initialized": bool(init.created),
        "proposal_id": result.proposal.id,
        "status": result.proposal.status,
        "record_id": applied.record_id if applied else None,
        "written": list(applied.written) if applied else [],
    }


def register(cli: click.Group) -> None:
    """Add ``mcp``, ``integrate`` and ``quickstart`` to ``git memzoi``."""
    for command in (mcp_group, integrate, quickstart):
        cli.add_command(command)
