"""``git memzoi mcp serve`` as a subprocess, driven by the SDK's own stdio client (issue 6 "MCP server").

One session calls every tool and compares the structured results with the CLI's ``--json`` objects (the tools
reuse them, aesthetics habit 23). Field report BR-03 is replayed over raw JSON-RPC lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from git_memzoi.cli.memkeep import cli as memkeep_cli
from git_memzoi.cli.memzoi import cli
from git_memzoi.mcp.server import TOOL_NAMES
from tests.support import repos
from tests.support.repos import Repo, entry_text

NOW = "2026-07-10T12:00:00Z"
BIN = Path(sys.executable).parent
SERVER = str(BIN / "git-memzoi")


def env() -> dict[str, str]:
    return {**os.environ, "MEMZOI_NOW": NOW, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def record(repo: Repo, concept_id: str, title: str, body: str, memory_type: str = "fact", **extra: Any) -> None:
    repos.write_record(
        repo,
        concept_id,
        title,
        body,
        memory_type=memory_type,
        source="issue",
        applies_to=tuple(extra.get("applies_to", ())),
    )


def cli_json(repo: Repo, *args: str, tool: Any = cli) -> Any:
    result = CliRunner().invoke(tool, ["-C", str(repo.root), *args, "--json"], env={"MEMZOI_NOW": NOW})
    assert result.exit_code in (0, 1), (result.stdout, result.stderr)
    payload = json.loads(result.stdout)
    if tool is cli:  # git memzoi's --json envelope; an MCP tool result is the object without it (isError says it)
        assert payload.pop("ok") is (result.exit_code == 0)
    return payload


@pytest.fixture
def served(repo: Repo) -> Repo:
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "init"]).exit_code == 0
    record(repo, "m1", "Database migrations", "Run migrations with the migrate script, never by hand.")
    record(
        repo,
        "r1",
        "Settlement order",
        "Reordering settlement steps double-charged customers.",
        "risk",
        applies_to=("src/billing/**",),
    )
    repo.write("agent-memory/entries/billing-rule.md", entry_text("billing-rule", anchor=None, scope=["src/**"]))
    repo.write(
        "README.md",
        "# Billing\n\n## Decision: Settle in one transaction\n\nAll settlement steps commit together or not at all.\n",
    )
    repo.commit("seed")
    return repo


def call(result: Any) -> tuple[bool, dict[str, Any]]:
    """``(is_error, structured content)``; the text content is the same object as JSON."""
    if result.structured_content is not None:
        assert json.loads(result.content[0].text) == result.structured_content
    return bool(result.is_error), result.structured_content


async def _session(root: Path, body: Any, errlog: Any) -> Any:
    params = StdioServerParameters(
        command=SERVER, args=["mcp", "serve", "--project-root", str(root)], env=env(), cwd=str(root)
    )
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await body(session)


def drive(root: Path, body: Any) -> Any:
    """Run ``body(session)`` against a fresh server process (its stderr logs discarded)."""
    with open(os.devnull, "w") as errlog:
        return anyio.run(_session, root, body, errlog)


def test_every_tool_over_stdio(served: Repo) -> None:
    records_before = sorted(p.name for p in (served.root / ".memzoi/records").iterdir())
    capture = {
        "schema": "memzoi/capture-request-v1",
        "extractor": {"profile": "markdown-deterministic"},
        "sources": [
            {
                "source_id": "readme",
                "media_type": "text/markdown",
                "locator": {"kind": "project_path", "path": "README.md"},
            }
        ],
    }

    async def body(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {"tools": [t.name for t in (await session.list_tools()).tools]}
        calls = {
            "search": ("search_memory", {"query": "migrations"}),
            "expiry": ("inspect_memory_expiry", {"record_id": "m1"}),
            "pack": ("build_context_pack", {"task": "run migrations", "token_budget": 200}),
            "propose": ("propose_memory", {"title": "Use uv", "body": "Install with uv sync."}),
            "path": ("precheck_path", {"path": "src/billing/settle.py"}),
            "action": ("precheck_action", {"action": "reorder settlement", "path": "src/billing/settle.py"}),
            "command": ("precheck_command", {"command": "make migrate"}),
            "capture": ("plan_capture_v1", capture),
            "status": ("memory_status", {}),
            "apply": ("propose_memory", {"title": "x", "body": "y", "sensitivity": "repo-safe", "apply": True}),
            "unknown": ("no_such_tool", {}),
            "bad_type": ("search_memory", {"query": 5}),
            "missing": ("inspect_memory_expiry", {}),
            "not_found": ("inspect_memory_expiry", {"record_id": "nope"}),
            "after": ("search_memory", {"query": "settlement", "type": "risk"}),
        }
        for key, (name, args) in calls.items():
            out[key] = call(await session.call_tool(name, args))
        return out

    out = drive(served.root, body)
    assert sorted(out["tools"]) == sorted(TOOL_NAMES)
    assert out["search"] == (False, cli_json(served, "search", "migrations"))
    assert [r["record"]["id"] for r in out["search"][1]["results"]] == ["m1"]
    assert out["expiry"] == (False, cli_json(served, "expiry", "m1"))
    assert out["pack"] == (False, cli_json(served, "context", "--task", "run migrations", "--token-budget", "200"))
    assert out["path"] == (False, cli_json(served, "precheck", "--path", "src/billing/settle.py"))
    # the memkeep entry scoped to src/** covers the path too: unwatched (no anchor), so suspect and listed first
    warned = [(w["store"], w["record_id"], bool(w["suspect"])) for w in out["path"][1]["warnings"]]
    assert warned == [("entry", "billing-rule", True), ("record", "r1", False)]
    assert out["path"][1]["warnings"][0]["suspect"]["reasons"][0]["reason"] == "anchor_unreachable"
    assert [w["record_id"] for w in out["action"][1]["warnings"]] == ["billing-rule", "r1"]
    assert out["command"] == (False, cli_json(served, "precheck", "--command", "make migrate"))

    failed, proposed = out["propose"]
    assert not failed
    assert (proposed["applied"], proposed["status"]) == (False, "pending")
    assert proposed["payload"]["sensitivity"] == "unknown"
    assert proposed["validation"]["issues"][0]["code"] == "sensitivity_unknown"
    assert proposed["proposal_id"] == proposed["proposal"]["id"]
    assert sorted(p.name for p in (served.root / ".memzoi/records").iterdir()) == records_before

    # A typed repo section routes to a pending proposal (issue 15): the plan is repo-safe and MCP returns it whole.
    planned = cli_json(served, "capture", "plan", "--source", "README.md", "--source-id", "readme")
    assert planned["data_class"] == "repo_safe" and len(planned["candidates"]) == 1
    assert out["capture"] == (False, planned)
    status = cli_json(served, "status", tool=memkeep_cli)
    assert out["status"] == (False, {**status, "other_stores": []})  # no store in a subfolder
    assert out["status"][1]["summary"]["entries"] == 1

    assert out["apply"][0] and out["apply"][1]["error"]["code"] == "mutation_refused"  # nothing applied
    assert out["unknown"] == (True, {"error": {"code": "unknown_tool", "message": "Unknown tool: no_such_tool"}})
    assert out["bad_type"][1]["error"]["code"] == out["missing"][1]["error"]["code"] == "invalid_arguments"
    assert out["not_found"][0] and out["not_found"][1]["error"]["code"]
    assert [r["record"]["id"] for r in out["after"][1]["results"]] == ["r1"]  # still serving


def test_tool_errors_carry_their_message(served: Repo) -> None:
    async def body(session: ClientSession) -> list[str]:
        texts = []
        for name, args in (
            ("propose_memory", {"title": "t", "body": "b", "auto_apply": True}),
            ("no_such_tool", {}),
            ("plan_capture_v1", {"sources": [], "extractor": {"profile": "adr-deterministic"}}),
            ("build_context_pack", {"task": "deploy", "path": "../x"}),
        ):
            result = await session.call_tool(name, args)
            assert result.is_error
            texts.append(result.content[0].text)
        return texts

    texts = drive(served.root, body)
    assert "never applies" in texts[0] and "auto_apply" in texts[0]
    assert "Unknown tool: no_such_tool" in texts[1]
    assert json.loads(texts[2])["error"]["code"] == "unsupported_profile"
    assert "path '../x' is outside the repository" in texts[3]


def test_br03_first_stdout_line_is_the_initialize_response(repo: Repo) -> None:
    """BR-03: a malformed record, no index yet; stdout carries JSON-RPC lines only, logs go to stderr."""
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "init"]).exit_code == 0
    repo.write(".memzoi/records/broken.md", "---\nid: broken\ntitle: unclosed frontmatter\n")
    assert not (repo.root / ".git/memzoi/worktree/index.sqlite").exists()
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "probe", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "search_memory", "arguments": {"query": "anything"}},
        },
    ]
    proc = subprocess.Popen(
        [SERVER, "mcp", "serve", "--project-root", str(repo.root)],
        cwd=repo.root,
        env=env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    seen: list[dict[str, Any]] = []
    for message in lines:
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        if "id" in message:
            raw = proc.stdout.readline()
            assert raw.endswith(b"\n") and raw.count(b"\n") == 1
            seen.append(json.loads(raw))
    proc.stdin.close()
    rest = proc.stdout.read()
    assert proc.wait(timeout=20) == 0
    assert rest == b""
    assert seen[0]["id"] == 1 and isinstance(seen[0]["result"], dict)
    assert seen[0]["result"]["protocolVersion"] == "2025-06-18"
    assert {m["id"] for m in seen} == {1, 2, 3}
    assert all(isinstance(m, dict) and m["jsonrpc"] == "2.0" for m in seen)
    by_id = {m["id"]: m for m in seen}
    assert len(by_id[2]["result"]["tools"]) == len(TOOL_NAMES)
    assert by_id[3]["result"]["isError"] is False


@pytest.mark.parametrize("event", ["UserPromptSubmit", "PostToolUse"])
@pytest.mark.parametrize("store", [False, True], ids=["no-store", "empty-store"])
def test_br05_hook_output_names_its_event(repo: Repo, event: str, store: bool) -> None:
    """BR-05: zero records; stdout is empty or one object whose hookSpecificOutput names the stdin event."""
    if store:
        (repo.root / "agent-memory/entries").mkdir(parents=True)
    stdin = json.dumps({"hook_event_name": event, "prompt": "hello", "session_id": "s1", "cwd": str(repo.root)})
    for tool, args in ((memkeep_cli, ["status", "--hook", event]), (cli, ["integrate", "session-context"])):
        result = CliRunner().invoke(tool, ["-C", str(repo.root), *args], input=stdin)
        assert result.exit_code == 0, (result.stdout, result.stderr)
        out = result.stdout.strip()
        if out:
            payload = json.loads(out)
            assert "\n" not in out and isinstance(payload, dict)
            if "hookSpecificOutput" in payload:
                assert payload["hookSpecificOutput"]["hookEventName"] == event


def test_the_server_finds_the_repository_once_and_checks_it_on_every_call(served: Repo, monkeypatch) -> None:
    from git_memzoi.mcp.server import _Server
    from git_memzoi.memzoi import layout as layout_mod
    from git_memzoi.memzoi import workspace

    found, checked = [], []
    find_root, interrupted = workspace.find_root, layout_mod.Layout.interrupted
    monkeypatch.setattr(workspace, "find_root", lambda start: found.append(start) or find_root(start))
    monkeypatch.setattr(layout_mod.Layout, "interrupted", lambda self: checked.append(1) or interrupted(self))
    server = _Server(served.root)
    answers = [call(server.search_memory("migrations", mode="lexical")) for _ in range(3)]
    assert [[r["record"]["id"] for r in body["results"]] for _, body in answers] == [["m1"]] * 3
    assert (len(found), len(checked)) == (1, 3)


def test_a_path_spelled_otherwise_names_the_same_file(served: Repo) -> None:
    """``./src/billing/settle.py``, ``src//billing/settle.py`` and ``src/x/../billing/settle.py`` name the file
    ``src/billing/settle.py`` names: an agent's ``./`` path was told that no risk applied (a fresh user's walk)."""
    spellings = (
        "src/billing/settle.py",
        "./src/billing/settle.py",
        "src//billing/settle.py",
        "src/x/../billing/settle.py",
    )

    async def body(session: ClientSession) -> dict[str, Any]:
        return {path: call(await session.call_tool("precheck_path", {"path": path})) for path in spellings}

    out = drive(served.root, body)
    ids = {path: [w["record_id"] for w in payload["warnings"]] for path, (_, payload) in out.items()}
    assert ids == {path: ["billing-rule", "r1"] for path in spellings}
    assert all(payload == out[spellings[0]][1] for _, payload in out.values())
