"""The ``--json`` envelope rule of ``git memzoi`` (issue 20; docs/memzoi.md, "JSON output"): every object a command
prints carries ``"ok"`` as its first key, false exactly when the command exits non-zero, and an error is
``{"ok": false, "error": {"code", "message", "exit_code"}}``.

Every command with a ``--json`` option is found in the click command tree, so a new command is checked too: the
ones :data:`ARGS` knows run with arguments that do something in a small repository; any other runs with ``--json``
alone (a usage error at least, which must follow the rule as well). ``git memkeep`` is not under this rule (its
JSON is upstream memkeep's schema; tests/memkeep holds it byte for byte).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click

from git_memzoi.cli.memzoi import cli
from tests.support import repos
from tests.support.repos import Repo, run

NOTE = "# Decision: Use uv\n\nWe install dependencies with uv sync.\n"
MANIFEST = """\
version: memzoi/import-v1
sources:
  - path: notes/uv.md
candidates:
  - destination: repo
    reason: team convention
    type: fact
    title: Releases are tagged
    body: Every release is tagged vX.Y.Z.
    sensitivity: repo-safe
"""

# Arguments per command, run in this order (the writes last); {name} is filled in from the set-up's ids.
ARGS: dict[str, list[str]] = {
    "init": [],
    "quickstart": [],
    "doctor": [],
    "update": ["--check", "--ref", "0.1.0"],
    "search": ["release"],
    "context": ["--task", "cut a release"],
    "handoff": ["--task", "cut a release"],
    "precheck": ["--path", "scripts/release.sh"],
    "show": ["{record}"],
    "expiry": ["{record}"],
    "review": [],
    "proposals list": [],
    "proposals show": ["{approved}"],
    "proposal-files list": [],
    "proposal-files validate": [],
    "proposal-files show": ["{approved}"],
    "checkpoint list": [],
    "local list": [],
    "local search": ["uv"],
    "integrate list": [],
    "hooks status": [],  # exit 1: no hook installed yet, a finding
    "eval recall": ["--corpus", "nowhere.yaml"],  # exit 2
    "eval capture": ["--corpus", "nowhere.yaml"],  # exit 2
    "capture plan": ["--source", "notes/uv.md"],
    "import plan": ["--from-file", "imports/team.yml"],
    "import apply": ["--from-file", "imports/team.yml", "--plan-id", "import_0"],  # exit 2: not the plan's id
    "capture review": ["--plan-file", "missing.json", "--decisions-file", "missing.json"],  # exit 2
    "capture apply": ["--plan-file", "m.json", "--review-file", "m.json", "--plan-id", "x", "--review-id", "y"],
    "rebuild": [],
    "verify": ["--all-safe", "--dry-run"],
    "local add": ["--type", "preference", "--title", "Terse answers", "--body", "Keep answers short."],
    "checkpoint add": ["--task", "cut a release", "--note", "tagged v1"],
    "session-end": [],  # exit 2: nothing to promote
    "propose": ["--type", "fact", "--title", "Docs live in docs", "--body", "Reference docs are under docs/."],
    "approve": ["{pending}"],
    "reject": ["{rejectable}", "--reason", "not durable"],
    "apply": ["{approved}"],
    "proposals apply": ["--all-approved"],
    "proposal-files apply": ["missing-packet"],  # exit 2
    "proposal-files reject": ["missing-packet", "--reason", "x"],  # exit 2
    "supersede": [
        "{record}",
        "--title",
        "Release script cleans dist",
        "--body",
        "It wipes dist/ first.",
    ],  # exit 1: refused
    "tombstone": ["{other}", "--reason", "no longer true"],
    "export": ["agents-md", "--file", "AGENTS.md"],
    "integrate instructions": ["--profile", "codex"],
    "integrate install": ["--profile", "claude-code"],
    "hooks install": [],
    "hooks uninstall": [],
}


def json_commands(group: click.Group = cli, prefix: tuple[str, ...] = ()) -> Iterator[str]:
    """Every ``git memzoi`` command with a ``--json`` option, as its words (``proposal-files list``), asked of
    each group as click asks it (the top group imports a command's module when it is first named)."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None:
            continue
        if isinstance(command, click.Group):
            yield from json_commands(command, (*prefix, name))
        elif any("--json" in getattr(p, "opts", ()) for p in command.params):
            yield " ".join((*prefix, name))


def _propose(repo: Repo, *args: str) -> str:
    payload = json.loads(run(repo, "propose", "--sensitivity", "repo-safe", *args, "--json").stdout)
    return str(payload["applied"]["record_id"] if payload["applied"] else payload["proposal"]["id"])


def _project(repo: Repo) -> dict[str, str]:
    """A small repository: two records, an approved, a pending and a rejectable proposal, a note to capture."""
    repo.commit("code", **{"scripts/release.sh": "rm -rf dist\n", "notes/uv.md": NOTE, "imports/team.yml": MANIFEST})
    assert run(repo, "init").exit_code == 0
    risk = ("--type", "risk", "--applies-to", "scripts/release.sh")
    ids = {
        "record": _propose(
            repo, *risk, "--title", "Release script deletes dist", "--body", "It wipes dist/.", "--apply"
        ),
        "other": _propose(repo, "--type", "fact", "--title", "CI runs nightly", "--body", "At 02:00.", "--apply"),
        "approved": _propose(repo, "--type", "fact", "--title", "Use uv", "--body", "Install with uv sync."),
        "pending": _propose(repo, "--manual", "--type", "fact", "--title", "Tabs", "--body", "Indent with tabs."),
        "rejectable": _propose(repo, "--manual", "--type", "fact", "--title", "Spaces", "--body", "Four spaces."),
    }
    repo.commit("memory")
    return ids


def test_every_json_command_follows_the_ok_rule(repo: Repo, tmp_path: Path) -> None:
    ids = _project(repo)
    commands = list(json_commands())
    assert {"search", "checkpoint list", "integrate list", "doctor", "hooks status"} <= set(commands)
    ordered = [c for c in ARGS if c in commands] + [c for c in commands if c not in ARGS]  # new ones: --json alone
    env = {**repos.PINNED, "MEMZOI_HOME": str(tmp_path / "home")}
    broken, codes = [], set()
    for words in ordered:
        argv = [*words.split(), *(a.format(**ids) for a in ARGS.get(words, [])), "--json"]
        result = run(repo, *argv, env=env)
        codes.add(result.exit_code)
        lines = result.stdout.splitlines() if words not in ("eval recall", "eval capture") else [result.stdout]
        objects = [json.loads(line) for line in lines if line.strip()]
        if len(objects) != 1:
            broken.append(f"{words}: {len(objects)} JSON objects on stdout (exit {result.exit_code})")
            continue
        (payload,) = objects
        if list(payload)[:1] != ["ok"] or payload["ok"] is not (result.exit_code == 0):
            broken.append(
                f"{words}: exit {result.exit_code}, ok {payload.get('ok')!r} (first key {next(iter(payload))})"
            )
        if result.exit_code == 2 and not (payload.get("error") or {}).get("code"):
            broken.append(f"{words}: exit 2 without error.code")
    assert broken == []
    assert codes >= {0, 1, 2}  # a success, a finding and an input error were all checked


def test_an_error_object_carries_ok_false_and_its_code(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    result = run(repo, "search", "--no-such-flag", "--json", prog_name="git-memzoi")
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "ok": False,
        "error": {
            "code": "bad_usage",
            "message": "No such option '--no-such-flag'. (see git memzoi search -h)",
            "exit_code": 2,
        },
    }
    missing = json.loads(run(repo, "show", "nope", "--json").stdout)
    assert missing == {
        "ok": False,
        "error": {"code": "target_not_found", "message": "no record or entry 'nope'", "exit_code": 2},
    }


def test_a_finding_is_ok_false_with_its_findings(repo: Repo) -> None:
    repo.commit("first")
    assert run(repo, "init").exit_code == 0
    result = run(repo, "hooks", "status", "--json")
    payload = json.loads(result.stdout)
    assert (result.exit_code, payload["ok"], [h["state"] for h in payload["hooks"]]) == (
        1,
        False,
        ["missing", "missing", "missing"],
    )


def test_a_saved_plan_keeps_working_with_its_envelope(repo: Repo, tmp_path: Path) -> None:
    """``capture plan --json > plan.json``: the envelope's ok is no part of the artifact, so review takes it."""
    repo.commit("note", **{"notes/uv.md": NOTE})
    assert run(repo, "init").exit_code == 0
    planned = run(repo, "capture", "plan", "--source", "notes/uv.md", "--json")
    plan = json.loads(planned.stdout)
    assert plan["ok"] is True
    saved = tmp_path / "plan.json"
    saved.write_text(planned.stdout, "utf-8")
    decisions = {
        "schema": "memzoi/capture-review-input-v1",
        "plan_id": plan["plan_id"],
        "decisions": [{"candidate_id": c["candidate_id"], "outcome": "accept"} for c in plan["candidates"]],
    }
    (tmp_path / "decisions.json").write_text(json.dumps(decisions), "utf-8")
    args = ("--plan-file", str(saved), "--decisions-file", str(tmp_path / "decisions.json"), "--reviewed-by", "Test")
    reviewed = run(repo, "capture", "review", *args, "--json")
    assert reviewed.exit_code == 0, reviewed.stderr
    assert json.loads(reviewed.stdout)["plan_id"] == plan["plan_id"]


def test_mcp_config_is_the_file_itself(repo: Repo) -> None:
    """``mcp config > .mcp.json`` prints a client's configuration file, not a result: no envelope."""
    assert run(repo, "init").exit_code == 0
    assert list(json.loads(run(repo, "mcp", "config").stdout)) == ["mcpServers"]
