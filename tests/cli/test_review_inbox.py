"""One review inbox (issue 15): ``git memzoi review`` lists inbox proposals and the packets of session end,
capture and import under one id scheme; approve, reject, apply and ``proposals show`` take either kind of id;
handoff, doctor and MCP report the same count.

Real repositories in tmp_path, the CLI in-process (CliRunner) with the clock pinned, MCP over stdio with the SDK.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from git_memzoi.memzoi import workspace
from git_memzoi.memzoi.proposals import inbox, review
from tests.support.repos import NOW_TEXT as NOW
from tests.support.repos import SEED_YAML, Repo, ok_json, run, spec_ids

SESSION_ID = "protected-routes-validate-sessions-server-side"
IMPORT_ID = "mem_import_verify-release-archives"
CAPTURE_ID = "capture-verify-release-checksums-bfdeb744"
PROP_ID = "prop_019f4be6-1e00-793b-b209-97e0a4863d07"  # the proposal below, proposed by cli at NOW
MANIFEST = """\
version: memzoi/import-v1
sources:
  - path: imports/source.yml
candidates:
  - destination: repo
    reason: durable project convention
    type: decision
    title: Verify release archives
    body: Check the SHA-256 before extracting.
    sensitivity: repo-safe
"""
CAPTURED = "## Decision: Verify release checksums\nCompare the published checksum before unpacking.\n"
PROPOSE = ("propose", "--type", "fact", "--sensitivity", "repo-safe", "--title", "Use pnpm", "--body", "Use pnpm.")


def _capture(repo: Repo) -> str:
    """plan → review (edit, repo) → apply over ``notes/findings.md``: one pending capture packet; its id."""
    plan_file, decisions, review_file = (  # a repo-safe plan is never saved under .memzoi/
        repo.root / "capture-plan.json",
        repo.root / "capture-decisions.json",
        repo.root / "capture-review.json",
    )
    plan = ok_json(
        repo, "capture", "plan", "--source", "notes/findings.md", "--source-id", "findings", "--output", str(plan_file)
    )
    (candidate,) = plan["candidates"]
    decision = {
        "candidate_id": candidate["candidate_id"],
        "outcome": "edit",
        "memory": candidate["memory"],
        "requested_destination": "repo",
        "content_class": "general_repo_knowledge",
    }
    body = {"schema": "memzoi/capture-review-input-v1", "plan_id": plan["plan_id"], "decisions": [decision]}
    decisions.write_text(json.dumps(body), "utf-8")
    rev = ok_json(
        repo,
        "capture",
        "review",
        "--plan-file",
        str(plan_file),
        "--decisions-file",
        str(decisions),
        "--reviewed-by",
        "zoki",
        "--reviewed-at",
        NOW,
        "--output",
        str(review_file),
    )
    result = ok_json(
        repo,
        "capture",
        "apply",
        "--plan-file",
        str(plan_file),
        "--review-file",
        str(review_file),
        "--plan-id",
        plan["plan_id"],
        "--review-id",
        rev["review_id"],
        "--actor",
        "zoki",
    )
    (write,) = result["writes"]
    return str(write["proposal_id"])


@pytest.fixture
def loaded(repo: Repo, tmp_path: Path) -> Repo:
    """One item from each source: a session-end, an import and a capture packet, and a CLI proposal."""
    assert run(repo, "init").exit_code == 0
    spec_ids(repo.root)
    repo.write("notes/findings.md", CAPTURED)
    repo.write("imports/manifest.yml", MANIFEST)
    repo.commit("seed")
    notes = tmp_path / "notes.yml"
    notes.write_text(SEED_YAML, "utf-8")
    assert ok_json(repo, "session-end", "--from-file", str(notes))["results"][0]["proposal_id"] == SESSION_ID
    plan = ok_json(repo, "import", "plan", "--from-file", "imports/manifest.yml")
    ok_json(repo, "import", "apply", "--from-file", "imports/manifest.yml", "--plan-id", plan["plan_id"])
    assert _capture(repo) == CAPTURE_ID
    assert ok_json(repo, *PROPOSE, "--manual")["proposal"]["id"] == PROP_ID
    return repo


def agree(repo: Repo) -> int:
    """The fast count, the listing and the split counts say the same; that number."""
    layout = workspace.open_workspace(repo.root).layout
    count = review.pending_count(layout)
    assert count == len(review.list_pending(layout).items) == review.counts(layout).open
    return count


def listed(repo: Repo, *args: str) -> list[tuple[Any, ...]]:
    if not args:
        agree(repo)
    items = ok_json(repo, "review", *args)["proposals"]
    return [(i["id"], i["source"], i["status"], i["type"], i["title"], i["created_at"]) for i in items]


ALL_FOUR = [
    (CAPTURE_ID, "capture", "pending", "decision", "Verify release checksums", NOW),
    (IMPORT_ID, "import", "pending", "decision", "Verify release archives", NOW),
    (PROP_ID, "proposal", "pending", "fact", "Use pnpm", NOW),
    (SESSION_ID, "session-end", "pending", "decision", "Protected routes validate sessions server-side", NOW),
]


def test_review_lists_every_source_with_one_id_each(loaded: Repo) -> None:
    assert listed(loaded) == ALL_FOUR
    out = ok_json(loaded, "review")
    assert (out["status"], out["count"], out["problems"]) == ("open", 4, [])
    assert ok_json(loaded, "proposals", "list") == out  # one listing, two names
    by_id = {i["id"]: i for i in out["proposals"]}
    assert by_id[PROP_ID]["proposal"]["status"] == "pending" and by_id[SESSION_ID]["proposal"] is None
    assert by_id[SESSION_ID]["path"] == f".memzoi/proposals/pending/{SESSION_ID}.md"
    text = run(loaded, "review").stdout.splitlines()
    assert text[2] == f"{PROP_ID}  pending   proposal    fact           {NOW}  Use pnpm"
    assert len(text) == 4


def test_verbs_take_packet_ids_and_prop_ids(loaded: Repo) -> None:
    # the reported bug: `reject <packet-id>` answered "not a proposal id"
    rejected = ok_json(loaded, "reject", IMPORT_ID, "--reason", "duplicate of an ADR")
    assert (rejected["id"], rejected["source"], rejected["status"], rejected["changed"]) == (
        IMPORT_ID,
        "import",
        "rejected",
        True,
    )
    assert ok_json(loaded, "reject", IMPORT_ID, "--reason", "again")["changed"] is False
    approved = ok_json(loaded, "approve", SESSION_ID)
    assert (approved["status"], approved["changed"], approved["proposal"]) == ("approved", True, None)
    assert ok_json(loaded, "approve", SESSION_ID)["changed"] is False
    assert (loaded.root / f".memzoi/proposals/pending/{SESSION_ID}.md").is_file()  # approved is not applied
    assert ok_json(loaded, "approve", PROP_ID)["status"] == "approved"
    shown = ok_json(loaded, "proposals", "show", CAPTURE_ID)
    assert (shown["item"]["id"], shown["packet"]["title"], shown["withheld"]) == (
        CAPTURE_ID,
        "Verify release checksums",
        False,
    )
    applied = ok_json(loaded, "apply", CAPTURE_ID)  # a packet needs no approval step of its own
    assert (applied["status"], applied["applied"]["record_id"]) == ("applied", "verify-release-checksums")
    bulk = ok_json(loaded, "proposals", "apply", "--all-approved")
    assert [(a["proposal_id"], a["record_id"]) for a in bulk["applied"]] == [
        (PROP_ID, "use-pnpm"),
        (SESSION_ID, "protected-routes-validate-sessions-server-side"),
    ]
    assert listed(loaded) == []
    marks = inbox.state_dir(workspace.open_workspace(loaded.root).layout) / "packets"
    assert list(marks.iterdir()) == []  # a resolved packet's approval is dropped with the apply
    assert run(loaded, "review").stdout == "nothing waits for review\n"
    closed = [(i[0], i[2]) for i in listed(loaded, "--status", "all")]
    assert closed == [(CAPTURE_ID, "applied"), (IMPORT_ID, "rejected"), (PROP_ID, "applied"), (SESSION_ID, "applied")]
    for args, code in (
        (("approve", SESSION_ID), "proposal_applied"),
        (("approve", IMPORT_ID), "proposal_rejected"),
        (("apply", IMPORT_ID), "opposite_outcome"),
        (("reject", PROP_ID, "--reason", "late"), "proposal_applied"),
    ):
        refused = run(loaded, *args, "--json")
        assert (refused.exit_code, json.loads(refused.stdout)["error"]["code"]) == (2, code)
        assert len(refused.stderr.splitlines()) == 1


def test_a_prop_packet_id_and_its_prop_id_name_one_item(loaded: Repo) -> None:
    # an inbox proposal's packet is in pending/ too, but it is listed once, under its prop_ id
    assert [i[0] for i in listed(loaded)].count(PROP_ID) == 1
    out = ok_json(loaded, "reject", PROP_ID, "--reason", "not needed")
    assert (out["proposal"]["status"], out["source"]) == ("rejected", "proposal")


def test_unknown_id_is_one_line_exit_2(loaded: Repo) -> None:
    for args in (("approve", "mem_nothing"), ("reject", "mem_nothing", "--reason", "x"), ("apply", "mem_nothing")):
        result = run(loaded, *args, "--json")
        assert result.exit_code == 2
        assert json.loads(result.stdout)["error"]["code"] == "unknown_proposal"
        assert result.stderr.endswith(f": error: {review.NOT_FOUND}\n") and len(result.stderr.splitlines()) == 1
    missing = run(loaded, "reject", SESSION_ID)  # no reason: refused before anything is looked up
    assert missing.exit_code == 2 and "--reason" in missing.stderr


# --------------------------------------------------------------------------------------------- counts agree

BIN = Path(sys.executable).parent


async def _mcp(root: Path) -> list[dict[str, Any]]:
    """review_inbox, propose_memory (repo-safe, default policy), review_inbox again: their structured results."""
    env = {**os.environ, "MEMZOI_NOW": NOW, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    params = StdioServerParameters(
        command=str(BIN / "git-memzoi"), args=["mcp", "serve", "--project-root", str(root)], env=env, cwd=str(root)
    )
    proposal = {"title": "Pin Node 22", "body": "Use Node 22.", "sensitivity": "repo-safe"}
    calls = [("review_inbox", {}), ("propose_memory", proposal), ("review_inbox", {})]
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return [(await session.call_tool(name, args)).structured_content or {} for name, args in calls]


def test_handoff_doctor_and_mcp_report_the_same_count(loaded: Repo) -> None:
    before, proposed, after = anyio.run(_mcp, loaded.root)
    listed = ok_json(loaded, "review")
    assert listed.pop("ok") is True  # the CLI's envelope; an MCP result carries no ok (isError says it)
    assert before["count"] == 4 and after == listed and after["count"] == 5
    # agents' proposals wait for review under the default policy (humans' are approved)
    assert (proposed["status"], proposed["auto_approved"], proposed["policy"]) == (
        "pending",
        False,
        {"mode": "manual", "source": "default", "path": None},
    )
    handoff = ok_json(loaded, "handoff", "--task", "release")["proposal_inbox"]
    assert handoff == {
        "source": "review",
        "open_total": 5,
        "pending": 5,
        "validated": 0,
        "approved": 0,
        "by_source": {"proposal": 2, "session-end": 1, "capture": 1, "import": 1, "file": 0},
    }
    doctor = json.loads(run(loaded, "doctor", "--json").stdout)
    (check,) = [c for c in doctor["checks"] if c["name"] == "proposals"]
    assert (check["status"], check["message"]) == ("ok", "5 item(s) waiting for review (`git memzoi review`)")
    assert re.match(
        r"^# Memzoi Handoff\nTask: release\nReview inbox: 5 open ", run(loaded, "handoff", "--task", "release").stdout
    )
    assert ok_json(loaded, "review")["count"] == review.pending_count(workspace.open_workspace(loaded.root).layout)
    hook = json.loads(run(loaded, "integrate", "session-context", input="{}").stdout)
    assert "Review: 5 item(s) wait for review: `git memzoi review`" in hook["hookSpecificOutput"]["additionalContext"]


def test_hand_written_and_redacted_packets_wait_too(repo: Repo) -> None:
    from tests.memzoi.proposals.test_proposal_files import packet_text

    assert run(repo, "init").exit_code == 0
    repo.write(".memzoi/proposals/pending/by-hand.md", packet_text("mem_by_hand", title="Hand written"))
    secret = packet_text("mem_secret", title="Opal vault token", body="SENTINEL opal notes.", sensitivity="secret")
    repo.write(".memzoi/proposals/pending/secret-file.md", secret)
    items = ok_json(repo, "review")["proposals"]
    hand, hidden = sorted(items, key=lambda i: i["title"] is None)
    assert (hand["id"], hand["source"], hand["title"], hand["created_at"]) == (
        "mem_by_hand",
        "file",
        "Hand written",
        "2026-07-05T00:00:00Z",
    )
    assert hidden["id"].startswith("redacted-identity-")
    assert (hidden["source"], hidden["title"], hidden["type"], hidden["path"], hidden["sensitivity"]) == (
        "file",
        None,
        None,
        None,
        "secret",
    )
    refused = run(repo, "approve", hidden["id"], "--json")
    assert refused.exit_code == 1 and json.loads(refused.stdout)["error"]["code"] == "repo_sensitivity_required"
    text = run(repo, "review").stdout
    assert f"{hidden['id']}  pending" in text and "[content withheld: secret]" in text
    done = ok_json(repo, "reject", hidden["id"], "--reason", "belongs in local memory")
    assert (done["status"], done["item"]["title"]) == ("rejected", "Redacted non-repo-safe proposal")  # the receipt
    seen = text + refused.stdout + refused.stderr + json.dumps(done)
    assert "Opal" not in seen and "SENTINEL" not in seen and "secret-file" not in seen
    assert [i["id"] for i in ok_json(repo, "review")["proposals"]] == ["mem_by_hand"]


def test_what_waits_is_read_from_pending_only_and_doctor_still_checks_identities(repo: Repo) -> None:
    from tests.memzoi.proposals.test_proposal_files import packet_text

    assert run(repo, "init").exit_code == 0
    repo.write(".memzoi/proposals/pending/one.md", packet_text("mem_one"))
    repo.write(".memzoi/proposals/resolved/applied/one-again.md", packet_text("mem_one", status="applied"))
    waiting = ok_json(repo, "review")
    assert ([i["id"] for i in waiting["proposals"]], waiting["problems"]) == (["mem_one"], [])
    every = ok_json(repo, "review", "--status", "all")
    assert every["proposals"] == waiting["proposals"] and "not unique" in every["problems"][0]
    doctor = json.loads(run(repo, "doctor", "--json").stdout)
    (check,) = [c for c in doctor["checks"] if c["name"] == "proposals"]
    assert check["status"] == "fail" and "not unique" in check["message"]


def test_unknown_id_as_a_process(repo: Repo) -> None:
    import subprocess

    assert run(repo, "init").exit_code == 0
    for args in (["reject", "mem_gone", "--reason", "x"], ["approve", "prop_gone"], ["apply", "mem_gone", "--json"]):
        proc = subprocess.run(
            [str(BIN / "git-memzoi"), "-C", str(repo.root), *args], capture_output=True, text=True, check=False
        )
        assert (proc.returncode, proc.stderr) == (2, f"git-memzoi: error: {review.NOT_FOUND}\n")
    assert json.loads(proc.stdout)["error"]["code"] == "unknown_proposal"
