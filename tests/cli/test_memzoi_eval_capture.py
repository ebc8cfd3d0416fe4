"""``git memzoi eval capture``: the upstream capture-v1 peer suite, the project's own corpus and baseline, strict
corpus validation and the exact baseline comparison (memzoi-spec.md §11).

Exit codes: 0 every case, hard gate and threshold passed and the baseline (if given) matches exactly; 1 after the
printed report otherwise; 2 for usage errors and invalid corpora, with no report.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests.support import repos
from tests.support.repos import PROJECT, Repo

OWN = PROJECT / "evals" / "capture"


def run(repo: Repo, *args: str) -> Result:
    """``git memzoi -C <repo> ...`` on the real clock."""
    return repos.run(repo, *args, env=None)


@pytest.fixture(scope="module")
def upstream(capture_v1: Path) -> dict[str, Any]:
    """One run of the upstream corpus (shared by the assertions below; each case runs in its own temp project)."""
    from git_memzoi.memzoi.eval.capture import run as eval_capture

    return eval_capture.run(capture_v1 / "corpus.yaml").report


def test_peer_suite_every_case_and_gate_passes(upstream: dict[str, Any]) -> None:
    failing = {
        c["id"]: [k for k, ok in c["assertions"].items() if not ok] for c in upstream["cases"] if not c["passed"]
    }
    assert failing == {}
    assert upstream["gates_passed"] is True and upstream["passed"] is True
    assert set(upstream["hard_gates"].values()) == {0}
    assert upstream["corpus"]["digest"] == "blake3:4821c7a64747d6fb44107c6982639cc90ea0b5f0e8b4978a0b0d959bdb3e02af"


def test_peer_suite_totals_match_upstream(upstream: dict[str, Any]) -> None:
    m = upstream["metrics"]
    assert m["case_count"] == 23
    assert (m["candidate_precision"]["numerator"], m["candidate_precision"]["denominator"]) == (25, 25)
    assert (m["candidate_recall"]["numerator"], m["candidate_recall"]["denominator"]) == (25, 25)
    assert (m["evidence_validity"]["valid"], m["evidence_validity"]["checked"]) == (33, 33)
    assert m["forbidden_hits"] == {"hits": 0, "opportunities": 4, "rate": 0.0}
    assert (m["unsupported_outcome_accuracy"]["valid"], m["unsupported_outcome_accuracy"]["checked"]) == (7, 7)
    assert m["review_burden"] == {
        "proposed": 25,
        "accepted": 6,
        "rejected": 9,
        "edited": 6,
        "deferred": 4,
        "duplicates": 5,
        "conflicts": 4,
        "needs_review": 14,
    }
    cases = {c["id"]: c["profile"] for c in upstream["cases"]}
    assert sorted(upstream["profile_metrics"]) == sorted(set(cases.values()))
    assert {p: upstream["profile_metrics"][p]["case_count"] for p in upstream["profile_metrics"]} == {
        "adr-deterministic": 3,
        "git-change-deterministic": 6,
        "instruction-deterministic": 3,
        "markdown-deterministic": 11,
    }


def test_peer_suite_case_outcomes_match_the_upstream_baseline(upstream: dict[str, Any], capture_v1: Path) -> None:
    """Every deterministic per-case field of upstream's baseline, and the aggregate metrics, are reproduced; only
    the Rust-build profile fingerprints differ (memzoi-spec.md §11.4)."""
    from git_memzoi.memzoi.eval.capture import report as eval_capture_report

    theirs = json.loads((capture_v1 / "baseline.json").read_text())
    ours = eval_capture_report.projection(upstream)
    assert ours["cases"] == theirs["cases"]
    assert ours["metrics"] == theirs["metrics"] and ours["profile_metrics"] == theirs["profile_metrics"]
    assert ours["hard_gates"] == theirs["hard_gates"] and ours["corpus"] == theirs["corpus"]
    comparison = eval_capture_report.compare(theirs, ours)
    assert (comparison["status"], comparison["profiles_changed"], comparison["changed_cases"]) == ("changed", True, [])


def test_own_corpus_matches_its_baseline(repo: Repo) -> None:
    result = run(
        repo,
        "eval",
        "capture",
        "--corpus",
        str(OWN / "corpus.yaml"),
        "--baseline",
        str(OWN / "baseline.json"),
        "--json",
    )
    report = json.loads(result.stdout)
    failing = {c["id"]: [k for k, ok in c["assertions"].items() if not ok] for c in report["cases"] if not c["passed"]}
    assert failing == {} and result.exit_code == 0, result.stderr
    assert report["baseline"]["status"] == "match" and report["passed"] is True
    assert len(report["cases"]) >= 20 and len(report["profile_metrics"]) == 4
    assert report["metrics"]["candidate_precision"]["value"] == 1.0 and report["metrics"]["forbidden_hits"]["hits"] == 0


def test_own_corpus_human_output(repo: Repo) -> None:
    result = run(repo, "eval", "capture", "--corpus", str(OWN / "corpus.yaml"))
    lines = result.stdout.splitlines()
    assert result.exit_code == 0
    assert lines[0] == "Memzoi capture evaluation (memzoi-capture-report/v1)"
    assert "hard_gates:\tPASS" in lines and lines[-1] == "overall:\tPASS"
    assert "PASS\tmarkdown-deterministic\tmd-credential-blocked" in lines


def _broken(tmp_path: Path, edit: Any) -> Path:
    folder = tmp_path / "corpus"
    shutil.copytree(OWN, folder)
    path = folder / "corpus.yaml"
    path.write_text(edit(path.read_text()))
    return path


@pytest.mark.parametrize(
    ("edit", "code"),
    [
        (
            lambda t: t.replace("version: memzoi-capture-corpus/v1", "version: memzoi-capture-corpus/v9"),
            "corpus_invalid",
        ),
        (lambda t: t.replace("cases:\n", "surprise: 1\ncases:\n", 1), "corpus_invalid"),
        (lambda t: t.replace("fixtures/onboarding.md", "fixtures/missing.md"), "corpus_invalid_fixture"),
        (lambda t: t.replace("fixtures/onboarding.md", "../outside.md"), "corpus_unsafe_fixture_path"),
        (lambda t: t.replace("coverage: [credential]", "coverage: [credential, rename]"), "corpus_invalid"),
        (lambda t: t.replace(": [", ": [", 1) + "\n  - {id: x\n", "corpus_invalid_yaml"),
    ],
)
def test_invalid_corpus_exits_2_without_a_report(repo: Repo, tmp_path: Path, edit: Any, code: str) -> None:
    corpus = str(_broken(tmp_path, edit))
    result = run(repo, "eval", "capture", "--corpus", corpus, "--json")
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == code
    assert "version" not in json.loads(result.stdout)  # an error envelope, never a report
    plain = run(repo, "eval", "capture", "--corpus", corpus)
    assert plain.exit_code == 2 and plain.stdout == "" and len(plain.stderr.strip().splitlines()) == 1


def test_update_baseline_requires_baseline(repo: Repo) -> None:
    result = run(repo, "eval", "capture", "--corpus", str(OWN / "corpus.yaml"), "--update-baseline")
    assert result.exit_code == 2 and "--update-baseline requires --baseline" in result.stderr


def test_a_changed_baseline_fails_and_update_rewrites_it(repo: Repo, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    data = json.loads((OWN / "baseline.json").read_text())
    data["cases"][0]["matched_candidates"] = []
    baseline.write_text(json.dumps(data))
    result = run(repo, "eval", "capture", "--corpus", str(OWN / "corpus.yaml"), "--baseline", str(baseline), "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 1 and report["baseline"]["status"] == "changed"
    assert report["baseline"]["changed_cases"] == [data["cases"][0]["id"]] and report["gates_passed"] is True
    result = run(
        repo, "eval", "capture", "--corpus", str(OWN / "corpus.yaml"), "--baseline", str(baseline), "--update-baseline"
    )
    assert result.exit_code == 0 and "baseline:\tmatch; written" in result.stdout
    assert baseline.read_text() == (OWN / "baseline.json").read_text()


def test_the_project_is_never_opened(repo: Repo) -> None:
    before = sorted(p.relative_to(repo.root).as_posix() for p in repo.root.rglob("*"))
    run(repo, "eval", "capture", "--corpus", str(OWN / "corpus.yaml"))
    assert sorted(p.relative_to(repo.root).as_posix() for p in repo.root.rglob("*")) == before
