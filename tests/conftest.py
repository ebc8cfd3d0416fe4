"""Hermetic test environment and real-repository fixtures.

Every test runs with HOME and XDG dirs in tmp, no inherited GIT_* variables, a pinned identity and default
branch, and global/system git config ignored (pre-commit's and pygit2's own test trap).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
# The seed's session-end example (seed "Session-end promotion"), used as given.
SEED_YAML = """\
task: "Implement auth middleware"
candidates:
  - destination: repo
    type: decision
    lane: semantic
    title: Protected routes validate sessions server-side
    body: Protected routes must validate sessions server-side.
    sensitivity: repo-safe
    reason: Learned while implementing middleware.
    scope:
      kind: repo
      paths:
        - src/auth/**
    tags:
      - auth
      - security
"""


@pytest.fixture(autouse=True)
def hermetic_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    for key in list(os.environ):
        if key.startswith("GIT_") or key.startswith("MEMKEEP_") or key.startswith("MEMZOI_"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"
        '[protocol "file"]\n\tallow = always\n[advice]\n\tdetachedHead = false\n'
    )
    yield


class Repo:
    """A real git repository in tmp_path, driven through the git CLI."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def git(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True, check=False)
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout.strip()

    def write(self, path: str, text: str) -> Path:
        file = self.root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
        return file

    def commit(self, message: str = "change", **files: str) -> str:
        for path, text in files.items():
            self.write(path, text)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def commit_paths(self, message: str, files: dict[str, str]) -> str:
        for path, text in files.items():
            self.write(path, text)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """An empty repository (no commits) on branch main."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    return Repo(root)


def entry_text(
    entry_id: str,
    *,
    anchor: str | None,
    scope: list[str] | None = None,
    status: str = "verified",
    entry_type: str = "fact",
    claim: str = "A claim that holds.",
    extra: str = "",
    written_at: str = "2026-11-01",
    verified_at: str = "2026-11-01",
) -> str:
    """A valid memkeep entry as text."""
    lines = [
        "---",
        "schema_version: 1",
        f"id: {entry_id}",
        f"type: {entry_type}",
        f"status: {status}",
        f"written_at: {written_at}",
        f"verified_at: {verified_at}",
    ]
    if anchor:
        lines.append(f"anchor: {anchor}")
    if scope is not None:
        lines.append("scope:")
        lines += [f"  - {s!r}" if s.startswith(("!", "*", "[")) or s.endswith(" ") else f"  - {s}" for s in scope]
    lines.append("evidence: |\n  Seen in the code.")
    if extra:
        lines.append(extra.rstrip("\n"))
    lines += ["---", claim, ""]
    return "\n".join(lines)
