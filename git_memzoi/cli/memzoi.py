"""``git memzoi``: the Memzoi model's command line (governed records, recall, capture, integrations).

Command groups live in one module per area (``memzoi_<area>.py``), each with ``register(cli)``, imported when
one of its commands is first named (:data:`LAZY`), so a command loads only its own area (issue 17, "Start-up").
"""

from __future__ import annotations

from pathlib import Path

import click

from git_memzoi import __version__
from git_memzoi.cli.app import ID, LazyGroup, accept_directory_anywhere, add_help_command, emit_json, json_option
from git_memzoi.cli.workspace import open_workspace, start_dir

_AREAS = {
    "memzoi_packets": ("proposal-files", "supersede", "tombstone", "verify"),
    "memzoi_inbox": ("propose", "review", "proposals", "approve", "reject", "apply"),
    "memzoi_runtime": ("local", "checkpoint", "session-end", "events", "rebuild"),
    "memzoi_recall": ("search", "context", "handoff", "precheck", "show"),
    "memzoi_eval": ("eval",),
    "memzoi_export": ("export",),
    "memzoi_hooks": ("hooks", "hook", "merge-driver"),
    "memzoi_integrate": ("mcp", "integrate", "quickstart"),
    "memzoi_capture": ("capture",),
    "memzoi_import": ("import",),
}
# command name → the module that registers it; tests/cli/test_lazy_commands.py keeps this in step
LAZY = {name: f"git_memzoi.cli.{area}" for area, names in _AREAS.items() for name in names}


@click.group(
    cls=LazyGroup,
    lazy=LAZY,
    after_load=accept_directory_anywhere,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option("-C", "directory", type=click.Path(file_okay=False), help="Run as if started in DIR.")
@click.version_option(__version__, prog_name="git-memzoi")
@click.pass_context
def cli(ctx: click.Context, directory: str | None) -> None:
    """Governed project memory kept in the repository: records, proposals, recall and capture.

    Exit codes: 0 ok, 1 findings or a failed gate, 2 usage or input error (nothing written).
    """
    ctx.obj = {"directory": directory}


@cli.command()
@click.option("--force", is_flag=True, help="Rewrite index.md and .gitignore to their defaults.")
@json_option
@click.pass_context
def init(ctx: click.Context, force: bool, as_json: bool) -> None:
    """Create .memzoi/ (records, proposals; private memory in .git/memzoi/); safe to run again.

    Example: git memzoi init
    """
    from git_memzoi.memzoi import workspace

    result = workspace.init(start_dir(ctx), force=force)
    if as_json:
        emit_json({"ok": True, "root": str(result.root), "created": list(result.created), "forced": result.forced})
    else:
        click.echo(f"initialized {result.root / '.memzoi'}" if result.created else "already initialized")


@cli.command()
@click.argument("record_id", type=ID)
@json_option
@click.pass_context
def expiry(ctx: click.Context, record_id: str, as_json: bool) -> None:
    """Explain whether a record is a current assertion now, and why; never changes anything.

    Example: git memzoi expiry rust-msrv-is-1-96-1 --json
    """
    from git_memzoi.memzoi import workspace

    result = workspace.expiry(open_workspace(ctx), record_id)
    if as_json:
        emit_json(result)
    else:
        click.echo(f"{result['record']}: {result['reason']}")


@cli.command()
@click.option("--project-root", type=click.Path(file_okay=False), help="The repository to check (default: here).")
@json_option
@click.pass_context
def doctor(ctx: click.Context, project_root: str | None, as_json: bool) -> None:
    """Check the installation and this repository's memory: records, proposals, index, privacy.

    Example: git memzoi doctor --json
    """
    from git_memzoi.memzoi import doctor as run_doctor
    from git_memzoi.memzoi import workspace

    report = run_doctor.run(workspace.find_root(Path(project_root) if project_root else start_dir(ctx)))
    if as_json:
        emit_json({"ok": report.exit_code == 0, "root": report.root, "checks": [vars(c) for c in report.checks]})
    else:
        for check in report.checks:
            hint = f" -> {check.next_step}" if check.next_step else ""
            click.echo(f"{check.status:<5} {check.name}: {check.message}{hint}")
    ctx.exit(report.exit_code)


@cli.command()
@click.option("--check", is_flag=True, required=True, help="Report the update state; never changes files.")
@click.option("--ref", default="latest", show_default=True, help="The release to compare with: latest, vX.Y.Z, X.Y.Z.")
@click.option("--online", is_flag=True, help="Look latest up on the package index (one HTTPS request).")
@json_option
@click.pass_context
def update(ctx: click.Context, check: bool, ref: str, online: bool, as_json: bool) -> None:
    """Compare the installed version with a release and say how to upgrade; offline unless --online.

    Example: git memzoi update --check --ref 0.2.0 --json
    """
    from git_memzoi.integrations import update as updates

    result = updates.check(__version__, ref, online=online)
    if as_json:
        emit_json(result.to_json())
    else:
        click.echo(f"{result.status}: installed {result.installed}; {result.reason}")
        if result.status == "update_available":
            click.echo(f"upgrade: {result.command}")
    ctx.exit(1 if result.status == "download_failed" else 0)


add_help_command(cli)
accept_directory_anywhere(cli)


def main() -> None:
    """Console script ``git-memzoi``."""
    cli(prog_name="git-memzoi")
