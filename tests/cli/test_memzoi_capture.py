"""``git memzoi capture plan|review|apply`` in-process through click's CliRunner against real repositories."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

from tests.support.repos import NOW_TEXT as NOW
from tests.support.repos import Repo, ok_json, run

SOURCE = "## Decision: Verify release archives\nCheck the SHA-256 before extracting.\n"


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and (".git" not in p.relative_to(root).parts or p.is_relative_to(root / ".git/memzoi/local"))
        and p.name != "lifecycle.lock"
    }


def test_plan_review_apply_round_trip(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    repo.write("notes/findings.md", SOURCE)
    before = files(repo.root)
    plan = ok_json(
        repo,
        "capture",
        "plan",
        "--source",
        "notes/findings.md",
        "--source-id",
        "findings",
        "--output",
        "capture-plan.json",
    )
    # a typed repo section routes to a pending proposal: the plan is repo-safe, saved outside .memzoi/
    assert plan["data_class"] == "repo_safe" and plan["candidates"][0]["action"]["kind"] == "create_proposal"
    assert set(files(repo.root)) - set(before) == {"capture-plan.json"}
    assert {"ok": True, **json.loads((repo.root / "capture-plan.json").read_text())} == plan  # saved: no envelope
    (candidate,) = plan["candidates"]
    assert candidate["evidence"][0]["span"] == {"byte_start": 0, "byte_end": 74, "line_start": 1, "line_end": 2}
    repo.write(
        ".git/memzoi/local/capture/decisions.json",
        json.dumps(
            {
                "schema": "memzoi/capture-review-input-v1",
                "plan_id": plan["plan_id"],
                "decisions": [
                    {
                        "candidate_id": candidate["candidate_id"],
                        "outcome": "edit",
                        "memory": candidate["memory"],
                        "requested_destination": "repo",
                        "content_class": "general_repo_knowledge",
                    }
                ],
            }
        ),
    )
    rev = ok_json(
        repo,
        "capture",
        "review",
        "--plan-file",
        "capture-plan.json",
        "--decisions-file",
        ".git/memzoi/local/capture/decisions.json",
        "--reviewed-by",
        "zoki",
        "--reviewed-at",
        NOW,
        "--output",
        "capture-review.json",
    )
    assert rev["data_class"] == "repo_safe" and (repo.root / "capture-review.json").is_file()
    result = ok_json(
        repo,
        "capture",
        "apply",
        "--plan-file",
        "capture-plan.json",
        "--review-file",
        "capture-review.json",
        "--plan-id",
        plan["plan_id"],
        "--review-id",
        rev["review_id"],
        "--actor",
        "zoki",
    )
    (write,) = result["writes"]
    assert (result["schema"], write["kind"]) == ("memzoi/capture-apply-result-v1", "proposal_file")
    assert write["path"] == f".memzoi/proposals/pending/{write['proposal_id']}.md"
    listed = ok_json(repo, "proposal-files", "list")
    assert write["proposal_id"] in json.dumps(listed)
    again = run(
        repo,
        "capture",
        "apply",
        "--plan-file",
        "capture-plan.json",
        "--review-file",
        "capture-review.json",
        "--plan-id",
        plan["plan_id"],
        "--review-id",
        rev["review_id"],
        "--json",
    )
    assert again.exit_code == 2 and json.loads(again.stdout)["error"]["code"] == "stale_capture_plan"


def test_private_plan_output_outside_runtime_is_refused(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    repo.write("notes/findings.md", "## Preference: Terse answers\nPrefer short replies.\n")  # local memory
    result = run(repo, "capture", "plan", "--source", "notes/findings.md", "--output", "plan.json", "--json")
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "unsafe_output_path"
    assert not (repo.root / "plan.json").exists()


def test_blocked_plan_prints_only_safe_diagnostics(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    rng = random.Random(25)
    token = "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    repo.write("ops/runbook.md", f"## Procedure: Rotate\nSet DEPLOY_TOKEN={token} first.\n")
    result = run(repo, "capture", "plan", "--source", "ops/runbook.md")
    assert result.exit_code == 1  # the redacted plan is printed; the privacy gate refused it
    assert result.stdout.splitlines()[1:] == [
        "  prohibited_content_detected at line 2 (GitHub Token, credential_assignment)"
    ]
    out = result.stdout + result.stderr
    assert not any(token[i : i + 8] in out for i in range(len(token) - 7))


def test_bad_source_is_a_usage_error(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    result = run(repo, "capture", "plan", "--source", "../escape.md", "--json")
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "unsafe_source_path"


def test_review_defaults_to_the_git_user_and_now(repo: Repo) -> None:
    """The command the post-merge hint prints runs as printed: no --reviewed-by, no --reviewed-at (issue 20)."""
    assert run(repo, "init").exit_code == 0
    repo.write("notes/findings.md", SOURCE)
    plan = ok_json(repo, "capture", "plan", "--source", "notes/findings.md", "--output", "capture-plan.json")
    (candidate,) = plan["candidates"]
    decision = {"candidate_id": candidate["candidate_id"], "outcome": "accept"}
    body = {"schema": "memzoi/capture-review-input-v1", "plan_id": plan["plan_id"], "decisions": [decision]}
    repo.write("decisions.json", json.dumps(body))
    review = ("capture", "review", "--plan-file", "capture-plan.json", "--decisions-file", "decisions.json")
    repo.git("config", "user.name", "Ada Reviewer")
    rev = ok_json(repo, *review)
    assert (rev["reviewed_by"], rev["reviewed_at"]) == ("Ada Reviewer", NOW)
