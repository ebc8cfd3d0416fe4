"""Running ``git memzoi`` in-process for CLI tests: the pinned clock and the no-traceback contract."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from git_memzoi.cli.memzoi import cli
from tests.conftest import Repo

NOW = "2026-07-10T12:00:00Z"


def run(repo: Repo, *args: str) -> Any:
    """Invoke ``git memzoi -C <repo> ...`` in-process; never a traceback, never an internal error."""
    result = CliRunner().invoke(cli, ["-C", str(repo.root), *args], env={"MEMZOI_NOW": NOW})
    assert "Traceback" not in result.output + result.stderr, result.output + result.stderr
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output, result.stderr)
    return result


def ok_json(repo: Repo, *args: str) -> Any:
    """``run`` with ``--json``; the command must succeed; its parsed output."""
    result = run(repo, *args, "--json")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return json.loads(result.stdout)
