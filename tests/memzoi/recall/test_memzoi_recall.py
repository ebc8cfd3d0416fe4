"""Recall on real repositories: search, context packs, handoff, precheck and staleness-aware recall.

The upstream trust corpus (shared/conformance/memzoi/recall-v2) is read in place and replayed through the core
functions, so the §5 numbers (329 and 354 approx_words) and the baseline orders are recomputed here; those tests
skip where ../shared is absent (a user's clone). Field reports BR-01 and BR-24 are checked as written.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memzoi.core import yamlio
from git_memzoi.core.clock import FixedClock
from git_memzoi.errors import InputError
from git_memzoi.memzoi import workspace
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.proposals import files as proposal_files
from git_memzoi.memzoi.recall import budget, precheck, search
from git_memzoi.memzoi.recall import handoff as handoff_pack
from git_memzoi.memzoi.recall import pack as context_pack
from git_memzoi.memzoi.recall.pathmatch import best_path, citation_path, path_matches_request, path_score
from git_memzoi.memzoi.records import events, okf
from git_memzoi.memzoi.runtime import checkpoint as checkpoints
from git_memzoi.memzoi.runtime import local as runtime
from git_memzoi.memzoi.workspace import Workspace
from tests.support import repos
from tests.support.repos import Repo, spec_ids

NOW = dt.datetime(2026, 7, 10, 12, tzinfo=dt.UTC)


def ctx_of(repo: Repo, now: dt.datetime = NOW) -> Workspace:
    if not (repo.root / ".memzoi").exists():
        workspace.init(repo.root)
        spec_ids(repo.root)  # the recall-v2 corpus names its records by memzoi-spec v0 ids
    return Workspace(Layout(repo.root), FixedClock(now.date(), now), "tester")


def record(
    repo: Repo,
    concept_id: str,
    *,
    title: str,
    body: str,
    memory_type: str = "fact",
    lane: str = "semantic",
    applies_to: tuple[str, ...] = (),
    memkeep: Mapping[str, Any] | None = None,
    status: str = "active",
    updated: str | None = None,
    retention: Mapping[str, Any] | None = None,
) -> None:
    """Write a valid canonical record through the record writer (:func:`tests.support.repos.write_record`)."""
    repos.write_record(
        repo,
        concept_id,
        title,
        body,
        memory_type=memory_type,
        lane=lane,
        status=status,
        updated=updated,
        retention=dict(retention or {}),
        applies_to=applies_to,
        memkeep=memkeep,
    )


def ids(results: Any) -> list[str]:
    return [r["record"]["id"] for r in results]


# --------------------------------------------------------------------------------------------- upstream recall-v2


@pytest.fixture
def corpus(repo: Repo, recall_v2: Path) -> tuple[Workspace, dict[str, Any], dict[str, Any]]:
    """A scratch repository holding the recall-v2 records, its applied proposal fixture and the two runtime
    fixtures, built the way the upstream eval builds it (memzoi-spec.md §10.3)."""
    spec = yamlio.plain(yamlio.load_mapping((recall_v2 / "corpus.yaml").read_text("utf-8"))[0])
    baseline = json.loads((recall_v2 / "baseline.json").read_text("utf-8"))
    evaluated = okf.parse_timestamp(spec["evaluated_at"])
    assert evaluated is not None
    ctx = ctx_of(repo, evaluated)
    for name in spec["records"]:
        shutil.copyfile(recall_v2 / spec["records_root"] / name, ctx.layout.records / name)
    for fixture in spec["proposal_fixtures"]:
        shutil.copyfile(recall_v2 / spec["proposals_root"] / fixture["path"], ctx.layout.pending / fixture["path"])
        proposal_files.apply_packet(ctx, fixture["proposal_id"], actor="memzoi-eval")
    for fixture in spec["runtime_fixtures"]:
        if fixture["destination"] == "local":
            written = runtime.add_local(ctx, memory_type=fixture["type"], title=fixture["title"], body=fixture["body"])
        else:
            written = checkpoints.add_checkpoint(ctx, task=fixture["title"], note=fixture["body"])
        assert written.record["id"] == fixture["id"]
    return ctx, spec, {case["id"]: case for case in baseline["cases"]}


def test_context_pack_reproduces_the_recall_v2_word_counts(corpus: Any) -> None:
    ctx, _, expected = corpus
    task = "onyx memory plane sentinel"
    repo_only = context_pack.build(ctx, task, token_budget=500).to_json()
    assert (len(repo_only["records"]), repo_only["budget"]["estimated_used"]) == (16, 329)
    assert budget.estimate(repo_only["prompt"]) == repo_only["budget"]["rendered_words"] == 329
    assert [r["record"]["id"] for r in repo_only["records"]] == expected["context-default-plane"]["retrieved_ids"]
    with_local = context_pack.build(ctx, task, token_budget=500, include_local=True).to_json()
    assert with_local["budget"]["estimated_used"] == 354
    assert with_local["prompt"].endswith("\n  Source: local memory")
    assert with_local["policy"]["included_destinations"] == ["repo", "local"]
    both = context_pack.build(ctx, task, token_budget=500, include_local=True, include_session=True).to_json()
    assert both["budget"]["estimated_used"] == 379
    assert repo_only["prompt"].startswith(
        "# Memzoi Context\n- [precheck-path-target] (risk/provenance=git/"
        "destination=repo/scope=repo) Magenta precheck sentinel risk: "
    )
    assert repo_only["warnings"] == [] and repo_only["omitted"] == []


def test_every_recall_v2_case_returns_its_baseline_ids(corpus: Any) -> None:
    ctx, spec, expected = corpus
    for case in spec["cases"]:
        if case["surface"] == "search":
            got = ids(
                search.search(
                    ctx,
                    case["query"],
                    scope_kind=case.get("scope_kind"),
                    scope_id=case.get("scope_id"),
                    memory_type=case.get("type"),
                    lane=case.get("lane"),
                    path=case.get("path"),
                    limit=case["k"],
                ).results
            )
        elif case["surface"] == "precheck":
            result = precheck.precheck(ctx, path=case.get("path"), scope_kind=case.get("scope_kind"))
            got = [w["record_id"] for w in result.warnings]
        elif case["surface"] == "context":
            pack = context_pack.build(
                ctx,
                case["task"],
                token_budget=case.get("token_budget"),
                include_local=bool(case.get("include_local")),
                include_session=bool(case.get("include_session")),
            )
            got = pack.record_ids
            assert pack.payload["budget"]["estimated_used"] == expected[case["id"]]["estimated_usage"]
        else:
            continue
        assert got == expected[case["id"]]["retrieved_ids"], case["id"]


def test_precheck_conformance_anchor(corpus: Any) -> None:
    ctx, _, _ = corpus
    result = precheck.precheck(ctx, path="crates/memzoi-core/src/precheck.rs", scope_kind="repo").to_json()
    assert [w["record_id"] for w in result["warnings"]] == ["precheck-path-target"]
    warning = result["warnings"][0]
    assert (warning["id"], warning["severity"], warning["suspect"]) == ("warn_precheck-path-target", "high", None)
    assert warning["message"].startswith("Magenta precheck sentinel risk: Changing the settlement order")
    assert warning["citations"][0]["path"] == "crates/memzoi-core/src/precheck.rs"
    assert warning["citations"][0]["provenance"] == "git"
    assert warning["suggested_next_step"] == "Review the cited risk before editing and consider a targeted test."


def test_search_citations_name_the_matching_path_and_the_evidence(corpus: Any) -> None:
    ctx, _, _ = corpus
    found = search.search(ctx, "opaline proposal evidence sentinel", path="crates/memzoi-core/src/recall_eval.rs")
    cite = found.results[0]["citations"][0]
    assert (cite["source_kind"], cite["source_ref"], cite["path"]) == (
        "path",
        "docs/rfcs/0001-evidence-backed-capture.md",
        "crates/memzoi-core/src/recall_eval.rs",
    )
    assert found.results[0]["record"]["proposal_id"] == "mem_eval_evidence_round_trip"


# --------------------------------------------------------------------------------------------- search


def test_br01_compounds_are_phrases_and_words_are_ored(repo: Repo) -> None:
    ctx = ctx_of(repo)
    record(repo, "p1", title="P1", body="Run the pre-edit check before commit.")
    record(repo, "p2", title="P2", body="Edit the release notes.")
    record(repo, "m1", title="M1", body="Notes on the migration of the database schema")
    record(repo, "r3", title="R3", body="Pin node.js to v1.2.3 in CI")
    record(repo, "d1", title="D1", body="The database is backed up nightly.")
    assert ids(search.search(ctx, "pre-edit").results) == ["p1"]
    assert ids(search.search(ctx, "pre-edit-check").results) == ["p1"]
    assert ids(search.search(ctx, "gpt-4o").results) == []
    assert ids(search.search(ctx, "node.js").results) == ["r3"]
    # both words first, then one of them; never an empty result because the words are not adjacent
    assert ids(search.search(ctx, "database migration").results) == ["m1", "d1"]
    assert ids(search.search(ctx, "migration database").results)[0] == "m1"


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
        ")",
        "^",
        ":",
        "title:x",
        "a AND",
        '"unbalanced',
        "NEAR(a b, 2)",
        "x*",
        "-x",
        "+y",
        "{a b}",
    ],
)
def test_any_text_is_a_valid_query(repo: Repo, query: str) -> None:
    ctx = ctx_of(repo)
    record(repo, "r", title="Title words", body="The body words here.")
    search.search(ctx, query)  # never an FTS syntax error
    assert search.fts_expression(search.terms(query)) is None or '"' not in "".join(search.terms(query))


def test_query_terms() -> None:
    assert search.terms('pre-edit (draft) "Draft" node.js gpt-4o') == ["pre edit", "draft", "node js", "gpt 4o"]
    assert search.terms("foo_bar don't") == ["foo bar", "don t"]
    assert search.terms("* ( 🦄 ' \\") == []
    assert search.fts_expression(["a b", "c"], "AND") == '"a b" AND "c"'
    assert search.fts_expression(["記憶管理"]) == '"記憶管理"*'
    assert len(search.terms(" ".join(f"w{i}" for i in range(500)))) == search.MAX_TERMS


def test_search_is_repo_only_current_and_filtered(repo: Repo) -> None:
    ctx = ctx_of(repo)
    record(repo, "live", title="Cobalt live", body="Cobalt sentinel.", memory_type="decision", applies_to=("src/a/**",))
    record(repo, "gone", title="Cobalt gone", body="Cobalt sentinel.", status="superseded")
    record(
        repo,
        "expired",
        title="Cobalt expired",
        body="Cobalt sentinel.",
        retention={"explicit_expires_at": "2026-07-10T12:00:00Z"},
    )
    runtime.add_local(ctx, memory_type="fact", title="Cobalt local", body="Cobalt sentinel runtime.")
    checkpoints.add_checkpoint(ctx, task="Cobalt session", note="Cobalt sentinel session.")
    assert ids(search.search(ctx, "cobalt").results) == ["live"]
    assert ids(search.search(ctx, "cobalt", path="src/a/b.py").results) == ["live"]
    assert ids(search.search(ctx, "cobalt", path="src/b").results) == []
    assert ids(search.search(ctx, "cobalt", memory_type="fact").results) == []
    assert ids(search.search(ctx, "cobalt", destination="local").results) == ["local-cobalt-local"]
    found = search.search(ctx, "cobalt", path="src/a/b.py").results[0]
    assert found["citations"][0]["path"] == "src/a/**" and found["suspect"] is None
    assert found["rationale"] == "fts5 title/body match" and found["score"] > 0
    with pytest.raises(InputError):
        search.search(ctx, "cobalt", memory_type="nonsense")
    with pytest.raises(InputError):
        search.search(ctx, "cobalt", limit=-1)
    assert search.effective_limit(0) == 10 and search.effective_limit(1000) == 100


def test_search_events_hold_ids_not_text(repo: Repo) -> None:
    ctx = ctx_of(repo)
    record(repo, "r", title="Secretive title", body="A body.")
    search.search(ctx, "secretive hunter2")
    precheck.precheck(ctx, command="echo hunter2")
    context_pack.build(ctx, "secretive hunter2")
    logged = "\n".join(events.export(ctx.layout))
    assert "hunter2" not in logged
    kinds = [json.loads(line)["event_type"] for line in events.export(ctx.layout)]
    assert kinds == ["memory.searched", "memory.precheck_ran", "memory.context_pack_built"]


def test_read_audit_events_skip_the_fsync_lifecycle_events_keep_it(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    ctx = ctx_of(repo)
    record(repo, "r", title="Cobalt title", body="A body.")
    search.search(ctx, "cobalt", log=False)  # builds the index (fsynced: a file written)
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    search.search(ctx, "cobalt")
    precheck.precheck(ctx, command="echo x")
    context_pack.build(ctx, "cobalt")
    assert synced == []  # three audit lines, no reply waited on the disk
    events.append(ctx.layout, "memory.proposed", "tester", NOW, {"n": 1})
    assert len(synced) == 1
    kinds = [json.loads(line)["event_type"] for line in events.export(ctx.layout)]
    assert kinds == ["memory.searched", "memory.precheck_ran", "memory.context_pack_built", "memory.proposed"]


# --------------------------------------------------------------------------------------------- paths


@pytest.mark.parametrize(
    ("stored", "requested", "score"),
    [
        ("src/a.py", "src/a.py", 5),
        ("src/a.py/", " src/a.py", 5),
        ("src/**", "src/a.py", 4),
        ("src/**", "src", 4),
        ("src/a.py", "src/**", 4),
        ("src", "src/a.py", 3),
        ("src/a.py", "src", 2),
        ("src/a.py", "src/b.py", 0),
        ("src", "srcx/a.py", 0),
        ("", "src", 0),
        ("src/**", "lib/a.py", 0),
        ("a/**", "a/**", 5),
    ],
)
def test_path_scores(stored: str, requested: str, score: int) -> None:
    assert path_score(stored, requested) == score
    assert path_matches_request(stored, requested) is (score > 0)


def test_best_and_citation_paths() -> None:
    assert best_path(["src/**", "src/a.py"], "src/a.py") == (5, "src/a.py")
    assert best_path(["b/**", "a/**"], "a/x") == (4, "a/**")
    assert best_path(["x"], None) == (0, None)
    assert citation_path(["z", "b/**", "a/**"], "b/c") == "b/**"
    assert citation_path(["z", "y"], "b/c") == "y"
    assert citation_path([], "b") is None


# --------------------------------------------------------------------------------------------- budget (BR-24)


def test_br24_estimates_unspaced_scripts_per_character() -> None:
    j_body = "記憶管理" * 100
    assert budget.estimate(j_body) == 400 >= 240
    assert budget.estimate("word " * 5000) == 5000
    assert budget.estimate("a b\tc\nd") == 4 and budget.estimate("API記憶 x") == 4
    assert budget.estimate("ภาษาไทย") == 7 and budget.estimate("かな") == 2
    text = "ab 記憶管理 cd\nef"
    for n in range(budget.estimate(text) + 2):
        assert budget.estimate(budget.cut(text, n)) == min(n, budget.estimate(text))


@pytest.fixture
def br24(repo: Repo) -> Workspace:
    ctx = ctx_of(repo)
    english = " ".join(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"] * 10)[:400]
    record(repo, "j", title="Memory budget J", body="記憶管理" * 100)
    record(repo, "e", title="Memory budget E", body=english)
    record(repo, "w", title="Flood W", body="word " * 5000)
    return ctx


@pytest.mark.parametrize(
    ("task", "token_budget"),
    [
        ("memory budget", 150),
        ("word", 50),
        ("memory budget", 3),
        ("memory budget", 0),
        ("memory budget", 2**31),
        ("word", 3),
        ("memory budget", 4),
        ("memory budget", 12),
    ],
)
def test_br24_packs_never_exceed_their_budget(br24: Workspace, task: str, token_budget: int) -> None:
    pack = context_pack.build(br24, task, token_budget=token_budget).to_json()
    used = budget.estimate(pack["prompt"])
    assert used == pack["budget"]["used"] == pack["budget"]["estimated_used"] <= token_budget
    if token_budget < 400:
        assert "記憶管理" * 100 not in pack["prompt"]
    shown = [r["record"]["id"] for r in pack["records"]]
    assert all(f"[{i}]" in pack["prompt"] for i in shown)
    assert pack["budget"]["effective"] == token_budget


def test_br24_expectations(br24: Workspace) -> None:
    j150 = context_pack.build(br24, "memory budget", token_budget=150).to_json()
    assert "記憶管理" * 100 not in j150["prompt"] and j150["budget"]["truncated"] is True
    assert j150["prompt"].endswith("\n[truncated]") and any("cut to the budget" in w for w in j150["warnings"])
    w50 = context_pack.build(br24, "word", token_budget=50).to_json()
    assert budget.estimate(w50["prompt"]) == 50
    for small in (0, 3):
        empty = context_pack.build(br24, "memory budget", token_budget=small).to_json()
        assert (empty["prompt"], empty["records"], empty["budget"]["used"]) == ("", [], 0)
        assert {o["record_id"] for o in empty["omitted"]} == {"j", "e"}
    everything = context_pack.build(br24, "memory budget word", token_budget=2**31).to_json()
    assert sorted(everything["policy"]["included_destinations"]) == ["repo"]
    assert sorted(r["record"]["id"] for r in everything["records"]) == ["e", "j", "w"]
    assert everything["budget"]["truncated"] is False and everything["omitted"] == []
    default = context_pack.build(br24, "memory budget").to_json()
    assert (default["budget"]["requested"], default["budget"]["effective"]) == (None, 400)
    with pytest.raises(InputError):
        context_pack.build(br24, "memory budget", token_budget=-1)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(token_budget=st.integers(min_value=0, max_value=700), task=st.sampled_from(["memory budget", "word", "j e w"]))
def test_every_pack_fits_its_budget(br24: Workspace, token_budget: int, task: str) -> None:
    pack = context_pack.build(br24, task, token_budget=token_budget, log=False).to_json()
    assert budget.estimate(pack["prompt"]) == pack["budget"]["used"] <= token_budget


# --------------------------------------------------------------------------------------------- context and handoff


def test_context_ranks_path_bound_records_and_dedupes(repo: Repo) -> None:
    ctx = ctx_of(repo)
    record(repo, "plain", title="Cache notes", body="The cache is warmed at boot.")
    # bound by its path alone: the path holds no task word (paths are indexed, so src/cache/** would match "cache")
    record(repo, "bound", title="Unrelated words", body="Nothing matching here.", applies_to=("src/store/**",))
    record(repo, "copy", title="Cache notes", body="The  cache is WARMED at boot.", memory_type="risk")
    pack = context_pack.build(ctx, "cache", path="src/store/lru.py").to_json()
    assert [i["record_id"] for i in pack["included"]] == ["bound", "copy"]  # "plain" duplicates "copy"
    bound = pack["included"][0]
    assert bound["rationale"] == "path matched requested path; fact memory type priority; repo destination"
    assert bound["score"] == 4 * 10000 + 3 * 1000 + 2 * 100 + 3 * 10 + 25
    assert pack["records"][0]["ranking"]["signals"]["path_score"] == 4
    assert pack["citations"][0]["path"] == "src/store/**"
    assert pack["id"].startswith("ctx_") and pack["created_at"] == "2026-07-10T12:00:00Z"
    with pytest.raises(InputError):
        context_pack.build(ctx, "  ")


def test_context_is_repo_only_unless_asked(repo: Repo) -> None:
    ctx = ctx_of(repo)
    record(repo, "r", title="Basalt repo", body="Basalt sentinel.")
    runtime.add_local(ctx, memory_type="fact", title="Basalt local", body="Basalt sentinel runtime.")
    checkpoints.add_checkpoint(ctx, task="Basalt session", note="Basalt sentinel session.")
    assert context_pack.build(ctx, "basalt").record_ids == ["r"]
    assert context_pack.build(ctx, "basalt", include_local=True).record_ids == ["r", "local-basalt-local"]
    pack = context_pack.build(ctx, "basalt", include_session=True).to_json()
    assert [r["record"]["id"] for r in pack["records"]] == ["r", "session-basalt-session"]
    assert pack["citations"][1]["provenance"] == "runtime" and "Source: session memory" in pack["prompt"]


def test_handoff_carries_the_pack_and_the_inbox_counts(repo: Repo) -> None:
    ctx = ctx_of(repo)
    record(repo, "r", title="Granite", body="Granite sentinel.", applies_to=("src/g.py",))
    result = handoff_pack.handoff(ctx, path="src/g.py").to_json()
    assert result["task"] == "Handoff for path src/g.py" and result["path_prefix"] == "src/g.py"
    assert result["proposal_inbox"] == {
        "source": "review",
        "open_total": 0,
        "pending": 0,
        "validated": 0,
        "approved": 0,
        "by_source": {"proposal": 0, "session-end": 0, "capture": 0, "import": 0, "file": 0},
    }
    assert result["context"]["records"][0]["record"]["id"] == "r"
    text = handoff_pack.handoff(ctx, task="continue granite").text()
    assert text.startswith("# Memzoi Handoff\nTask: continue granite\nReview inbox: 0 open")
    with pytest.raises(InputError):
        handoff_pack.handoff(ctx)


# --------------------------------------------------------------------------------------------- precheck


def test_precheck_orders_path_then_lexical_and_keeps_governance_only(repo: Repo) -> None:
    ctx = ctx_of(repo)
    record(
        repo,
        "risk-exact",
        title="Settlement risk",
        body="Reordering corrupts totals.",
        memory_type="risk",
        applies_to=("src/settle.py",),
    )
    record(
        repo,
        "warn-glob",
        title="Billing warning",
        body="Billing is fragile.",
        memory_type="warning",
        applies_to=("src/**",),
    )
    record(repo, "fact-exact", title="Settlement fact", body="Settlement runs nightly.", applies_to=("src/settle.py",))
    record(
        repo,
        "failed-cmd",
        title="Failed attempt",
        body="Running make migrate twice broke the schema.",
        memory_type="failed_attempt",
    )
    assert [w["record_id"] for w in precheck.precheck(ctx, path="src/settle.py").warnings] == [
        "risk-exact",
        "warn-glob",
    ]
    assert [w["record_id"] for w in precheck.precheck(ctx, command="make migrate").warnings] == ["failed-cmd"]
    both = precheck.precheck(ctx, path="src/settle.py", action="reordering totals").warnings
    assert [w["record_id"] for w in both] == ["risk-exact", "warn-glob"]
    assert precheck.precheck(ctx, path="docs/x.md").warnings == ()
    assert precheck.precheck(ctx, path="src/settle.py", scope_kind="team").warnings == ()
    with pytest.raises(InputError):
        precheck.precheck(ctx, action="  ")


# --------------------------------------------------------------------------------------------- staleness


def _envelope(anchor: str, scope: str, **extra: Any) -> dict[str, Any]:
    return {"anchor": anchor, "scope": [scope], "verified_at": "2026-07-01", **extra}


def test_a_record_whose_scope_changed_is_suspect_and_ranked_below_an_equal_current_one(repo: Repo) -> None:
    ctx = ctx_of(repo)
    anchor = repo.commit("code", **{"src/app.py": "a\n", "src/other.py": "b\n"})
    record(
        repo,
        "aaa-changed",
        title="Retry idempotency",
        body="Client retries must stay idempotent.",
        memory_type="warning",
        applies_to=("src/",),
        memkeep=_envelope(anchor, "src/app.py"),
    )
    record(
        repo,
        "bbb-current",
        title="Retry idempotency",
        body="Client retries must remain idempotent.",
        memory_type="warning",
        applies_to=("src/",),
        memkeep=_envelope(anchor, "src/other.py"),
    )
    before = context_pack.build(ctx, "retry idempotency").to_json()
    assert [i["record_id"] for i in before["included"]] == ["aaa-changed", "bbb-current"]  # equal: id order
    assert before["warnings"] == []
    repo.commit("change", **{"src/app.py": "a changed\n"})
    found = search.search(ctx, "retry idempotency").results
    assert ids(found) == ["bbb-current", "aaa-changed"]  # equal rank: the trusted one first
    assert found[0]["score"] == found[1]["score"]
    reason = found[1]["suspect"]["reasons"][0]
    assert (reason["reason"], reason["evidence"]["files"]) == ("scope_hit", ["src/app.py"])
    assert found[0]["suspect"] is None
    after = context_pack.build(ctx, "retry idempotency").to_json()
    assert [i["record_id"] for i in after["included"]] == ["bbb-current", "aaa-changed"]
    assert after["included"][0]["score"] == after["included"][1]["score"]
    assert after["warnings"] == [
        f"suspect memory aaa-changed is ranked below current records: scope_hit "
        f"(src/app.py changed since {anchor[:12]})"
    ]
    assert "\n  Suspect: scope_hit; re-verify before relying on it" in after["prompt"]
    assert budget.estimate(after["prompt"]) == after["budget"]["used"]
    warnings = precheck.precheck(ctx, path="src/app.py").warnings
    assert [(w["record_id"], bool(w["suspect"])) for w in warnings] == [("aaa-changed", True), ("bbb-current", False)]
    assert "This memory is suspect (scope_hit)" in warnings[0]["suggested_next_step"]


def test_ttl_and_withdrawn_dependencies_make_records_suspect(repo: Repo) -> None:
    ctx = ctx_of(repo)
    anchor = repo.commit("code", **{"src/app.py": "a\n"})
    record(
        repo, "old", title="Jade old", body="Jade sentinel old.", memkeep=_envelope(anchor, "src/app.py", ttl_days=3)
    )
    record(repo, "base", title="Jade base", body="Jade sentinel base.", status="tombstoned")
    record(repo, "plain", title="Jade plain", body="Jade sentinel plain.")
    record(
        repo,
        "child",
        title="Jade child",
        body="Jade sentinel child.",
        memkeep=_envelope(anchor, "src/app.py", explains=["base", "plain"]),
    )
    reasons = {
        r["record"]["id"]: r["suspect"] and [x["reason"] for x in r["suspect"]["reasons"]]
        for r in search.search(ctx, "jade").results
    }
    assert reasons == {"old": ["ttl_expired"], "child": ["dependency_suspect"], "plain": None}


def test_a_repository_without_commits_does_not_crash(repo: Repo) -> None:
    ctx = ctx_of(repo)
    record(repo, "r", title="Onyx", body="Onyx sentinel.", memkeep=_envelope("a" * 40, "src/**"))
    found = search.search(ctx, "onyx").results
    assert found[0]["suspect"]["reasons"][0]["reason"] == "anchor_unreachable"
    assert context_pack.build(ctx, "onyx").record_ids == ["r"]


def test_records_without_an_envelope_never_open_git(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = ctx_of(repo)
    record(repo, "r", title="Quartz", body="Quartz sentinel.", memory_type="risk", applies_to=("src/",))
    repo.write("src/x", "x\n")  # a path in the working tree: git's index is never read to say it exists

    def refuse(*_: Any) -> None:
        raise AssertionError("git was opened on the common path")

    monkeypatch.setattr("git_memzoi.core.gitview_pygit2.Pygit2RepoView", refuse)
    assert ids(search.search(ctx, "quartz").results) == ["r"]
    assert context_pack.build(ctx, "quartz", path="src/x").record_ids == ["r"]
    assert [w["record_id"] for w in precheck.precheck(ctx, path="src/x").warnings] == ["r"]


def test_recall_over_the_upstream_dogfood_records(repo: Repo, dogfood_records: Path) -> None:
    ctx = ctx_of(repo, dt.datetime(2026, 7, 20, tzinfo=dt.UTC))
    for file in sorted(dogfood_records.glob("*.md")):
        shutil.copyfile(file, ctx.layout.records / file.name)
    found = ids(search.search(ctx, "runtime index proposal").results)
    assert found[0] == "runtime-index-updates-atomically-after-file-proposal-resolution"
    assert "rebuild-runtime-index-after-applying-proposal-files" not in found  # superseded
    pack = context_pack.build(ctx, "apply proposal files and rebuild the runtime index", token_budget=200).to_json()
    assert pack["records"] and budget.estimate(pack["prompt"]) <= 200 and pack["omitted"]
    # Two more warnings matched this task through "and" and "the" alone before stop words were left out (issue 20)
    assert [i["type"] for i in pack["included"]][:3] == ["warning", "decision", "decision"]
    assert "source-installer-can-verify-a-shadowed-binary-directory" not in [r["record"]["id"] for r in pack["records"]]
    warnings = precheck.precheck(ctx, action="source install", command="scripts/install.sh").warnings
    assert [w["record_id"] for w in warnings] == ["source-installer-can-verify-a-shadowed-binary-directory"]
