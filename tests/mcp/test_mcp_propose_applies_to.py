"""``propose_memory``'s ``applies_to`` over stdio: the paths reach the packet's ``scope.paths``; bad ones fail."""

from __future__ import annotations

from typing import Any

from click.testing import CliRunner
from mcp import ClientSession

from git_memzoi.cli.memzoi import cli
from git_memzoi.memzoi.proposals import packets
from tests.mcp.test_mcp_server import call, drive
from tests.support.repos import Repo


def test_propose_memory_applies_to(repo: Repo) -> None:
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "init"]).exit_code == 0
    repo.commit("init")
    args = {
        "title": "Release script deletes dist",
        "body": "It wipes dist/ first.",
        "type": "risk",
        "sensitivity": "repo-safe",
        "approval_mode": "manual",
    }

    async def body(session: ClientSession) -> dict[str, Any]:
        good = call(await session.call_tool("propose_memory", {**args, "applies_to": ["scripts/release.sh"]}))
        bad = await session.call_tool("propose_memory", {**args, "applies_to": ["../outside.sh"]})
        return {"good": good, "bad": (bool(bad.is_error), bad.content[0].text)}

    out = drive(repo.root, body)
    is_error, result = out["good"]
    assert (is_error, result["applied"], result["payload"]["applies_to"]) == (False, False, ["scripts/release.sh"])
    path = repo.root / ".memzoi/proposals/pending" / f"{result['proposal_id']}.md"
    packet = packets.parse(result["proposal_id"], path.name, path.read_bytes())
    assert packet.paths == ("scripts/release.sh",)
    assert out["bad"][0] is True and "invalid_applies_to" in out["bad"][1]


def test_propose_memory_records_its_tags(repo: Repo) -> None:
    """``tags`` and ``scope_id`` reach the packet (both were accepted and dropped, "not recorded by this version")."""
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "init"]).exit_code == 0
    repo.commit("init")
    args = {"title": "Ledger rows", "body": "Appended, never updated.", "sensitivity": "repo-safe"}

    async def body(session: ClientSession) -> dict[str, Any]:
        good = call(
            await session.call_tool("propose_memory", {**args, "tags": ["billing", "ledger"], "scope_id": "payments"})
        )
        bad = call(await session.call_tool("propose_memory", {**args, "tags": ["two words"]}))
        return {"good": good, "bad": bad}

    out = drive(repo.root, body)
    is_error, result = out["good"]
    assert not is_error and not any("not recorded" in w for w in result["warnings"])
    path = next((repo.root / ".memzoi/proposals").rglob(f"{result['proposal_id']}.md"))
    packet = packets.parse(result["proposal_id"], path.name, path.read_bytes())
    assert (packet.tags, packet.scope_id) == (("billing", "ledger"), "payments")
    assert out["bad"] == (
        True,
        {
            "error": {
                "code": "invalid_tag",
                "message": "tag 'two words' must be one word of at most 64 letters, digits and -_.:/",
            }
        },
    )
