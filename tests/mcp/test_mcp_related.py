"""The MCP surface of relations over stdio (issue 19): ``related_memory`` returns what ``related --json`` prints,
``build_context_pack`` takes ``expand``, ``propose_memory`` takes ``relations``; bad ones are tool errors."""

from __future__ import annotations

from typing import Any

from click.testing import CliRunner
from mcp import ClientSession

from git_memzoi.cli.memzoi import cli
from git_memzoi.memzoi.records.relations import Relation
from tests.mcp.test_mcp_server import call, drive
from tests.support import repos
from tests.support.repos import Repo, ok_json


def test_related_memory_expand_and_propose_relations(repo: Repo) -> None:
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "init"]).exit_code == 0
    repos.write_record(repo, "ci", "CI setup", "The CI runs on every push.")
    repos.write_record(repo, "deploy", "Deploy runbook", "Deploy after CI.", relations=(Relation("depends_on", "ci"),))
    repo.commit("records")
    expected = ok_json(repo, "related", "ci")
    del expected["ok"]  # the CLI's envelope; an MCP result is the core object

    async def body(session: ClientSession) -> dict[str, Any]:
        return {
            "related": call(await session.call_tool("related_memory", {"record_id": "ci"})),
            "bad": call(await session.call_tool("related_memory", {"record_id": "ci", "depth": 3})),
            "pack": call(await session.call_tool("build_context_pack", {"task": "deploy runbook", "expand": True})),
            "propose": call(
                await session.call_tool(
                    "propose_memory",
                    {"title": "T", "body": "B", "sensitivity": "repo-safe", "relations": ["depends_on=ci"]},
                )
            ),
            "refused": call(
                await session.call_tool("propose_memory", {"title": "T2", "body": "B2", "relations": ["Depends=ci"]})
            ),
        }

    out = drive(repo.root, body)
    assert out["related"] == (False, expected)
    assert out["bad"][0] is True and out["bad"][1]["error"]["code"] == "invalid_depth"
    failed, pack = out["pack"]
    assert not failed
    assert [(i["record_id"], i.get("relation", {}).get("role")) for i in pack["included"]] == [
        ("deploy", None),
        ("ci", "depends_on"),
    ]
    assert out["propose"][0] is False and out["propose"][1]["status"] == "pending"
    (packet,) = (repo.root / ".memzoi/proposals/pending").glob("*.md")
    assert "\nrelations:\n  - depends_on: ci\n" in packet.read_text()  # carried until a reviewer applies it
    assert out["refused"][0] is True and out["refused"][1]["error"]["code"] == "invalid_relation"
