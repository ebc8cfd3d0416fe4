"""``propose_memory``'s earned-envelope parameters over stdio: the packet carries the envelope; bad ones fail."""

from __future__ import annotations

from typing import Any

from click.testing import CliRunner
from mcp import ClientSession

from git_memzoi.cli.memzoi import cli
from git_memzoi.memzoi.proposals import packets
from tests.mcp.test_mcp_server import call, drive
from tests.support.repos import Repo


def test_propose_memory_writes_the_envelope(repo: Repo) -> None:
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "init"]).exit_code == 0
    head = repo.commit("init")
    args = {
        "title": "Release script deletes dist",
        "body": "It wipes dist/ first.",
        "type": "risk",
        "sensitivity": "repo-safe",
        "approval_mode": "manual",
        "applies_to": ["scripts/release.sh"],
    }

    async def body(session: ClientSession) -> dict[str, Any]:
        watched = {"scope_globs": ["scripts/**"], "ttl_days": 7, "check": "test -f scripts/release.sh"}
        good = call(await session.call_tool("propose_memory", {**args, **watched, "check_safe": True}))
        bad = await session.call_tool("propose_memory", {**args, "title": "Other", "ttl_days": -1})
        return {"good": good, "bad": (bool(bad.is_error), bad.content[0].text)}

    out = drive(repo.root, body)
    is_error, result = out["good"]
    envelope = {
        "anchor": head,
        "scope": ["scripts/**"],
        "verified_at": result["watch"]["envelope"]["verified_at"],
        "ttl_days": 7,
        "check": {"run": "test -f scripts/release.sh", "safe": True},
    }
    assert (is_error, result["watch"]["watched"], result["watch"]["envelope"]) == (False, True, envelope)
    path = repo.root / ".memzoi/proposals/pending" / f"{result['proposal_id']}.md"
    assert packets.parse(result["proposal_id"], path.name, path.read_bytes()).memkeep == envelope
    assert out["bad"][0] is True and "invalid_ttl_days" in out["bad"][1]


def test_search_memory_flags_a_proposed_risk_suspect_once_its_file_changes(repo: Repo) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["-C", str(repo.root), "init"]).exit_code == 0
    anchor = repo.commit("init", **{"src/signer.py": "sorted\n"})
    propose = ["propose", "--type", "risk", "--sensitivity", "repo-safe", "--applies-to", "src/signer.py", "--apply"]
    given = ["--title", "Signer sorts keys", "--body", "The signer sorts keys first."]
    assert runner.invoke(cli, ["-C", str(repo.root), *propose, *given]).exit_code == 0
    repo.commit("record")
    repo.commit("unsorted", **{"src/signer.py": "unsorted\n"})

    async def body(session: ClientSession) -> Any:
        return call(await session.call_tool("search_memory", {"query": "signer"}))

    is_error, result = drive(repo.root, body)
    assert (is_error, [r["suspect"] for r in result["results"]]) == (
        False,
        [
            {
                "reasons": [
                    {
                        "reason": "scope_hit",
                        "message": f"src/signer.py changed since {anchor[:12]}",
                        "evidence": {"anchor": anchor, "files": ["src/signer.py"]},
                    }
                ]
            }
        ],
    )
