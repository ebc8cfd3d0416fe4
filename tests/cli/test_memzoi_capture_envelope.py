"""A captured proposal's earned envelope (issue 14 §1): a git-range candidate is anchored at the range's head and
scoped to the paths its evidence changed; a Markdown candidate is scoped to the paths it names, not the notes."""

from __future__ import annotations

import json
from typing import Any

from git_memzoi.memzoi.proposals import packets
from tests.support.repos import NOW_TEXT as NOW
from tests.support.repos import Repo, git_range_request, ok_json


def capture(repo: Repo, *plan_args: str, plan_file: str = ".git/memzoi/local/capture/plan.json") -> Any:
    """Plan, accept every candidate, apply; the written packets' envelopes, in write order (a private plan is saved
    under .git/memzoi/local/, a repo-safe one outside .memzoi/)."""
    plan = ok_json(repo, "capture", "plan", *plan_args, "--output", plan_file)
    decisions = [
        {
            "candidate_id": c["candidate_id"],
            "outcome": "edit",
            "memory": c["memory"],
            "requested_destination": "repo",
            "content_class": "general_repo_knowledge",
        }
        for c in plan["candidates"]
    ]
    repo.write(
        ".git/memzoi/local/capture/decisions.json",
        json.dumps({"schema": "memzoi/capture-review-input-v1", "plan_id": plan["plan_id"], "decisions": decisions}),
    )
    rev = ok_json(
        repo,
        "capture",
        "review",
        "--plan-file",
        plan_file,
        "--decisions-file",
        ".git/memzoi/local/capture/decisions.json",
        "--reviewed-by",
        "zoki",
        "--reviewed-at",
        NOW,
        "--output",
        "capture-review.json",
    )
    result = ok_json(
        repo,
        "capture",
        "apply",
        "--plan-file",
        plan_file,
        "--review-file",
        "capture-review.json",
        "--plan-id",
        plan["plan_id"],
        "--review-id",
        rev["review_id"],
        "--actor",
        "zoki",
    )
    out = []
    for write in result["writes"]:
        path = repo.root / write["path"]
        out.append(packets.parse(write["proposal_id"], path.name, path.read_bytes()).memkeep)
    return out


def bound(repo: Repo) -> list[tuple[str, ...]]:
    """The ``scope.paths`` (the record's ``applies_to``) of every pending packet, in file order."""
    pending = sorted((repo.root / ".memzoi" / "proposals" / "pending").glob("*.md"))
    return [packets.parse(p.stem, p.name, p.read_bytes()).paths for p in pending]


def test_a_git_range_candidate_is_anchored_at_the_range_head_and_scoped_to_the_changed_file(repo: Repo) -> None:
    repo.commit("base", **{"docs/a.md": "# A\n"})
    base = repo.head()
    head = repo.commit("head", **{"docs/a.md": "# A\n\n## Decision: Pin ranges\nUse pinned ids.\n"})
    repo.commit("later", **{"README.md": "later\n"})  # HEAD moves on: the anchor stays the range's head
    ok_json(repo, "init")
    request = git_range_request(base, head)
    repo.write("range.json", json.dumps(request))
    assert capture(repo, "--request-file", "range.json", plan_file="capture-plan.json") == [
        {"anchor": head, "scope": ["docs/a.md"], "verified_at": "2026-07-10"}
    ]


def test_a_markdown_candidate_is_scoped_to_the_paths_it_names_not_to_the_notes(repo: Repo) -> None:
    repo.write("src/signer.py", "x\n")
    notes = "## Decision: Sort before signing\n`src/signer.py` sorts keys; see `docs/nowhere.md` and `sorted()`.\n"
    head = repo.commit("code", **{"notes/findings.md": notes})
    ok_json(repo, "init")
    assert capture(repo, "--source", "notes/findings.md", plan_file="capture-plan.json") == [
        {"anchor": head, "scope": ["src/signer.py"], "verified_at": "2026-07-10"}
    ]
    # bound to the code it names, not the notes: precheck --path src/signer.py finds it (a fresh user's walk)
    assert bound(repo) == [("src/signer.py",)]


def test_a_markdown_candidate_naming_no_path_gets_no_envelope(repo: Repo) -> None:
    head = repo.commit("notes", **{"notes/findings.md": "## Decision: Verify archives\nCheck the SHA-256.\n"})
    assert head
    ok_json(repo, "init")
    assert capture(repo, "--source", "notes/findings.md", plan_file="capture-plan.json") == [None]
    assert bound(repo) == [("notes/findings.md",)]  # names nothing: the plan's scope stays
