"""``git memzoi hooks install|uninstall|status`` and the hidden ``git memzoi hook run <type>`` the shims exec.

The commands parse, call :mod:`git_memzoi.integrations.git_hooks` or :mod:`~git_memzoi.integrations.guard`,
and render. ``hook run`` exits non-zero only when pre-commit refuses the staged change; post-merge and
post-checkout always exit 0, whatever happens, because they cannot change the git operation's outcome. A hook
that does not finish within ``GIT_MEMZOI_HOOK_TIMEOUT`` seconds (default 300, 0 for no limit) says so and exits
0: it never hangs a commit (issue 12).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import click

from git_memzoi.cli.app import emit_json, json_option


@click.group("hooks")
def hooks_group() -> None:
    """Install, remove or inspect the git hooks (pre-commit, post-merge, post-checkout).

    Example: git memzoi hooks install
    """


def _render(report: object, as_json: bool) -> None:
    from git_memzoi.integrations.git_hooks import HooksReport

    assert isinstance(report, HooksReport)
    if as_json:
        emit_json(report.as_json())
        return
    for action in (*report.actions, *report.merge_actions):
        click.echo(action)
    shown = [h for h in report.hooks if not (report.actions and h.state == "installed" and not h.chained)]
    if shown:  # else the action lines above already said it all
        state_width = max(len(h.state) for h in shown)
        hook_width = max(len(h.hook) for h in shown)
        owner_width = max(len(h.owner) for h in shown)
        for hook in shown:
            chained = " (chains the previous hook)" if hook.chained else ""
            detail = f": {hook.detail}" if hook.detail and not hook.chained else ""
            columns = f"{hook.state:<{state_width}}  {hook.hook:<{hook_width}}  {hook.owner:<{owner_width}}"
            click.echo(f"{columns}  {hook.path}{chained}{detail}")
    if report.recommendation:
        click.echo(f"recommended: {report.recommendation}")


@hooks_group.command("install")
@json_option
@click.pass_context
def install_command(ctx: click.Context, as_json: bool) -> None:
    """Install the hook shims into the hooks directory git runs (core.hooksPath when set).

    An existing hook is kept as <type>.before-memzoi and runs first; uninstall restores it. Also registers the
    memory merge driver in the repository's git config and marks its paths in .gitattributes (commit that file).

    Example: git memzoi hooks install
    """
    from git_memzoi.cli.workspace import start_dir
    from git_memzoi.integrations import git_hooks

    _render(git_hooks.install(start_dir(ctx)), as_json)


@hooks_group.command("uninstall")
@click.option(
    "--keep-merge-driver",
    is_flag=True,
    help="Leave the merge driver registered (another hook manager runs the hooks; memory still merges).",
)
@json_option
@click.pass_context
def uninstall_command(ctx: click.Context, keep_merge_driver: bool, as_json: bool) -> None:
    """Remove the hook shims and restore any hook they chained; also the merge driver, unless kept.

    Example: git memzoi hooks uninstall --keep-merge-driver   (pre-commit, husky or lefthook runs memzoi)
    """
    from git_memzoi.cli.workspace import start_dir
    from git_memzoi.integrations import git_hooks

    _render(git_hooks.uninstall(start_dir(ctx), keep_merge_driver=keep_merge_driver), as_json)


@hooks_group.command("status")
@json_option
@click.pass_context
def status_command(ctx: click.Context, as_json: bool) -> None:
    """Tell installed, missing, foreign, bypassed-by-core.hooksPath, overwritten and broken (pinned python gone)
    hooks apart, name the system that owns each (memzoi, pre-commit, husky, lefthook, other, none) and
    recommend one; exit 1 unless all installed.

    Example: git memzoi hooks status --json
    """
    from git_memzoi.cli.workspace import start_dir
    from git_memzoi.integrations import git_hooks

    report = git_hooks.status(start_dir(ctx))
    _render(report, as_json)
    ctx.exit(report.exit_code)


@click.group("hook", hidden=True)
def hook_group() -> None:
    """Entry points the installed hook shims call."""


@hook_group.command("run")
@click.argument("hook_type")
@click.argument("args", nargs=-1)
@click.pass_context
def run_command(ctx: click.Context, hook_type: str, args: tuple[str, ...]) -> None:
    """Run one git hook: git memzoi hook run <type> -- <git's hook arguments>. For pre-commit the arguments
    are files a hook manager names (the pre-commit framework's file list), checked as well as the staged ones.

    Example: git memzoi hook run post-checkout -- <old> <new> 1
    """
    if in_shim_chain(hook_type, os.environ, os.getcwd()):
        ctx.exit(0)  # a hook our shim chains runs memzoi too (husky's or lefthook's line): the shim runs it next
    limit = hook_timeout(os.environ)
    try:
        with _bounded(limit):
            _run(ctx, hook_type, args)
    except HookTimeout:
        what = "the commit goes on unchecked" if hook_type == "pre-commit" else "skipped the rest"
        click.echo(f"git-memzoi: {hook_type} hook did not finish within {limit:g}s; {what} (warning)", err=True)
        ctx.exit(0)


DEFAULT_TIMEOUT = 300.0


def in_shim_chain(hook_type: str, environ: Mapping[str, str], cwd: str) -> bool:
    """True while a shim of ``hook_type`` for this folder runs its chained hook: ``GIT_MEMZOI_HOOK_CHAIN`` holds
    ``<hook>@<folder>;`` (the shim's ``$PWD``, or ``cwd``), set for the chained hook only. The shim runs this
    hook's check itself once the chained hook returns, so a second run from inside would only repeat it."""
    chain = environ.get("GIT_MEMZOI_HOOK_CHAIN") or ""
    folders = {cwd, environ.get("PWD") or cwd}
    return any(f"{hook_type}@{folder};" in chain for folder in folders)


class HookTimeout(BaseException):  # not an Exception: the hooks' "never fail" handlers must not eat it
    """The hook ran past ``GIT_MEMZOI_HOOK_TIMEOUT``."""


def hook_timeout(environ: Mapping[str, str]) -> float:
    """Seconds a hook may run (``GIT_MEMZOI_HOOK_TIMEOUT``, default 300; 0 or less: no limit; unreadable: the
    default), the same variable the shims bound their chained hook with."""
    try:
        return float(environ.get("GIT_MEMZOI_HOOK_TIMEOUT") or DEFAULT_TIMEOUT)
    except ValueError:
        return DEFAULT_TIMEOUT


@contextlib.contextmanager
def _bounded(seconds: float) -> Iterator[None]:
    """Raise :class:`HookTimeout` in the block after ``seconds`` (a real-time itimer; no limit where SIGALRM is
    missing, as on Windows)."""
    import signal  # here, not at the top: only a hook run pays for it (about 0.5 ms)

    if seconds <= 0 or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise HookTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _run(ctx: click.Context, hook_type: str, args: tuple[str, ...]) -> None:
    from git_memzoi.cli.workspace import start_dir
    from git_memzoi.integrations import guard, hook_events, newly_suspect

    if hook_type not in (*hook_events.HOOK_TYPES, "pre-commit-framework"):
        hook_events.parse(hook_type, [])  # a usage error naming the hook types (exit 2)
    if hook_type != "pre-commit-framework":
        try:  # pre-commit's arguments are the files a hook manager names (git passes none)
            parsed: object = hook_events.parse(hook_type, [] if hook_type == "pre-commit" else list(args))
        except hook_events.HookUsageError:
            if hook_type == "pre-commit":
                raise  # a usage error; post-merge and post-checkout say "skipped" below and never fail
            parsed = None
        checks = hook_type != "pre-commit" and parsed is not None and _checks_memory(parsed)  # the guard says it
        if not _located(ctx, hook_type, checks):
            ctx.exit(0)
    if hook_type == "pre-commit":
        _pre_commit(ctx, guard.pre_commit(start_dir(ctx), args))
        return
    event: hook_events.HookEvent | None = None
    try:
        if hook_type == "pre-commit-framework":  # post-merge / post-checkout stages of .pre-commit-hooks.yaml
            event = hook_events.from_pre_commit_env(os.environ)
            if event is None:  # the manual stage: the whole suspect report, as `git memkeep status` prints it
                _status_report(ctx)
                _refresh_index(ctx, hook_type)
                return
        else:
            event = hook_events.parse(hook_type, list(args))
        assert not isinstance(event, hook_events.PreCommit)
        report = newly_suspect.after_move(start_dir(ctx), event)
        for line in report.lines:
            click.echo(line, err=True)
    except Exception as exc:  # never fail a merge or a checkout
        _skipped(hook_type, "", exc)
        report = None
    if report is not None and report.old and report.new:
        _plan_arrived(ctx, hook_type, report.old, report.new)
    if isinstance(event, hook_events.PostMerge) and not event.squash:
        _regenerate_derived(ctx, hook_type)
    _refresh_index(ctx, hook_type)
    ctx.exit(0)


def _regenerate_derived(ctx: click.Context, hook_type: str) -> None:
    """After a merge, rewrite the memkeep INDEX.md from the merged entries when it does not match them (no merge
    driver installed, or both sides changed one entry), saying so; a failure is one line, never an exit code."""
    from git_memzoi.cli.workspace import start_dir
    from git_memzoi.integrations import derived_merge

    try:  # under the pre-commit framework a changed file fails the hook: there, only say INDEX.md is out of step
        done = derived_merge.regenerate(start_dir(ctx), write=hook_type != "pre-commit-framework")
    except Exception as exc:  # never fail a merge
        _skipped(hook_type, "index regeneration ", exc)
        return
    for line in done.lines():
        click.echo(line, err=True)


def _status_report(ctx: click.Context) -> None:
    """Print ``git memkeep status``'s report (one line when there is no store); never a failure."""
    from git_memzoi.cli import render
    from git_memzoi.cli.workspace import start_dir
    from git_memzoi.core import clock as clocks
    from git_memzoi.memkeep import api

    try:
        clock = clocks.from_environment(os.environ, instant=False)
        result = api.status(api.Options(start=start_dir(ctx), clock=clock))
    except Exception as exc:  # a report, never a failure
        _skipped("pre-commit-framework", "status report ", exc)
        return
    click.echo(render.status_text(result))


def _checks_memory(event: object) -> bool:
    """True when the hook would check memory: every commit, a merge (not squashed), a checkout that moved HEAD."""
    from git_memzoi.integrations.hook_events import PostCheckout, PostMerge

    if isinstance(event, PostCheckout):
        return event.branch_checkout and event.previous != event.new
    return not (isinstance(event, PostMerge) and event.squash)


def _located(ctx: click.Context, hook_type: str, checks: bool) -> bool:
    """Find the working tree as git hands it to the hook (GIT_DIR, GIT_WORK_TREE, core.worktree). When the hook
    ``checks`` memory and that tree holds no memory store, say so in one line on stderr, so a hook never passes
    silently because it looked in the wrong place; ``False`` (after one line) when there is no working tree at
    all (a hook in a bare repository)."""
    from git_memzoi.cli.workspace import start_dir
    from git_memzoi.core.gitroot import worktree_root
    from git_memzoi.core.gitview_pygit2 import NotARepository
    from git_memzoi.integrations.guard import memory_store

    try:
        root = worktree_root(start_dir(ctx))
    except NotARepository as exc:
        click.echo(f"git-memzoi: {hook_type} hook: nothing to check: {exc.message}", err=True)
        return False
    note = memory_store(root, below=True)[1] if checks else None
    if note:
        click.echo(f"git-memzoi: {hook_type} hook: {note}", err=True)
    return True


def _plan_arrived(ctx: click.Context, hook_type: str, old: str, new: str) -> None:
    """Plan a capture of the typed guidance that arrived between the pinned commits; one line, never a failure."""
    from git_memzoi.cli.workspace import start_dir
    from git_memzoi.integrations.arrived_guidance import plan_arrived

    try:
        line = plan_arrived(start_dir(ctx), old, new)
    except Exception as exc:  # never fail a merge or a checkout
        _skipped(hook_type, "capture plan ", exc)
        return
    if line:
        click.echo(line, err=True)


def _refresh_index(ctx: click.Context, hook_type: str) -> None:
    """Refresh the derived memzoi index after HEAD or the working tree moved; a failure is one line, never an
    exit code (the index is derived: the next command refreshes it again)."""
    from git_memzoi.cli.workspace import start_dir
    from git_memzoi.integrations import git_hooks

    try:
        note = git_hooks.refresh_index(start_dir(ctx))
    except Exception as exc:  # never fail a merge or a checkout
        _skipped(hook_type, "index refresh ", exc)
        return
    if note:
        click.echo(note, err=True)


def _skipped(hook_type: str, what: str, exc: Exception) -> None:
    message = exc.message if hasattr(exc, "message") else f"{type(exc).__name__}: {exc}"
    click.echo(f"git-memzoi: {hook_type} hook {what}skipped: {message}", err=True)


def _pre_commit(ctx: click.Context, result: object) -> None:
    from git_memzoi.integrations.guard import GuardResult

    assert isinstance(result, GuardResult)
    if result.note:
        click.echo(f"git-memzoi: pre-commit hook: {result.note}", err=True)
    for path in result.unlocked:  # a human edit; said so the reviewer sees it (records/lock.py)
        click.echo(f"git-memzoi: warning: this commit unlocks {path} (locked: true removed)", err=True)
    for path in result.deleted_locked:  # removing a reviewed record is unlocking it too
        click.echo(f"git-memzoi: warning: this commit deletes the locked record {path}", err=True)
    if result.touched:
        click.echo(
            "memkeep: this change touches the scope of these entries; check their claims, then verify them after "
            "this commit (verify anchors at HEAD):",
            err=True,
        )
        for entry_id, path in result.touched:
            click.echo(f"  {entry_id}  ({path})", err=True)
        if any(path.startswith(".memzoi/") for _, path in result.touched):  # a watched record, not an entry
            click.echo("  (a record's claim: git memzoi verify <id>; an entry's: git memkeep verify <id>)", err=True)
    if result.index_behind:  # a warning: INDEX.md is derived, and `git memkeep index` rewrites it
        index, drift = result.index_behind
        click.echo(
            f"memkeep: {index} does not match the entries ({drift}); run `git memkeep index` and add it", err=True
        )
    if result.unreadable:  # its scope is unknown, so this change may touch it unseen: said, never blocked
        click.echo("memkeep: these entries cannot be read, so whether this change touches them is unknown:", err=True)
        for where in result.unreadable:
            click.echo(f"  {where}", err=True)
        click.echo("  (git memkeep lint says what is wrong with each)", err=True)
    if result.violations:
        committed = result.only_committed  # CI modes: the files are on the branch already
        head = (
            "memory files on the branch break the guard's rules" if committed else "commit refused by the memory guard"
        )
        click.echo(f"git-memzoi: {head}:", err=True)
        for finding in result.violations:
            click.echo(f"  {finding.where()}  [{finding.rule}] {finding.message}", err=True)
        fix = "Fix them in a new commit." if committed else "Fix or unstage these files, then commit again."
        click.echo(fix, err=True)
    ctx.exit(result.exit_code)


@click.command("merge-driver")
@click.argument("ancestor", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("current", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("other", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("path")
@click.pass_context
def merge_driver_command(ctx: click.Context, ancestor: Path, current: Path, other: Path, path: str) -> None:
    """git's merge driver for derived memory files (.gitattributes merge=memzoi): git runs it as
    `merge-driver %O %A %B %P`; it writes the merged file over %A and exits 0 (1 when a file it does not
    know kept conflict markers). `git memzoi hooks install` registers it.

    Example: git memzoi merge-driver %O %A %B %P
    """
    from git_memzoi.integrations import derived_merge

    ctx.exit(derived_merge.run(ancestor, current, other, path).exit_code)


def register(cli: click.Group) -> None:
    """Add ``hooks``, the hidden ``hook`` and ``merge-driver`` to the ``git memzoi`` group."""
    cli.add_command(hooks_group)
    cli.add_command(hook_group)
    cli.add_command(merge_driver_command)
