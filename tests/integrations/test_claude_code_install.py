"""``git memzoi integrate install --profile claude-code`` end to end (issue 12 "Claude Code hooks"): the installed
commands run as Claude Code runs them (``sh -c`` with a bare ``PATH=/usr/bin:/bin``, ``CLAUDE_PROJECT_DIR`` set,
the event JSON on stdin) and print the form the hook output schema accepts; a pinned interpreter that is gone
costs one line on stderr and exit 0; re-installing rewrites our commands in place, never a user's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.integrations import agents
from tests.integrations.test_claude_code import SCHEMA, validate_output
from tests.support import repos
from tests.support.repos import PROJECT, Repo, entry_text

BARE_PATH = "/usr/bin:/bin"
PYTHON = os.path.abspath(sys.executable)
EVENT_INPUT = {
    "SessionStart": {"source": "startup"},
    "PreCompact": {"trigger": "auto", "custom_instructions": ""},
    "Stop": {"stop_hook_active": False},
}
GONE_LINE = (
    "git-memzoi: hook skipped: no python at {python} (virtualenv moved or deleted?) and no '{tool}' on PATH; "
    "run git memzoi integrate install --profile claude-code again\n"
)
# .claude/settings.json as the earlier releases installed it (their packaged resources/claude-code/settings.json)
LEGACY = json.loads((Path(__file__).parent / "data" / "claude_code_settings_v0.1.json").read_text("utf-8"))["hooks"]


def installed(root: Path) -> list[tuple[str, str]]:
    """Every ``(event, command)`` of ``.claude/settings.json``, in file order."""
    settings = json.loads((root / agents.SETTINGS_FILE).read_text("utf-8"))
    return [(e, h["command"]) for e, groups in settings["hooks"].items() for g in groups for h in g["hooks"]]


def run_hook(
    command: str, event: str, project: Path, cwd: Path, path: str = BARE_PATH
) -> subprocess.CompletedProcess[str]:
    """``command`` the way Claude Code runs a hook: ``sh -c``, a bare environment, the event JSON on stdin."""
    given = {"session_id": "s1", "cwd": str(project), "hook_event_name": event, **EVENT_INPUT.get(event, {})}
    return subprocess.run(
        ["sh", "-c", command],
        env={"PATH": path, "CLAUDE_PROJECT_DIR": str(project)},
        cwd=cwd,
        input=json.dumps(given),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def in_process(root: Path, command: str, event: str) -> str:
    """What the hook behind ``command`` prints when run in-process in ``root`` (the value the shell must match)."""
    from git_memzoi.cli.memkeep import cli as memkeep_cli
    from git_memzoi.cli.memzoi import cli as memzoi_cli

    name = agents.hook_name(command) or ""
    tool = memkeep_cli if name.startswith("memkeep ") else memzoi_cli
    given = json.dumps({"hook_event_name": event, **EVENT_INPUT.get(event, {})})
    result = repos.invoke(tool, ["-C", str(root), *name.split()[1:]], env=None, input=given)
    assert result.exit_code == 0 and result.stderr == "", result.stderr
    return result.stdout


@pytest.fixture
def project(repo: Repo) -> Repo:
    """A repository with a suspect memkeep entry (its scope changed after the anchor) and one Memzoi record."""
    first = repo.commit("first", **{"src/a.py": "a\n"})
    repo.commit(
        "second",
        **{"src/a.py": "a2\n", "agent-memory/entries/hit.md": entry_text("hit", anchor=first, scope=["src/**"])},
    )
    assert repos.ok_json(repo, "quickstart", "--apply-sample", env=None)["sample"]["record_id"]
    return repo


def test_every_installed_command_runs_under_a_bare_path(project: Repo, tmp_path: Path) -> None:
    result = repos.ok_json(project, "integrate", "install", "--profile", "claude-code", env=None)
    assert (result["status"], result["python"], result["replaced"]) == ("created", PYTHON, [])
    commands = installed(project.root)
    assert [e for e, _ in commands] == ["SessionStart", "SessionStart", "PreCompact", "PreCompact", "Stop"]
    assert result["added"] == [f"{e}: {c}" for e, c in commands]
    for event, command in commands:
        assert command.startswith(f"p={agents.sh_quote(PYTHON)}; ")
        done = run_hook(command, event, project.root, cwd=tmp_path)  # cwd outside: the command finds the project
        assert (done.returncode, done.stderr) == (0, ""), (command, done.stderr)
        assert done.stdout == in_process(project.root, command, event), command
        if "pre-compact" in command:  # writes a checkpoint; its stdout would become compaction instructions
            assert done.stdout == ""
            continue
        if event in SCHEMA["x-plain-text-events"]:
            assert not done.stdout.lstrip().startswith("{") and "hit" in done.stdout
            continue
        payload = validate_output(done.stdout)
        assert set(payload) == {"hookSpecificOutput"} and payload["hookSpecificOutput"]["hookEventName"] == event
        context = payload["hookSpecificOutput"]["additionalContext"]
        assert ("# Memzoi session context" if "session-context" in command else "hit") in context


def test_a_pinned_python_that_is_gone_costs_one_line_and_exit_0(project: Repo, tmp_path: Path) -> None:
    venv = tmp_path / "it's a venv"  # a quote and a space: the pinned path is quoted for sh
    python = venv / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec {agents.sh_quote(PYTHON)} "$@"\n')
    python.chmod(0o755)
    agents.install_claude_code(project.root, str(python))
    commands = installed(project.root)
    working = run_hook(commands[-1][1], "Stop", project.root, cwd=tmp_path)
    assert (working.returncode, working.stderr) == (0, "") and validate_output(working.stdout)

    venv.rename(tmp_path / "moved")
    for event, command in commands:
        done = run_hook(command, event, project.root, cwd=tmp_path)
        tool = "git-memkeep" if "memkeep " in (agents.hook_name(command) or "") else "git-memzoi"
        assert (done.returncode, done.stdout, done.stderr) == (0, "", GONE_LINE.format(python=python, tool=tool))


def test_a_pinned_python_that_is_gone_falls_back_to_the_tools_on_path(project: Repo, tmp_path: Path) -> None:
    """A teammate's clone of a shared settings file: the pinned path is not theirs, their git-memzoi is on PATH."""
    agents.install_claude_code(project.root, str(tmp_path / "someone-elses" / "python"))
    path = f"{Path(sys.executable).parent}:{BARE_PATH}"
    for event, command in installed(project.root):
        done = run_hook(command, event, project.root, cwd=tmp_path, path=path)
        assert (done.returncode, done.stderr) == (0, ""), (command, done.stderr)
        assert done.stdout == in_process(project.root, command, event), command


def test_a_project_dir_that_is_gone_never_fails_the_session(project: Repo, tmp_path: Path) -> None:
    agents.install_claude_code(project.root)
    for event, command in installed(project.root):
        done = run_hook(command, event, tmp_path / "missing", cwd=tmp_path)
        assert (done.returncode, done.stdout, len(done.stderr.splitlines())) == (0, "", 1), done.stderr
        assert "can't cd" in done.stderr or "No such file" in done.stderr


def test_reinstall_replaces_our_commands_in_place_and_keeps_the_users(repo: Repo) -> None:
    mine = {"type": "command", "command": "echo mine", "timeout": 3}
    own_memkeep = {"type": "command", "command": 'git -C "$CLAUDE_PROJECT_DIR" memkeep lint'}
    legacy = json.loads(json.dumps(LEGACY))
    legacy["SessionStart"][0]["hooks"].insert(1, mine)  # a user's hook inside the group an earlier release wrote
    legacy["Stop"][0]["hooks"][0]["timeout"] = 30  # and a timeout the user raised
    legacy["Stop"].insert(0, {"hooks": [own_memkeep]})
    legacy["PreToolUse"] = [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]
    path = repo.write(agents.SETTINGS_FILE, json.dumps({"model": "opus", "hooks": legacy}, indent=4))

    result = repos.ok_json(repo, "integrate", "install", "--profile", "claude-code", env=None)
    assert (result["status"], result["python"]) == ("updated", PYTHON)
    assert [a.split(": ", 1)[0] for a in result["added"]] == ["PreCompact"]  # the checkpoint: new since then
    new = {
        h["command"].rsplit(agents.HOOK_MARKER, 1)[1]: h["command"] for _, h in _hooks(agents.settings_snippet(PYTHON))
    }
    assert result["replaced"] == [
        {"event": e, "hook": name, "old": agents.LEGACY_PREFIX + name, "new": new[name]}
        for e, name in [
            ("SessionStart", "memkeep status --hook SessionStart"),
            ("SessionStart", "memzoi integrate session-context"),
            ("PreCompact", "memkeep status --hook PreCompact"),
            ("Stop", "memkeep status --hook Stop"),
        ]
    ]
    expected = json.loads(json.dumps(legacy))
    for _, hook in _hooks({"hooks": expected}):
        name = agents.hook_name(hook["command"])
        if name in new:  # the user's own `git -C … memkeep lint` is none of our hooks
            hook["command"] = new[name]
    checkpoint = agents.settings_snippet(PYTHON)["hooks"]["PreCompact"][0]
    expected["PreCompact"].append({"matcher": checkpoint["matcher"], "hooks": checkpoint["hooks"][1:]})  # added
    assert json.loads(path.read_text()) == {"model": "opus", "hooks": expected}

    before = path.read_bytes()
    again = repos.ok_json(repo, "integrate", "install", "--profile", "claude-code", env=None)
    assert (again["status"], again["added"], again["replaced"]) == ("unchanged", [], [])
    assert path.read_bytes() == before

    moved = agents.install_claude_code(repo.root, "/elsewhere/venv/bin/python")  # the venv moved: pinned → pinned
    assert (moved.status, moved.added, len(moved.replaced)) == ("updated", (), 5)
    assert [r.old for r in moved.replaced] == [new[r.hook] for r in moved.replaced]
    assert sorted(c for _, c in installed(repo.root) if agents.HOOK_MARKER in c) == sorted(
        h["command"] for _, h in _hooks(agents.settings_snippet("/elsewhere/venv/bin/python"))
    )
    settings = json.loads(path.read_text())
    assert settings["hooks"]["SessionStart"][0]["hooks"][1] == mine
    assert settings["hooks"]["Stop"][1]["hooks"][0]["timeout"] == 30


def _hooks(settings: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(e, h) for e, groups in settings["hooks"].items() for g in groups for h in g["hooks"]]


def test_the_packaged_commands_pin_a_placeholder_and_name_their_hook() -> None:
    hooks = _hooks(agents.settings_snippet())
    assert [agents.hook_name(h["command"]) for _, h in hooks] == [
        "memkeep status --hook SessionStart",
        "memzoi integrate session-context",
        "memkeep status --hook PreCompact",
        "memzoi integrate pre-compact",
        "memkeep status --hook Stop",
    ]
    for _, hook in hooks:
        command = hook["command"]
        assert command.startswith(f"p={agents.PYTHON_PLACEHOLDER}; ") and command.count(agents.PYTHON_PLACEHOLDER) == 1
        name = agents.hook_name(command) or ""
        module = "git_memzoi.cli.memkeep" if name.startswith("memkeep ") else "git_memzoi"
        args = name.split(" ", 1)[1]
        tool = "git-memkeep" if module == "git_memzoi.cli.memkeep" else "git-memzoi"
        assert f'then "$p" -m {module} {args}; elif command -v {tool} >/dev/null 2>&1; then {tool} {args};' in command
        assert command.endswith(f"; fi; exit 0 {agents.HOOK_MARKER}{name}")


def test_the_docs_show_the_command_install_writes() -> None:
    docs = (PROJECT / "docs" / "integrations.md").read_text("utf-8")
    shown = [line for line in docs.splitlines() if line.startswith("p='/home/me/project/.venv/bin/python'; ")]
    stop = agents.settings_snippet("/home/me/project/.venv/bin/python")["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert shown == [stop]
