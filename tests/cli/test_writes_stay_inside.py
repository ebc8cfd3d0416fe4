"""Issue 13, writes outside the repository: a fresh ``git clone`` of a repository that committed symlinks with
``--no-verify`` runs every read and write command of both tools, and the files outside the clone stay byte-identical.

Each attack is one symlink the origin committed (``.memzoi/local/events.jsonl -> ../../../outside/bashrc``,
``.memzoi/local -> ../../outside/victim``, ``agent-memory/entries -> /…/outside/entries``, …). A command that
must write through the link refuses with ``unsafe_path`` (exit 2, one line on stderr); the others work or refuse,
and none writes outside.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from git_memzoi.core.confine import UnsafePath
from git_memzoi.memzoi.layout import Layout
from tests.support import repos
from tests.support.repos import Repo, new_repo

ENTRY = """\
---
schema_version: 1
id: subject
type: fact
status: verified
written_at: 2026-03-16
verified_at: 2026-03-16
anchor: '{anchor}'
scope:
  - src/**
evidence: |
  Seen in src/a.py.
check: {{run: 'true', safe: true}}
---
The file src/a.py exists.
"""
SESSION_END = """\
task: "Wrap up"
candidates:
  - destination: repo
    type: decision
    lane: semantic
    title: Releases are signed
    body: Every release archive is signed.
    sensitivity: repo-safe
    reason: Learned at release time.
  - destination: local
    type: fact
    lane: semantic
    title: Local cache path
    body: The cache is in /tmp here.
    reason: Only on this machine.
"""
MANIFEST = """\
version: memzoi/import-v1
sources:
  - path: imports/source.yml
candidates:
  - destination: repo
    reason: durable project convention
    type: decision
    title: Verify release archives
    body: Check the SHA-256 before extracting.
    sensitivity: repo-safe
  - destination: local
    reason: only on this machine
    lane: procedural
    title: Local build
    body: Use make -j8 locally.
"""

# link in the repository -> its target (``{outside}`` is the folder beside the clone)
ATTACKS: dict[str, dict[str, str]] = {
    "events-log": {".memzoi/local/events.jsonl": "../../../outside/bashrc"},
    "local-folder": {".memzoi/local": "../../outside/victim"},
    "entries-folder": {"agent-memory/entries": "{outside}/entries"},
    "index": {".memzoi/local/index.sqlite": "../../../outside/index.sqlite"},
    "exports-and-instructions": {
        ".memzoi/exports": "../../outside/exports",
        "AGENTS.md": "../outside/AGENTS.md",
        "CLAUDE.md": "../outside/CLAUDE.md",
    },
    "inbox-and-runtime": {
        ".memzoi/local/inbox": "../../../outside/victim",
        ".memzoi/local/runtime": "../../../outside",
    },
    "plans-folder": {"plans": "../outside/victim"},
}
# the guard's code, export's own check of its targets, capture's of its outputs
UNSAFE = ("unsafe_path", "unsafe_target", "unsafe_output_path")
# (attack, command) pairs that must be refused: they write through the link
REFUSED = {
    ("events-log", "search"),
    ("local-folder", "search"),
    ("local-folder", "propose"),
    ("entries-folder", "memkeep status"),
    ("entries-folder", "memkeep verify --all-safe"),
    ("index", "search"),
    ("index", "rebuild"),
    ("exports-and-instructions", "export okf"),
    ("exports-and-instructions", "integrate instructions"),
    ("inbox-and-runtime", "propose"),
    ("inbox-and-runtime", "local add"),
    ("plans-folder", "capture plan"),
}


def outside_files(tmp_path: Path) -> dict[str, bytes | str]:
    folder = tmp_path / "outside"
    return {
        p.relative_to(folder).as_posix(): os.readlink(p) if p.is_symlink() else p.read_bytes() if p.is_file() else "/"
        for p in sorted(folder.rglob("*"))
    }


def build(tmp_path: Path, attack: str) -> Repo:
    """The origin (memory in both stores, a suspect memkeep entry, the attack's symlinks committed with
    --no-verify), the files outside it, and a fresh clone of it."""
    outside = tmp_path / "outside"
    (outside / "victim").mkdir(parents=True)
    (outside / "bashrc").write_bytes(b"export PATH=/usr/bin\n")
    (outside / "victim" / "events.jsonl").write_bytes(b"")
    (outside / "index.sqlite").write_bytes(b"not a database\n")
    (outside / "AGENTS.md").write_bytes(b"# my agents\n")
    (outside / "CLAUDE.md").write_bytes(b"# my claude\n")
    origin = new_repo(tmp_path / "origin")
    first = origin.commit("source", **{"src/a.py": "A = 1\n"})
    assert repos.run(origin, "init").exit_code == 0
    title = ["--title", "Use tabs", "--body", "We indent with tabs.", "--type", "decision"]
    assert repos.run(origin, "propose", *title, "--sensitivity", "repo-safe", "--apply").exit_code == 0
    entry = ENTRY.format(anchor=first)
    origin.write("agent-memory/entries/subject.md", entry)
    (outside / "entries").mkdir()
    (outside / "entries" / "subject.md").write_text(entry)
    origin.commit("memory")
    origin.commit("change", **{"src/a.py": "A = 2\n"})  # the entry is suspect now: verify --all-safe would heal it
    for link, target in ATTACKS[attack].items():
        path = origin.root / link
        if path.is_dir() and not path.is_symlink():
            subprocess.run(["rm", "-rf", str(path)], check=True)
        path.unlink(missing_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target.format(outside=outside))
        origin.git("add", "-f", link)
    origin.git("add", "-A")
    origin.git("commit", "-q", "--no-verify", "-m", "links")
    subprocess.run(["git", "clone", "-q", str(origin.root), str(tmp_path / "clone")], check=True)
    clone = Repo(tmp_path / "clone")
    for link in ATTACKS[attack]:
        assert (clone.root / link).is_symlink(), link
    clone.write("imports/manifest.yml", MANIFEST)
    clone.write("session-end.yml", SESSION_END)
    clone.write("notes/findings.md", "## Decision: Verify release archives\nCheck the SHA-256 before extracting.\n")
    return clone


def commands(clone: Repo) -> dict[str, Callable[[], Result]]:
    """Every read and write command of both tools, by name; each returns its click Result."""

    def memzoi(*args: str) -> Callable[[], Result]:
        return lambda: repos.run(clone, *args, "--json")

    def memkeep(*args: str) -> Callable[[], Result]:
        return lambda: repos.memkeep("-C", str(clone.root), *args, "--json")

    def import_apply() -> Result:
        plan = repos.run(clone, "import", "plan", "--from-file", "imports/manifest.yml", "--json")
        plan_id = json.loads(plan.stdout).get("plan_id", "import_x") if plan.exit_code == 0 else "import_x"
        return repos.run(
            clone, "import", "apply", "--from-file", "imports/manifest.yml", "--plan-id", plan_id, "--json"
        )

    fields = ["--title", "Signed tags", "--body", "Tags are signed.", "--type", "decision"]
    return {
        "search": memzoi("search", "tabs"),
        "context": memzoi("context", "--task", "indent the code", "--include-local", "--include-session"),
        "precheck": memzoi("precheck", "--path", "src/a.py"),
        "handoff": memzoi("handoff", "--task", "indent the code"),
        "proposals list": memzoi("proposals", "list", "--status", "all"),
        "proposal-files list": memzoi("proposal-files", "list"),
        "proposal-files validate": memzoi("proposal-files", "validate"),
        "events export": lambda: repos.run(clone, "events", "export"),
        "doctor": memzoi("doctor"),
        "expiry": memzoi("expiry", "use-tabs"),
        "local list": memzoi("local", "list"),
        "local search": memzoi("local", "search", "cache"),
        "checkpoint list": memzoi("checkpoint", "list"),
        "propose": memzoi("propose", *fields, "--sensitivity", "repo-safe", "--apply"),
        "local add": memzoi("local", "add", "--type", "fact", "--title", "Local note", "--body", "Here only."),
        "checkpoint add": memzoi("checkpoint", "add", "--task", "Indent", "--note", "Halfway."),
        "session-end": memzoi("session-end", "--from-file", "session-end.yml"),
        "import apply": import_apply,
        "capture plan": memzoi("capture", "plan", "--source", "notes/findings.md", "--output", "plans/plan.json"),
        "export okf": memzoi("export", "okf"),
        "export agents-md": memzoi("export", "agents-md"),
        "integrate instructions": memzoi("integrate", "instructions", "--profile", "codex"),
        "integrate claude": memzoi("integrate", "instructions", "--profile", "claude"),
        "rebuild": memzoi("rebuild"),
        "init --force": memzoi("init", "--force"),
        "supersede": memzoi(
            "supersede", "use-tabs", "--title", "Use spaces", "--body", "Four spaces.", "--sensitivity", "repo-safe"
        ),
        "tombstone": memzoi("tombstone", "signed-tags", "--reason", "gone"),
        "memkeep status": memkeep("status"),
        "memkeep lint": memkeep("lint"),
        "memkeep verify --all-safe": memkeep("verify", "--all-safe"),
        "memkeep index": memkeep("index"),
    }


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_no_command_of_a_fresh_clone_writes_outside_it(tmp_path: Path, attack: str) -> None:
    clone = build(tmp_path, attack)
    before = outside_files(tmp_path)
    refused = []
    for name, command in commands(clone).items():
        result = command()
        assert outside_files(tmp_path) == before, f"{attack}: {name} wrote outside the repository"
        if result.exit_code == 2 and json.loads(result.stdout or "{}").get("error", {}).get("code") in UNSAFE:
            assert result.stderr.count("\n") == 1, (name, result.stderr)
            refused.append(name)
    assert {(attack, n) for n in refused} >= {pair for pair in REFUSED if pair[0] == attack}, refused


def test_the_refusal_is_one_line_and_exit_2_in_a_real_process(tmp_path: Path) -> None:
    clone = build(tmp_path, "events-log")
    before = outside_files(tmp_path)
    for args in (
        ["git-memzoi", "-C", str(clone.root), "search", "tabs"],
        ["git-memzoi", "-C", str(clone.root), "rebuild"],
    ):
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from git_memzoi.cli.memzoi import cli; cli(sys.argv[1:], prog_name='git-memzoi')",
                *args[1:],
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "MEMZOI_NOW": repos.NOW_TEXT},
        )
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr == (
            "git-memzoi: error: .memzoi/local/events.jsonl is a symlink (to ../../../outside/bashrc); private "
            "memory must stay in real files and folders of the repository: remove the link\n"
        )
    assert outside_files(tmp_path) == before


def test_a_committed_transaction_journal_cannot_write_into_git(tmp_path: Path) -> None:
    """A journal planted under .memzoi/local/transactions/ asking the repair to "restore" a git hook: refused."""
    repo = new_repo(tmp_path / "repo")
    assert repos.run(repo, "init").exit_code == 0
    txdir = repo.root / ".memzoi" / "local" / "transactions" / "0123456789abcdef"
    txdir.mkdir(parents=True)
    journal = {
        "version": 1,
        "operation": "x",
        "committed": False,
        "entries": [{"path": ".git/hooks/pre-commit", "existed": True}],
    }
    (txdir / "journal.json").write_text(json.dumps(journal))
    (txdir / "0.bak").write_text("#!/bin/sh\necho owned\n")
    result = repos.run(repo, "local", "add", "--type", "fact", "--title", "T", "--body", "B.", "--json")
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "rollback_failed"
    assert "inside a .git folder" in result.stderr
    assert not (repo.root / ".git" / "hooks" / "pre-commit").exists()


def test_a_planted_journal_naming_another_folder_as_its_worktree_restores_nothing_there(tmp_path: Path) -> None:
    """Journals live in the private folder every worktree shares and name their worktree; one naming a folder
    that is no worktree of this repository is rolled back as a removed worktree's: nothing outside is written."""
    repo = new_repo(tmp_path / "repo")
    assert repos.run(repo, "init").exit_code == 0
    victim = tmp_path / "victim"
    victim.mkdir()
    txdir = Layout(repo.root).journals / "0123456789abcdef"
    txdir.mkdir(parents=True)
    journal = {
        "version": 1,
        "operation": "x",
        "root": str(victim),
        "committed": False,
        "entries": [{"path": "owned.txt", "existed": True}, {"path": str(victim / "abs.txt"), "existed": True}],
    }
    (txdir / "journal.json").write_text(json.dumps(journal))
    (txdir / "0.bak").write_text("owned\n")
    (txdir / "1.bak").write_text("owned\n")
    result = repos.run(repo, "local", "add", "--type", "fact", "--title", "T", "--body", "B.", "--json")
    assert result.exit_code == 0, result.stderr
    assert list(victim.iterdir()) == []
    assert not txdir.exists()


def test_a_repo_safe_capture_artifact_is_not_saved_through_a_committed_symlink(tmp_path: Path) -> None:
    from git_memzoi.memzoi.capture.artifacts import save_artifact

    clone = build(tmp_path, "plans-folder")
    ws = repos.memzoi_workspace(clone)
    before = outside_files(tmp_path)
    with pytest.raises(UnsafePath):
        save_artifact(ws, clone.root / "plans" / "plan.json", {"data_class": "repo_safe", "plan_id": "p"})
    assert outside_files(tmp_path) == before
    outside = tmp_path / "elsewhere" / "plan.json"  # a path the user names outside the repository is theirs
    assert save_artifact(ws, outside, {"data_class": "repo_safe", "plan_id": "p"}) == outside
    assert json.loads(outside.read_text()) == {"data_class": "repo_safe", "plan_id": "p"}


@pytest.mark.parametrize("where", ["git-dir", "legacy"])
@pytest.mark.parametrize("name", ["events.jsonl", "lifecycle.lock", "index.sqlite"])
def test_a_private_file_that_is_a_folder_is_refused_and_nothing_is_written(repo: Repo, name: str, where: str) -> None:
    """In the git directory's private folders, and in an older version's .memzoi/local/ (refused before the
    migration would move anything)."""
    assert repos.run(repo, "init").exit_code == 0
    layout = Layout(repo.root)
    if where == "legacy":
        (layout.legacy_local / name).mkdir(parents=True)
    else:
        {"events.jsonl": layout.events, "lifecycle.lock": layout.lock, "index.sqlite": layout.index}[name].mkdir()
    before = repos.tree(repo.root)
    fields = ["--title", "Use tabs", "--body", "We indent with tabs.", "--type", "decision"]
    writes = [["propose", *fields, "--sensitivity", "repo-safe", "--apply"]] if name != "index.sqlite" else []
    for args in [*writes, ["search", "tabs"]]:  # propose never touches the index; search refreshes it
        result = repos.run(repo, *args, "--json")
        assert (result.exit_code, json.loads(result.stdout)["error"]["code"]) == (2, "not_a_regular_file"), args
        assert result.stderr.count("\n") == 1
    after = {k: v for k, v in repos.tree(repo.root).items() if not k.startswith(".memzoi/local/index.sqlite")}
    assert after == {k: v for k, v in before.items() if not k.startswith(".memzoi/local/index.sqlite")}
