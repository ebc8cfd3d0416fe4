"""Git-change capture from diff bytes: the six upstream capture-v1 git cases compared exactly (candidates,
evidence spans inside the diff, semantic locations, actions, diagnostics), supplied bytes through plan, review and
apply, and bad inputs (length/hash mismatch, missing bytes, combined, binary, malformed, traversal) failing closed
with nothing written. Corpus: shared/conformance/memzoi/capture-v1 (skipped when absent)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.core.clock import FixedClock
from git_memzoi.core.hashing import content_hash
from git_memzoi.memzoi import workspace
from git_memzoi.memzoi.capture import plan as capture
from git_memzoi.memzoi.capture import review as capture_review
from git_memzoi.memzoi.capture.profiles.markdown import CaptureError
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import NOW, Repo, git_range_request, memzoi_workspace, run, tree

GIT_CASES = (
    "explicit-git-diff-guidance",
    "git-review-burden",
    "git-rename-needs-review",
    "git-delete-needs-review",
    "malformed-git-diff-fails-closed",
    "pinned-git-range-guidance",
)
ONES, TWOS = "sha1:" + "1" * 40, "sha1:" + "2" * 40
CHANGE = (
    "diff --git a/docs/rules.md b/docs/rules.md\nindex " + "1" * 40 + ".." + "2" * 40 + " 100644\n"
    "--- a/docs/rules.md\n+++ b/docs/rules.md\n@@ -1,1 +1,4 @@\n existing\n+# Warning: Preserve evidence\n"
    "+Never detach claims from source spans.\n+\n"
).encode()


def corpus_case(corpus: Path, case_id: str) -> dict[str, Any]:
    from git_memzoi.core.yamlio import load_mapping, plain

    cases = plain(load_mapping((corpus / "corpus.yaml").read_text("utf-8"))[0])["cases"]
    return next(c for c in cases if c["id"] == case_id)


def substitute(value: Any, old: str, new: str) -> Any:
    """``value`` with every string equal to ``old`` replaced by ``new`` (nested lists and mappings)."""
    if isinstance(value, dict):
        return {k: substitute(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, old, new) for v in value]
    return new if value == old else value


@pytest.fixture
def ctx(repo: Repo) -> Workspace:
    repo.commit("init", **{"README.md": "# Project\n"})
    return memzoi_workspace(repo)


def supplied_request(data: bytes, name: str = "reviewed.diff", **git: str) -> dict[str, Any]:
    locator = {
        "kind": "supplied_bytes",
        "display_name": name,
        "media_type": "text/x-diff",
        "byte_length": len(data),
        "source_content_hash": content_hash(data),
    }
    return {
        "schema": "memzoi/capture-request",
        "sources": [
            {
                "source_id": "source-1",
                "locator": locator,
                "media_type": "text/x-diff",
                "git": {"repository": ".", "base": ONES, "head": TWOS, **git},
            }
        ],
        "extractor": {"profile": "git-change-deterministic"},
    }


def shape(candidate: dict[str, Any]) -> dict[str, Any]:
    """A plan candidate in the corpus's expected form."""
    keys = ("source_id", "locator", "source_content_hash", "span", "heading_path", "section_kind", "semantic_location")
    action = {k: v for k, v in candidate["action"].items() if k in ("kind", "reason_code", "match_count")}
    if "matches" in candidate["action"]:
        action["match_kinds"] = sorted(m["kind"] for m in candidate["action"]["matches"])
    return {
        "memory": candidate["memory"],
        "evidence": [{k: e[k] for k in keys if k in e} for e in candidate["evidence"]],
        "destination": candidate["classification"]["destination"],
        "sensitivity": candidate["classification"]["sensitivity"],
        "action": action,
    }


def expected_shape(case: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for c in case["expected"].get("candidates", []):
        action = dict(c["action"])
        if "match_kinds" in action:
            action["match_kinds"] = sorted(action["match_kinds"])
        if action["kind"] == "create_proposal":
            action = {"kind": "create_proposal"}
        out.append(
            {
                "memory": c["memory"],
                "evidence": c["evidence"],
                "destination": c["destination"],
                "sensitivity": c["sensitivity"],
                "action": action,
            }
        )
    return out


def check_evidence(plan: dict[str, Any], data: bytes) -> None:
    """Every evidence item's span, text and hashes recomputed from the diff bytes."""
    for c in plan["candidates"]:
        for e in c["evidence"]:
            excerpt = data[e["span"]["byte_start"] : e["span"]["byte_end"]]
            assert e["text"] == excerpt.decode() and e["evidence_content_hash"] == content_hash(excerpt)
            assert e["source_content_hash"] == content_hash(data)
            assert data[: e["span"]["byte_start"]].count(b"\n") + 1 == e["span"]["line_start"]
            assert e["span"]["line_end"] == e["span"]["line_start"] + excerpt[:-1].count(b"\n")


def run_case(repo: Repo, ctx: Workspace, corpus: Path, case: dict[str, Any]) -> tuple[dict[str, Any], bytes | None]:
    supplied, data = {}, None
    for item in case.get("project_files", []):
        data = (corpus / item["fixture"]).read_bytes()
        (repo.root / item["path"]).parent.mkdir(parents=True, exist_ok=True)
        (repo.root / item["path"]).write_bytes(data)
    for item in case.get("source_inputs", []):
        data = supplied[item["source_id"]] = (corpus / item["fixture"]).read_bytes()
    before = tree(repo.root)
    plan = capture.plan_or_blocked(ctx, case["request"], supplied)
    assert plan == capture.plan_or_blocked(ctx, case["request"], supplied) and tree(repo.root) == before
    return plan, data


@pytest.mark.parametrize("case_id", [c for c in GIT_CASES if c != "pinned-git-range-guidance"])
def test_corpus_diff_cases_match_exactly(repo: Repo, ctx: Workspace, capture_v1: Path, case_id: str) -> None:
    case = corpus_case(capture_v1, case_id)
    plan, data = run_case(repo, ctx, capture_v1, case)
    expected = case["expected"]
    assert (plan["status"], plan["data_class"]) == (expected["status"], expected["data_class"])
    assert [d["code"] for d in plan["diagnostics"]] == expected.get("diagnostic_codes", [])
    assert [shape(c) for c in plan["candidates"]] == expected_shape(case)
    forbidden = [f["memory"] for f in expected.get("forbidden_candidates", [])]
    assert not [c for c in plan["candidates"] if c["memory"] in forbidden]
    if plan["status"] == "ready":
        assert data is not None
        check_evidence(plan, data)
        assert plan["extractor"]["id"] == "memzoi-git-change" and plan["extractor"]["version"] == "1.0.0"
    else:
        assert "sources" not in plan and plan["candidates"] == []


def git_range_repo(repo: Repo, corpus: Path) -> tuple[str, str]:
    case = corpus_case(corpus, "pinned-git-range-guidance")
    for side in ("base_files", "head_files"):
        for item in case["git_repository"][side]:
            (repo.root / item["path"]).parent.mkdir(parents=True, exist_ok=True)
            (repo.root / item["path"]).write_bytes((corpus / item["fixture"]).read_bytes())
        repo.git("add", "-A")
        repo.git("commit", "-q", "-m", side)
    return repo.git("rev-parse", "HEAD~1"), repo.git("rev-parse", "HEAD")


def test_corpus_pinned_git_range(repo: Repo, capture_v1: Path) -> None:
    """The corpus's commit ids cannot be rebuilt (unknown commit metadata): ours are substituted for them in the
    request and the expected locator; everything else, the rendered diff's hash and spans included, is exact."""
    base, head = git_range_repo(repo, capture_v1)
    ctx = workspace.open_workspace(repo.root, clock=FixedClock(NOW.date(), NOW), actor="zoki", initialized=False)
    case = corpus_case(capture_v1, "pinned-git-range-guidance")
    locator = case["request"]["sources"][0]["locator"]
    case = substitute(substitute(case, locator["base"], f"sha1:{base}"), locator["head"], f"sha1:{head}")
    plan = capture.plan_or_blocked(ctx, case["request"], {})
    assert (plan["status"], plan["data_class"], plan["diagnostics"]) == ("ready", "repo_safe", [])
    assert [shape(c) for c in plan["candidates"]] == expected_shape(case)
    rendered = subprocess.run(
        ["git", "diff", "--full-index", "-M", base, head], cwd=repo.root, capture_output=True, check=True
    ).stdout
    assert plan["sources"][0]["source_content_hash"] == content_hash(rendered)
    check_evidence(plan, rendered)
    inputs = plan["sources"][0]["policy_inputs"]
    assert [(i["path"], i["engine_version"]) for i in inputs[:2]] == [
        (".git", "memzoi/git-repository-identity-v1"),
        (".git/config", "memzoi/git-local-config-v1"),
    ]
    assert inputs[1]["source_content_hash"] == content_hash((repo.root / ".git/config").read_bytes())
    assert inputs[2]["path"] == ".git/renderer-version"
    assert inputs[2]["engine_version"].startswith("memzoi/git-unified-renderer-v1+git-libgit2-")
    assert len(inputs) == 3 and all(i["source_content_hash"].startswith("blake3:") for i in inputs)


def test_supplied_bytes_plan_review_apply(repo: Repo, ctx: Workspace) -> None:
    request = supplied_request(CHANGE)
    before = tree(repo.root)
    plan = capture.plan_request(ctx, request, {"source-1": CHANGE})
    assert tree(repo.root) == before and (plan["status"], plan["data_class"]) == ("ready", "repo_safe")
    [c] = plan["candidates"]
    assert c["evidence"][0]["span"] == {"byte_start": 205, "byte_end": 277, "line_start": 7, "line_end": 9}
    assert c["action"]["kind"] == "create_proposal" and c["memory"]["tags"] == ["git-change"]
    assert plan["sources"][0] == {
        "source_id": "source-1",
        "locator": request["sources"][0]["locator"],
        "media_type": "text/x-diff",
        "byte_length": 277,
        "source_content_hash": content_hash(CHANGE),
    }
    decisions = {
        "schema": "memzoi/capture-review-input-v1",
        "plan_id": plan["plan_id"],
        "decisions": [{"candidate_id": c["candidate_id"], "outcome": "accept"}],
    }
    with pytest.raises(CaptureError) as err:  # review needs the same bytes again
        capture_review.review(ctx, plan, decisions, reviewed_by="zoki", reviewed_at="2026-07-10T12:00:00Z")
    assert err.value.code == "supplied_bytes_missing"
    rev = capture_review.review(
        ctx, plan, decisions, reviewed_by="zoki", reviewed_at="2026-07-10T12:00:00Z", source_bytes={"source-1": CHANGE}
    )
    changed = CHANGE.replace(b"Never", b"Nevar")
    with pytest.raises(CaptureError) as err:
        capture_review.apply(
            ctx, plan, rev, plan_id=plan["plan_id"], review_id=rev["review_id"], source_bytes={"source-1": changed}
        )
    assert err.value.code in ("supplied_bytes_mismatch", "stale_capture_plan") and tree(repo.root) == before
    result = capture_review.apply(
        ctx, plan, rev, plan_id=plan["plan_id"], review_id=rev["review_id"], source_bytes={"source-1": CHANGE}
    )
    [write] = result["writes"]
    assert write["kind"] == "proposal_file"
    text = (repo.root / write["path"]).read_text()
    assert "Preserve evidence" in text and "git_change" in text and "supplied_bytes" in text


def blocked_code(ctx: Workspace, request: dict[str, Any], supplied: dict[str, bytes]) -> str:
    plan = capture.plan_or_blocked(ctx, request, supplied)
    assert (plan["status"], plan["data_class"], plan["candidates"]) == ("blocked", "blocked", [])
    assert "sources" not in plan
    return str(plan["diagnostics"][0]["code"]) + "/" + str(plan["diagnostics"][0]["reason"])


def error_code(ctx: Workspace, request: dict[str, Any], supplied: dict[str, bytes]) -> str:
    with pytest.raises(CaptureError) as err:
        capture.plan_request(ctx, request, supplied)
    return err.value.code


ZERO = "0" * 40
BAD_DIFFS = {
    "combined": b"diff --cc docs/a.md\nindex 1111111,2222222..3333333\n--- a/docs/a.md\n+++ b/docs/a.md\n"
    b"@@@ -1,1 -1,1 +1,2 @@@\n  x\n++# Decision: Merge\n",
    "binary": (
        "diff --git a/img.png b/img.png\nindex " + "1" * 40 + ".." + "2" * 40 + " 100644\n"
        "Binary files a/img.png and b/img.png differ\n"
    ).encode(),
    "malformed": ("diff --git a/docs/old.md b/docs/new.md\nindex " + "1" * 40 + ".." + "2" * 40 + " 100644\n").encode(),
    "no hunks": ("diff --git a/docs/a.md b/docs/a.md\nindex " + "1" * 40 + ".." + "2" * 40 + " 100644\n").encode(),
    "traversal": (
        "diff --git a/../etc/rules.md b/../etc/rules.md\nindex "
        + "1" * 40
        + ".."
        + "2" * 40
        + " 100644\n--- a/../etc/rules.md\n+++ b/../etc/rules.md\n@@ -0,0 +1,2 @@\n+# Decision: X\n+y\n"
    ).encode(),
    "bad counts": CHANGE.replace(b"+1,4 @@", b"+1,5 @@"),
    "garbage first": b"hello\n" + CHANGE,
    "no prefix": CHANGE + b"stray\n",
    "abbreviated index": CHANGE.replace(b"1" * 40, b"1111111").replace(b"2" * 40, b"2222222"),
    "empty": b"",
    "marker contradicts": CHANGE.replace(b"+++ b/docs/rules.md", b"+++ b/docs/other.md"),
    "symlink evidence": CHANGE.replace(b" 100644\n", b" 120000\n"),
    "delete with additions": (
        "diff --git a/docs/d.md b/docs/d.md\ndeleted file mode 100644\nindex "
        + "1" * 40
        + ".."
        + ZERO
        + "\n--- a/docs/d.md\n+++ /dev/null\n@@ -1 +1 @@\n-a\n+b\n"
    ).encode(),
}


@pytest.mark.parametrize("name", sorted(BAD_DIFFS))
def test_bad_diffs_fail_closed_without_writes(repo: Repo, ctx: Workspace, name: str) -> None:
    data = BAD_DIFFS[name]
    before = tree(repo.root)
    assert (
        blocked_code(ctx, supplied_request(data), {"source-1": data})
        == "extractor_safeguard_failed/extractor_safeguard_failed"
    )
    (repo.root / "changes").mkdir(exist_ok=True)
    (repo.root / "changes/bad.diff").write_bytes(data)
    request = supplied_request(data)
    request["sources"][0]["locator"] = {"kind": "project_path", "path": "changes/bad.diff"}
    assert error_code(ctx, request, {}) == "extractor_safeguard_failed"
    (repo.root / "changes/bad.diff").unlink()
    assert tree(repo.root) == before


def test_supplied_bytes_must_match_their_descriptor(repo: Repo, ctx: Workspace) -> None:
    before = tree(repo.root)
    request = supplied_request(CHANGE)
    assert error_code(ctx, request, {}) == "supplied_bytes_missing"
    assert error_code(ctx, request, {"source-1": CHANGE + b"\n"}) == "supplied_bytes_mismatch"  # length
    same_length = CHANGE.replace(b"Never", b"Nevar")
    assert error_code(ctx, request, {"source-1": same_length}) == "supplied_bytes_mismatch"  # hash
    assert blocked_code(ctx, request, {"source-1": same_length}) == "source_preflight_failed/supplied_bytes_mismatch"
    for bad_name in ("../x.diff", "a/b.diff", "", "."):
        assert error_code(ctx, supplied_request(CHANGE, bad_name), {"source-1": CHANGE}) == "invalid_capture_request"
    assert error_code(ctx, supplied_request(CHANGE, base="main"), {"source-1": CHANGE}) == "invalid_git_revision"
    assert error_code(ctx, supplied_request(CHANGE, head=ONES), {"source-1": CHANGE}) == "invalid_git_revision"
    no_git = supplied_request(CHANGE)
    del no_git["sources"][0]["git"]
    assert error_code(ctx, no_git, {"source-1": CHANGE}) == "invalid_capture_request"
    wrong_type = supplied_request(CHANGE)
    wrong_type["sources"][0]["locator"]["media_type"] = "text/markdown"
    assert error_code(ctx, wrong_type, {"source-1": CHANGE}) == "unsupported_media_type"
    assert tree(repo.root) == before


def test_project_diff_path_rules(repo: Repo, ctx: Workspace) -> None:
    request = supplied_request(CHANGE)
    for path, code in (
        ("../x.diff", "unsafe_source_path"),
        ("changes/x.txt", "unsupported_media_type"),
        ("changes/missing.diff", "source_not_found"),
    ):
        request["sources"][0]["locator"] = {"kind": "project_path", "path": path}
        assert error_code(ctx, request, {}) == code
    (repo.root / "changes").mkdir()
    (repo.root / "changes/ok.patch").write_bytes(CHANGE)
    request["sources"][0]["locator"] = {"kind": "project_path", "path": "changes/ok.patch"}
    plan = capture.plan_request(ctx, request, {})
    assert [c["memory"]["title"] for c in plan["candidates"]] == ["Preserve evidence"]
    loc = plan["candidates"][0]["evidence"][0]["semantic_location"]
    assert (loc["old_line_start"], loc["old_line_end"], loc["new_line_start"], loc["new_line_end"]) == (1, 1, 2, 4)


def test_added_file_and_deleted_guidance_without_body(repo: Repo, ctx: Workspace) -> None:
    new = "4" * 40
    data = (
        "diff --git a/docs/new.md b/docs/new.md\nnew file mode 100644\nindex " + ZERO + ".." + new + "\n"
        "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1,5 @@\n+# Risk: Flaky mirror\n+Retries hide outages.\n"
        "+## Fact: Ignored\n+Facts are not captured from changes.\n+# Decision: Empty\n"
        "diff --git a/docs/gone.md b/docs/gone.md\ndeleted file mode 100644\nindex "
        + "5" * 40
        + ".."
        + ZERO
        + "\n--- a/docs/gone.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-# Warning: Heading only\n"
        "diff --git a/src/app.py b/src/app.py\nindex " + "6" * 40 + ".." + "7" * 40 + " 100644\n"
        "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1,2 @@\n x = 1\n+# Decision: Not markdown\n"
    ).encode()
    plan = capture.plan_request(ctx, supplied_request(data), {"source-1": data})
    [c] = plan["candidates"]
    assert (c["memory"]["title"], c["memory"]["body"], c["memory"]["scope"]["paths"]) == (
        "Flaky mirror",
        "Retries hide outages.",
        ["docs/new.md"],
    )
    assert c["evidence"][0]["semantic_location"] == {
        "kind": "git_change",
        "repository": ".",
        "base": ONES,
        "head": TWOS,
        "new_blob": f"sha1:{new}",
        "new_path": "docs/new.md",
        "change_kind": "added",
        "hunk": content_hash(b"@@ -0,0 +1,5 @@"),
        "side": "new",
        "new_line_start": 1,
        "new_line_end": 2,
    }
    assert c["evidence"][0]["text"] == "+# Risk: Flaky mirror\n+Retries hide outages.\n"
    assert [(d["code"], d["path"]) for d in plan["diagnostics"]] == [
        ("git_deleted_durable_guidance_requires_review", "docs/gone.md"),
        ("unsupported_git_change", "src/app.py"),
    ]


def test_text_output_says_a_diagnostic_line_is_the_diff_line(repo: Repo) -> None:
    """``unsupported_git_change at package.json:24`` named a line a one-line file does not have: it is the line of
    the rendered diff (a fresh user's walk)."""
    base = repo.commit("init", **{"README.md": "# Project\n", "package.json": '{"name": "a"}\n'})
    assert run(repo, "init").exit_code == 0
    head = repo.commit("change", **{"package.json": '{"name": "b"}\n', "docs/rules.md": "# Warning: Keep it\nKept.\n"})
    request = git_range_request(base, head)
    (repo.root.parent / "request.json").write_text(json.dumps(request), "utf-8")
    planned = run(repo, "capture", "plan", "--request-file", str(repo.root.parent / "request.json"), "--json")
    (diagnostic,) = [d for d in json.loads(planned.stdout)["diagnostics"] if d.get("path") == "package.json"]
    text = run(repo, "capture", "plan", "--request-file", str(repo.root.parent / "request.json")).stdout
    line = f"  {diagnostic['code']} at package.json (line {diagnostic['line_start']} of the diff)"
    assert line in text.splitlines() and diagnostic["line_start"] > 1
