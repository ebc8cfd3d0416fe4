"""``propose_memory`` under the agent approval policy over stdio (issue 15): pending by default, approved only
when a human opted agents in, never by the agent's own ``approval_mode: auto``; the proposal reaches the inbox."""

from __future__ import annotations

from typing import Any

from click.testing import CliRunner
from mcp import ClientSession

from git_memzoi.cli.memzoi import cli
from tests.mcp.test_mcp_server import call, drive
from tests.support.repos import Repo

SAFE = {"title": "Use uv", "body": "Install with uv sync.", "sensitivity": "repo-safe"}


def test_agent_proposals_wait_for_review_unless_a_human_opted_in(repo: Repo) -> None:
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "init"]).exit_code == 0

    async def body(session: ClientSession) -> dict[str, Any]:
        default = call(await session.call_tool("propose_memory", SAFE))
        self_approved = call(await session.call_tool("propose_memory", {**SAFE, "approval_mode": "auto"}))
        listed = call(await session.call_tool("review_inbox", {}))
        return {"default": default, "self": self_approved, "listed": listed}

    out = drive(repo.root, body)
    failed, proposed = out["default"]
    assert (failed, proposed["status"], proposed["auto_approved"], proposed["applied"]) == (
        False,
        "pending",
        False,
        False,
    )
    assert proposed["policy"] == {"mode": "manual", "source": "default", "path": None}
    assert out["self"] == (
        True,
        {
            "error": {
                "code": "agent_self_approval",
                "message": "an agent cannot approve its own proposal; a human may opt agents in with [workflow] "
                'agent_proposal_approval = "auto"',
            }
        },
    )
    failed, listed = out["listed"]
    assert (failed, [(i["id"], i["source"], i["status"]) for i in listed["proposals"]]) == (
        False,
        [(proposed["proposal_id"], "proposal", "pending")],
    )

    config = repo.root / ".memzoi/config.toml"
    config.write_text('[workflow]\nagent_proposal_approval = "auto"\n', "utf-8")

    async def opted_in(session: ClientSession) -> Any:
        return call(await session.call_tool("propose_memory", {**SAFE, "title": "Pin Node 22"}))

    failed, approved = drive(repo.root, opted_in)
    assert (failed, approved["status"], approved["auto_approved"], approved["policy"]["source"]) == (
        False,
        "approved",
        True,
        "repo",
    )
