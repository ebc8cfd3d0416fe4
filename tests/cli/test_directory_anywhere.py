"""``-C DIR`` after the subcommand works as before it (issue 20: ``git memzoi search salt -C DIR`` was
``No such option '-C'`` though the docs say every command accepts it; memkeep already took it both ways)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from git_memzoi.cli.memzoi import cli
from tests.support.repos import Repo

GIT_MEMZOI = str(Path(sys.executable).parent / "git-memzoi")
RISK = ("propose", "--type", "risk", "--sensitivity", "repo-safe", "--title", "Salt default", "--body", "Keep it.")


def _walk(command: object, path: str = "") -> list[str]:
    import click

    assert isinstance(command, click.Command)
    found = [path] if path else []
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            found += _walk(sub, f"{path} {name}".strip())
    return found


def test_every_command_below_the_root_takes_minus_c() -> None:
    import click

    cli.load_all()  # commands load lazily; the -C option is added to each as its module loads

    def command(path: str) -> click.Command:
        target: click.Command = cli
        for name in path.split():
            assert isinstance(target, click.Group)
            target = target.commands[name]
        return target

    missing = [path for path in _walk(cli) if not any("-C" in p.opts for p in command(path).params)]
    assert missing == []


def test_minus_c_after_the_subcommand_finds_the_repository(repo: Repo, tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["init", "-C", str(repo.root)]).exit_code == 0
    assert runner.invoke(cli, [*RISK, "--applies-to", "src/salt.py", "--apply", "-C", str(repo.root)]).exit_code == 0
    after = runner.invoke(cli, ["search", "salt", "-C", str(repo.root)])
    before = runner.invoke(cli, ["-C", str(repo.root), "search", "salt"])
    assert (after.exit_code, after.stdout) == (0, before.stdout) and "salt-default" in after.stdout
    nested = runner.invoke(cli, ["proposals", "list", "-C", str(repo.root), "--json"])
    assert nested.exit_code == 0 and '"count": 0' in nested.stdout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    wins = runner.invoke(cli, ["-C", str(elsewhere), "search", "salt", "-C", str(repo.root)])
    assert wins.stdout == before.stdout  # given after the subcommand, it wins
    done = subprocess.run(
        [GIT_MEMZOI, "search", "salt", "-C", str(repo.root)], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert (done.returncode, done.stdout) == (0, before.stdout)
