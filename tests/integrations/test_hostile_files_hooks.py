"""The pre-commit hook against hostile files (issue 13, "Hangs"): a real ``git commit`` with a staged alias bomb, a
staged file over the cap, or a FIFO in the working tree's store ends in bounded time, refusing what it cannot read
(file named, rule stable) and never hanging the commit. Every subprocess has a timeout; every FIFO a watchdog."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from git_memzoi.integrations import git_hooks
from git_memzoi.memzoi.layout import Layout, init
from tests.support import hostile
from tests.support.repos import Repo, entry_text

BIN = Path(sys.executable).parent


def git(repo_root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git with the venv's bin on PATH (the hook shims find git-memzoi), bounded by a timeout."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        ["git", *args], cwd=repo_root, env=env, capture_output=True, text=True, check=False, timeout=180
    )


@pytest.fixture
def hooked(repo: Repo) -> Repo:
    """.memzoi/, one memkeep entry, one commit, the hooks installed."""
    init(Layout(repo.root))
    repo.write("agent-memory/entries/ok.md", entry_text("ok", anchor=None, scope=["src/**"]))
    repo.commit("base")
    git_hooks.install(repo.root)
    return repo


@pytest.mark.parametrize(
    ("rel", "kind", "rule"),
    [
        ("agent-memory/entries/hostile.md", "bomb", "[parse]"),
        ("agent-memory/entries/hostile.md", "deep", "[parse]"),
        (".memzoi/records/hostile.md", "bomb", "[parse]"),
        (".memzoi/records/hostile.md", "huge", "[file_too_large]"),
        (".memzoi/proposals/pending/hostile.md", "huge", "[file_too_large]"),
    ],
)
def test_a_staged_hostile_memory_file_is_refused_and_the_commit_ends(
    hooked: Repo, rel: str, kind: str, rule: str
) -> None:
    before = hooked.head()
    hostile.plant(hooked.root / rel, kind)
    git(hooked.root, "add", "-A")
    proc = git(hooked.root, "commit", "-m", "hostile")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert hooked.head() == before
    [line] = [line for line in proc.stderr.splitlines() if line.strip().startswith(rel)]
    assert rule in line


def test_a_fifo_in_the_store_does_not_hang_the_commit(hooked: Repo) -> None:
    with hostile.fifo(hooked.root / "agent-memory" / "entries" / "fifo.md") as made:
        hooked.write("src/app.py", "print('v1')\n")
        git(hooked.root, "add", "src/app.py")
        proc = git(hooked.root, "commit", "-m", "app")
    assert not made.fired, "the hook blocked on the FIFO"
    assert proc.returncode == 0, proc.stdout + proc.stderr
