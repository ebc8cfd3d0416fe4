"""The instruction-deterministic capture profile end to end against real repositories (memzoi-spec.md §9.5): the
three upstream capture-v1 corpus cases matched field by field, nested scoping, typed headings, review markers,
generated projections and blocks, refused sources, the prohibited-content block, and plan → review → apply.
Secrets are built at test time from a seeded RNG; none is committed."""

from __future__ import annotations

import json
import random
import shutil
import string
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.core.hashing import content_hash
from git_memzoi.core.yamlio import load_mapping
from git_memzoi.integrations import agents
from git_memzoi.memzoi import export
from git_memzoi.memzoi.capture import plan as capture
from git_memzoi.memzoi.capture import review as capture_review
from git_memzoi.memzoi.capture.profiles import instruction as capture_instruction
from git_memzoi.memzoi.capture.profiles.markdown import CaptureError
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import Repo, tree

REVIEWED_AT = "2026-07-11T12:00:00Z"
CORPUS_CASES = ("explicit-agent-instructions", "generated-agent-projection-is-excluded", "instruction-review-burden")
EVIDENCE_KEYS = (
    "source_id",
    "locator",
    "source_content_hash",
    "span",
    "heading_path",
    "section_kind",
    "semantic_location",
)


def request(path: str, source_id: str = "source-1", media_type: str = "text/markdown") -> dict[str, Any]:
    return {
        "schema": "memzoi/capture-request-v1",
        "extractor": {"profile": "instruction-deterministic"},
        "sources": [
            {"source_id": source_id, "locator": {"kind": "project_path", "path": path}, "media_type": media_type}
        ],
    }


def plan_of(ctx: Workspace, path: str) -> dict[str, Any]:
    return capture.plan_request(ctx, request(path))


def named(plan: dict[str, Any], title: str) -> dict[str, Any]:
    (only,) = [c for c in plan["candidates"] if c["memory"]["title"] == title]
    return only


def route(candidate: dict[str, Any]) -> tuple[str, str, str]:
    c = candidate["classification"]
    return c["destination"], c["sensitivity"], candidate["action"]["kind"]


def review_and_apply(ctx: Workspace, plan: dict[str, Any], outcomes: dict[str, str]) -> dict[str, Any]:
    items = [{"candidate_id": c["candidate_id"], "outcome": outcomes[c["candidate_id"]]} for c in plan["candidates"]]
    rev = capture_review.review(
        ctx,
        plan,
        {"schema": "memzoi/capture-review-input-v1", "plan_id": plan["plan_id"], "decisions": items},
        reviewed_by="zoki",
        reviewed_at=REVIEWED_AT,
    )
    return capture_review.apply(ctx, plan, rev, plan_id=plan["plan_id"], review_id=rev["review_id"])


# ------------------------------------------------------------------------------------------------ the corpus


def corpus_case(corpus_dir: Path, case_id: str) -> dict[str, Any]:
    corpus, _ = load_mapping((corpus_dir / "corpus.yaml").read_text("utf-8"))
    (case,) = [c for c in corpus["cases"] if c["id"] == case_id]
    return case


def assert_matches_expected(data: dict[str, bytes], got: dict[str, Any], want: dict[str, Any]) -> None:
    """One plan candidate against one corpus ``expected.candidates`` entry, every field the corpus names."""
    assert got["memory"] == want["memory"]
    assert len(got["evidence"]) == len(want["evidence"])
    for evidence, expected in zip(got["evidence"], want["evidence"], strict=True):
        assert {k: evidence.get(k) for k in EVIDENCE_KEYS} == {k: expected.get(k) for k in EVIDENCE_KEYS}
        excerpt = data[evidence["locator"]["path"]][evidence["span"]["byte_start"] : evidence["span"]["byte_end"]]
        assert evidence["text"] == excerpt.decode("utf-8")
        assert evidence["evidence_content_hash"] == content_hash(excerpt)
    assert got["classification"]["destination"] == want["destination"]
    assert got["classification"]["sensitivity"] == want["sensitivity"]
    action, expected_action = got["action"], want["action"]
    assert action["kind"] == expected_action["kind"]
    if "match_count" in expected_action:
        assert action["match_count"] == expected_action["match_count"]
    if "match_kinds" in expected_action:
        assert [m["kind"] for m in action["matches"]] == expected_action["match_kinds"]
    if "reason_code" in expected_action:
        assert action["reason_code"] == expected_action["reason_code"]


@pytest.mark.parametrize("case_id", CORPUS_CASES)
def test_corpus_case(repo: Repo, ctx: Workspace, capture_v1: Path, case_id: str) -> None:
    case = corpus_case(capture_v1, case_id)
    data = {}
    for item in case["project_files"]:
        target = repo.root / item["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(capture_v1 / item["fixture"], target)
        data[item["path"]] = target.read_bytes()
    before = tree(repo.root)
    plan = capture.plan_request(ctx, case["request"])
    assert tree(repo.root) == before and plan == capture.plan_request(ctx, case["request"])
    expected = case["expected"]
    assert (plan["status"], plan["data_class"]) == (expected["status"], expected["data_class"])
    assert [d["code"] for d in plan["diagnostics"]] == expected.get("diagnostic_codes", [])
    assert plan["extractor"]["id"] == "memzoi-instructions" and plan["extractor"]["version"] == "1.0.0"
    assert len(plan["candidates"]) == len(expected.get("candidates", []))
    for got, want in zip(plan["candidates"], expected.get("candidates", []), strict=True):
        assert_matches_expected(data, got, want)
    rendered = json.dumps(plan)
    for forbidden in expected.get("forbidden_candidates", []):
        assert forbidden["memory"]["body"] not in rendered
    if "review_outcomes" in case:  # the corpus' review: accepted candidates become pending proposals, nothing else
        ids = {
            want["id"]: got["candidate_id"]
            for got, want in zip(plan["candidates"], expected["candidates"], strict=False)
        }
        outcomes = {ids[o["candidate"]]: o["outcome"] for o in case["review_outcomes"]}
        result = review_and_apply(ctx, plan, outcomes)
        accepted = sum(1 for o in case["review_outcomes"] if o["outcome"] == "accept")
        assert [w["kind"] for w in result["writes"]] == ["proposal_file"] * accepted


def test_corpus_stale_source_rejects_the_review(repo: Repo, ctx: Workspace, capture_v1: Path) -> None:
    case = corpus_case(capture_v1, "explicit-agent-instructions")
    (item,) = case["project_files"]
    repo.write(item["path"], (capture_v1 / item["fixture"]).read_text("utf-8"))
    plan = capture.plan_request(ctx, case["request"])
    shutil.copyfile(capture_v1 / case["stale_check"]["replacement_fixture"], repo.root / case["stale_check"]["path"])
    (candidate,) = plan["candidates"]
    with pytest.raises(CaptureError) as err:
        review_and_apply(ctx, plan, {candidate["candidate_id"]: "accept"})
    assert err.value.code == "stale_capture_plan"


# ------------------------------------------------------------------------------------------------ own cases


def test_nested_and_root_files_scope_to_their_directory(repo: Repo, ctx: Workspace) -> None:
    repo.write("services/api/CLAUDE.md", "# Testing\nRun the contract tests before merging.\n")
    repo.write("CLAUDE.md", "Keep commits small.\n\n# Style\n\nFormat with the project formatter.\n\n# Empty\n\n")
    nested = plan_of(ctx, "services/api/CLAUDE.md")
    (only,) = nested["candidates"]
    assert only["memory"] == {
        "type": "procedure",
        "lane": "procedural",
        "title": "Testing",
        "body": "Run the contract tests before merging.",
        "scope": {"kind": "repo", "id": None, "paths": ["services/api"]},
        "tags": ["agent-instructions"],
    }
    assert route(only) == ("repo", "repo-safe", "create_proposal")
    assert only["extraction"] == {
        "profile": "instruction-deterministic",
        "kind": "deterministic",
        "id": "memzoi-instructions",
        "version": "1.0.0",
    }
    root = plan_of(ctx, "CLAUDE.md")
    assert [c["memory"]["title"] for c in root["candidates"]] == ["Repository instructions", "Style"]
    preamble, style = root["candidates"]
    assert preamble["memory"]["body"] == "Keep commits small." and preamble["memory"]["scope"]["paths"] == []
    assert preamble["evidence"][0]["span"] == {"byte_start": 0, "byte_end": 19, "line_start": 1, "line_end": 1}
    assert (preamble["evidence"][0]["heading_path"], preamble["evidence"][0]["section_kind"]) == ([], "instruction")
    assert style["evidence"][0]["span"] == {"byte_start": 21, "byte_end": 64, "line_start": 3, "line_end": 5}
    assert (root["data_class"], root["diagnostics"]) == ("repo_safe", [])


def test_typed_headings_keep_their_mapping(repo: Repo, ctx: Workspace) -> None:
    repo.write(
        "AGENTS.md",
        "# Agent instructions\n\n## Workflow\n\nReview changes.\n\n### Procedure: Nested rule\n\n"
        "Use stable cache keys.\n\n## Preference: Terse answers\nPrefer short replies.\n\n"
        "## Episode: Debugged CI\nThe cache was cold.\n\n```\n# Fact: not a heading\n```\n",
    )
    plan = plan_of(ctx, "AGENTS.md")
    assert [c["memory"]["title"] for c in plan["candidates"]] == [
        "Workflow",
        "Nested rule",
        "Terse answers",
        "Debugged CI",
    ]
    nested = named(plan, "Nested rule")
    assert (nested["memory"]["type"], nested["memory"]["lane"]) == ("procedure", "procedural")
    assert nested["evidence"][0]["heading_path"] == ["Agent instructions", "Workflow", "Procedure: Nested rule"]
    assert nested["evidence"][0]["section_kind"] == "instruction_procedure"
    assert nested["evidence"][0]["semantic_location"] == {"kind": "instruction"}
    assert route(nested) == ("repo", "repo-safe", "create_proposal")
    preference = named(plan, "Terse answers")
    assert (preference["memory"]["type"], preference["memory"]["lane"]) == ("preference", "semantic")
    assert route(preference) == ("local", "private", "create_runtime")
    episode = named(plan, "Debugged CI")
    assert episode["memory"]["body"] == "The cache was cold.\n\n```\n# Fact: not a heading\n```"
    assert route(episode) == ("session", "private", "create_runtime")
    assert plan["data_class"] == "private"


@pytest.mark.parametrize(
    "text, marked",
    [
        ("Temporary notes", True),
        ("Private instructions", True),
        ("Current-task overrides", True),
        ("Local-only guidance", True),
        ("Keep this instruction only for the current task.", True),
        ("Done in this task", True),
        ("Session hints", True),
        ("WIP", True),
        ("scratch pad", True),
        ("Personal setup", True),
        ("PRIVATE", True),
        ("Temporarily stable", False),
        ("Privateer workflow", False),
        ("Local caches only", False),
        ("Sessions of review", False),
        ("The task at hand is current", False),
    ],
)
def test_review_marker_words(text: str, marked: bool) -> None:
    assert capture_instruction.has_review_marker(text) is marked


def test_review_markers_route_to_needs_review(repo: Repo, ctx: Workspace) -> None:
    repo.write(
        "AGENTS.md",
        "WIP: everything below is shared.\n\n# Agent instructions\n\n## Temporary notes\n\n"
        "Use this override during migration.\n\n## Private instructions\n\nKeep this out of shared memory.\n\n"
        "### Procedure: Nested shared rule\n\nUse a stable cache key.\n\n## Temporarily stable\n\n"
        "This durable guidance has a near-miss heading.\n\n## Privateer workflow\n\nA durable workflow.\n\n"
        "## Build\n\nRun the build.\nThis line is local-only.\n",
    )
    plan = plan_of(ctx, "AGENTS.md")
    for title in ("Repository instructions", "Temporary notes", "Private instructions", "Nested shared rule", "Build"):
        candidate = named(plan, title)
        assert route(candidate) == ("needs_review", "unknown", "no_write"), title
        assert candidate["action"]["reason_code"] == "needs_review"
        assert candidate["classification"]["destination_reason"] == "temporary_or_ambiguous_instruction_requires_review"
    for title in ("Temporarily stable", "Privateer workflow"):
        assert route(named(plan, title)) == ("repo", "repo-safe", "create_proposal"), title
    assert plan["data_class"] == "private" and plan["summary"]["needs_review"] == 5


def test_generated_blocks_inside_a_file_are_excluded(repo: Repo, ctx: Workspace) -> None:
    projection = "\n".join(
        [
            export.begin_marker("agents-md"),
            "## Procedure: Exported rule",
            "",
            "Never capture exportedblockcanary.",
            export.end_marker("agents-md"),
        ]
    )
    text = (
        f"# Workflow\n\nReview durable changes.\n\n{agents.block('codex')}\n\nAfter the block.\n\n"
        f"## Procedure: Kept\n\nKeep this rule.\n\n{projection}\n"
    )
    repo.write("AGENTS.md", text)
    plan = plan_of(ctx, "AGENTS.md")
    assert [c["memory"]["title"] for c in plan["candidates"]] == ["Workflow", "Kept"]
    workflow, kept = plan["candidates"]
    assert workflow["memory"]["body"] == "Review durable changes.\nAfter the block."
    assert [e["text"] for e in workflow["evidence"]] == ["# Workflow\n\nReview durable changes.", "After the block."]
    assert kept["memory"]["body"] == "Keep this rule."
    assert kept["evidence"][0]["text"] == "## Procedure: Kept\n\nKeep this rule."
    data = text.encode()
    for evidence in workflow["evidence"] + kept["evidence"]:
        span = evidence["span"]
        assert data[span["byte_start"] : span["byte_end"]].decode() == evidence["text"]
    rendered = json.dumps(plan)
    assert "exportedblockcanary" not in rendered and agents.START not in rendered
    start_line = text[: text.index(agents.START)].count("\n") + 1
    assert plan["diagnostics"] == [
        {"code": "generated_instruction_block_excluded", "source_id": "source-1", "line_start": start_line}
    ]
    assert route(workflow) == ("repo", "repo-safe", "create_proposal")


def test_generated_projections_and_broken_markers(repo: Repo, ctx: Workspace) -> None:
    repo.write("AGENTS.md", export.standalone([], "agents-md") + "# Procedure: Exported\nNever reingest this.\n")
    plan = plan_of(ctx, "AGENTS.md")
    assert (plan["status"], plan["data_class"], plan["candidates"]) == ("ready", "repo_safe", [])
    assert plan["diagnostics"] == [{"code": "generated_projection_excluded", "source_id": "source-1", "line_start": 1}]
    assert "Never reingest" not in json.dumps(plan)
    repo.write("AGENTS.md", f"# Rules\nBe careful.\n{agents.END}\n{agents.START}\n")
    with pytest.raises(CaptureError) as err:
        plan_of(ctx, "AGENTS.md")
    assert err.value.code == "extractor_safeguard_failed"
    blocked = capture.plan_or_blocked(ctx, request("AGENTS.md"))
    assert (blocked["status"], blocked["diagnostics"][0]["code"]) == ("blocked", "extractor_safeguard_failed")
    repo.write("AGENTS.md", "\n\n")
    empty = plan_of(ctx, "AGENTS.md")
    assert (empty["candidates"], [d["code"] for d in empty["diagnostics"]]) == ([], ["unsupported_instruction_content"])


def test_other_sources_are_refused(repo: Repo, ctx: Workspace) -> None:
    repo.write("guide.md", "# Workflow\nNever scan this implicitly.\n")
    repo.write("docs/agents.md", "# Workflow\nLower-case names are not instruction files.\n")
    repo.write("AGENTS.md", "# Workflow\nReview.\n")
    for path in ("guide.md", "docs/agents.md"):
        with pytest.raises(CaptureError) as err:
            plan_of(ctx, path)
        assert err.value.code == "unsupported_media_type"
        blocked = capture.plan_or_blocked(ctx, request(path))
        assert (blocked["status"], blocked["diagnostics"][0]["code"]) == ("blocked", "source_preflight_failed")
    with pytest.raises(CaptureError) as err:
        capture.plan_request(ctx, request("AGENTS.md", media_type="text/plain"))
    assert err.value.code == "unsupported_media_type"
    directory = request("AGENTS.md")
    directory["sources"][0]["locator"] = {"kind": "project_directory", "path": "."}
    with pytest.raises(CaptureError):
        capture.plan_request(ctx, directory)
    with pytest.raises(CaptureError) as err:
        plan_of(ctx, "missing/AGENTS.md")
    assert err.value.code == "source_not_found"


def test_secret_blocks_the_plan_and_is_never_echoed(repo: Repo, ctx: Workspace) -> None:
    token = "ghp_" + "".join(random.Random(55).choice(string.ascii_letters + string.digits) for _ in range(36))
    repo.write(
        "AGENTS.md",
        f"# Deploy\nSet DEPLOY_TOKEN={token} before the release job.\n\n"
        f"{agents.START}\npassword = 123456789012\n{agents.END}\n",
    )
    before = tree(repo.root)
    plan = plan_of(ctx, "AGENTS.md")
    assert tree(repo.root) == before
    assert (plan["status"], plan["data_class"], plan["candidates"]) == ("blocked", "blocked", [])
    assert plan["diagnostics"] == [
        {
            "code": "prohibited_content_detected",
            "source_id": "source-1",
            "line_start": 2,
            "detectors": ["GitHub Token", "credential_assignment"],
            "classes": ["credential"],
        }
    ]  # line 5, inside a generated block, still counts
    out = json.dumps(plan)
    assert not any(token[i : i + 8] in out for i in range(len(token) - 7)) and "123456789012" not in out


def test_plan_review_apply_writes_one_pending_proposal(repo: Repo, ctx: Workspace) -> None:
    repo.write(
        "nested/AGENTS.md",
        "# Agent rules\nAlways review source changes before applying them.\n\n"
        "## Temporary notes\nKeep this out of shared memory.\n",
    )
    before = tree(repo.root)
    plan = plan_of(ctx, "nested/AGENTS.md")
    assert tree(repo.root) == before
    rules, temporary = plan["candidates"]
    result = review_and_apply(ctx, plan, {rules["candidate_id"]: "accept", temporary["candidate_id"]: "reject"})
    (write,) = result["writes"]
    assert write["kind"] == "proposal_file" and write["candidate_id"] == rules["candidate_id"]
    assert write["path"].startswith(".memzoi/proposals/pending/capture-agent-rules-")
    written = sorted(p for p in set(tree(repo.root)) - set(before) if not p.startswith(".git/memzoi/local/"))
    assert written == [write["path"]]  # plus the private event log under .git/memzoi/local
    text = (repo.root / write["path"]).read_text("utf-8")
    assert "Always review source changes before applying them." in text and "agent-instructions" in text
    assert "memzoi/capture-provenance-v1" in text and "memzoi-instructions" in text
    assert "Keep this out of shared memory." not in text
    replanned = plan_of(ctx, "nested/AGENTS.md")
    # the rejected section is remembered by its content (issue 15)
    assert [c["action"]["kind"] for c in replanned["candidates"]] == ["duplicate", "previously_rejected"]


def test_root_file_proposal_with_no_paths_applies(repo: Repo, ctx: Workspace) -> None:
    repo.write("AGENTS.md", "# Release\nTag releases from main only after CI passes.\n")
    plan = plan_of(ctx, "AGENTS.md")
    (only,) = plan["candidates"]
    assert only["memory"]["scope"]["paths"] == []
    (write,) = review_and_apply(ctx, plan, {only["candidate_id"]: "accept"})["writes"]
    assert (repo.root / write["path"]).is_file()
