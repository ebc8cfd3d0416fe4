"""Git-change capture over a pinned ``git_range`` end to end against a real repository: a history that adds,
edits, renames and deletes typed guidance; plan, review, apply, and a re-plan that finds duplicates; ref names,
caps, binary changes and a secret fail closed. Secrets are built at test time from a seeded RNG."""

from __future__ import annotations

import json
import random
import string
import subprocess
from typing import Any

import pytest
from click.testing import CliRunner

from git_memzoi.cli.memzoi import cli
from git_memzoi.core.hashing import content_hash
from git_memzoi.memzoi.capture import plan as capture
from git_memzoi.memzoi.capture import review as capture_review
from git_memzoi.memzoi.capture.profiles import gitchange as gc
from git_memzoi.memzoi.capture.profiles.markdown import CaptureError
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import Repo, memzoi_workspace, tree

GUIDE0 = (
    "# Guide\n\n## Decision: Use uv\nUse uv for installs.\n\n## Warning: Old cache\nClear the cache first.\n\n"
    "## Fact: Ignored fact\nFacts are not captured from changes.\n"
)
# the body edit under the unchanged "Use uv" heading is no typed addition (upstream: a section is a typed heading
# inside a block of added lines), so it yields no candidate; "Lock files" and "Run tests" are added sections
GUIDE1 = (
    "# Guide\n\n## Decision: Use uv\nUse uv for installs and lock files.\n\n"
    "## Fact: Ignored fact\nFacts are not captured from changes.\n\n"
    "## Procedure: Run tests\nRun pytest -q before pushing.\n\n## Decision: Lock files\nCommit uv.lock.\n"
)


@pytest.fixture
def history(repo: Repo) -> tuple[str, str, str]:
    """(base, middle, head): guide edited/added/deleted sections, a rename, a deleted file, a non-Markdown file."""
    base = repo.commit(
        "base",
        **{
            "docs/guide.md": GUIDE0,
            "docs/old.md": "## Procedure: Legacy deploy\nRun deploy.sh by hand.\n",
            "docs/moved.md": "## Risk: Flaky network\nRetries mask outages in the mirror.\n",
        },
    )
    middle = repo.commit("edit guide", **{"docs/guide.md": GUIDE1})
    repo.git("mv", "docs/moved.md", "docs/renamed.md")
    repo.git("rm", "-q", "docs/old.md")
    repo.write("src/app.py", "print('hi')\n")
    head = repo.commit("rename, delete, add code")
    return base, middle, head


@pytest.fixture
def ctx(repo: Repo, history: tuple[str, str, str]) -> Workspace:
    return memzoi_workspace(repo)


def request(base: str, head: str, merge_parent: str = "base_to_head", **extra: Any) -> dict[str, Any]:
    locator = {
        "kind": "git_range",
        "repository": ".",
        "base": f"sha1:{base}",
        "head": f"sha1:{head}",
        "merge_parent": merge_parent,
        "rename_detection": True,
        "diff_format": "git-unified-v1",
    }
    return {
        "schema": "memzoi/capture-request-v1",
        "sources": [{"source_id": "range", "locator": locator, "media_type": "text/x-diff", **extra}],
        "extractor": {"profile": "git-change-deterministic"},
    }


def git_bytes(repo: Repo, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=repo.root, capture_output=True, check=True).stdout


def code_of(ctx: Workspace, req: dict[str, Any]) -> str:
    with pytest.raises(CaptureError) as err:
        capture.plan_request(ctx, req)
    return err.value.code


def test_range_plan_review_apply_and_replan(repo: Repo, ctx: Workspace, history: tuple[str, str, str]) -> None:
    base, _, head = history
    before = tree(repo.root)
    plan = capture.plan_request(ctx, request(base, head))
    assert tree(repo.root) == before and plan == capture.plan_request(ctx, request(base, head))
    assert (plan["status"], plan["data_class"]) == ("ready", "private")
    assert plan["extractor"]["id"] == "memzoi-git-change" and plan["sources"][0]["media_type"] == "text/x-diff"
    got = {
        (
            c["memory"]["type"],
            c["memory"]["title"],
            c["evidence"][0]["semantic_location"]["side"],
            c["evidence"][0]["semantic_location"]["change_kind"],
        )
        for c in plan["candidates"]
    }
    assert got == {
        ("decision", "Lock files", "new", "modified"),
        ("procedure", "Run tests", "new", "modified"),
        ("warning", "Old cache", "old", "modified"),
        ("procedure", "Legacy deploy", "old", "deleted"),
    }
    by_title = {c["memory"]["title"]: c for c in plan["candidates"]}
    decision = by_title["Lock files"]
    assert decision["memory"]["body"] == "Commit uv.lock."
    assert decision["memory"]["tags"] == ["git-change"] and decision["memory"]["scope"]["paths"] == ["docs/guide.md"]
    ev = decision["evidence"][0]
    loc = ev["semantic_location"]
    rendered = git_bytes(repo, "diff", "--full-index", "-M", base, head)
    assert plan["sources"][0]["source_content_hash"] == content_hash(rendered)
    start = rendered.index(b"+## Decision: Lock files")
    assert ev["text"] == "+## Decision: Lock files\n+Commit uv.lock.\n"
    assert ev["span"] == {
        "byte_start": start,
        "byte_end": start + len(ev["text"]),
        "line_start": rendered[:start].count(b"\n") + 1,
        "line_end": rendered[:start].count(b"\n") + 2,
    }
    assert (loc["side"], loc["new_line_start"], loc["new_line_end"]) == ("new", 12, 13)
    hunk = rendered[:start].rsplit(b"\n@@ ", 1)[1].split(b"\n", 1)[0]
    assert loc["hunk"] == content_hash(b"@@ " + hunk)
    assert (loc["old_path"], loc["new_path"], loc["base"], loc["head"]) == (
        "docs/guide.md",
        "docs/guide.md",
        f"sha1:{base}",
        f"sha1:{head}",
    )
    assert loc["new_blob"] == "sha1:" + repo.git("rev-parse", f"{head}:docs/guide.md")
    assert loc["old_blob"] == "sha1:" + repo.git("rev-parse", f"{base}:docs/guide.md")
    deleted = by_title["Legacy deploy"]
    assert deleted["memory"]["tags"] == ["git-change", "git-deletion"] and deleted["action"]["kind"] == "no_write"
    assert deleted["evidence"][0]["semantic_location"]["side"] == "old"
    codes = {(d["code"], d.get("path")) for d in plan["diagnostics"]}
    # a file whose deleted guidance became a candidate needs no diagnostic (corpus git-delete-needs-review)
    assert codes == {
        ("git_rename_without_durable_candidate", "docs/renamed.md"),
        ("unsupported_git_change", "src/app.py"),
    }
    # review: new-side candidates edited to the repo, deletions deferred/rejected
    items = []
    for c in plan["candidates"]:
        if c["evidence"][0]["semantic_location"]["side"] == "new":
            items.append(
                {
                    "candidate_id": c["candidate_id"],
                    "outcome": "edit",
                    "memory": c["memory"],
                    "requested_destination": "repo",
                }
            )
        else:
            items.append({"candidate_id": c["candidate_id"], "outcome": "reject"})
    rev = capture_review.review(
        ctx,
        plan,
        {"schema": "memzoi/capture-review-input-v1", "plan_id": plan["plan_id"], "decisions": items},
        reviewed_by="zoki",
        reviewed_at="2026-07-10T12:00:00Z",
    )
    result = capture_review.apply(ctx, plan, rev, plan_id=plan["plan_id"], review_id=rev["review_id"])
    assert sorted(w["kind"] for w in result["writes"]) == ["proposal_file", "proposal_file"]
    text = "".join((repo.root / w["path"]).read_text() for w in result["writes"])
    assert "memzoi/capture-provenance-v1" in text and "git_change" in text
    with pytest.raises(CaptureError) as err:
        capture_review.apply(ctx, plan, rev, plan_id=plan["plan_id"], review_id=rev["review_id"])
    assert err.value.code == "stale_capture_plan"
    again = capture.plan_request(ctx, request(base, head))
    kinds = {c["memory"]["title"]: c["action"]["kind"] for c in again["candidates"]}
    assert kinds == {
        "Lock files": "duplicate",
        "Run tests": "duplicate",
        "Old cache": "previously_rejected",  # rejected above, remembered by content (issue 15)
        "Legacy deploy": "previously_rejected",
    }
    assert {
        m["kind"] for c in again["candidates"] if c["action"]["kind"] == "duplicate" for m in c["action"]["matches"]
    } == {"pending_proposal"}


def test_first_parent_mode_and_partial_range(ctx: Workspace, history: tuple[str, str, str]) -> None:
    base, middle, head = history
    plan = capture.plan_request(ctx, request(base, middle, "first_parent"))
    assert {c["memory"]["title"] for c in plan["candidates"]} == {"Lock files", "Run tests", "Old cache"}
    assert code_of(ctx, request(head, base, "first_parent")) == "invalid_git_revision"  # base not an ancestor
    assert capture.plan_request(ctx, request(head, base))["status"] == "ready"  # base_to_head: any two trees


def test_ref_names_and_bad_requests_are_refused(repo: Repo, ctx: Workspace, history: tuple[str, str, str]) -> None:
    base, _, head = history
    before = tree(repo.root)
    for bad_base in ("main", "HEAD", base[:12], f"sha1:{base[:12]}", base.upper(), "HEAD~1"):
        req = request(base, head)
        req["sources"][0]["locator"]["base"] = bad_base
        assert code_of(ctx, req) == "invalid_git_revision"
    assert code_of(ctx, request(head, head)) == "invalid_git_revision"
    assert code_of(ctx, request("0" * 40, head)) == "invalid_git_revision"
    assert code_of(ctx, request(base, head, surprise=1)) == "invalid_capture_request"
    req = request(base, head)
    req["sources"][0]["locator"]["surprise"] = True
    assert code_of(ctx, req) == "invalid_capture_request"
    assert code_of(ctx, {**request(base, head), "extra": 1}) == "invalid_capture_request"
    req = request(base, head)
    req["extractor"]["profile"] = "adr-deterministic"
    assert code_of(ctx, req) == "unsupported_capture_profile"
    assert tree(repo.root) == before


def test_caps_and_binary_fail_closed(
    repo: Repo, ctx: Workspace, history: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, middle, head = history
    monkeypatch.setattr(gc, "MAX_FILES", 3)
    assert code_of(ctx, request(base, head)) == "capture_limit_exceeded"  # 4 changed files
    monkeypatch.setattr(gc, "MAX_FILES", 512)
    monkeypatch.setattr(gc, "MAX_HUNKS", 2)
    assert code_of(ctx, request(base, head)) == "capture_limit_exceeded"  # guide, old.md and app.py hunks
    assert capture.plan_request(ctx, request(base, middle))["status"] == "ready"  # one hunk is within the cap
    monkeypatch.setattr(gc, "MAX_HUNKS", 4096)
    (repo.root / "blob.bin").write_bytes(b"\x00\x01binary\x00" * 10)
    binary = repo.commit("binary")
    assert code_of(ctx, request(head, binary)) == "extractor_safeguard_failed"


def test_secret_in_range_blocks_and_is_never_echoed(repo: Repo, ctx: Workspace, history: tuple[str, str, str]) -> None:
    _, _, head = history
    rng = random.Random(41)
    token = "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    secret = repo.commit("leak", **{"docs/ops.md": f"## Procedure: Rotate\nSet DEPLOY_TOKEN={token} first.\n"})
    plan = capture.plan_request(ctx, request(head, secret))
    assert (plan["status"], plan["data_class"], plan["candidates"]) == ("blocked", "blocked", [])
    assert "sources" not in plan and plan["diagnostics"][0]["code"] == "prohibited_content_detected"
    out = json.dumps(plan)
    assert not any(token[i : i + 8] in out for i in range(len(token) - 7))


def test_cli_request_file_review_apply(repo: Repo, ctx: Workspace, history: tuple[str, str, str]) -> None:
    base, middle, _ = history
    runner = CliRunner()
    req = request(base, middle)
    (repo.root / "req.json").write_text(json.dumps(req))
    loc = req["sources"][0]["locator"]
    (repo.root / "req.yaml").write_text(
        "schema: memzoi/capture-request-v1\nsources:\n  - source_id: range\n    locator:\n      kind: git_range\n"
        f"      repository: .\n      base: {loc['base']}\n      head: {loc['head']}\n"
        "      merge_parent: base_to_head\n      rename_detection: true\n      diff_format: git-unified-v1\n"
        "    media_type: text/x-diff\nextractor:\n  profile: git-change-deterministic\n"
    )
    env = {"MEMZOI_NOW": "2026-07-10T12:00:00Z"}
    a = runner.invoke(cli, ["-C", str(repo.root), "capture", "plan", "--request-file", "req.json", "--json"], env=env)
    b = runner.invoke(
        cli,
        [
            "-C",
            str(repo.root),
            "capture",
            "plan",
            "--request-file",
            "req.yaml",
            "--output",
            ".git/memzoi/local/plan.json",
            "--json",
        ],
        env=env,
    )
    assert a.exit_code == 0 and b.exit_code == 0, a.output + b.output
    plan = json.loads(a.output)
    assert plan.pop("ok") is True  # the --json envelope; the saved artifact is the plan itself
    saved = json.loads((repo.root / ".git/memzoi/local/plan.json").read_text())
    assert {**plan, "ok": True} == json.loads(b.output) and plan == saved
    items = [
        {"candidate_id": c["candidate_id"], "outcome": "edit", "memory": c["memory"], "requested_destination": "repo"}
        if c["evidence"][0]["semantic_location"]["side"] == "new"
        else {"candidate_id": c["candidate_id"], "outcome": "defer"}
        for c in plan["candidates"]
    ]
    (repo.root / ".git/memzoi/local/d.json").write_text(
        json.dumps({"schema": "memzoi/capture-review-input-v1", "plan_id": plan["plan_id"], "decisions": items})
    )
    r = runner.invoke(
        cli,
        [
            "-C",
            str(repo.root),
            "capture",
            "review",
            "--plan-file",
            ".git/memzoi/local/plan.json",
            "--decisions-file",
            ".git/memzoi/local/d.json",
            "--reviewed-by",
            "zoki",
            "--reviewed-at",
            "2026-07-10T12:00:00Z",
            "--output",
            ".git/memzoi/local/review.json",
            "--json",
        ],
        env=env,
    )
    assert r.exit_code == 0, r.output
    review_id = json.loads(r.output)["review_id"]
    x = runner.invoke(
        cli,
        [
            "-C",
            str(repo.root),
            "capture",
            "apply",
            "--plan-file",
            ".git/memzoi/local/plan.json",
            "--review-file",
            ".git/memzoi/local/review.json",
            "--plan-id",
            plan["plan_id"],
            "--review-id",
            review_id,
            "--actor",
            "zoki",
            "--json",
        ],
        env=env,
    )
    assert x.exit_code == 0, x.output
    assert len(json.loads(x.output)["writes"]) == 2
    # both or neither of --source / --request-file; a ref name in the request file is refused
    both = runner.invoke(
        cli,
        ["-C", str(repo.root), "capture", "plan", "--source", "docs/guide.md", "--request-file", "req.json", "--json"],
        env=env,
    )
    neither = runner.invoke(cli, ["-C", str(repo.root), "capture", "plan", "--json"], env=env)
    assert both.exit_code != 0 and neither.exit_code != 0
    (repo.root / "ref.json").write_text(json.dumps(req).replace(loc["base"], "main"))
    ref = runner.invoke(cli, ["-C", str(repo.root), "capture", "plan", "--request-file", "ref.json", "--json"], env=env)
    assert ref.exit_code != 0 and "invalid_git_revision" in ref.output
    # --source still works
    ok = runner.invoke(cli, ["-C", str(repo.root), "capture", "plan", "--source", "docs/guide.md", "--json"], env=env)
    assert ok.exit_code == 0 and json.loads(ok.output)["extractor"]["id"] == "memzoi-markdown"


def test_rendering_matches_git_diff_byte_for_byte(repo: Repo, ctx: Workspace, history: tuple[str, str, str]) -> None:
    """``git diff --full-index -M``: adds, edits, renames (exact and edited, with git's similarity score),
    deletes, mode changes, empty files and missing final newlines, in git's file order."""
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    base, middle, head = history
    lines = "".join(f"line {n}\n" for n in range(1, 30))
    first = repo.commit(
        "more",
        **{
            "notes/a.md": lines,
            "notes/b.md": "b\n",
            "z/noeol.md": "no newline",
            "tool.sh": "echo hi\n",
            "notes/same.md": "same\n" * 5,
        },
    )
    repo.git("mv", "notes/a.md", "notes/c.md")
    repo.write("notes/c.md", lines.replace("line 7\n", "line seven\n") + "## Decision: Tail\nAppended.\n")
    (repo.root / "other").mkdir()
    repo.git("mv", "notes/same.md", "other/same.md")
    repo.git("rm", "-q", "notes/b.md")
    repo.write("z/noeol.md", "no newline, changed")
    repo.write("empty.md", "")
    (repo.root / "tool.sh").chmod(0o755)
    last = repo.commit("renames, deletes, modes")
    view = Pygit2RepoView(repo.root)
    for a, b in (
        (base, middle),
        (middle, head),
        (base, head),
        (head, base),
        (head, first),
        (first, last),
        (base, last),
    ):
        for renames in (True, False):
            ours, _ = view.unified_diff(a, b, renames=renames, max_files=512, max_hunks=4096, max_bytes=1 << 21)
            args = ["diff", "--full-index", "-M" if renames else "--no-renames", a, b]
            assert ours == git_bytes(repo, *args), (a, b, renames)
    assert b"similarity index" in git_bytes(repo, "diff", "--full-index", "-M", first, last)
    plan = capture.plan_request(ctx, request(first, last))
    assert plan["sources"][0]["source_content_hash"] == content_hash(
        git_bytes(repo, "diff", "--full-index", "-M", first, last)
    )
    [tail] = plan["candidates"]
    loc = tail["evidence"][0]["semantic_location"]
    assert (loc["change_kind"], loc["old_path"], loc["new_path"]) == ("renamed", "notes/a.md", "notes/c.md")


def test_policy_inputs_are_scanned_and_hashed(repo: Repo, ctx: Workspace, history: tuple[str, str, str]) -> None:
    base, middle, head = history
    plan = capture.plan_request(ctx, request(base, middle))
    inputs = plan["sources"][0]["policy_inputs"]
    ignore = repo.root / ".gitignore"
    assert [i["path"] for i in inputs][:3] == [".git", ".git/config", ".git/renderer-version"]
    if ignore.exists():  # workspace.init writes one; it is read from the head tree only when committed there
        assert ".gitignore" in [i["path"] for i in inputs] or repo.git("ls-tree", middle, ".gitignore") == ""
    secret = repo.commit("ignore", **{".gitignore": "password: hunter2-but-longer\n", "docs/x.md": "# X\n"})
    blocked = capture.plan_or_blocked(ctx, request(head, secret))
    assert (blocked["status"], blocked["diagnostics"][0]["reason"]) == ("blocked", "prohibited_policy_input")
    assert "hunter2" not in json.dumps(blocked)
    clean = repo.commit("clean ignore", **{".gitignore": "build/\n"})
    config = repo.root / ".git/config"
    config.write_text(config.read_text() + "[include]\n\tpath = ../elsewhere.cfg\n")
    assert code_of(ctx, request(secret, clean)) == "prohibited_policy_input"
