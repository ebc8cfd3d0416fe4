"""The MCP tools take ``as_of`` / ``include_superseded`` and ``propose_memory`` takes ``valid_from`` / ``valid_to``
(issue 19; records/validity.py), over stdio: a bad bound is ``invalid_validity`` and writes nothing."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner
from mcp import ClientSession

from git_memzoi.cli.memzoi import cli
from git_memzoi.memzoi.proposals import packets
from tests.mcp.test_mcp_server import call, drive
from tests.support import repos
from tests.support.repos import Repo


def test_as_of_and_validity_over_mcp(repo: Repo) -> None:
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "init"]).exit_code == 0
    repos.spec_ids(repo.root)
    fields: dict[str, Any] = {"applies_to": ["scripts/release.sh"], "memory_type": "warning"}
    repos.write_record(repo, "freeze", "Release freeze", "Do not release.", valid_to="2026-07-11", **fields)
    repos.write_record(repo, "old-way", "Release by hand", "Run it.", status="superseded")
    repo.commit("init")
    args = {"title": "Release embargo", "body": "Until the audit.", "sensitivity": "repo-safe"}

    async def body(session: ClientSession) -> dict[str, Any]:
        async def ids(tool: str, **kw: Any) -> list[str]:
            _error, out = call(await session.call_tool(tool, kw))
            found = out.get("results", out.get("warnings", []))
            return sorted(r["record"]["id"] if "record" in r else r["record_id"] for r in found)

        bad = await session.call_tool("propose_memory", {**args, "valid_to": "2026-07-11T00:00:00"})
        good = call(
            await session.call_tool("propose_memory", {**args, "valid_from": "2026-07-01", "valid_to": "2026-08-01"})
        )
        return {
            "now": await ids("search_memory", query="release"),
            "later": await ids("search_memory", query="release", as_of="2026-07-11"),
            "history": await ids("search_memory", query="release", include_superseded=True),
            "precheck": await ids("precheck_path", path="scripts/release.sh", as_of="2026-07-11T00:00:00Z"),
            "precheck_now": await ids("precheck_path", path="scripts/release.sh"),
            "bad_as_of": (await session.call_tool("search_memory", {"query": "x", "as_of": "soon"})).content[0].text,
            "bad": (bool(bad.is_error), bad.content[0].text),
            "good": good,
        }

    out = drive(repo.root, body)
    assert (out["now"], out["later"], out["history"]) == (["freeze"], [], ["freeze", "old-way"])
    assert (out["precheck"], out["precheck_now"]) == ([], ["freeze"])
    shape = (
        "must be an ISO 8601 instant with a zone (2026-07-01T00:00:00Z) or a date (2026-07-01), at most milliseconds"
    )
    # the tool's argument names, not the command line's --as-of / --valid-to
    assert json.loads(out["bad_as_of"]) == {"error": {"code": "invalid_as_of", "message": f"as_of: 'soon' {shape}"}}
    assert out["bad"][0] is True
    assert json.loads(out["bad"][1])["error"]["message"].startswith("valid_to: '2026-07-11T00:00:00' ")
    is_error, result = out["good"]
    assert (is_error, result["payload"]["valid_from"], result["payload"]["valid_to"]) == (
        False,
        "2026-07-01",
        "2026-08-01",
    )
    pending = list((repo.root / ".memzoi/proposals/pending").glob("*.md"))
    assert [p.stem for p in pending] == [result["proposal_id"]]  # the refused one wrote nothing
    packet = packets.parse(pending[0].stem, pending[0].name, pending[0].read_bytes())
    assert packet.validity == {"valid_from": "2026-07-01", "valid_to": "2026-08-01"}
