"""The agent's loop, end to end (issue 15, "Done when"): a Claude Code session starts and its SessionStart hook
shows the suspect claim and the risk on the file the branch changed; the agent captures a decision over MCP
(plan, then submit) and it waits in the review inbox; the session ends twice with one (session_id, event_id) and
the replay is reused; a parallel agent in a linked worktree sees the same private memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import ClientSession

from tests.integrations.test_session_context import context, propose
from tests.mcp.test_mcp_capture import request
from tests.mcp.test_mcp_server import call, drive
from tests.memzoi.runtime.test_private_memory import BATCH, as_json, worktree
from tests.support import repos


def test_session_start_capture_session_end_and_a_worktree(tmp_path: Path) -> None:
    repo = repos.new_repo(tmp_path / "main")
    repo.commit("base", **{"src/a.py": "a\n", "src/b.py": "b\n"})
    repos.ok_json(repo, "init", env=None)
    risk = propose(repo, "risk", "Token refresh races", "Two refreshes at once log the user out.", "src/a.py")
    fact = propose(repo, "fact", "B returns bytes", "b() returns bytes, never str.", "src/b.py")
    repo.commit("memory")
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("change both", **{"src/a.py": "a2\n", "src/b.py": "b2\n"})

    # 1. SessionStart: the risk bound to a changed file and the claim the change made suspect, each cited.
    text = context(repo)
    assert f"[{risk}, .memzoi/records/{risk}.md:" in text and "Token refresh races" in text
    assert f"- suspect: B returns bytes: b() returns bytes, never str. [{fact}, " in text
    assert "Suspect: scope_hit (src/b.py changed since" in text

    # 2. Capture over MCP: plan, accept the decision, submit; it waits for review.
    repo.write("NOTES.md", "# Notes\n\n## Decision: Settle in one transaction\nAll steps commit together.\n")
    before = as_json(repo, "review")

    async def capture(session: ClientSession) -> dict[str, Any]:
        req = request("NOTES.md")
        failed, plan = call(await session.call_tool("plan_capture_v1", req))
        assert not failed, plan
        decisions = [{"candidate_id": c["candidate_id"], "outcome": "accept"} for c in plan["candidates"]]
        args = {**req, "plan_id": plan["plan_id"], "decisions": decisions, "reviewed_by": "agent-1"}
        failed, submitted = call(await session.call_tool("submit_capture_decisions_v1", args))
        assert not failed, submitted
        return submitted

    drive(repo.root, capture)
    after = as_json(repo, "review")
    assert after["count"] == before["count"] + 1
    assert after["proposals"][-1]["source"] == "capture", after["proposals"][-1]

    # 3. Session end, replayed with the same keys: the second run is reused and writes nothing twice.
    batch = tmp_path / "end.yml"
    batch.write_text(BATCH)
    keys = ("--session-id", "sess-7", "--event-id", "end-1")
    first = as_json(repo, "session-end", "--from-file", str(batch), *keys)
    again = as_json(repo, "session-end", "--from-file", str(batch), *keys)
    assert (first["reused"], again["reused"]) == (False, True)
    assert again["writes"] == first["writes"]
    local = sorted(r["id"] for r in as_json(repo, "local", "list")["records"])
    assert local == ["local-run-auth-tests-with-x"]

    # 4. A parallel agent in a linked worktree sees the same private memory at once, and the review packets
    #    (repo-safe files of the working tree) once they are committed.
    review = as_json(repo, "review")["proposals"]
    repo.commit("review packets")
    agent = worktree(repo, "agent-2")
    assert sorted(r["id"] for r in as_json(agent, "local", "list")["records"]) == local
    assert [i["id"] for i in as_json(agent, "review")["proposals"]] == [i["id"] for i in review]
