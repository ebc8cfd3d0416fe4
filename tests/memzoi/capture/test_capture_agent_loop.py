"""Issue 15, "Capture that agents can use": markdown 1.1.0 routing by the seed's heading table, a fenced
credential blocking its candidate (not the plan), rejected content remembered by its content hash, and the
tool's own generated blocks never offered as candidates. Real repositories; secrets built at test time."""

from __future__ import annotations

import json
import random
import string
from typing import Any

import pytest

from git_memzoi.memzoi.capture import decisions as capture_decisions
from git_memzoi.memzoi.capture import plan as capture
from git_memzoi.memzoi.capture import review as capture_review
from git_memzoi.memzoi.capture.profiles.markdown import REDACTED, CaptureError
from git_memzoi.memzoi.records import okf
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import Repo, ok_json, run, tree

AT = "2026-07-10T12:00:00Z"


def token(seed: int) -> str:
    rng = random.Random(seed)
    return "sk-live-" + "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(32))


def readme(secret: str) -> str:
    """A real project's README: prose, a typed decision, and a typed procedure with a fenced example holding a
    credential-shaped token on line 11."""
    return (
        "# Billing\n"
        "\n"
        "## Decision: Settle in one transaction\n"
        "All settlement steps commit together or not at all.\n"
        "\n"
        "## Procedure: Configure the API client\n"
        "Export the token before running the client:\n"
        "\n"
        "```sh\n"
        "# example only\n"
        f'export API_TOKEN="{secret}"\n'
        "```\n"
    )


def review_and_apply(ctx: Workspace, plan: dict[str, Any], outcomes: dict[str, str]) -> dict[str, Any]:
    rev = capture_review.review(
        ctx,
        plan,
        {
            "schema": "memzoi/capture-review-input-v1",
            "plan_id": plan["plan_id"],
            "decisions": [{"candidate_id": cid, "outcome": o} for cid, o in outcomes.items()],
        },
        reviewed_by="zoki",
        reviewed_at=AT,
    )
    return capture_review.apply(ctx, plan, rev, plan_id=plan["plan_id"], review_id=rev["review_id"])


def test_a_fenced_credential_blocks_its_candidate_not_the_plan(repo: Repo, ctx: Workspace) -> None:
    secret = token(15)
    repo.write("README.md", readme(secret))
    before = tree(repo.root)
    plan = capture.plan(ctx, "README.md", "readme")
    assert tree(repo.root) == before
    assert (plan["status"], plan["data_class"]) == ("ready", "repo_safe")
    decision, procedure = plan["candidates"]
    assert decision["action"]["kind"] == "create_proposal"
    assert procedure["action"] == {
        "kind": "blocked",
        "reason_code": "prohibited_content_detected",
        "line_start": 11,
        "detectors": ["api_key", "credential_assignment"],
    }
    assert (procedure["classification"]["destination"], procedure["classification"]["sensitivity"]) == (
        "blocked",
        "blocked",
    )
    assert procedure["memory"]["title"] == "Configure the API client"
    assert procedure["memory"]["body"] == REDACTED and procedure["evidence"][0]["text"] == REDACTED
    assert plan["diagnostics"] == [
        {
            "code": "prohibited_content_detected",
            "source_id": "readme",
            "line_start": 11,
            "path": "README.md",
            "detectors": ["api_key", "credential_assignment"],
            "classes": ["credential"],
            "candidate_id": procedure["candidate_id"],
        }
    ]
    assert (plan["summary"]["blocked"], plan["summary"]["create_proposals"]) == (1, 1)
    text = json.dumps(plan)
    assert secret not in text and secret[8:20] not in text
    # the blocked candidate can be rejected (or deferred), never accepted or edited; the decision still applies
    with pytest.raises(CaptureError) as err:
        review_and_apply(ctx, plan, {decision["candidate_id"]: "accept", procedure["candidate_id"]: "accept"})
    assert err.value.code == "invalid_review"
    result = review_and_apply(ctx, plan, {decision["candidate_id"]: "accept", procedure["candidate_id"]: "reject"})
    assert [w["kind"] for w in result["writes"]] == ["proposal_file"]
    assert secret not in "".join(p.read_text() for p in (repo.root / ".memzoi").rglob("*.md"))


def test_a_credential_in_prose_still_blocks_the_whole_plan(repo: Repo, ctx: Workspace) -> None:
    secret = token(16)
    repo.write("README.md", f"## Procedure: Deploy\nRun with API_TOKEN={secret} set.\n")
    plan = capture.plan(ctx, "README.md")
    assert (plan["status"], plan["candidates"]) == ("blocked", [])
    assert secret not in json.dumps(plan)


def test_the_cli_names_the_file_line_and_rule_of_a_blocked_candidate(repo: Repo) -> None:
    secret = token(17)
    assert run(repo, "init").exit_code == 0
    repo.write("README.md", readme(secret))
    result = run(repo, "capture", "plan", "--source", "README.md")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "  prohibited_content_detected at README.md:11 (api_key, credential_assignment)" in lines
    assert any(line.split()[1:3] == ["blocked", "procedure:"] for line in lines), lines
    assert secret not in result.output + result.stderr


def test_a_rejected_candidate_returns_as_previously_rejected(repo: Repo, ctx: Workspace) -> None:
    repo.write("notes/n.md", "## Fact: Old deploy\nWe deployed by hand.\n\n## Decision: Deploy\nUse the script.\n")
    plan = capture.plan(ctx, "notes/n.md")
    old, deploy = plan["candidates"]
    assert [old["action"]["kind"], deploy["action"]["kind"]] == ["create_proposal", "create_proposal"]
    result = review_and_apply(ctx, plan, {old["candidate_id"]: "reject", deploy["candidate_id"]: "defer"})
    assert result["writes"] == [] and result["decisions_remembered"] == 1
    ledger = json.loads(ctx.layout.capture_decisions.read_text())
    key = capture_decisions.memory_hash("fact", "Old deploy", "We deployed by hand.")
    assert ledger == {
        "schema": "memzoi/capture-decisions-v1",
        "decisions": {key: {"outcome": "reject", "review_id": result["review_id"], "reviewed_at": AT}},
    }
    assert ctx.layout.capture_decisions.is_relative_to(ctx.layout.local)  # private, never committed
    # same content, moved elsewhere in the file: still recognised by its content hash
    repo.write(
        "notes/n.md", "# Notes\n\n## Decision: Deploy\nUse the script.\n\n## Fact: Old deploy\nWe deployed by hand.\n"
    )
    again = capture.plan(ctx, "notes/n.md")
    kinds = {c["memory"]["title"]: c["action"] for c in again["candidates"]}
    assert kinds["Old deploy"] == {
        "kind": "previously_rejected",
        "reason_code": "rejected_in_review",
        "review_id": result["review_id"],
        "reviewed_at": AT,
    }
    assert kinds["Deploy"]["kind"] == "create_proposal"  # deferred: offered again
    assert again["summary"]["previously_rejected"] == 1
    # a reviewer may change their mind: an edit overrides the remembered rejection
    old_again = next(c for c in again["candidates"] if c["memory"]["title"] == "Old deploy")
    rev = capture_review.review(
        ctx,
        again,
        {
            "schema": "memzoi/capture-review-input-v1",
            "plan_id": again["plan_id"],
            "decisions": [
                {
                    "candidate_id": old_again["candidate_id"],
                    "outcome": "edit",
                    "memory": old_again["memory"],
                    "requested_destination": "repo",
                },
                {"candidate_id": kinds_id(again, "Deploy"), "outcome": "reject"},
            ],
        },
        reviewed_by="zoki",
        reviewed_at=AT,
    )
    with pytest.raises(CaptureError):  # accepting previously rejected content needs an explicit edit
        review_and_apply(ctx, again, {old_again["candidate_id"]: "accept", kinds_id(again, "Deploy"): "reject"})
    applied = capture_review.apply(ctx, again, rev, plan_id=again["plan_id"], review_id=rev["review_id"])
    assert [w["kind"] for w in applied["writes"]] == ["proposal_file"]
    third = {c["memory"]["title"]: c["action"]["kind"] for c in capture.plan(ctx, "notes/n.md")["candidates"]}
    assert third == {"Deploy": "previously_rejected", "Old deploy": "duplicate"}


def kinds_id(plan: dict[str, Any], title: str) -> str:
    return next(c["candidate_id"] for c in plan["candidates"] if c["memory"]["title"] == title)


def test_an_unreadable_decision_memory_is_empty_never_fatal(repo: Repo, ctx: Workspace) -> None:
    repo.write("notes/n.md", "## Fact: Old deploy\nWe deployed by hand.\n")
    repo.write(ctx.layout.capture_decisions.relative_to(repo.root).as_posix(), "{not json")
    (only,) = capture.plan(ctx, "notes/n.md")["candidates"]
    assert only["action"]["kind"] == "create_proposal"


def test_the_tools_own_generated_blocks_are_never_candidates(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    repo.write("AGENTS.md", "# Project\n\n## Decision: Keep handlers small\nOne handler per file.\n")
    assert run(repo, "integrate", "instructions", "--profile", "codex", "--file", "AGENTS.md").exit_code == 0
    record = okf.Record(
        id="d1",
        type="decision",
        lane="semantic",
        title="Settle atomically",
        scope="repo",
        visibility="repo",
        content_class="general_repo_knowledge",
        status="active",
        confidence=1.0,
        timestamp="2026-07-01T00:00:00Z",
        body="All settlement steps commit together.",
        origin={"origin_key": "repository-record:d1", "route": "repository_materialization"},
        source="issue",
        source_ref="issue://d1",
    )
    repo.write(".memzoi/records/d1.md", okf.render(record))
    assert run(repo, "export", "agents-md", "--file", "AGENTS.md").exit_code == 0
    text = (repo.root / "AGENTS.md").read_text()
    assert "<!-- memzoi:start -->" in text and "BEGIN memzoi agents-md projection" in text
    plan = ok_json(repo, "capture", "plan", "--source", "AGENTS.md")
    (only,) = plan["candidates"]
    assert (only["memory"]["title"], only["memory"]["body"]) == ("Keep handlers small", "One handler per file.")
    assert "memzoi" not in only["evidence"][0]["text"]
    assert only["evidence"][0]["span"]["line_end"] == 5
    # the hand-written part of an untyped file is its candidate; the block is not part of it
    repo.write("CLAUDE.md", "Use tabs.\n")
    assert run(repo, "integrate", "instructions", "--profile", "claude", "--file", "CLAUDE.md").exit_code == 0
    (note,) = ok_json(repo, "capture", "plan", "--source", "CLAUDE.md")["candidates"]
    assert note["memory"]["body"] == "Use tabs." and note["action"]["kind"] == "no_write"
    # a whole generated projection yields nothing
    assert run(repo, "export", "agents-md").exit_code == 0
    projection = repo.root / ".memzoi/exports/AGENTS.memory.md"
    repo.write("docs/AGENTS-copy.md", projection.read_text())
    copied = ok_json(repo, "capture", "plan", "--source", "docs/AGENTS-copy.md")
    assert copied["candidates"] == [] and [d["code"] for d in copied["diagnostics"]] == [
        "generated_projection_excluded"
    ]
    # a file of only the tool's block offers nothing
    repo.write("ONLY.md", "")
    assert run(repo, "integrate", "instructions", "--profile", "codex", "--file", "ONLY.md").exit_code == 0
    assert ok_json(repo, "capture", "plan", "--source", "ONLY.md")["candidates"] == []


def test_every_typed_heading_routes_as_the_seed_table_says(repo: Repo, ctx: Workspace) -> None:
    """Seed "Deterministic Markdown profile": the heading prefix gives type, lane, destination and sensitivity."""
    table = [
        ("Fact", "fact", "semantic", "repo"),
        ("Decision", "decision", "semantic", "repo"),
        ("Procedure", "procedure", "procedural", "repo"),
        ("Warning", "warning", "semantic", "repo"),
        ("Failed attempt", "failed_attempt", "episodic", "repo"),
        ("Risk", "risk", "semantic", "repo"),
        ("Preference", "preference", "semantic", "local"),
        ("Episode", "episode", "session", "session"),
    ]
    repo.write("notes/all.md", "".join(f"## {p}: Item {n}\nBody {n}.\n\n" for n, (p, *_) in enumerate(table)))
    plan = capture.plan(ctx, "notes/all.md")
    got = [
        (
            c["memory"]["type"],
            c["memory"]["lane"],
            c["classification"]["destination"],
            c["classification"]["sensitivity"],
            c["action"].get("route") or c["action"]["kind"],
        )
        for c in plan["candidates"]
    ]
    assert got == [
        (
            t,
            lane,
            dest,
            "repo-safe" if dest == "repo" else "private",
            "create_proposal" if dest == "repo" else f"runtime_{dest}",
        )
        for _, t, lane, dest in table
    ]
    assert (plan["data_class"], plan["summary"]["create_proposals"], plan["summary"]["runtime_writes"]) == (
        "private",
        6,
        2,
    )


def test_a_stale_apply_remembers_nothing(repo: Repo, ctx: Workspace) -> None:
    repo.write("notes/n.md", "## Fact: Old deploy\nWe deployed by hand.\n")
    plan = capture.plan(ctx, "notes/n.md")
    (only,) = plan["candidates"]
    rev = capture_review.review(
        ctx,
        plan,
        {
            "schema": "memzoi/capture-review-input-v1",
            "plan_id": plan["plan_id"],
            "decisions": [{"candidate_id": only["candidate_id"], "outcome": "reject"}],
        },
        reviewed_by="zoki",
        reviewed_at=AT,
    )
    repo.write("notes/n.md", "## Fact: Old deploy\nWe deployed by hand, once.\n")
    with pytest.raises(CaptureError) as err:
        capture_review.apply(ctx, plan, rev, plan_id=plan["plan_id"], review_id=rev["review_id"])
    assert err.value.code == "stale_capture_plan" and not ctx.layout.capture_decisions.exists()


def test_an_unknown_extractor_version_is_exit_2(repo: Repo) -> None:
    import subprocess
    import sys
    from pathlib import Path

    assert run(repo, "init").exit_code == 0
    repo.write("notes/n.md", "## Fact: A\nB.\n")
    repo.write(
        "req.json",
        json.dumps(
            {
                "schema": "memzoi/capture-request-v1",
                "sources": [
                    {
                        "source_id": "n",
                        "locator": {"kind": "project_path", "path": "notes/n.md"},
                        "media_type": "text/markdown",
                    }
                ],
                "extractor": {"profile": "markdown-deterministic", "version": "9.9.9"},
            }
        ),
    )
    binary = str(Path(sys.executable).parent / "git-memzoi")
    proc = subprocess.run(
        [binary, "-C", str(repo.root), "capture", "plan", "--request-file", "req.json", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and json.loads(proc.stdout)["error"]["code"] == "unsupported_extractor_version"
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
