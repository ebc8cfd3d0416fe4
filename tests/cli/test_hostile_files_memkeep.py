"""``git memkeep`` against hostile files (issue 13, "Hangs"): an alias bomb, 1,000 levels of nesting, a file over
the cap or a FIFO among the entries is one unreadable item with a stable code while the other entries are read;
in ``.memkeep.yml`` it is one line and exit 2; a hook input nested 100,000 deep is ignored, never a crash.

In-process through CliRunner, and as a subprocess (with a timeout) for the exit codes. Every FIFO has a watchdog
(tests/support/hostile.py): a reader that blocks on it is released and the test fails instead of hanging.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import hostile
from tests.support.repos import TODAY, Repo, entry_text, invoke, memkeep

STORE = "agent-memory"
HOSTILE = f"{STORE}/entries/hostile.md"
GIT_MEMKEEP = str(Path(sys.executable).parent / "git-memkeep")


@pytest.fixture
def store(repo: Repo) -> Repo:
    """Two verified entries anchored at HEAD."""
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    for name in ("ok-a", "ok-b"):
        repo.write(f"{STORE}/entries/{name}.md", entry_text(name, anchor=head, scope=["src/**"]))
    assert memkeep("-C", str(repo.root), "index").exit_code == 0
    repo.commit("entries")
    return repo


@contextlib.contextmanager
def planted(repo: Repo, rel: str, kind: str, head: str = "id: hostile\n") -> Iterator[None]:
    """A hostile file of ``kind`` at ``rel`` for the block (a FIFO with its watchdog)."""
    if kind != "fifo":
        hostile.plant(repo.root / rel, kind, head)
        yield
        return
    with hostile.fifo(repo.root / rel) as made:
        yield
    assert not made.fired, "a reader blocked on the FIFO"


def json_of(*args: str) -> tuple[int, Any]:
    result = memkeep(*args)
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("kind", sorted(hostile.KINDS))
def test_a_hostile_entry_is_one_unreadable_item_and_the_others_are_read(store: Repo, kind: str) -> None:
    code = hostile.KINDS[kind]
    with planted(store, HOSTILE, kind), hostile.hard_deadline():
        status_code, status = json_of("-C", str(store.root), "status", "--json")
        lint_code, lint = json_of("-C", str(store.root), "lint", "--json")
        index = memkeep("-C", str(store.root), "index")
    assert (status_code, status["summary"]["entries"], status["summary"]["unreadable"]) == (1, 2, 1)
    [item] = status["unreadable"]
    assert (item["path"], item["code"]) == (HOSTILE, code)
    assert status["verdicts"] == []
    assert lint_code == 1
    assert [(v["path"], v["rule"]) for v in lint["violations"]] == [(HOSTILE, "parse")]
    assert index.exit_code == 1  # the other entries are indexed; the one left out is a violation
    assert index.stdout.startswith(f"INDEX.md already current: 2 entries\n  left out {HOSTILE}: ")
    assert index.stdout.endswith("memkeep index: 1 entry left out; fix them and run it again\n")


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("bomb", "uses anchors or aliases (&name, *name), which are not supported"),
        ("deep", "is nested deeper than 32 levels"),
        ("huge", "larger than 262144 bytes; not read"),
        ("fifo", "a FIFO, not a regular file; not read"),
    ],
)
def test_the_status_report_names_the_refused_entry_and_why(store: Repo, kind: str, reason: str) -> None:
    with planted(store, HOSTILE, kind):
        result = memkeep("-C", str(store.root), "status")
    assert result.exit_code == 1
    [line] = [line for line in result.output.splitlines() if HOSTILE in line]
    assert line.split()[0] == "broken" and line.endswith(reason)


def test_verify_of_a_refused_entry_is_one_line_and_exit_2(store: Repo) -> None:
    with planted(store, HOSTILE, "bomb"):
        result = memkeep("-C", str(store.root), "verify", "hostile", "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "unreadable_entry"


@pytest.mark.parametrize(
    ("kind", "code", "message"),
    [
        ("bomb", "yaml_too_complex", ".memkeep.yml:1: the file uses anchors or aliases"),
        ("huge", "file_too_large", ".memkeep.yml: larger than 65536 bytes; not read"),
        ("fifo", "not_a_regular_file", ".memkeep.yml: a FIFO, not a regular file; not read"),
    ],
)
def test_a_hostile_memkeep_yml_is_one_line_and_exit_2(store: Repo, kind: str, code: str, message: str) -> None:
    with planted(store, ".memkeep.yml", kind, head=""), hostile.hard_deadline():
        if kind == "bomb":  # the configuration is YAML itself, not a frontmatter block
            (store.root / ".memkeep.yml").write_text(hostile.bomb())
        as_json = memkeep("-C", str(store.root), "status", "--json")
        text = memkeep("-C", str(store.root), "lint")
    assert as_json.exit_code == 2 and json.loads(as_json.stdout)["error"]["code"] == code
    assert text.exit_code == 2
    [line] = text.stderr.splitlines()
    assert line.startswith("git-memkeep: error: ") and message in line


def test_a_memkeep_yml_linked_outside_the_repository_is_refused(store: Repo, tmp_path: Path) -> None:
    """Entries linked outside are refused; so are settings (a fresh user's walk saw ``store_dir`` taken from a
    file in /tmp). A link to a file inside the repository still works."""
    outside = tmp_path / "outside.yml"
    outside.write_text("store_dir: elsewhere\n")
    (store.root / ".memkeep.yml").symlink_to(outside)
    refused = memkeep("-C", str(store.root), "status", "--json")
    assert refused.exit_code == 2 and json.loads(refused.stdout)["error"]["code"] == "path_outside_repo"
    (store.root / ".memkeep.yml").unlink()
    (store.root / "settings.yml").write_text("store_dir: agent-memory\n")
    (store.root / ".memkeep.yml").symlink_to("settings.yml")
    assert memkeep("-C", str(store.root), "status", "--json").exit_code in (0, 1)


def test_a_hook_input_nested_100000_deep_is_ignored_not_a_crash(store: Repo) -> None:
    from git_memzoi.cli.memkeep import cli

    args = ["-C", str(store.root), "status", "--hook", "SessionStart"]
    plain = invoke(cli, args, env={"MEMZOI_TODAY": TODAY}, input="{}")
    deep = invoke(cli, args, env={"MEMZOI_TODAY": TODAY}, input=hostile.deep_json())
    assert deep.exit_code == plain.exit_code == 0
    assert deep.stdout == plain.stdout  # ignored: the envelope is the one of an empty input


# ------------------------------------------------------------------------------------------------ as a subprocess


def test_git_memkeep_exits_1_on_a_bomb_and_2_on_a_fifo_config_in_a_subprocess(store: Repo) -> None:
    hostile.plant(store.root / HOSTILE, "bomb")
    proc = subprocess.run(
        [GIT_MEMKEEP, "-C", str(store.root), "status", "--json"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 1, proc.stderr
    assert [u["code"] for u in json.loads(proc.stdout)["unreadable"]] == ["yaml_too_complex"]
    with hostile.fifo(store.root / ".memkeep.yml") as made:
        proc = subprocess.run([GIT_MEMKEEP, "-C", str(store.root), "lint"], capture_output=True, text=True, timeout=120)
    assert not made.fired
    assert proc.returncode == 2
    assert proc.stderr == f"git-memkeep: error: {store.root / '.memkeep.yml'}: a FIFO, not a regular file; not read\n"
