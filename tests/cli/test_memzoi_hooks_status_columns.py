"""``git memzoi hooks status`` prints aligned columns: state, hook type, owner, then the hook's path (widths from
the rows shown), whatever mix of states, owners and hook names a repository has, then one recommendation."""

from __future__ import annotations

from click.testing import CliRunner

from git_memzoi.cli.memzoi import cli
from tests.support.repos import Repo


def status(repo: Repo) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["-C", str(repo.root), "hooks", "status"])
    return result.exit_code, result.output


def install(repo: Repo) -> None:
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "hooks", "install"]).exit_code == 0


def test_status_columns_line_up_with_hooks_installed(repo: Repo) -> None:
    install(repo)
    hooks = repo.root / ".git" / "hooks"
    lines = [
        f"installed  pre-commit     memzoi  {hooks / 'pre-commit'}",
        f"installed  post-merge     memzoi  {hooks / 'post-merge'}",
        f"installed  post-checkout  memzoi  {hooks / 'post-checkout'}",
    ]
    assert status(repo) == (0, "\n".join(lines) + "\n")


def test_status_columns_line_up_across_states(repo: Repo) -> None:
    hooks = repo.root / ".git" / "hooks"
    (hooks / "post-merge").write_text("#!/bin/sh\n")
    lines = [
        f"missing  pre-commit     none   {hooks / 'pre-commit'}",
        f"foreign  post-merge     other  {hooks / 'post-merge'}: another hook is installed; install chains it",
        f"missing  post-checkout  none   {hooks / 'post-checkout'}",
        "recommended: run `git memzoi hooks install` to install the shims where git runs hooks",
    ]
    assert status(repo) == (1, "\n".join(lines) + "\n")
    install(repo)
    lines = [
        f"installed  pre-commit     memzoi  {hooks / 'pre-commit'}",
        f"installed  post-merge     memzoi  {hooks / 'post-merge'} (chains the previous hook)",
        f"installed  post-checkout  memzoi  {hooks / 'post-checkout'}",
    ]
    assert status(repo) == (0, "\n".join(lines) + "\n")
