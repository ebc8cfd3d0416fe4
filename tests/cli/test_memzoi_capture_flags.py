"""``--source-bytes`` and ``--prior-review-file`` of ``git memzoi capture`` through the command line: supplied diffs
planned, reviewed and applied from a file or stdin; a review replacing only the deferred decisions of a prior one,
one hop back; every refusal writes nothing (memzoi-spec.md §9.2, §9.7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from blake3 import blake3
from click.testing import CliRunner

from git_memzoi.cli.memzoi import cli
from tests.support.repos import NOW_TEXT as NOW
from tests.support.repos import Repo, git_range_request, ok_json, run

DIFF = (
    b"diff --git a/docs/ops.md b/docs/ops.md\n"
    b"index 3333333333333333333333333333333333333333..4444444444444444444444444444444444444444 100644\n"
    b"--- a/docs/ops.md\n+++ b/docs/ops.md\n@@ -1,1 +1,3 @@\n # Ops\n"
    b"+## Risk: Cold cache\n+The first CI run after a cache purge takes twice as long.\n"
)
NOTES = "## Fact: Python floor\nPython 3.11 or newer.\n\n## Decision: Lock\nUse fcntl.flock.\n"
LOCAL = ".git/memzoi/local/capture"


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and (".git" not in p.relative_to(root).parts or p.is_relative_to(root / ".git/memzoi/local"))
        and p.name != "lifecycle.lock"
    }


def supplied_request(data: bytes) -> dict[str, Any]:
    locator = {
        "kind": "supplied_bytes",
        "display_name": "reviewed.diff",
        "media_type": "text/x-diff",
        "byte_length": len(data),
        "source_content_hash": "blake3:" + blake3(data).hexdigest(),
    }
    git = {"repository": ".", "base": "sha1:" + "3" * 40, "head": "sha1:" + "4" * 40}
    return {
        "schema": "memzoi/capture-request-v1",
        "sources": [{"source_id": "diff", "locator": locator, "media_type": "text/x-diff", "git": git}],
        "extractor": {"profile": "git-change-deterministic"},
    }


def stdin_run(repo: Repo, data: bytes, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["-C", str(repo.root), *args], input=data, env={"MEMZOI_NOW": NOW})
    assert "Traceback" not in result.output + result.stderr and result.exit_code in (0, 1, 2)
    return result


def code(result: Any) -> str:
    return json.loads(result.stdout)["error"]["code"]


def test_supplied_bytes_from_a_file_and_stdin(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    repo.write("req.json", json.dumps(supplied_request(DIFF)))
    (repo.root / "reviewed.diff").write_bytes(DIFF)
    plan = ok_json(
        repo,
        "capture",
        "plan",
        "--request-file",
        "req.json",
        "--source-bytes",
        "reviewed.diff",
        "--output",
        "plan.json",
    )
    (candidate,) = plan["candidates"]
    assert (candidate["memory"]["title"], candidate["action"]["kind"]) == ("Cold cache", "create_proposal")
    assert candidate["evidence"][0]["span"] == {"byte_start": 194, "byte_end": 274, "line_start": 7, "line_end": 8}
    repo.write(
        "decisions.json",
        json.dumps(
            {
                "schema": "memzoi/capture-review-input-v1",
                "plan_id": plan["plan_id"],
                "decisions": [{"candidate_id": candidate["candidate_id"], "outcome": "accept"}],
            }
        ),
    )
    missing = run(
        repo,
        "capture",
        "review",
        "--plan-file",
        "plan.json",
        "--decisions-file",
        "decisions.json",
        "--reviewed-by",
        "zoki",
        "--reviewed-at",
        NOW,
        "--json",
    )
    assert missing.exit_code == 2 and code(missing) == "supplied_bytes_missing"
    review = stdin_run(
        repo,
        DIFF,
        "capture",
        "review",
        "--plan-file",
        "plan.json",
        "--decisions-file",
        "decisions.json",
        "--reviewed-by",
        "zoki",
        "--reviewed-at",
        NOW,
        "--source-bytes",
        "-",
        "--output",
        "review.json",
        "--json",
    )
    assert review.exit_code == 0, review.stderr
    rev = json.loads(review.stdout)
    changed = DIFF.replace(b"twice", b"three times")
    (repo.root / "changed.diff").write_bytes(changed)
    before = files(repo.root)
    stale = run(
        repo,
        "capture",
        "apply",
        "--plan-file",
        "plan.json",
        "--review-file",
        "review.json",
        "--plan-id",
        plan["plan_id"],
        "--review-id",
        rev["review_id"],
        "--source-bytes",
        "changed.diff",
        "--json",
    )
    assert stale.exit_code == 2 and code(stale) == "supplied_bytes_mismatch" and files(repo.root) == before
    applied = ok_json(
        repo,
        "capture",
        "apply",
        "--plan-file",
        "plan.json",
        "--review-file",
        "review.json",
        "--plan-id",
        plan["plan_id"],
        "--review-id",
        rev["review_id"],
        "--source-bytes",
        "reviewed.diff",
    )
    (write,) = applied["writes"]
    assert write["kind"] == "proposal_file" and (repo.root / write["path"]).is_file()


def test_source_bytes_misuse_is_refused(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    repo.write("notes/a.md", NOTES)
    (repo.root / "reviewed.diff").write_bytes(DIFF)
    with_source = run(repo, "capture", "plan", "--source", "notes/a.md", "--source-bytes", "reviewed.diff", "--json")
    assert with_source.exit_code == 2 and code(with_source) == "invalid_capture_request"
    request = {
        "schema": "memzoi/capture-request-v1",
        "sources": [
            {"source_id": "a", "locator": {"kind": "project_path", "path": "notes/a.md"}, "media_type": "text/markdown"}
        ],
        "extractor": {"profile": "markdown-deterministic"},
    }
    repo.write("req.json", json.dumps(request))
    unexpected = run(repo, "capture", "plan", "--request-file", "req.json", "--source-bytes", "reviewed.diff", "--json")
    assert unexpected.exit_code == 2 and code(unexpected) == "supplied_bytes_unexpected"
    (repo.root / "big.diff").write_bytes(b"x" * (2 * 1024 * 1024 + 1))
    repo.write("req2.json", json.dumps(supplied_request(DIFF)))
    big = run(repo, "capture", "plan", "--request-file", "req2.json", "--source-bytes", "big.diff", "--json")
    assert big.exit_code == 2 and code(big) == "source_not_found"


def _review(
    repo: Repo,
    plan: dict[str, Any],
    decisions: list[dict[str, Any]],
    name: str,
    prior: str | None = None,
    prior_id: str | None = None,
    out: str = LOCAL,
) -> Any:
    body: dict[str, Any] = {
        "schema": "memzoi/capture-review-input-v1",
        "plan_id": plan["plan_id"],
        "decisions": decisions,
    }
    if prior_id is not None:
        body["prior_review_id"] = prior_id
    repo.write(f"{LOCAL}/{name}-decisions.json", json.dumps(body))
    extra = ["--prior-review-file", prior] if prior else []
    return run(
        repo,
        "capture",
        "review",
        "--plan-file",
        f"{LOCAL}/plan.json",
        "--decisions-file",
        f"{LOCAL}/{name}-decisions.json",
        "--reviewed-by",
        "zoki",
        "--reviewed-at",
        NOW,
        *extra,
        "--output",
        f"{out}/{name}.json",
        "--json",
    )


def test_a_review_replaces_only_deferred_decisions_of_its_prior(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    repo.write("notes/a.md", NOTES)
    plan = ok_json(repo, "capture", "plan", "--source", "notes/a.md")
    assert plan["data_class"] == "repo_safe"  # typed repo sections route to proposals (issue 15)
    repo.write(f"{LOCAL}/plan.json", json.dumps(plan))  # where the other artifacts of this test are
    fact, lock = plan["candidates"]

    def edit(c: dict[str, Any]) -> dict[str, Any]:
        return {
            "candidate_id": c["candidate_id"],
            "outcome": "edit",
            "memory": c["memory"],
            "requested_destination": "repo",
            "content_class": "general_repo_knowledge",
        }

    defer = {"candidate_id": lock["candidate_id"], "outcome": "defer"}
    first = _review(repo, plan, [edit(fact), defer], "r1")
    assert first.exit_code == 0, first.stderr
    r1 = json.loads(first.stdout)
    assert "prior_review_id" not in r1 and r1["data_class"] == "private"
    before = files(repo.root)
    changed = _review(
        repo,
        plan,
        [{"candidate_id": fact["candidate_id"], "outcome": "reject"}, edit(lock)],
        "bad",
        f"{LOCAL}/r1.json",
        r1["review_id"],
    )
    assert changed.exit_code == 2 and code(changed) == "invalid_prior_review"
    unnamed = _review(repo, plan, [edit(fact), edit(lock)], "bad2", f"{LOCAL}/r1.json")
    assert unnamed.exit_code == 2 and code(unnamed) == "invalid_prior_review"
    assert set(files(repo.root)) - set(before) == {f"{LOCAL}/bad-decisions.json", f"{LOCAL}/bad2-decisions.json"}
    second = _review(repo, plan, [edit(fact), edit(lock)], "r2", f"{LOCAL}/r1.json", r1["review_id"], "reviews")
    assert second.exit_code == 0, second.stderr
    r2 = json.loads(second.stdout)
    assert r2["prior_review_id"] == r1["review_id"] and r2["data_class"] == "repo_safe"
    third = _review(repo, plan, [edit(fact), edit(lock)], "r3", "reviews/r2.json", r2["review_id"], "reviews")
    assert third.exit_code == 2 and code(third) == "invalid_prior_review"  # one hop only
    args = [
        "capture",
        "apply",
        "--plan-file",
        f"{LOCAL}/plan.json",
        "--review-file",
        "reviews/r2.json",
        "--plan-id",
        plan["plan_id"],
        "--review-id",
        r2["review_id"],
    ]
    before = files(repo.root)
    without = run(repo, *args, "--json")
    assert without.exit_code == 2 and code(without) == "invalid_prior_review" and files(repo.root) == before
    applied = ok_json(repo, *args, "--prior-review-file", f"{LOCAL}/r1.json")
    assert [w["kind"] for w in applied["writes"]] == ["proposal_file", "proposal_file"]


def test_a_broken_yaml_request_is_one_line_exit_2(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    for n, text in enumerate(("sources: [\n", "- a\n", "schema: [1, 2\n")):
        repo.write(f"req{n}.yaml", text)
        result = run(repo, "capture", "plan", "--request-file", f"req{n}.yaml", "--json")
        assert result.exit_code == 2 and code(result) == "invalid_capture_request", text
        plain = run(repo, "capture", "plan", "--request-file", f"req{n}.yaml")
        assert plain.exit_code == 2 and len(plain.stderr.strip().splitlines()) == 1 and "internal" not in plain.stderr


def test_a_local_user_email_does_not_block_a_git_range_but_a_credential_does(repo: Repo) -> None:
    repo.commit("base", **{"docs/a.md": "# A\n"})
    base = repo.head()
    repo.commit("head", **{"docs/a.md": "# A\n\n## Decision: Pin ranges\nUse pinned ids.\n"})
    head = repo.head()
    assert run(repo, "init").exit_code == 0
    repo.git("config", "user.email", "someone@example.com")
    repo.write("range.json", json.dumps(git_range_request(base, head)))
    plan = ok_json(repo, "capture", "plan", "--request-file", "range.json")
    assert [c["memory"]["title"] for c in plan["candidates"]] == ["Pin ranges"]
    canary = "own-config-canary-" + "7" * 12
    repo.git("config", "http.extraheader", f"password: {canary}")
    blocked = run(repo, "capture", "plan", "--request-file", "range.json", "--json")
    assert blocked.exit_code == 2 and code(blocked) == "prohibited_policy_input"
    message = json.loads(blocked.stdout)["error"]["message"]
    assert "credential_assignment" in message and "line" in message and canary not in blocked.output + blocked.stderr
