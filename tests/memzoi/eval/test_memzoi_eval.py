"""``eval recall`` end to end: strict corpus validation, the digest, the isolated run, metrics and the baseline.

The upstream trust corpus (``../shared/conformance/memzoi/recall-v2``) is read in place and is the acceptance
test; those tests skip where ``../shared`` is absent (a user's clone). The project's own corpus
(``evals/recall/``) always runs. Validation cases mutate a copy of the project's corpus in tmp_path.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.errors import InputError
from git_memzoi.memzoi.eval import report as eval_report
from git_memzoi.memzoi.eval.recall import catalog as eval_catalog
from git_memzoi.memzoi.eval.recall import run as eval_recall
from git_memzoi.memzoi.eval.recall.corpus import CorpusError
from git_memzoi.memzoi.recall import pack as context_pack
from tests.support.repos import PROJECT, Repo

OWN = PROJECT / "evals" / "recall"


def own_copy(tmp_path: Path) -> Path:
    """A scratch copy of the project's own corpus, to mutate."""
    target = tmp_path / "corpus"
    shutil.copytree(OWN, target)
    return target / "corpus.yaml"


def edit(corpus: Path, old: str, new: str) -> Path:
    text = corpus.read_text("utf-8")
    assert text.count(old) == 1, old
    corpus.write_text(text.replace(old, new), "utf-8")
    return corpus


def code_of(corpus: Path) -> str:
    with pytest.raises(CorpusError) as info:
        eval_catalog.load(corpus)
    return info.value.code


# ------------------------------------------------------------------------------------------------ upstream corpus


def test_recall_v2_digest_equals_the_baseline(recall_v2: Path) -> None:
    baseline = json.loads((recall_v2 / "baseline.json").read_text("utf-8"))
    corpus = eval_catalog.load(recall_v2 / "corpus.yaml")
    assert (
        corpus.digest
        == baseline["corpus"]["digest"]
        == ("c8b444043b1594a8b84724cc32594896218458f5ef69405d364cf5e0fb1cb3cd")
    )
    assert dict(corpus.opportunities) == {
        "stale": 2,
        "expired": 1,
        "scope": 4,
        "prohibited": 1,
        "destination": 4,
        "other": 2,
        "forbidden": 14,
    }


def test_recall_v2_passes_every_threshold_and_matches_the_baseline(tmp_path: Path, recall_v2: Path) -> None:
    result = eval_recall.run(recall_v2 / "corpus.yaml", baseline=recall_v2 / "baseline.json")
    report = result.report
    assert result.passed and all(report["threshold_results"].values()), report["threshold_results"]
    assert report["baseline"]["status"] == "match", report["baseline"]
    m = report["metrics"]
    assert (m["search"]["mean_recall_at_k"], m["search"]["mean_mrr"]) == (1.0, 1.0)
    assert (m["precheck"]["precision"]["value"], m["precheck"]["recall"]["value"]) == (1.0, 1.0)
    assert all(m["leakage"][c]["hits"] == 0 for c in m["leakage"])
    assert m["citation_integrity"]["rate"] == m["provenance_integrity"]["rate"] == 1.0
    assert m["case_pass_rate"] == {"numerator": 14, "denominator": 14, "value": 1.0}
    usage = {c["id"]: c.get("estimated_usage") for c in report["cases"] if c["surface"] == "context"}
    assert usage == {
        "context-default-plane": 329,
        "context-local-opt-in": 354,
        "context-session-opt-in": 354,
        "context-all-planes-opt-in": 379,
    }
    assert report["proposal_fixtures"][0]["passed"] is True
    assert list(report) == [
        "version",
        "corpus",
        "definitions",
        "runtime",
        "proposal_fixtures",
        "cases",
        "metrics",
        "thresholds",
        "threshold_results",
        "baseline",
        "passed",
    ]
    # the deterministic projection of this run is upstream's baseline, byte for byte
    written = tmp_path / "baseline.json"
    eval_recall.run(recall_v2 / "corpus.yaml", baseline=written, update_baseline=True)
    assert written.read_bytes() == (recall_v2 / "baseline.json").read_bytes()


# ------------------------------------------------------------------------------------------------ own corpus


def test_own_corpus_passes_and_its_baseline_is_current() -> None:
    result = eval_recall.run(OWN / "corpus.yaml", baseline=OWN / "baseline.json")
    failed = [c["id"] for c in result.report["cases"] if not c["passed"]]
    assert result.passed, (failed, result.report["threshold_results"], result.report["baseline"])
    assert result.report["baseline"]["status"] == "match", result.report["baseline"]
    cases = result.report["cases"]
    assert len(cases) >= 30 and {c["surface"] for c in cases} == {"search", "precheck", "context", "write_gate"}
    assert sum(c["id"].startswith("adversarial-") for c in cases) >= 8
    assert sum(c["id"].startswith("staleness-") for c in cases) == 2
    assert sum(c["id"].startswith("relation-") for c in cases) == 5


def test_own_relation_cases_follow_depends_on() -> None:
    from git_memzoi.memzoi import related

    corpus = eval_catalog.load(OWN / "corpus.yaml")
    with eval_recall.sandbox(corpus) as box:
        found = related.related(box.ws, "sandbox-keys-record", direction="incoming").to_json()
        assert [(r["record"]["id"], r["via"]["role"]) for r in found["related"]] == [
            ("quota-alerts-page-at-forty-requests", "depends_on")
        ]
        assert found["related"][0]["suspect"]["reasons"][0]["message"] == "depends on sandbox-keys-record (suspect)"
        missing = related.related(box.ws, "billing-retries-follow-the-queue-backoff").to_json()
        assert [b["target"] for b in missing["broken"]] == ["billing-queue-draft"]
        assert missing["record"]["statements"]["statements"][0]["category"] == "fact"


def test_own_staleness_cases_rank_suspect_records_below_current_ones() -> None:
    corpus = eval_catalog.load(OWN / "corpus.yaml")
    with eval_recall.sandbox(corpus) as box:
        pack = context_pack.build(box.ws, "price TTL", token_budget=500).to_json()
        order = [(r["record"]["id"], r["suspect"] is not None) for r in pack["records"]]
        assert order == [("price-cache-ttl-is-five-minutes", False), ("price-cache-invalidation-races", True)]
        assert pack["records"][1]["score"] > pack["records"][0]["score"]  # it outscores the fact, yet ranks below
        reasons = [r["reason"] for r in pack["records"][1]["suspect"]["reasons"]]
        assert reasons == ["ttl_expired", "anchor_unreachable"]
        assert any("price-cache-invalidation-races" in w for w in pack["warnings"])


def test_the_sandbox_is_a_fresh_git_repository_that_is_removed_afterwards(tmp_path: Path) -> None:
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    corpus = eval_catalog.load(OWN / "corpus.yaml")
    with eval_recall.sandbox(corpus) as box:
        root = box.ws.layout.root
        view = Pygit2RepoView(root)
        # a corpus with memkeep entries gets the one fixed root commit (an empty tree) they anchor at
        assert view.root == root.resolve() and view.head() == eval_recall.EVAL_ROOT
        assert sorted(p.name for p in (root / "agent-memory/entries").glob("*.md")) == sorted(
            Path(e.path).name for e in corpus.entries
        )
        assert Repo(root).git("status", "--porcelain", "--untracked-files=no") == ""
        assert sorted(p.name for p in (root / ".memzoi" / "records").glob("*.md")) == sorted(
            [Path(r.path).name for r in corpus.records] + ["emit-structured-json-logs.md"]
        )
        assert box.ws.actor == "memzoi-eval" and box.ws.clock.now() == corpus.evaluated_at
    assert not root.exists()


def test_the_current_project_is_never_opened_or_mutated(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    from git_memzoi.memzoi import workspace

    workspace.init(repo.root)
    (repo.root / ".memzoi" / "records" / "note.md").write_text("not a record", "utf-8")
    before = {p: p.read_bytes() for p in sorted(repo.root.rglob("*")) if p.is_file()}
    monkeypatch.chdir(repo.root)
    assert eval_recall.run(OWN / "corpus.yaml").passed
    after = {p: p.read_bytes() for p in sorted(repo.root.rglob("*")) if p.is_file()}
    assert after == before


# ------------------------------------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    ("old", "new", "code"),
    [
        ("name: git-memzoi-recall-v1\n", "name: git-memzoi-recall-v1\nlabels: [x]\n", "corpus_unknown_field"),
        ("    query: lockfile\n", "    query: lockfile\n    limit: 3\n", "corpus_unknown_field"),
        ("  max_estimated_usage: 400\n", "  max_estimated_usage: 400\n  min_speed: 1\n", "corpus_unknown_field"),
        ("    expected_source_kind: path\n", "    expected_source_kind: path\n    note: x\n", "corpus_unknown_field"),
        (
            "    lane: session\n    title: Migration session notes\n",
            "    lane: session\n    tags: [x]\n    title: Migration session notes\n",
            "corpus_unknown_field",
        ),
        (
            "      stale: [use-yarn-classic-workspaces]\n",
            "      leaked: [use-yarn-classic-workspaces]\n",
            "corpus_unknown_forbidden_category",
        ),
        (
            "      stale: [use-yarn-classic-workspaces]\n",
            "      stale: [use-pnpm-workspaces]\n",
            "corpus_forbidden_overlap",
        ),
        (
            "      stale: [use-yarn-classic-workspaces]\n",
            "      stale: [use-yarn-classic-workspaces, use-yarn-classic-workspaces]\n",
            "corpus_forbidden_overlap",
        ),
        (
            "      stale: [use-yarn-classic-workspaces]\n",
            "      stale: [use-yarn-classic-workspaces]\n      other: [use-yarn-classic-workspaces]\n",
            "corpus_forbidden_overlap",
        ),
        (
            "      stale: [use-yarn-classic-workspaces]\n",
            "      stale: [release-checklist]\n",
            "corpus_forbidden_semantics",
        ),
        (
            "      expired: [temporary-deploy-freeze]\n",
            "      expired: [release-checklist]\n",
            "corpus_forbidden_semantics",
        ),
        (
            "      scope: [team-platform-owns-the-invoice-queue]\n",
            "      scope: [payments-team-reviews-rounding-changes]\n",
            "corpus_forbidden_semantics",
        ),
        ("      scope: [search-index-has-no-migrations]\n", "      scope: [release-checklist]\n", None),
        (
            "    include_local: true\n",
            "    include_local: true\n    include_session: true\n",
            "corpus_forbidden_semantics",
        ),
        ("      stale: [use-yarn-classic-workspaces]\n", "      stale: [no-such-record]\n", "corpus_unknown_record"),
        (
            "    relevant_ids: [never-edit-the-lockfile-by-hand]\n    type: warning\n",
            "    relevant_ids: [never-edit-the-lockfile-by-hand-2]\n    type: warning\n",
            "corpus_unknown_record",
        ),
        ("version: memzoi-recall-corpus/v2\n", "version: memzoi-recall-corpus/v1\n", "corpus_unsupported_version"),
        ("  min_mean_mrr: 1.0\n", "  min_mean_mrr: 1.5\n", "corpus_invalid_value"),
        ("  min_mean_mrr: 1.0\n", "", "corpus_missing_field"),
        ("    type: warning\n    k: 1\n", "    type: warning\n    k: 101\n", "corpus_invalid_value"),
        ("    sensitivity: secret\n", "    sensitivity: repo-safe\n", "corpus_invalid_value"),
        (
            "  - surface: search\n    id: money-in-integer-cents\n",
            "  - surface: lookup\n    id: money-in-integer-cents\n",
            "corpus_unknown_surface",
        ),
        ("    id: lane-filter-release\n", "    id: money-in-integer-cents\n", "corpus_duplicate_id"),
        (
            "    forbidden_record_id: quote-cache-warmup\n",
            "    forbidden_record_id: release-checklist\n",
            "corpus_forbidden_semantics",
        ),
        ("evaluated_at: 2026-09-01T12:00:00Z\n", "evaluated_at: 2026-09-01\n", "corpus_invalid_value"),
        ("name: git-memzoi-recall-v1\n", "name: [unclosed\n", "corpus_invalid_yaml"),
        ("name: git-memzoi-recall-v1\n", "name: git-memzoi-recall-v1\nname: again\n", "corpus_invalid_yaml"),
        ("    action: bump Node.js\n", "    action: bump Node.js\n    path: web/package.json\n", None),
        # the both-stores extension
        ("    store: records\n", "    store: both\n", "corpus_invalid_value"),
        (
            "      thumbnail-workers-use-libvips: ttl_expired\n",
            "      thumbnail-workers-use-libvips: old\n",
            "corpus_invalid_value",
        ),
        (
            "    expect_trusted: [webhook-signatures-use-hmac]\n    expect_before",
            "    expect_trusted: [nowhere]\n    expect_before",
            "corpus_unknown_record",
        ),
        (
            "    expect_before: [[webhook-signatures-use-hmac, webhook-retries-back-off]]\n",
            "    expect_before: [[webhook-signatures-use-hmac]]\n",
            "corpus_invalid_value",
        ),
        (
            "  - webhook-signatures-use-hmac.md\nproposals_root",
            "  - ../records/release-checklist.md\nproposals_root",
            "corpus_unsafe_fixture_path",
        ),
    ],
)
def test_validation_codes(tmp_path: Path, old: str, new: str, code: str | None) -> None:
    corpus = edit(own_copy(tmp_path), old, new)
    if code is None:
        eval_catalog.load(corpus)  # the control: a valid variation loads
    else:
        assert code_of(corpus) == code


@pytest.mark.parametrize(
    "path",
    [
        "../outside.md",
        "/etc/passwd.md",
        "sub/../x.md",
        "./x.md",
        "index.md",
        "log.md",
        "notes.txt",
        "missing.md",
        "C:/x.md",
        "a\\b.md",
    ],
)
def test_record_fixture_paths_must_stay_below_the_corpus(tmp_path: Path, path: str) -> None:
    corpus = own_copy(tmp_path)
    (corpus.parent.parent / "outside.md").write_text("---\n---\n", "utf-8")
    (corpus.parent / "records" / "index.md").write_text("# index\n", "utf-8")
    edit(corpus, "  - cache-store-flushes-on-deploy.md\n", f"  - cache-store-flushes-on-deploy.md\n  - '{path}'\n")
    assert code_of(corpus) == "corpus_unsafe_fixture_path"


def test_symlinks_are_refused_anywhere_on_the_way(tmp_path: Path) -> None:
    corpus = own_copy(tmp_path)
    records = corpus.parent / "records"
    (records / "linked.md").symlink_to(records / "release-checklist.md")
    edit(corpus, "  - release-checklist.md\n", "  - linked.md\n")
    assert code_of(corpus) == "corpus_unsafe_fixture_path"
    corpus = own_copy(tmp_path / "second")
    real = corpus.parent / "real-records"
    (corpus.parent / "records").rename(real)
    (corpus.parent / "records").symlink_to(real)
    assert code_of(corpus) == "corpus_unsafe_fixture_path"
    corpus = own_copy(tmp_path / "third")
    edit(corpus, "  - path: adopt-structured-logging.md\n", "  - path: ../records/release-checklist.md\n")
    assert code_of(corpus) == "corpus_unsafe_fixture_path"


def test_semantic_coverage_rules(tmp_path: Path) -> None:
    corpus = own_copy(tmp_path)
    text = corpus.read_text("utf-8")
    corpus.write_text(
        text[: text.index("  # ---------------------------------------------------------------- write")], "utf-8"
    )
    assert code_of(corpus) == "corpus_missing_surface"
    corpus = own_copy(tmp_path / "b")  # every expired opportunity removed (the retention and the validity ones)
    text = corpus.read_text("utf-8")
    assert text.count("      expired: [") == 7
    corpus.write_text(re.sub(r"    forbidden:\n      expired: \[[^\]]*\]\n", "", text), "utf-8")
    assert code_of(corpus) == "corpus_missing_opportunity"


def test_an_invalid_fixture_record_is_named(tmp_path: Path) -> None:
    corpus = own_copy(tmp_path)
    record = corpus.parent / "records" / "release-checklist.md"
    record.write_text(record.read_text("utf-8").replace("status: active", "status: current"), "utf-8")
    with pytest.raises(CorpusError) as info:
        eval_catalog.load(corpus)
    assert info.value.code == "corpus_invalid_fixture" and "release-checklist.md" in info.value.message


def test_a_runtime_fixture_id_must_be_what_the_runtime_writes(tmp_path: Path) -> None:
    corpus = own_copy(tmp_path)
    corpus.write_text(
        corpus.read_text("utf-8").replace("local-migration-scratch-database-on-port-5433", "local-scratch-db"), "utf-8"
    )
    eval_catalog.load(corpus)  # statically fine: the id is only known once the runtime has written it
    with pytest.raises(CorpusError) as info:
        eval_recall.run(corpus)
    assert info.value.code == "corpus_fixture_mismatch"


def test_digest_is_length_prefixed_blake3_over_corpus_records_then_proposals(tmp_path: Path) -> None:
    from blake3 import blake3

    corpus = eval_catalog.load(OWN / "corpus.yaml")
    stream = b""
    entries = [("corpus.yaml", (OWN / "corpus.yaml").read_bytes())]
    entries += [(f"records/{p.name}", p.read_bytes()) for p in sorted((OWN / "records").glob("*.md"))]
    entries += [(f"proposals/{p.name}", p.read_bytes()) for p in sorted((OWN / "proposals").glob("*.md"))]
    entries += [(f"entries/{p.name}", p.read_bytes()) for p in sorted((OWN / "entries").glob("*.md"))]  # extension
    for name, data in entries:
        stream += struct.pack("<Q", len(name)) + name.encode() + struct.pack("<Q", len(data)) + data
    assert corpus.digest == blake3(stream).hexdigest()
    assert corpus.digest == json.loads((OWN / "baseline.json").read_text("utf-8"))["corpus"]["digest"]


# ------------------------------------------------------------------------------------------------ metrics and baseline


def test_percentiles_are_nearest_rank() -> None:
    assert eval_report.percentile([], 0.95) == 0
    assert eval_report.percentile([5], 0.5) == 5
    assert eval_report.percentile([1, 2, 3, 4], 0.5) == 2
    assert eval_report.percentile(list(range(1, 21)), 0.95) == 19
    assert eval_report.percentile(list(range(1, 21)), 1.0) == 20


def test_baseline_statuses(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    shutil.copyfile(OWN / "baseline.json", baseline)
    data: dict[str, Any] = json.loads(baseline.read_text("utf-8"))
    data["cases"][0]["retrieved_ids"] = ["something-else"]
    data["metrics"]["estimated_usage_total"] += 7
    baseline.write_text(json.dumps(data), "utf-8")
    result = eval_recall.run(OWN / "corpus.yaml", baseline=baseline)
    changed = result.report["baseline"]
    assert result.passed and changed["status"] == "changed" and changed["written"] is False
    assert changed["changed_cases"] == [data["cases"][0]["id"]]
    assert changed["metric_deltas"] == [
        {
            "metric": "estimated_usage_total",
            "baseline": data["metrics"]["estimated_usage_total"],
            "current": data["metrics"]["estimated_usage_total"] - 7,
            "delta": -7,
        }
    ]
    data["corpus"]["digest"] = "0" * 64
    baseline.write_text(json.dumps(data), "utf-8")
    result = eval_recall.run(OWN / "corpus.yaml", baseline=baseline)
    assert not result.passed and result.gates_passed
    assert result.report["baseline"]["status"] == "incompatible"
    assert result.report["baseline"]["incompatibilities"][0]["field"] == "corpus.digest"


def test_update_baseline_writes_only_after_every_threshold_passed(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        eval_recall.run(OWN / "corpus.yaml", update_baseline=True)
    assert info.value.code == "bad_usage"
    corpus = edit(
        own_copy(tmp_path), "  max_estimated_usage: 400\n", "  max_estimated_usage: 400\n  max_p95_latency_ms: 0\n"
    )
    baseline = tmp_path / "baseline.json"
    shutil.copyfile(OWN / "baseline.json", baseline)
    os.utime(baseline, ns=(1, 1))
    result = eval_recall.run(corpus, baseline=baseline, update_baseline=True)
    assert not result.gates_passed and not result.baseline_written
    assert result.report["threshold_results"]["max_p95_latency_ms"] is False
    assert result.report["baseline"]["status"] == "incompatible"  # the corpus changed: its digest differs
    assert baseline.read_bytes() == (OWN / "baseline.json").read_bytes() and baseline.stat().st_mtime_ns == 1
    (tmp_path / "not-a-baseline.json").write_text("{}\n", "utf-8")
    with pytest.raises(eval_report.BaselineError):  # never overwrite a file that is not a baseline
        eval_recall.run(OWN / "corpus.yaml", baseline=tmp_path / "not-a-baseline.json", update_baseline=True)
    assert (tmp_path / "not-a-baseline.json").read_text("utf-8") == "{}\n"
    fresh = tmp_path / "fresh.json"
    result = eval_recall.run(OWN / "corpus.yaml", baseline=fresh, update_baseline=True)
    assert result.baseline_written and result.report["baseline"]["previous_status"] is None
    assert fresh.read_bytes() == (OWN / "baseline.json").read_bytes()


def test_a_missing_or_broken_baseline_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(eval_report.BaselineError) as info:
        eval_recall.run(OWN / "corpus.yaml", baseline=tmp_path / "none.json")
    assert info.value.code == "missing_baseline"
    (tmp_path / "bad.json").write_text("[1, 2]", "utf-8")
    with pytest.raises(eval_report.BaselineError) as info:
        eval_recall.run(OWN / "corpus.yaml", baseline=tmp_path / "bad.json")
    assert info.value.code == "invalid_baseline"


def test_an_as_of_case_checks_its_forbidden_ids_at_its_own_instant(tmp_path: Path) -> None:
    # at 2026-09-01T12:00:00Z the freeze has ended: forbidding the rule then in force is a contradiction
    corpus = edit(own_copy(tmp_path), '    as_of: "2026-09-01T11:59:59.999Z"\n', '    as_of: "2026-09-01T12:00:00Z"\n')
    with pytest.raises(CorpusError) as info:
        eval_catalog.load(corpus)
    assert (info.value.code, info.value.message) == (
        "corpus_forbidden_semantics",
        "cases[57] (as-of-one-millisecond-before-the-freeze-ends).forbidden.expired: 'refunds-need-a-second-reviewer':"
        " an expired id must be status expired, past its retention boundary or outside its validity at its as_of",
    )
    bad = edit(own_copy(tmp_path / "b"), '    as_of: "2026-09-02"\n', '    as_of: "2026-09-02T00:00:00"\n')
    with pytest.raises(CorpusError) as zone:
        eval_catalog.load(bad)
    assert zone.value.code == "corpus_invalid_value" and "has no zone" in zone.value.message
