"""Capture over MCP, end to end with the SDK's stdio client (issue 15, "Capture that agents can use"): an agent
plans a Markdown capture, gets candidates to ask its user about (private ones without their text, a fenced
credential blocking only its candidate), submits the decisions, and the packet lands in pending proposals; the
rejected candidate is not offered again."""

from __future__ import annotations

import json
import random
import string
from typing import Any

from click.testing import CliRunner
from mcp import ClientSession

from git_memzoi.cli.memzoi import cli
from git_memzoi.memzoi.capture.agent import REDACTED
from tests.mcp.test_mcp_server import call, cli_json, drive
from tests.support.repos import Repo


def request(path: str) -> dict[str, Any]:
    return {
        "schema": "memzoi/capture-request-v1",
        "extractor": {"profile": "markdown-deterministic"},
        "sources": [
            {"source_id": "readme", "media_type": "text/markdown", "locator": {"kind": "project_path", "path": path}}
        ],
    }


def test_an_agent_plans_asks_and_submits_a_capture(repo: Repo) -> None:
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "init"]).exit_code == 0
    rng = random.Random(1515)
    secret = "sk-live-" + "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(32))
    repo.write(
        "README.md",
        "# Billing\n\n"
        "## Decision: Settle in one transaction\nAll settlement steps commit together or not at all.\n\n"
        "## Preference: Terse review notes\nKeep review comments to one line.\n\n"
        "## Fact: Manual deploys\nWe deploy by hand on Fridays.\n\n"
        f'## Procedure: Configure the client\nExport the token:\n\n```sh\nexport API_TOKEN="{secret}"\n```\n',
    )
    repo.commit("seed")
    req = request("README.md")

    async def body(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["plan"] = call(await session.call_tool("plan_capture_v1", req))
        plan = out["plan"][1]
        ids = {c["memory"]["type"]: c["candidate_id"] for c in plan["candidates"]}
        outcomes = {"decision": "accept", "preference": "accept", "fact": "reject", "procedure": "reject"}
        decisions = [{"candidate_id": ids[t], "outcome": o} for t, o in outcomes.items()]
        out["stale"] = call(
            await session.call_tool(
                "submit_capture_decisions_v1", {**req, "plan_id": "capture_" + "0" * 32, "decisions": decisions}
            )
        )
        out["incomplete"] = call(
            await session.call_tool(
                "submit_capture_decisions_v1", {**req, "plan_id": plan["plan_id"], "decisions": decisions[:1]}
            )
        )
        out["submit"] = call(
            await session.call_tool(
                "submit_capture_decisions_v1",
                {**req, "plan_id": plan["plan_id"], "decisions": decisions, "reviewed_by": "agent-for-zoki"},
            )
        )
        out["again"] = call(await session.call_tool("plan_capture_v1", req))
        return out

    out = drive(repo.root, body)
    failed, plan = out["plan"]
    assert not failed and plan["data_class"] == "private"
    by_type = {c["memory"]["type"]: c for c in plan["candidates"]}
    actions = {t: c["action"]["kind"] for t, c in by_type.items()}
    assert actions == {
        "decision": "create_proposal",
        "preference": "create_runtime",
        "fact": "create_proposal",
        "procedure": "blocked",
    }
    # the repo-safe candidates come whole; the local one and the blocked one without their text
    assert by_type["decision"]["memory"]["body"] == "All settlement steps commit together or not at all."
    assert plan["redacted_candidates"] == [by_type["preference"]["candidate_id"], by_type["procedure"]["candidate_id"]]
    assert by_type["preference"]["memory"]["title"] == REDACTED
    assert by_type["preference"]["evidence"][0]["text"] == REDACTED
    assert by_type["preference"]["evidence"][0]["span"]["line_start"] == 6  # where to read it in the source
    assert "Keep review comments" not in json.dumps(plan) and secret not in json.dumps(out)
    (blocked,) = [d for d in plan["diagnostics"] if d["code"] == "prohibited_content_detected"]
    assert (blocked["path"], blocked["line_start"], blocked["candidate_id"]) == (
        "README.md",
        16,
        by_type["procedure"]["candidate_id"],
    )
    assert "credential_assignment" in blocked["detectors"]

    assert out["stale"][0] and out["stale"][1]["error"]["code"] == "stale_capture_plan"
    assert out["incomplete"][0] and out["incomplete"][1]["error"]["code"] == "invalid_review"

    failed, submitted = out["submit"]
    assert not failed, submitted
    assert submitted["schema"] == "memzoi/capture-submit-result-v1" and submitted["plan_id"] == plan["plan_id"]
    assert sorted(w["kind"] for w in submitted["writes"]) == ["proposal_file", "runtime_record"]
    assert submitted["decisions_remembered"] == 3  # a blocked candidate is not remembered: it stays blocked
    (packet,) = [w for w in submitted["writes"] if w["kind"] == "proposal_file"]
    assert packet["path"] == f".memzoi/proposals/pending/{packet['proposal_id']}.md"
    text = (repo.root / packet["path"]).read_text()
    assert "Settle in one transaction" in text and "agent-for-zoki" in text
    assert packet["proposal_id"] in json.dumps(cli_json(repo, "proposal-files", "list"))
    assert not list((repo.root / ".memzoi/records").glob("*.md"))  # nothing canonical: a maintainer applies

    failed, again = out["again"]
    assert not failed
    kinds = {c["memory"]["type"]: c["action"]["kind"] for c in again["candidates"]}
    assert kinds == {
        "decision": "duplicate",
        "preference": "duplicate",
        "fact": "previously_rejected",
        "procedure": "blocked",
    }
    (local,) = [c for c in again["candidates"] if c["memory"]["type"] == "preference"]
    assert [(m["kind"], m["id"]) for m in local["action"]["matches"]] == [("runtime_record", REDACTED)]
    assert "terse" not in json.dumps(again).lower()


def test_mcp_capture_refuses_other_requests(repo: Repo) -> None:
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "init"]).exit_code == 0
    repo.write("AGENTS.md", "# Rules\nBe careful.\n")
    req = request("AGENTS.md")

    async def body(session: ClientSession) -> list[Any]:
        calls = [
            ("submit_capture_decisions_v1", {**req, "extractor": {"profile": "instruction-deterministic"}}),
            ("submit_capture_decisions_v1", {**req, "sources": []}),
            ("submit_capture_decisions_v1", {**req, "apply": True}),
            ("plan_capture_v1", {**req, "schema": "other"}),
            ("plan_capture_v1", {**req, "extractor": {"profile": "markdown-deterministic", "version": "9.9"}}),
            ("plan_capture_v1", {**req, "extractor": {"profile": "markdown-deterministic", "bogus": True}}),
        ]
        results = []
        for name, args in calls:
            if name == "submit_capture_decisions_v1":
                args = {"plan_id": "capture_x", "decisions": [], **args}
            results.append(call(await session.call_tool(name, args)))
        return results

    profile, locator, mutating, schema, version, extra = drive(repo.root, body)
    assert version[0] and version[1]["error"] == {
        "code": "unsupported_extractor_version",
        "message": "MCP capture runs markdown-deterministic 1.1.0; pin another version with git memzoi capture",
    } | {k: v for k, v in version[1]["error"].items() if k not in ("code", "message")}
    assert extra[0] and extra[1]["error"]["code"] == "invalid_request"
    assert profile[0] and profile[1]["error"]["code"] == "unsupported_profile"
    assert locator[0] and locator[1]["error"]["code"] == "unsupported_locator"
    assert "project_path" in locator[1]["error"]["message"] and "locator" in locator[1]["error"]["message"]
    assert mutating[0] and mutating[1]["error"]["code"] == "mutation_refused"  # refused before the core
    assert schema[0] and schema[1]["error"]["code"] == "invalid_schema"
