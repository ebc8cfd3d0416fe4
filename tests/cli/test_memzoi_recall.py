"""``git memzoi`` recall commands: search, context, handoff and precheck.

Commands run in-process through click's CliRunner against real repositories in tmp_path, with the clock pinned by
``MEMZOI_NOW``. Field report BR-01 is replayed exactly as written (CLI search over its four records).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from git_memzoi.memzoi.records import okf
from tests.support import repos
from tests.support.repos import Repo, ok_json, run


def record(repo: Repo, concept_id: str, title: str, body: str, **extra: Any) -> None:
    repos.write_record(
        repo,
        concept_id,
        title,
        body,
        memory_type=extra.get("type", "fact"),
        source="issue",
        applies_to=tuple(extra.get("applies_to", ())),
    )


@pytest.fixture
def br01(repo: Repo) -> Repo:
    """Field report BR-01's four records."""
    assert run(repo, "init").exit_code == 0
    record(repo, "p1", "P1", "Run the pre-edit check before commit.")
    record(repo, "p2", "P2", "Edit the release notes.")
    record(repo, "m1", "M1", "Notes on the migration of the database schema")
    record(repo, "r3", "R3", "Pin node.js to v1.2.3 in CI")
    return repo


def search_ids(repo: Repo, *args: str) -> list[str]:
    return [r["record"]["id"] for r in ok_json(repo, "search", *args)["results"]]


@pytest.mark.parametrize(
    ("query", "expected"),
    [("pre-edit", ["p1"]), ("pre-edit-check", ["p1"]), ("gpt-4o", []), ("database migration", ["m1"])],
)
def test_br01_search(br01: Repo, query: str, expected: list[str]) -> None:
    assert search_ids(br01, query) == expected


@pytest.mark.parametrize(
    "query",
    [
        '"',
        "-",
        "AND",
        "OR NOT",
        "NEAR(",
        "*",
        "(",
        "🦄",
        "'",
        "\\",
        '"database migration',
        "NEAR(edit notes, 3)",
        "title:notes",
        "記憶管理",
    ],
)
def test_adversarial_queries_exit_0(br01: Repo, query: str) -> None:
    result = run(br01, "search", "--json", "--", query)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["query"] == query
    text = run(br01, "search", "--", query)
    assert text.exit_code == 0 and text.stderr == ""


def test_search_text_and_filters(br01: Repo) -> None:
    added = run(br01, "local", "add", "--type", "fact", "--title", "Notes local", "--body", "Local notes.")
    assert added.exit_code == 0
    out = run(br01, "search", "notes")
    assert out.exit_code == 0
    assert [line.split("\t")[0] for line in out.stdout.splitlines()] == ["p2", "m1"]  # never the local record
    assert run(br01, "search", "zzz").stdout == "No matching memories.\n"
    assert search_ids(br01, "notes", "--type", "decision") == []
    assert ok_json(br01, "search", "notes", "--limit", "0")["limit"] == 10
    bad = run(br01, "search", "notes", "--type", "bogus", "--json")
    assert bad.exit_code == 2 and json.loads(bad.stdout)["error"]["code"] == "invalid_type"
    assert run(br01, "search", "notes", "--limit", "-1").exit_code == 2


def test_context_json_and_text(br01: Repo) -> None:
    pack = ok_json(br01, "context", "--task", "database migration", "--token-budget", "40")
    assert set(pack) >= {
        "id",
        "task",
        "prompt",
        "records",
        "citations",
        "token_budget",
        "policy",
        "budget",
        "included",
        "omitted",
        "warnings",
        "next_queries",
        "created_at",
    }
    assert set(pack["budget"]) >= {
        "requested",
        "effective",
        "used",
        "unit",
        "estimated_used",
        "estimate_unit",
        "candidate_records",
        "selected_records",
        "rendered_words",
        "truncated",
    }
    assert (pack["budget"]["requested"], pack["budget"]["unit"]) == (40, "approx_words")
    assert pack["budget"]["used"] <= 40
    cite = pack["citations"][0]
    assert {k: cite[k] for k in ("record_id", "provenance", "destination", "source_kind", "source_ref")} == {
        "record_id": "m1",
        "provenance": "git",
        "destination": "repo",
        "source_kind": "issue",
        "source_ref": "issue://m1",
    }
    assert pack["included"][0]["rationale"].startswith("task text matched title/body")
    text = run(br01, "context", "--task", "database migration")
    assert text.stdout.startswith("# Memzoi Context\n- [m1] (fact/provenance=git/destination=repo/scope=repo) M1: ")
    empty = ok_json(br01, "context", "--task", "database migration", "--token-budget", "0")
    assert (empty["prompt"], empty["records"]) == ("", [])
    assert run(br01, "context", "--task", "x", "--token-budget", "-1").exit_code == 2
    assert run(br01, "context").exit_code == 2


def test_handoff(br01: Repo) -> None:
    assert run(br01, "handoff").exit_code == 2
    out = ok_json(br01, "handoff", "--task", "edit notes", "--include-local")
    assert out["proposal_inbox"]["open_total"] == 0 and out["include_local"] is True
    assert out["context"]["policy"]["requested_destinations"] == ["repo", "local"]
    text = run(br01, "handoff", "--path", "docs/")
    assert text.stdout.startswith("# Memzoi Handoff\nTask: Handoff for path docs/\nPath: docs/\nReview inbox: ")
    # nothing to hand over: said as context says it, not two blank lines (a fresh user's walk)
    nothing = run(br01, "handoff", "--task", "zzyzx")
    assert nothing.stdout.endswith("`git memzoi review` lists them)\n\nNo matching memories.\n")
    assert run(br01, "handoff", "--task", "database migration", "--token-budget", "0").stdout.endswith(
        "\n\nNo matching memory fits the token budget (0): raise --token-budget.\n"
    )


def test_precheck(br01: Repo) -> None:
    record(
        br01,
        "risk",
        "Schema risk",
        "Editing the schema twice breaks the migration.",
        type="risk",
        applies_to=("db/schema.sql",),
    )
    assert run(br01, "precheck").exit_code == 2
    assert run(br01, "precheck", "--path", "src/x.py").stdout == "No memory warnings.\n"
    out = ok_json(br01, "precheck", "--path", "db/schema.sql")
    assert [w["record_id"] for w in out["warnings"]] == ["risk"]
    text = run(br01, "precheck", "--command", "edit schema").stdout
    assert text.startswith("[high] risk (db/schema.sql): Schema risk: Editing the schema twice")
    assert "next: Review the cited risk before editing" in text


def test_recall_reports_suspect_records(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    anchor = repo.commit("code", **{"src/app.py": "a\n"})
    rec = okf.Record(
        id="retry",
        type="warning",
        lane="semantic",
        title="Retry rule",
        scope="repo",
        visibility="repo",
        content_class="general_repo_knowledge",
        status="active",
        confidence=1.0,
        timestamp="2026-07-01T00:00:00Z",
        body="Retries stay idempotent.",
        origin={"origin_key": "test:retry", "route": "owner_command"},
        applies_to=("src/app.py",),
        memkeep={"anchor": anchor, "scope": ["src/app.py"], "verified_at": "2026-07-01"},
    )
    repo.write(".memzoi/records/retry.md", okf.render(rec))
    assert (
        run(repo, "search", "retry").stdout
        == "retry\twarning\t" + run(repo, "search", "retry").stdout.split("\t")[2] + "\tRetry rule\n"
    )
    repo.commit("change", **{"src/app.py": "b\n"})
    assert run(repo, "search", "retry").stdout.rstrip().endswith("\tSUSPECT: scope_hit")
    ctx_out = run(repo, "context", "--task", "retry")
    assert "Suspect: scope_hit" in ctx_out.stdout and "warning: suspect memory retry" in ctx_out.stderr
    assert "SUSPECT: scope_hit: src/app.py changed since" in run(repo, "precheck", "--path", "src/app.py").stdout


def test_context_text_names_the_records_that_did_not_fit(repo: Repo) -> None:
    """stderr said "see omitted", a key of --json only (issue 20): the text output names them."""
    assert run(repo, "init").exit_code == 0
    for n in range(8):
        record(repo, f"cobalt-{n}", f"Cobalt rule {n}", f"Cobalt settings of pool {n} are loaded once per worker. " * 4)
    result = run(repo, "context", "--task", "cobalt worker", "--token-budget", "40")
    assert result.exit_code == 0
    omitted = ok_json(repo, "context", "--task", "cobalt worker", "--token-budget", "40")["omitted"]
    ids = [o["record_id"] for o in omitted]
    assert len(ids) == 7
    assert (
        f"warning: 7 relevant record(s) did not fit the budget of 40 approx_words: {', '.join(ids[:5])} and 2 more "
        "(a larger --token-budget includes them; --json lists them under omitted)\n"
    ) in result.stderr
