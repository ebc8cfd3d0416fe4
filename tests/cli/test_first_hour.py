"""A new user's first hour (issue 20), the findings of the last try of the README, each held at its right value:
quickstart's memkeep step before a store exists, ``propose --apply`` without ``--sensitivity``, search's score on
a small index, ``context`` with nothing to show and a record's source, the next command after a proposal that is
approved but not applied, doctor right after the first record, and precheck on a file a record names before it
exists. Real repositories in tmp_path, the CLI in-process.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_memzoi.integrations import quickstart
from git_memzoi.memzoi.recall.search import relevance
from tests.support import repos
from tests.support.repos import Repo, memkeep, run

ARCHIVES = ("--type", "decision", "--title", "Verify release archives", "--body", "Check the SHA-256 of each archive.")


@pytest.fixture
def root(repo: Repo) -> Repo:
    repo.commit("code", **{"src/app.py": "print('hi')\n"})
    assert run(repo, "init").exit_code == 0
    return repo


def propose(repo: Repo, *args: str) -> dict[str, object]:
    result = run(repo, "propose", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return dict(json.loads(result.stdout))


# ------------------------------------------------------------------------------------------------ quickstart


def memkeep_step(repo: Repo) -> quickstart.Step:
    (step,) = [s for s in quickstart.survey(repo.root).steps if s.name == "memkeep"]
    return step


def test_quickstart_says_how_to_start_a_store_before_git_memkeep_status(root: Repo) -> None:
    step = memkeep_step(root)
    assert (step.command, step.done) == ("mkdir -p agent-memory/entries", False)
    assert "git memkeep index && git memkeep status" in step.purpose
    (root.root / "agent-memory/entries").mkdir(parents=True)
    step = memkeep_step(root)
    assert (step.command, step.done) == ("$EDITOR agent-memory/entries/<id>.md", False)
    root.write("agent-memory/entries/one.md", repos.entry_text("one", anchor=None))
    step = memkeep_step(root)
    assert (step.command, step.done) == ("git memkeep status", True)


def test_memkeep_status_without_a_store_says_how_to_start_one(root: Repo) -> None:
    """Exit 2 stays (upstream memkeep: no store is a tool error; the session hooks run it with ``|| true``)."""
    result = memkeep("-C", str(root.root), "status")
    assert result.exit_code == 2
    assert result.stderr == (
        f"git-memkeep: error: no memkeep store found: looked for agent-memory/entries/ from {root.root} up to "
        f"{root.root} (start one: mkdir -p agent-memory/entries, write a first entry there, git memkeep index; "
        "or pass --store / --store-dir)\n"
    )
    (root.root / "agent-memory/entries").mkdir(parents=True)
    empty = memkeep("-C", str(root.root), "status")
    assert empty.exit_code == 0
    assert empty.stdout.splitlines()[1:] == [
        "No entries yet: git memkeep index lists them once you write a first one, agent-memory/entries/<id>.md"
    ]


# ------------------------------------------------------------------------------------------------ propose


def test_apply_without_sensitivity_is_an_input_error_and_writes_nothing(root: Repo) -> None:
    before = repos.tree(root.root)
    result = run(root, "propose", *ARCHIVES, "--apply", "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "ok": False,
        "error": {
            "code": "sensitivity_required",
            "message": "--apply needs --sensitivity repo-safe: only repo-safe content is written to .memzoi/records/ "
            "(leave out --apply to propose it unclassified, for review)",
            "exit_code": 2,
        },
    }
    assert repos.tree(root.root) == before
    assert run(root, "propose", *ARCHIVES, "--apply", "--sensitivity", "bogus").exit_code == 2  # as a bad --type


def test_a_proposal_not_applied_names_the_command_that_applies_it(root: Repo) -> None:
    approved = run(root, "propose", *ARCHIVES, "--sensitivity", "repo-safe")
    prop_id = approved.stdout.split()[1].rstrip(":")
    assert approved.stdout.splitlines()[1] == f"next: git memzoi apply {prop_id}"
    assert (root.root / f".memzoi/proposals/pending/{prop_id}.md").is_file()
    held = propose(
        root,
        "--manual",
        "--type",
        "fact",
        "--title",
        "Tabs",
        "--body",
        "Indent with tabs.",
        "--sensitivity",
        "repo-safe",
    )
    held_id = held["proposal"]["id"]  # type: ignore[index]
    assert held["next"] == f"git memzoi approve {held_id} && git memzoi apply {held_id}"
    # unclassified, it can never be applied: the way on is to withdraw it and propose it classified
    vague = propose(root, "--manual", "--type", "fact", "--title", "Spaces", "--body", "Indent with spaces.")
    vague_id = vague["proposal"]["id"]  # type: ignore[index]
    assert vague["next"] == (
        f"git memzoi reject {vague_id} --reason unclassified, then propose it again with --sensitivity repo-safe "
        "(only repo-safe content not marked private can reach the repository)"
    )
    # repo-safe but marked private: the visibility is what holds it back, not the sensitivity (a user's walk)
    marked = propose(
        root,
        "--visibility",
        "private",
        "--type",
        "fact",
        "--title",
        "Idea",
        "--body",
        "b",
        "--sensitivity",
        "repo-safe",
    )
    marked_id = marked["proposal"]["id"]  # type: ignore[index]
    assert marked["next"] == (
        f"git memzoi reject {marked_id} --reason unclassified, then propose it again without --visibility private "
        "(only repo-safe content not marked private can reach the repository)"
    )
    line = next(x for x in run(root, "review").stdout.splitlines() if x.startswith(marked_id))
    assert line.endswith("[content withheld: visibility private]")
    listed = next(i for i in json.loads(run(root, "review", "--json").stdout)["proposals"] if i["id"] == marked_id)
    assert (listed["repo_safe"], listed["sensitivity"]) == (False, "repo-safe")
    assert run(root, "reject", marked_id, "--reason", "unclassified").exit_code == 0
    assert run(root, "reject", vague_id, "--reason", "unclassified").exit_code == 0
    (review,) = [s for s in quickstart.survey(root.root).steps if s.name == "review"]
    assert not review.done and "git memzoi apply <id>" in review.purpose  # approved waits for apply, not review
    applied = run(root, "apply", prop_id)
    assert applied.stdout.startswith(f"applied {prop_id} as record verify-release-archives-")
    now = propose(
        root, "--type", "fact", "--title", "Docs", "--body", "In docs/.", "--sensitivity", "repo-safe", "--apply"
    )
    assert now["next"] is None


# ------------------------------------------------------------------------------------------------ recall


def test_search_prints_the_relevance_not_a_vanishing_bm25(root: Repo) -> None:
    record_id = propose(root, *ARCHIVES, "--sensitivity", "repo-safe", "--apply")["applied"]["record_id"]  # type: ignore[index]
    text = run(root, "search", "release archives").stdout
    assert text == f"{record_id}\tdecision\t1.00\tVerify release archives\n"
    score = json.loads(run(root, "search", "release archives", "--json").stdout)["results"][0]["score"]
    assert 0 < score < 0.001  # -bm25 on a one-record index: FTS5's idf floor, why text shows the relevance


def test_relevance_is_a_share_of_the_best_score() -> None:
    assert relevance([]) == []
    assert relevance([4.0, 2.0, 1.0]) == [1.0, 0.5, 0.25]
    assert relevance([3.4e-06]) == [1.0]
    assert relevance([0.0, 0.0]) == [1.0, 1.0]


def test_context_with_nothing_to_show_says_so(root: Repo) -> None:
    propose(root, *ARCHIVES, "--sensitivity", "repo-safe", "--apply")
    assert run(root, "context", "--task", "feed the zebra").stdout == "No matching memories.\n"
    starved = run(root, "context", "--task", "release archives", "--token-budget", "0")
    assert starved.stdout == "No matching memory fits the token budget (0): raise --token-budget.\n"


def test_context_cites_the_proposal_of_a_record_without_a_source(root: Repo) -> None:
    made = propose(root, *ARCHIVES, "--sensitivity", "repo-safe", "--apply")
    prompt = run(root, "context", "--task", "release archives").stdout
    assert prompt.splitlines()[-1] == f"  Source: proposal {made['proposal']['id']}"  # type: ignore[index]
    assert "unknown" not in prompt
    sourced = ("--source-kind", "path", "--source-ref", "docs/release.md", "--sensitivity", "repo-safe", "--apply")
    propose(root, "--type", "fact", "--title", "Zebra feeding", "--body", "Zebras eat hay.", *sourced)
    assert run(root, "context", "--task", "zebra").stdout.splitlines()[-1] == "  Source: docs/release.md"


# ------------------------------------------------------------------------------------------------ doctor, precheck


def test_doctor_right_after_the_first_record_warns_of_nothing(root: Repo) -> None:
    propose(root, *ARCHIVES, "--sensitivity", "repo-safe", "--apply")
    result = run(root, "doctor")
    assert result.exit_code == 0
    warned = [line for line in result.stdout.splitlines() if line.startswith("warn ") and "installation" not in line]
    assert warned == []  # (installation may warn that this test's venv is not on PATH)
    index = [line for line in result.stdout.splitlines() if " index:" in line]
    assert index == ["ok    index: the derived search index is not built yet; the first search builds it"]
    run(root, "search", "archives")
    assert "ok    index: the derived search index matches the files" in run(root, "doctor").stdout
    propose(root, "--type", "fact", "--title", "Docs", "--body", "In docs/.", "--sensitivity", "repo-safe", "--apply")
    run(root, "local", "add", "--type", "preference", "--title", "Terse", "--body", "Short answers.")
    # a write refreshes a built index as it ends: no drift the write itself made
    assert "ok    index: the derived search index matches the files" in run(root, "doctor").stdout


def test_precheck_on_a_file_a_record_names_before_it_exists(root: Repo, tmp_path: Path) -> None:
    risk = ("--type", "risk", "--title", "Deploy wipes dist", "--body", "deploy.sh wipes dist/ first.")
    propose(root, *risk, "--applies-to", "scripts/deploy.sh", "--sensitivity", "repo-safe", "--apply")
    named = run(root, "precheck", "--path", "scripts/deploy.sh", "--json")
    payload = json.loads(named.stdout)
    assert (named.exit_code, named.stderr, "notes" in payload) == (0, "", False)
    assert [w["claim"] for w in payload["warnings"]] == ["Deploy wipes dist"]
    typo = run(root, "precheck", "--path", "scripts/deploi.sh")
    assert typo.stdout == "No memory warnings.\n"
    assert typo.stderr.endswith("no memory can be bound to it (path_not_in_tree)\n")
    # a glob only covers a path, it names none: a typo under it is still reported
    broad = ("--type", "warning", "--title", "Scripts run in CI", "--body", "Every script runs in CI.")
    propose(root, *broad, "--applies-to", "scripts/**", "--sensitivity", "repo-safe", "--apply")
    covered = json.loads(run(root, "precheck", "--path", "scripts/deploi.sh", "--json").stdout)
    assert [w["claim"] for w in covered["warnings"]] == ["Scripts run in CI"]
    assert [n["code"] for n in covered["notes"]] == ["path_not_in_tree"]
    assert "notes" not in json.loads(run(root, "precheck", "--path", "scripts/deploy.sh", "--json").stdout)


# ------------------------------------------------------------------------------------------------ capture


def test_capture_says_the_next_command_at_each_step(root: Repo, tmp_path: Path) -> None:
    root.commit("note", **{"notes/uv.md": "# Decision: Use uv\n\nWe install dependencies with uv sync.\n"})
    shown = run(root, "capture", "plan", "--source", "notes/uv.md")
    assert shown.stdout.splitlines()[-1] == (
        "next: save the plan (--output FILE, or --json > FILE), then git memzoi capture review --plan-file "
        "<plan.json> --decisions-file <decisions.json> (its shape: git memzoi help capture review)"
    )
    plan_file, review_file, decisions = tmp_path / "plan.json", tmp_path / "review.json", tmp_path / "d.json"
    saved = run(root, "capture", "plan", "--source", "notes/uv.md", "--output", str(plan_file))
    assert saved.stdout.splitlines()[-1].startswith(f"next: git memzoi capture review --plan-file {plan_file} ")
    plan = json.loads(plan_file.read_text("utf-8"))
    choices = [{"candidate_id": c["candidate_id"], "outcome": "accept"} for c in plan["candidates"]]
    body = {"schema": "memzoi/capture-review-input-v1", "plan_id": plan["plan_id"], "decisions": choices}
    decisions.write_text(json.dumps(body), "utf-8")
    review_args = ("--plan-file", str(plan_file), "--decisions-file", str(decisions), "--output", str(review_file))
    reviewed = run(root, "capture", "review", *review_args)
    review_id = json.loads(review_file.read_text("utf-8"))["review_id"]
    ids = f"--plan-id {plan['plan_id']} --review-id {review_id}"
    assert reviewed.stdout.splitlines()[-1] == (
        f"next: git memzoi capture apply --plan-file {plan_file} --review-file {review_file} {ids}"
    )
    applied = run(
        root, "capture", "apply", "--plan-file", str(plan_file), "--review-file", str(review_file), *ids.split()
    )
    packet = applied.stdout.splitlines()[1].split()[1]
    assert applied.stdout.splitlines()[-1] == f"next: git memzoi apply {packet}"
    assert run(root, "apply", packet).stdout.startswith(f"applied {packet} as record use-uv-")
