"""``git memzoi quickstart`` looks at the repository (issue 20): each step done, next or to do, outside a
repository a one-line error and exit 2.

The survey core on real repositories in tmp_path; the command in-process (CliRunner) and as a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from git_memzoi.errors import InputError
from git_memzoi.integrations import quickstart
from tests.support import repos
from tests.support.repos import Repo

NAMES = ["init", "record", "review", "memkeep", "hooks", "agent", "recall"]


def statuses(repo: Repo) -> dict[str, str]:
    found = quickstart.survey(repo.root)
    return {s.name: found.status(s) for s in found.steps}


def test_a_fresh_repository_has_init_next_and_nothing_done(repo: Repo) -> None:
    found = quickstart.survey(repo.root / ".")
    assert [s.name for s in found.steps] == NAMES
    assert statuses(repo) == {name: "next" if name == "init" else "todo" for name in NAMES}
    assert found.next is not None and found.next.command == "git memzoi init"
    assert sorted(p.name for p in repo.root.iterdir()) == [".git"]  # nothing written


def test_initialized_with_hooks_makes_the_first_record_next(repo: Repo) -> None:
    assert repos.run(repo, "init").exit_code == 0
    assert repos.run(repo, "hooks", "install").exit_code == 0
    assert statuses(repo) == {
        "init": "done",
        "record": "next",
        "review": "done",
        "memkeep": "todo",
        "hooks": "done",
        "agent": "todo",
        "recall": "todo",
    }
    payload = repos.ok_json(repo, "quickstart")
    assert payload["ok"] is True and payload["root"] == str(repo.root) and payload["sample"] is None
    assert payload["next"] == "record"
    assert [(s["name"], s["status"], s["done"]) for s in payload["steps"]] == [
        ("init", "done", True),
        ("record", "next", False),
        ("review", "done", True),
        ("memkeep", "todo", False),
        ("hooks", "done", True),
        ("agent", "todo", False),
        ("recall", "todo", False),
    ]
    assert payload["steps"][1]["command"] == quickstart.PROPOSE


def test_every_step_done_once_records_entries_hooks_and_an_agent_exist(repo: Repo) -> None:
    sample = repos.ok_json(repo, "quickstart", "--apply-sample", env=None)["sample"]
    assert sample["status"] == "applied" and sample["record_id"]
    assert repos.run(repo, "hooks", "install").exit_code == 0
    repo.write("agent-memory/entries/first.md", repos.entry_text("first", anchor=None))
    assert statuses(repo)["memkeep"] == "done" and statuses(repo)["agent"] == "next"
    assert repos.run(repo, "integrate", "install", "--profile", "claude-code").exit_code == 0
    assert statuses(repo) == {name: "done" for name in NAMES}
    plain = repos.run(repo, "quickstart")
    assert plain.exit_code == 0 and plain.stdout.splitlines()[-1] == "every step is done"
    assert plain.stdout.count("[x] ") == 7


def test_an_instructions_block_connects_an_agent(repo: Repo) -> None:
    assert repos.run(repo, "integrate", "instructions", "--profile", "codex").exit_code == 0
    assert statuses(repo) == {name: {"init": "next", "agent": "done"}.get(name, "todo") for name in NAMES}


def test_a_settings_file_of_another_shape_is_not_an_agent(repo: Repo) -> None:
    repo.write(".claude/settings.json", json.dumps({"hooks": ["not", "a", "mapping"]}))
    assert not [s for s in quickstart.survey(repo.root).steps if s.done]


def test_text_output_marks_the_next_step(repo: Repo) -> None:
    plain = repos.run(repo, "quickstart")
    assert plain.exit_code == 0
    lines = plain.stdout.splitlines()
    assert lines[0] == "[>] 1. git memzoi init"
    assert lines[2] == f"[ ] 2. {quickstart.PROPOSE}"
    assert lines[-1] == "next: git memzoi init"
    assert "git memkeep status" in plain.stdout and "git memzoi hooks install" in plain.stdout


def test_outside_a_repository_the_survey_raises(tmp_path: Path) -> None:
    with pytest.raises(InputError) as raised:
        quickstart.survey(tmp_path)
    assert raised.value.code == "not_a_repository"


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_outside_a_repository_the_command_exits_2_with_one_line(tmp_path: Path, extra: list[str]) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "git_memzoi", "-C", str(outside), "quickstart", *extra],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr == f"git-memzoi: error: not a git repository: {outside}\n"
    if extra:
        assert json.loads(proc.stdout)["error"]["code"] == "not_a_repository"
    else:
        assert proc.stdout == ""
    assert sorted(outside.iterdir()) == []
