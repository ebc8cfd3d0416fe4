"""Markdown capture end to end against real repositories: plan (read-only, deterministic), review, apply (zero
writes on any drift), the prohibited-content block (BR-25, BR-26) and bad inputs. Secrets are built at test time
from a seeded RNG; none is committed."""

from __future__ import annotations

import json
import os
import random
import string
from typing import Any

import pytest

from git_memzoi.memzoi.capture import artifacts as capture_artifacts
from git_memzoi.memzoi.capture import plan as capture
from git_memzoi.memzoi.capture import review as capture_review
from git_memzoi.memzoi.capture.profiles.markdown import CaptureError
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import Repo, tree

TYPED = (
    "# Capture evaluation\n\n## Fact: Deterministic capture plans\nIdentical sources produce identical capture "
    "plans.\n\n## Procedure: Review capture candidates\nReview repo candidates before applying proposal files.\n"
)
TYPED_HASH = "blake3:dd96c45e68baa7b3e15f89c5cfa17fb6ddcbff7b35445e0471dfba80fbdf856b"
PRIVATE = TYPED + "\n## Preference: Terse answers\nPrefer short replies.\n"


def request(path: str, version: str | None = None) -> dict[str, Any]:
    """The markdown request of ``path``, pinned to an extractor ``version`` when given."""
    extractor = {"profile": "markdown-deterministic", **({"version": version} if version else {})}
    return {
        "schema": "memzoi/capture-request-v1",
        "sources": [
            {"source_id": "source-1", "locator": {"kind": "project_path", "path": path}, "media_type": "text/markdown"}
        ],
        "extractor": extractor,
    }


def edit(candidate: dict[str, Any], destination: str = "repo") -> dict[str, Any]:
    return {
        "candidate_id": candidate["candidate_id"],
        "outcome": "edit",
        "memory": candidate["memory"],
        "requested_destination": destination,
    }


def decisions(plan: dict[str, Any], *items: dict[str, Any]) -> dict[str, Any]:
    return {"schema": "memzoi/capture-review-input-v1", "plan_id": plan["plan_id"], "decisions": list(items)}


def test_typed_plan_has_exact_evidence_and_writes_nothing(repo: Repo, ctx: Workspace) -> None:
    repo.write("notes/typed.md", TYPED)
    before = tree(repo.root)
    plan = capture.plan(ctx, "notes/typed.md", "source-1")
    assert tree(repo.root) == before
    assert plan == capture.plan(ctx, "notes/typed.md", "source-1")
    assert plan["plan_id"].startswith("capture_") and len(plan["plan_id"]) == 40
    assert (plan["status"], plan["data_class"], plan["diagnostics"]) == ("ready", "repo_safe", [])
    assert plan["summary"] == {
        "sources": 1,
        "candidates": 2,
        "create_proposals": 2,
        "runtime_writes": 0,
        "duplicates": 0,
        "conflicts": 0,
        "needs_review": 0,
        "blocked": 0,
        "previously_rejected": 0,
    }
    assert plan["extractor"]["version"] == "1.1.0"
    assert plan["sources"] == [
        {
            "source_id": "source-1",
            "locator": {"kind": "project_path", "path": "notes/typed.md"},
            "media_type": "text/markdown",
            "byte_length": 206,
            "source_content_hash": TYPED_HASH,
        }
    ]
    fact, procedure = plan["candidates"]
    assert fact["memory"] == {
        "type": "fact",
        "lane": "semantic",
        "title": "Deterministic capture plans",
        "body": "Identical sources produce identical capture plans.",
        "scope": {"kind": "repo", "id": None, "paths": ["notes/typed.md"]},
        "tags": [],
    }
    evidence = fact["evidence"][0]
    assert evidence["span"] == {"byte_start": 22, "byte_end": 111, "line_start": 3, "line_end": 5}
    assert evidence["heading_path"] == ["Capture evaluation", "Fact: Deterministic capture plans"]
    assert evidence["text"] == TYPED.encode()[22:111].decode()
    assert procedure["evidence"][0]["span"] == {"byte_start": 111, "byte_end": 206, "line_start": 6, "line_end": 7}
    assert procedure["memory"]["lane"] == "procedural"
    # the seed's heading table routes typed repo sections to pending proposals (issue 15)
    assert fact["action"] == {
        "kind": "create_proposal",
        "proposal_id": capture.proposal_id("Deterministic capture plans", fact["candidate_id"]),
    }
    assert (fact["classification"]["destination"], fact["classification"]["sensitivity"]) == ("repo", "repo-safe")
    assert fact["classification"]["policy"] == {"suggested_destination": "repo"}


def test_upstream_extractor_1_0_0_keeps_every_typed_section_in_review(repo: Repo, ctx: Workspace) -> None:
    """A request pinning markdown 1.0.0 (as upstream's capture-v1 corpus does) gets upstream's routing."""
    repo.write("notes/typed.md", TYPED)
    plan = capture.plan_request(ctx, request("notes/typed.md", "1.0.0"))
    assert (plan["data_class"], plan["extractor"]["version"]) == ("private", "1.0.0")
    assert (
        plan["extractor"]["configuration_hash"]
        != capture.plan(ctx, "notes/typed.md")["extractor"]["configuration_hash"]
    )
    assert [c["action"] for c in plan["candidates"]] == [{"kind": "no_write", "reason_code": "needs_review"}] * 2
    assert plan["candidates"][0]["classification"]["policy"] == {"suggested_destination": "repo"}
    assert (plan["summary"]["needs_review"], plan["summary"]["create_proposals"]) == (2, 0)
    for version, code in ((2, "invalid_capture_request"), ("9.9.9", "unsupported_extractor_version")):
        bad = request("notes/typed.md")
        bad["extractor"]["version"] = version
        with pytest.raises(CaptureError) as err:
            capture.plan_request(ctx, bad)
        assert err.value.code == code


def test_mixed_and_untyped_documents(repo: Repo, ctx: Workspace) -> None:
    repo.write(
        "notes/mixed.md",
        "Unclassified preamble.\n\n# Fact: Supported capture candidate\nOnly the typed "
        "section becomes a candidate.\n\n# Temporary notes\nThis implementation chatter must not become "
        "durable memory.\n",
    )
    plan = capture.plan(ctx, "notes/mixed.md", "source-1")
    assert [c["memory"]["title"] for c in plan["candidates"]] == ["Supported capture candidate"]
    assert plan["candidates"][0]["evidence"][0]["span"] == {
        "byte_start": 24,
        "byte_end": 105,
        "line_start": 3,
        "line_end": 5,
    }
    assert plan["diagnostics"] == [
        {"code": "unsupported_markdown_content", "source_id": "source-1", "line_start": 1},
        {"code": "unsupported_markdown_content", "source_id": "source-1", "line_start": 6},
    ]
    repo.write("notes/plain.md", "# General note\nUse deterministic cache keys.\n```\n# Fact: not a heading\n```\n")
    (only,) = capture.plan(ctx, "notes/plain.md", "source-1")["candidates"]
    assert only["memory"]["title"] == "General note" and only["evidence"][0]["section_kind"] == "unclassified"
    assert only["evidence"][0]["heading_path"] == [] and only["action"]["reason_code"] == "needs_review"


def test_duplicates_and_conflicts_within_the_source(repo: Repo, ctx: Workspace) -> None:
    repo.write(
        "notes/m.md",
        "# Fact: Exact candidate\nSame body.\n\n# Fact: Exact candidate\nSame body.\n\n"
        "# Decision: Workflow\nA.\n\n# Decision: Workflow\nB.\n\n# Decision: Workflow\nC.\n",
    )
    kinds = [
        (c["action"]["kind"], c["action"].get("match_count")) for c in capture.plan(ctx, "notes/m.md")["candidates"]
    ]
    assert kinds == [
        ("create_proposal", None),
        ("duplicate", 1),
        ("create_proposal", None),
        ("conflict", 1),
        ("conflict", 2),
    ]


def test_review_and_apply_route_repo_local_and_session(repo: Repo, ctx: Workspace) -> None:
    repo.write(
        "notes/s.md",
        "## Decision: Verify release archives\nCheck the SHA-256 before extracting.\n\n"
        "## Preference: Terse answers\nPrefer short replies.\n\n## Episode: Debugged CI\nThe cache was cold.\n",
    )
    plan = capture.plan(ctx, "notes/s.md", "notes")
    decision, preference, episode = plan["candidates"]
    rev = capture_review.review(
        ctx,
        plan,
        decisions(
            plan,
            edit(decision),
            edit(preference, "local"),
            {"candidate_id": episode["candidate_id"], "outcome": "reject"},
        ),
        reviewed_by="zoki",
        reviewed_at="2026-07-10T12:00:00Z",
    )
    assert rev["review_id"].startswith("review_") and rev["data_class"] == "private"
    before = tree(repo.root)
    with pytest.raises(CaptureError) as err:
        capture_review.apply(ctx, plan, rev, plan_id=plan["plan_id"], review_id="review_wrong")
    assert err.value.code == "id_mismatch" and tree(repo.root) == before
    result = capture_review.apply(ctx, plan, rev, plan_id=plan["plan_id"], review_id=rev["review_id"])
    kinds = sorted((w["kind"], w.get("destination")) for w in result["writes"])
    assert kinds == [("proposal_file", None), ("runtime_record", "local")]
    (proposal,) = [w for w in result["writes"] if w["kind"] == "proposal_file"]
    text = (repo.root / proposal["path"]).read_text()
    assert proposal["path"].startswith(".memzoi/proposals/pending/capture-verify-release-archives-")
    assert "memzoi/capture-provenance-v1" in text and "Check the SHA-256 before extracting." in text
    local = (repo.root / ".git/memzoi/local/runtime/local/local-terse-answers.md").read_text()
    assert "source: memzoi-capture\nsource_ref: notes/s.md\n" in local and "memzoi/capture-provenance-v1" in local
    assert 'origin_key: "memzoi-capture:local-terse-answers"' in local and "Prefer short replies.\n" in local
    assert "evidence_content_hash:" in local and "      text:" not in local  # evidence kept without its text
    # the same plan is now stale: the inventory holds the written memory
    after = tree(repo.root)
    with pytest.raises(CaptureError) as err:
        capture_review.apply(ctx, plan, rev, plan_id=plan["plan_id"], review_id=rev["review_id"])
    assert err.value.code == "stale_capture_plan" and tree(repo.root) == after
    replanned = capture.plan(ctx, "notes/s.md", "notes")
    # the rejected episode is remembered by its content: not offered again (issue 15)
    assert [c["action"]["kind"] for c in replanned["candidates"]] == ["duplicate", "duplicate", "previously_rejected"]


def test_apply_is_zero_write_on_changed_source_or_edited_artifacts(repo: Repo, ctx: Workspace) -> None:
    repo.write("notes/typed.md", TYPED)
    plan = capture.plan(ctx, "notes/typed.md")
    fact, procedure = plan["candidates"]
    rev = capture_review.review(
        ctx,
        plan,
        decisions(plan, edit(fact), {"candidate_id": procedure["candidate_id"], "outcome": "defer"}),
        reviewed_by="zoki",
        reviewed_at="2026-07-10T12:00:00Z",
    )
    before = tree(repo.root)
    edited = json.loads(json.dumps(rev))
    edited["decisions"][0]["reviewed_candidate"]["memory"]["body"] = "Something else."
    for p, r, code in ((plan, edited, "artifact_modified"), ({**plan, "summary": {}}, rev, "artifact_modified")):
        with pytest.raises(CaptureError) as err:
            capture_review.apply(ctx, p, r, plan_id=plan["plan_id"], review_id=rev["review_id"])
        assert err.value.code == code and tree(repo.root) == before
    repo.write("notes/typed.md", TYPED + "\n## Risk: New\nAdded later.\n")
    before = tree(repo.root)
    with pytest.raises(CaptureError) as err:
        capture_review.apply(ctx, plan, rev, plan_id=plan["plan_id"], review_id=rev["review_id"])
    assert err.value.code == "stale_capture_plan" and tree(repo.root) == before


def test_review_rejects_bad_decisions(repo: Repo, ctx: Workspace) -> None:
    repo.write("notes/typed.md", TYPED)
    plan = capture.plan(ctx, "notes/typed.md")
    fact, procedure = plan["candidates"]
    reject = {"candidate_id": procedure["candidate_id"], "outcome": "reject"}
    bad = [
        decisions(plan, reject),
        decisions(plan, {"candidate_id": fact["candidate_id"], "outcome": "accept"}, reject, reject),
        decisions(plan, {**edit(fact), "surprise": 1}, reject),
        {**decisions(plan, edit(fact), reject), "plan_id": "capture_other"},
        decisions(plan, {"candidate_id": fact["candidate_id"], "outcome": "reject", "memory": {}}, reject),
    ]
    for item in bad:
        with pytest.raises(CaptureError) as err:
            capture_review.review(ctx, plan, item, reviewed_by="zoki", reviewed_at="2026-07-10T12:00:00Z")
        assert err.value.code == "invalid_review"
    with pytest.raises(CaptureError) as err:
        capture_review.review(
            ctx, plan, decisions(plan, edit(fact), reject), reviewed_by="zoki", reviewed_at="yesterday"
        )
    assert err.value.code == "invalid_review"
    repo.write("notes/plain.md", "# General note\nUse deterministic cache keys.\n")
    untyped = capture.plan(ctx, "notes/plain.md")
    (only,) = untyped["candidates"]
    with pytest.raises(CaptureError) as err:  # a needs_review candidate must be edited, not accepted
        capture_review.review(
            ctx,
            untyped,
            decisions(untyped, {"candidate_id": only["candidate_id"], "outcome": "accept"}),
            reviewed_by="zoki",
            reviewed_at="2026-07-10T12:00:00Z",
        )
    assert err.value.code == "invalid_review"


def _token(rng: random.Random, prefix: str, n: int) -> str:
    return prefix + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def test_br25_secret_blocks_and_is_never_echoed(repo: Repo, ctx: Workspace) -> None:
    token = _token(random.Random(25), "ghp_", 36)
    repo.write(
        "ops/runbook.md",
        f"## Procedure: Deploy token rotation\nSet DEPLOY_TOKEN={token} before the "
        "release job.\npassword = 123456789012\nDB password: ${DB_PASSWORD}\n",
    )
    before = tree(repo.root)
    plan = capture.plan(ctx, "ops/runbook.md", "runbook")
    assert tree(repo.root) == before
    assert (plan["status"], plan["data_class"], plan["candidates"]) == ("blocked", "blocked", [])
    assert "sources" not in plan and plan["summary"]["blocked"] == 1
    assert plan["diagnostics"] == [
        {
            "code": "prohibited_content_detected",
            "source_id": "runbook",
            "line_start": 2,
            "detectors": ["GitHub Token", "credential_assignment"],
            "classes": ["credential"],
        }
    ]
    out = json.dumps(plan)
    assert not any(token[i : i + 8] in out for i in range(len(token) - 7)) and "123456789012" not in out
    with pytest.raises(CaptureError) as err:
        capture_artifacts.save_artifact(ctx, repo.root / ".git/memzoi/local/plan.json", plan)
    assert err.value.code == "unsafe_output_path" and tree(repo.root) == before
    repo.write("ops/placeholder.md", "## Procedure: Database login\nDB password: ${DB_PASSWORD}\n")
    assert capture.plan(ctx, "ops/placeholder.md")["status"] == "ready"


def test_br26_ordinary_text_passes_and_the_control_is_blocked(repo: Repo, ctx: Workspace) -> None:
    prose = (
        "Adopt a risk-based rollout; ask-first for task-scheduler changes. Introduced in commit "
        "9f2c4e1a7b3d5f60c8e2a4b6d8f0123456789abc."
    )
    repo.write("docs/adr.md", f"# Decision: Rollout policy\n{prose}\n")
    (candidate,) = capture.plan(ctx, "docs/adr.md")["candidates"]
    assert candidate["memory"]["body"] == prose
    control = _token(random.Random(26), " sk-", 40)
    repo.write("docs/control.md", f"# Fact: Control\nThe key is{control}\n")
    assert capture.plan(ctx, "docs/control.md")["data_class"] == "blocked"


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/etc/passwd.md", "unsafe_source_path"),
        ("../x.md", "unsafe_source_path"),
        ("a\\b.md", "unsafe_source_path"),
        ("notes/./x.md", "unsafe_source_path"),
        (".memzoi/records/x.md", "unsafe_source_path"),
        ("notes/.MEMZOI/x.md", "unsafe_source_path"),
        ("notes/x.txt", "unsupported_media_type"),
        ("notes/missing.md", "source_not_found"),
        ("notes/link.md", "unsafe_source_path"),
        ("notes/big.md", "source_too_large"),
        ("notes/bad.md", "invalid_encoding"),
    ],
)
def test_bad_sources_are_rejected_without_writes(repo: Repo, ctx: Workspace, path: str, code: str) -> None:
    repo.write("notes/x.txt", "# Fact: x\ny\n")
    repo.write("notes/real.md", "# Fact: x\ny\n")
    os.symlink("real.md", repo.root / "notes/link.md")
    repo.write("notes/big.md", "# Fact: big\n" + "a" * (1024 * 1024))
    (repo.root / "notes/bad.md").write_bytes(b"# Fact: x\n\xff\n")
    before = tree(repo.root)
    with pytest.raises(CaptureError) as err:
        capture.plan(ctx, path)
    assert err.value.code == code and tree(repo.root) == before


def test_artifact_output_rules(repo: Repo, ctx: Workspace) -> None:
    repo.write("notes/typed.md", PRIVATE)  # the preference routes to local memory: a private plan
    plan = capture.plan(ctx, "notes/typed.md")
    assert plan["data_class"] == "private"
    with pytest.raises(CaptureError) as err:
        capture_artifacts.save_artifact(ctx, repo.root / "plan.json", plan)
    assert err.value.code == "unsafe_output_path" and not (repo.root / "plan.json").exists()
    saved = capture_artifacts.save_artifact(ctx, repo.root / ".git/memzoi/local/capture/plan.json", plan)
    assert capture_artifacts.read_artifact(saved, "memzoi/capture-plan-v1") == plan
    with pytest.raises(CaptureError) as err:
        capture_artifacts.save_artifact(ctx, saved, plan)
    assert err.value.code == "output_exists"


def test_artifact_and_request_files_are_refused_without_writes(repo: Repo, ctx: Workspace) -> None:
    """Artifacts over 2 MiB, symlinked, not UTF-8 JSON, or of the wrong schema; requests with unknown fields."""
    repo.write("notes/typed.md", TYPED)
    plan = capture.plan(ctx, "notes/typed.md")
    (repo.root / "big.json").write_bytes(b"{" + b" " * (2 * 1024 * 1024) + b"}")
    (repo.root / "latin1.json").write_bytes(b'{"schema": "\xff"}')
    repo.write("plan.json", json.dumps(plan))
    os.symlink("plan.json", repo.root / "link.json")
    before = tree(repo.root)
    for name, schema in (
        ("big.json", None),
        ("latin1.json", None),
        ("link.json", None),
        ("plan.json", "memzoi/capture-review-v1"),
        ("absent.json", None),
    ):
        with pytest.raises(CaptureError) as err:
            capture_artifacts.read_artifact(repo.root / name, schema)
        assert err.value.code == "invalid_artifact", name
    request = {
        "schema": "memzoi/capture-request-v1",
        "sources": [
            {
                "source_id": "s",
                "locator": {"kind": "project_path", "path": "notes/typed.md"},
                "media_type": "text/markdown",
                "extra": 1,
            }
        ],
        "extractor": {"profile": "markdown-deterministic"},
    }
    for bad in (
        request,
        {**request, "sources": [{**request["sources"][0]}], "surprise": True},
        {**request, "extractor": {"profile": "markdown-deterministic", "version": 2}},
    ):
        with pytest.raises(CaptureError) as err:
            capture.plan_request(ctx, bad)
        assert err.value.code == "invalid_capture_request"
    with pytest.raises(CaptureError) as err:
        capture.plan_request(ctx, {**request, "extractor": {"profile": "llm-magic"}})
    assert err.value.code == "unsupported_capture_profile" and tree(repo.root) == before


def test_no_labelled_secret_reaches_a_plan(repo: Repo, ctx: Workspace) -> None:
    """Every positive of the labelled set (tests/unit/test_secrets.py), written under a typed heading, blocks the
    plan: no candidate, no evidence, and no part of the secret in the plan; every negative plans normally."""
    from tests.memzoi.records.test_secrets import negatives, positives

    rng = random.Random(20260710)
    pos, neg = positives(rng), negatives(rng)
    for n, (label, snippet) in enumerate(pos):
        repo.write(f"notes/pos-{n}.md", f"## Procedure: Deploy {n}\n{snippet}\n")
        plan = capture.plan(ctx, f"notes/pos-{n}.md")
        assert (plan["status"], plan["candidates"]) == ("blocked", []), label
        words = [w for w in snippet.split() if len(w) >= 12]
        assert not any(w in json.dumps(plan, ensure_ascii=False) for w in words), label
    for n, (label, snippet) in enumerate(neg):
        repo.write(f"notes/neg-{n}.md", f"## Procedure: Notes {n}\n{snippet}\n")
        assert len(capture.plan(ctx, f"notes/neg-{n}.md")["candidates"]) == 1, label
