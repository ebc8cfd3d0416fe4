"""ADR capture end to end against real repositories (memzoi-spec.md §9.2, §9.3, §9.5, §9.6): the upstream
capture-v1 corpus cases with their exact values, directory sources under the git-v1 ignore policy (cross-checked
with ``git check-ignore``), the caps, symbolic links, status routing, plan → review → apply, and the redacted
blocked plan for a prohibited ignore-policy input. Secrets are built at test time; none is committed."""

from __future__ import annotations

import json
import os
import random
import string
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.core.gitignore_policy import ENGINE_VERSION
from git_memzoi.core.hashing import content_hash
from git_memzoi.memzoi.capture import plan as capture
from git_memzoi.memzoi.capture import review as capture_review
from git_memzoi.memzoi.capture.profiles.markdown import CaptureError
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import Repo

ADR_CASES = ("accepted-adr-decision", "adr-review-burden", "prohibited-policy-input-is-redacted")
ACCEPTED = "# ADR: {title}\n\n## Status\n{status}\n\n## Decision\n{decision}\n"


def request(locator: dict[str, Any], version: str | None = None) -> dict[str, Any]:
    return {
        "schema": "memzoi/capture-request-v1",
        "extractor": {"profile": "adr-deterministic", **({"version": version} if version else {})},
        "sources": [{"source_id": "adrs", "locator": locator, "media_type": "text/markdown"}],
    }


def directory(path: str = "docs/adr", recursive: bool = False) -> dict[str, Any]:
    return {
        "kind": "project_directory",
        "path": path,
        "recursive": recursive,
        "ignore_policy": "git-v1",
        "include": ["*.md"],
    }


def file(path: str) -> dict[str, Any]:
    return {"kind": "project_path", "path": path}


def adr(title: str, status: str = "Accepted", decision: str = "Use exact source spans.") -> str:
    return ACCEPTED.format(title=title, status=status, decision=decision)


def canary(seed: int) -> str:
    return "canary" + "".join(random.Random(seed).choices(string.ascii_lowercase + string.digits, k=16))


# ------------------------------------------------------------------------------------------------ corpus


def corpus_case(corpus_dir: Path, case_id: str) -> dict[str, Any]:
    from git_memzoi.memzoi.eval.capture import corpus as eval_capture_corpus

    (case,) = [c for c in eval_capture_corpus.load(corpus_dir / "corpus.yaml").cases if c["id"] == case_id]
    return json.loads(json.dumps(case))


@pytest.mark.parametrize("case_id", ADR_CASES)
def test_corpus_case_matches_exactly(repo: Repo, ctx: Workspace, capture_v1: Path, case_id: str) -> None:
    case = corpus_case(capture_v1, case_id)
    for item in case["project_files"]:
        repo.write(item["path"], (capture_v1 / item["fixture"]).read_text("utf-8"))
    plan = capture.plan_or_blocked(ctx, case["request"])
    expected = case["expected"]
    assert (plan["status"], plan["data_class"]) == (expected["status"], expected["data_class"])
    assert [d["code"] for d in plan["diagnostics"]] == expected.get("diagnostic_codes", [])
    assert len(plan["candidates"]) == len(expected.get("candidates", []))
    for got, want in zip(plan["candidates"], expected.get("candidates", []), strict=False):
        assert got["memory"] == want["memory"]
        assert [{k: e[k] for k in want["evidence"][0]} for e in got["evidence"]] == want["evidence"]
        for e in got["evidence"]:  # the excerpt is the cited bytes
            data = (repo.root / e["locator"]["path"]).read_bytes()[e["span"]["byte_start"] : e["span"]["byte_end"]]
            assert (e["text"].encode(), e["evidence_content_hash"]) == (data, content_hash(data))
        assert (got["classification"]["destination"], got["classification"]["sensitivity"]) == (
            want["destination"],
            want["sensitivity"],
        )
        action = {k: got["action"][k] for k in want["action"] if k != "match_kinds"}
        assert action == {k: v for k, v in want["action"].items() if k != "match_kinds"}
        if "match_kinds" in want["action"]:
            assert [m["kind"] for m in got["action"]["matches"]] == want["action"]["match_kinds"]
    memories = [c["memory"] for c in plan["candidates"]]
    assert all(f["memory"] not in memories for f in expected.get("forbidden_candidates", []))
    assert not any(c["memory"]["tags"][-1] == "adr-field:status" for c in plan["candidates"])
    text = json.dumps(plan)
    assert not [s for s in case.get("must_not_echo", []) if s in text]


def test_accepted_adr_exact_values_without_the_corpus(repo: Repo, ctx: Workspace) -> None:
    repo.write("docs/adr/0001-evidence.md", adr("Evidence identity"))
    plan = capture.plan_request(ctx, request(file("docs/adr/0001-evidence.md")))
    (c,) = plan["candidates"]
    assert (
        plan["sources"][0]["source_content_hash"]
        == "blake3:53d19bc3cb99b6678eb8e055ab9c18b109e6b01fb2c4564592623d46aa7f7b02"
    )
    assert [(e["span"], e["section_kind"], e["heading_path"]) for e in c["evidence"]] == [
        ({"byte_start": 0, "byte_end": 25, "line_start": 1, "line_end": 1}, "title", ["ADR: Evidence identity"]),
        (
            {"byte_start": 26, "byte_end": 46, "line_start": 3, "line_end": 5},
            "status",
            ["ADR: Evidence identity", "Status"],
        ),
        (
            {"byte_start": 46, "byte_end": 82, "line_start": 6, "line_end": 7},
            "decision",
            ["ADR: Evidence identity", "Decision"],
        ),
    ]
    assert c["memory"]["tags"] == ["adr", "adr-status:accepted", "adr-field:decision"]
    assert c["action"]["kind"] == "create_proposal" and plan["data_class"] == "repo_safe"
    assert plan["extractor"]["id"] == "memzoi-adr" and c["extraction"]["profile"] == "adr-deterministic"


# ------------------------------------------------------------------------------------------------ directories


def test_directory_follows_gitignore_and_snapshots_members_and_policy(repo: Repo, ctx: Workspace) -> None:
    repo.write(".gitignore", "docs/adr/0002-draft.md\n*.tmp.md\n")
    repo.write("docs/adr/.gitignore", "!0003-kept.tmp.md\n")
    repo.write("docs/adr/0001-evidence.md", adr("Evidence identity"))
    repo.write("docs/adr/0002-draft.md", adr("Ignored draft"))
    repo.write("docs/adr/0003-kept.tmp.md", adr("Kept", decision="Keep re-included files."))
    repo.write("docs/adr/0004-scratch.tmp.md", adr("Scratch"))
    repo.write("docs/adr/README.md", "# Decisions\n\nAn index of the records.\n")
    repo.write("docs/adr/notes.txt", "not markdown\n")
    repo.write("docs/adr/old/0005-nested.md", adr("Nested"))
    plan = capture.plan_request(ctx, request(directory()))
    snap = plan["sources"][0]
    members = [m["path"] for m in snap["members"]]
    assert members == ["docs/adr/0001-evidence.md", "docs/adr/0003-kept.tmp.md", "docs/adr/README.md"]
    ignored = repo.git(
        "check-ignore", "--no-index", *[f"docs/adr/{n}" for n in os.listdir(repo.root / "docs/adr")], check=False
    ).splitlines()
    assert not set(members) & set(ignored) and "docs/adr/0002-draft.md" in ignored
    for m in snap["members"]:
        data = (repo.root / m["path"]).read_bytes()
        assert (m["byte_length"], m["source_content_hash"]) == (len(data), content_hash(data))
    assert snap["policy_inputs"] == [
        {
            "path": ".gitignore",
            "engine_version": ENGINE_VERSION,
            "source_content_hash": content_hash((repo.root / ".gitignore").read_bytes()),
        },
        {
            "path": "docs/adr/.gitignore",
            "engine_version": ENGINE_VERSION,
            "source_content_hash": content_hash((repo.root / "docs/adr/.gitignore").read_bytes()),
        },
    ]
    manifest = json.dumps(
        {"members": snap["members"], "policy_inputs": snap["policy_inputs"]}, sort_keys=True, separators=(",", ":")
    ).encode()
    assert (snap["byte_length"], snap["source_content_hash"]) == (len(manifest), content_hash(manifest))
    assert [c["evidence"][-1]["locator"] for c in plan["candidates"]] == [
        file("docs/adr/0001-evidence.md"),
        file("docs/adr/0003-kept.tmp.md"),
    ]
    assert all(
        {e["locator"]["path"] for e in c["evidence"]} == set(c["memory"]["scope"]["paths"]) for c in plan["candidates"]
    )
    assert plan["diagnostics"] == [
        {"code": "unsupported_adr_content", "source_id": "adrs", "path": "docs/adr/README.md", "line_start": 1}
    ]
    # the policy is identity-covered: a changed .gitignore makes the plan stale
    assert plan == capture.plan_request(ctx, request(directory()))
    repo.write("docs/adr/.gitignore", "!0003-kept.tmp.md\n# reviewed\n")
    with pytest.raises(CaptureError) as err:
        capture_review.review(
            ctx,
            plan,
            {
                "schema": "memzoi/capture-review-input-v1",
                "plan_id": plan["plan_id"],
                "decisions": [{"candidate_id": c["candidate_id"], "outcome": "reject"} for c in plan["candidates"]],
            },
            reviewed_by="zoki",
            reviewed_at="2026-07-10T12:00:00Z",
        )
    assert err.value.code == "stale_capture_plan"


def test_recursive_walk_prunes_ignored_directories_and_never_enters_git_or_memzoi(repo: Repo, ctx: Workspace) -> None:
    repo.write(".gitignore", "archive/\n")
    repo.write("docs/adr/0001.md", adr("Top"))
    repo.write("docs/adr/old/0002.md", adr("Old"))
    repo.write("docs/adr/old/deeper/0003.md", adr("Deeper"))
    repo.write("docs/adr/old/deeper/.gitignore", "0004.md\n")
    repo.write("docs/adr/old/deeper/0004.md", adr("Ignored below"))
    repo.write("docs/adr/archive/0005.md", adr("Archived"))
    repo.write("docs/adr/.memzoi/0006.md", adr("Runtime"))
    repo.write("docs/adr/.git/0007.md", adr("Git"))
    flat = capture.plan_request(ctx, request(directory()))
    assert [m["path"] for m in flat["sources"][0]["members"]] == ["docs/adr/0001.md"]
    assert [p["path"] for p in flat["sources"][0]["policy_inputs"]] == [".gitignore"]
    deep = capture.plan_request(ctx, request(directory(recursive=True)))
    assert [m["path"] for m in deep["sources"][0]["members"]] == [
        "docs/adr/0001.md",
        "docs/adr/old/0002.md",
        "docs/adr/old/deeper/0003.md",
    ]
    assert [p["path"] for p in deep["sources"][0]["policy_inputs"]] == [".gitignore", "docs/adr/old/deeper/.gitignore"]
    assert [c["memory"]["title"] for c in deep["candidates"]] == ["ADR: Top", "ADR: Old", "ADR: Deeper"]


def test_symbolic_link_members_are_refused(repo: Repo, ctx: Workspace) -> None:
    repo.write("docs/adr/0001.md", adr("Real"))
    os.symlink("0001.md", repo.root / "docs/adr/0002.md")
    os.symlink("/etc", repo.root / "docs/adr/elsewhere")  # not a member: never followed, never refused
    with pytest.raises(CaptureError) as err:
        capture.plan_request(ctx, request(directory(recursive=True)))
    assert err.value.code == "unsafe_source_path"
    blocked = capture.plan_or_blocked(ctx, request(directory()))
    assert (blocked["status"], blocked["diagnostics"][0]["code"]) == ("blocked", "source_preflight_failed")
    repo.write(".gitignore", "docs/adr/0002.md\n")  # an ignored link is no member
    plan = capture.plan_request(ctx, request(directory(recursive=True)))
    assert [m["path"] for m in plan["sources"][0]["members"]] == ["docs/adr/0001.md"]
    os.symlink("docs", repo.root / "linked")
    with pytest.raises(CaptureError) as err:
        capture.plan_request(ctx, request(directory("linked/adr")))
    assert err.value.code == "unsafe_source_path"


def test_member_and_depth_caps(repo: Repo, ctx: Workspace) -> None:
    for i in range(128):
        repo.write(f"docs/adr/{i:04d}.md", "# Notes\n")
    assert len(capture.plan_request(ctx, request(directory()))["sources"][0]["members"]) == 128
    repo.write("docs/adr/0128.md", "# Notes\n")
    with pytest.raises(CaptureError) as err:
        capture.plan_request(ctx, request(directory()))
    assert err.value.code == "capture_limit_exceeded"
    nested = "docs/deep/" + "/".join(f"d{i}" for i in range(1, 9))
    repo.write(f"{nested}/0001.md", adr("Eight levels down"))
    assert capture.plan_request(ctx, request(directory("docs/deep", True)))["candidates"]
    repo.write(f"{nested}/d9/0002.md", adr("Nine levels down"))
    with pytest.raises(CaptureError) as err:
        capture.plan_request(ctx, request(directory("docs/deep", True)))
    assert err.value.code == "capture_limit_exceeded"


@pytest.mark.parametrize(
    ("locator", "code"),
    [
        ({**directory(), "include": ["*.txt"]}, "invalid_capture_request"),
        ({**directory(), "ignore_policy": "none"}, "invalid_capture_request"),
        ({**directory(), "recursive": "yes"}, "invalid_capture_request"),
        ({k: v for k, v in directory().items() if k != "include"}, "invalid_capture_request"),
        (directory("docs/../secrets"), "unsafe_source_path"),
        (directory("docs/missing"), "source_not_found"),
        (file("docs/adr/0001.txt"), "unsupported_media_type"),
        ({"kind": "supplied_bytes", "display_name": "x"}, "unsupported_capture_profile"),
    ],
)
def test_bad_locators(repo: Repo, ctx: Workspace, locator: dict[str, Any], code: str) -> None:
    repo.write("docs/adr/0001.txt", "text\n")
    with pytest.raises(CaptureError) as err:
        capture.plan_request(ctx, request(locator))
    assert err.value.code == code


# ------------------------------------------------------------------------------------------------ routing


@pytest.mark.parametrize(
    ("status", "routed"),
    [
        ("Accepted", "accepted"),
        ("adopted", "adopted"),
        ("APPROVED on 2026-07-01", "approved"),
        ("Draft", None),
        ("Rejected", None),
        ("Superseded by ADR-0009", None),
        ("Deprecated", None),
        ("Proposed", None),
        ("Not accepted", None),
    ],
)
@pytest.mark.parametrize("version", ["1.0.0", "1.1.0"])
def test_status_routes_the_decision(repo: Repo, ctx: Workspace, status: str, routed: str | None, version: str) -> None:
    repo.write("docs/adr/0001.md", adr("Routing", status))
    (c,) = capture.plan_request(ctx, request(file("docs/adr/0001.md"), version))["candidates"]
    word = routed or status.split()[0].lower()
    known = ("draft", "rejected", "superseded", "deprecated") + (("proposed",) if version == "1.1.0" else ())
    tag = word if word in known or routed else "unknown"
    assert c["memory"]["tags"] == ["adr", f"adr-status:{tag}", "adr-field:decision"]
    assert {e["semantic_location"]["status"] for e in c["evidence"]} == {tag}
    if routed:
        assert (c["classification"]["destination"], c["classification"]["sensitivity"]) == ("repo", "repo-safe")
        assert c["action"]["kind"] == "create_proposal"
    else:
        assert (c["classification"]["destination"], c["classification"]["sensitivity"]) == ("needs_review", "unknown")
        assert c["action"] == {"kind": "no_write", "reason_code": "needs_review"}
        assert c["classification"]["destination_reason"] == "adr_status_requires_review"


def test_fields_supersession_and_unsupported_content(repo: Repo, ctx: Workspace) -> None:
    repo.write(
        "docs/adr/0002.md",
        "# ADR: Plan storage\n\n## Status\nAccepted\n\n## Context\nPlans were large.\n\n"
        "## Decision\nStore plans as JSON.\n\n### Details\nCanonical keys.\n\n## Consequences:\nPlans diff "
        "well.\n\n## Risks\nLarge plans.\n\n## Superseded by\nADR-0009.\n\n## Alternatives\nYAML.\n\n"
        "## Risk\n\n# Appendix\nMore.\n",
    )
    plan = capture.plan_request(ctx, request(file("docs/adr/0002.md")))
    got = [
        (
            c["memory"]["type"],
            c["memory"]["title"],
            c["memory"]["body"],
            c["memory"]["tags"][-1],
            c["action"]["kind"],
            c["classification"]["destination_reason"],
        )
        for c in plan["candidates"]
    ]
    assert got == [
        (
            "decision",
            "ADR: Plan storage",
            "Store plans as JSON.\n\n### Details\nCanonical keys.",
            "adr-field:decision",
            "create_proposal",
            "profile_route",
        ),
        (
            "fact",
            "ADR: Plan storage (consequences)",
            "Plans diff well.",
            "adr-field:consequences",
            "create_proposal",
            "profile_route",
        ),
        ("risk", "ADR: Plan storage (risk)", "Large plans.", "adr-field:risk", "create_proposal", "profile_route"),
        (
            "decision",
            "ADR: Plan storage (supersession)",
            "ADR-0009.",
            "adr-field:supersession",
            "no_write",
            "adr_supersession_requires_review",
        ),
    ]
    assert [[e["section_kind"] for e in c["evidence"]] for c in plan["candidates"]][1] == [
        "title",
        "status",
        "consequences",
    ]
    assert [d["line_start"] for d in plan["diagnostics"]] == [24, 29]
    assert {d["code"] for d in plan["diagnostics"]} == {"unsupported_adr_content"}


def test_fences_missing_status_and_non_adr_files(repo: Repo, ctx: Workspace) -> None:
    repo.write("docs/adr/0003.md", "# ADR: Fenced\n\n## Decision\nKeep this.\n\n```\n## Status\nAccepted\n```\n")
    (c,) = capture.plan_request(ctx, request(file("docs/adr/0003.md")))["candidates"]
    assert c["memory"]["body"] == "Keep this.\n\n```\n## Status\nAccepted\n```"
    assert [e["section_kind"] for e in c["evidence"]] == ["title", "decision"]
    assert c["memory"]["tags"][1] == "adr-status:unknown" and c["action"]["kind"] == "no_write"
    repo.write("docs/adr/0004.md", "# Decision log\n\n## Decision\nNot an ADR title.\n")
    plan = capture.plan_request(ctx, request(file("docs/adr/0004.md"), "1.0.0"))
    assert plan["candidates"] == [] and [d["code"] for d in plan["diagnostics"]] == ["unsupported_adr_content"]
    # 1.1.0: a plain title with a known field is an ADR of unknown status, for review
    (c,) = capture.plan_request(ctx, request(file("docs/adr/0004.md")))["candidates"]
    assert (c["memory"]["title"], c["memory"]["tags"][1], c["action"]["kind"]) == (
        "ADR: Decision log",
        "adr-status:unknown",
        "no_write",
    )
    repo.write("docs/adr/0005.md", "# Notes\n\nJust prose, no status and no field.\n")
    for version in ("1.0.0", "1.1.0"):
        plan = capture.plan_request(ctx, request(file("docs/adr/0005.md"), version))
        assert plan["candidates"] == [] and plan["diagnostics"] == [
            {"code": "unsupported_adr_content", "source_id": "adrs", "path": "docs/adr/0005.md", "line_start": 1}
        ]


# ------------------------------------------------------------------------------------------------ review, apply, safety


def test_plan_review_apply_writes_one_pending_proposal(repo: Repo, ctx: Workspace) -> None:
    repo.write("docs/adr/0001-evidence.md", adr("Evidence identity"))
    repo.write("docs/adr/0002-draft.md", adr("Draft idea", "Draft", "Try something."))
    plan = capture.plan_request(ctx, request(directory()))
    accepted, draft = plan["candidates"]
    rev = capture_review.review(
        ctx,
        plan,
        {
            "schema": "memzoi/capture-review-input-v1",
            "plan_id": plan["plan_id"],
            "decisions": [
                {"candidate_id": accepted["candidate_id"], "outcome": "accept"},
                {"candidate_id": draft["candidate_id"], "outcome": "reject"},
            ],
        },
        reviewed_by="zoki",
        reviewed_at="2026-07-10T12:00:00Z",
    )
    result = capture_review.apply(ctx, plan, rev, plan_id=plan["plan_id"], review_id=rev["review_id"])
    (write,) = result["writes"]
    assert write["kind"] == "proposal_file" and write["proposal_id"] == accepted["action"]["proposal_id"]
    assert write["path"].startswith(".memzoi/proposals/pending/capture-adr-evidence-identity-")
    text = (repo.root / write["path"]).read_text()
    assert "Use exact source spans." in text and "docs/adr/0001-evidence.md" in text
    again = capture.plan_request(ctx, request(directory()))
    # the rejected draft is remembered by its content (issue 15): not offered for review again
    assert [c["action"]["kind"] for c in again["candidates"]] == ["duplicate", "previously_rejected"]


def test_prohibited_policy_input_is_redacted_everywhere(repo: Repo, ctx: Workspace) -> None:
    secret = canary(7)
    repo.write("docs/adr/0001.md", adr("Evidence identity"))
    repo.write("docs/adr/.gitignore", f"*.tmp.md\npassword: {secret}\n")
    req = request(directory())
    with pytest.raises(CaptureError) as err:
        capture.plan_request(ctx, req)
    assert err.value.code == "prohibited_policy_input"
    assert secret not in str(err.value) and ".gitignore" not in str(err.value) and "docs/adr" not in str(err.value)
    plan = capture.plan_or_blocked(ctx, req)
    assert (plan["status"], plan["data_class"], plan["candidates"]) == ("blocked", "blocked", [])
    assert plan["diagnostics"] == [
        {"code": "source_preflight_failed", "source_id": "adrs", "line_start": 0, "reason": "prohibited_policy_input"}
    ]
    text = json.dumps(plan)
    assert not [s for s in (secret, ".gitignore", "docs/adr", "password") if s in text]


def test_prohibited_member_blocks_without_echo(repo: Repo, ctx: Workspace) -> None:
    secret = canary(11)
    repo.write("docs/adr/0001.md", adr("Clean"))
    repo.write("docs/adr/0002-leak.md", adr("Leak", decision=f"password: {secret}"))
    plan = capture.plan_or_blocked(ctx, request(directory()))
    assert (plan["status"], plan["data_class"]) == ("blocked", "blocked")
    assert {d["code"] for d in plan["diagnostics"]} == {"prohibited_content_detected"}
    text = json.dumps(plan)
    assert secret not in text and "0002-leak" not in text and "docs/adr" not in text
