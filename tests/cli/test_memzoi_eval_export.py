"""``git memzoi eval recall`` and ``git memzoi export`` through the command line: output, JSON and exit codes.

Exit codes of eval (seed "Recall evaluation"): 0 passed; 1 after the printed report when a threshold or the
baseline failed; 2 for usage errors and invalid corpora, with no report.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.repos import PROJECT, Repo, run

OWN = PROJECT / "evals" / "recall"


# ------------------------------------------------------------------------------------------------ eval recall


def test_eval_recall_json_report_and_exit_0(repo: Repo) -> None:
    result = run(
        repo, "eval", "recall", "--corpus", str(OWN / "corpus.yaml"), "--baseline", str(OWN / "baseline.json"), "--json"
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["version"] == "memzoi-recall-report/v2" and report["passed"] is True
    assert report["baseline"]["status"] == "match" and report["runtime"]["isolated_state"] is True
    assert result.stdout.startswith('{\n  "ok": true,\n  "version"')  # pretty JSON, like upstream; ok first


def test_eval_recall_human_output(repo: Repo) -> None:
    result = run(repo, "eval", "recall", "--corpus", str(OWN / "corpus.yaml"))
    lines = result.stdout.splitlines()
    assert result.exit_code == 0
    assert lines[0] == "Memzoi recall evaluation (memzoi-recall-report/v2)"
    assert "mean_recall_at_k:\t1.0" in lines and lines[-1] == "overall:\tPASS"
    assert "PASS\tsearch\tadversarial-hyphen-compound" in lines
    assert all("\t" in line for line in lines[1:])


def test_eval_recall_relative_paths_follow_dash_c(repo: Repo) -> None:
    shutil.copytree(OWN, repo.root / "evals" / "recall")
    result = run(
        repo, "eval", "recall", "--corpus", "evals/recall/corpus.yaml", "--baseline", "evals/recall/baseline.json"
    )
    assert result.exit_code == 0 and "baseline:\tmatch" in result.stdout


def test_invalid_corpus_exits_2_without_a_report(repo: Repo, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(OWN, corpus)
    text = (corpus / "corpus.yaml").read_text("utf-8")
    (corpus / "corpus.yaml").write_text(text.replace("name: git-memzoi-recall-v1\n", "name: x\nextra: 1\n"), "utf-8")
    result = run(repo, "eval", "recall", "--corpus", str(corpus / "corpus.yaml"), "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "ok": False,
        "error": {
            "code": "corpus_unknown_field",
            "message": json.loads(result.stdout)["error"]["message"],
            "exit_code": 2,
        },
    }
    assert "extra: unknown field" in result.stderr
    plain = run(repo, "eval", "recall", "--corpus", str(corpus / "corpus.yaml"))
    assert plain.exit_code == 2 and plain.stdout == ""


def test_update_baseline_requires_baseline(repo: Repo) -> None:
    result = run(repo, "eval", "recall", "--corpus", str(OWN / "corpus.yaml"), "--update-baseline")
    assert result.exit_code == 2 and "--update-baseline requires --baseline" in result.stderr


def test_a_failed_threshold_prints_the_report_then_exits_1(repo: Repo, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(OWN, corpus)
    text = (corpus / "corpus.yaml").read_text("utf-8")
    (corpus / "corpus.yaml").write_text(
        text.replace("  max_estimated_usage: 400\n", "  max_estimated_usage: 1\n"), "utf-8"
    )
    baseline = tmp_path / "baseline.json"
    shutil.copyfile(OWN / "baseline.json", baseline)
    result = run(
        repo,
        "eval",
        "recall",
        "--corpus",
        str(corpus / "corpus.yaml"),
        "--baseline",
        str(baseline),
        "--update-baseline",
    )
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == "overall:\tFAIL"
    assert "thresholds:\tFAIL (max_estimated_usage)" in result.stdout
    assert "the baseline was not written" in result.stderr
    assert baseline.read_bytes() == (OWN / "baseline.json").read_bytes()


def test_an_incompatible_baseline_exits_1(repo: Repo, tmp_path: Path) -> None:
    data = json.loads((OWN / "baseline.json").read_text("utf-8"))
    data["corpus"]["name"] = "another-corpus"
    (tmp_path / "b.json").write_text(json.dumps(data), "utf-8")
    result = run(
        repo, "eval", "recall", "--corpus", str(OWN / "corpus.yaml"), "--baseline", str(tmp_path / "b.json"), "--json"
    )
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["baseline"]["status"] == "incompatible" and all(report["threshold_results"].values())


def test_upstream_trust_corpus_as_a_cold_cli_call(repo: Repo, recall_v2: Path) -> None:
    proc = subprocess.run(
        [
            "git",
            "memzoi",
            "eval",
            "recall",
            "--corpus",
            str(recall_v2 / "corpus.yaml"),
            "--baseline",
            str(recall_v2 / "baseline.json"),
            "--json",
        ],
        cwd=repo.root,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0 and "is not a git command" in proc.stderr:
        pytest.skip("git-memzoi is not on PATH (run through `make test`)")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["passed"] and report["baseline"]["status"] == "match"
    assert report["corpus"]["digest"] == json.loads((recall_v2 / "baseline.json").read_text())["corpus"]["digest"]


# ------------------------------------------------------------------------------------------------ export


def seeded(repo: Repo) -> Repo:
    assert run(repo, "init").exit_code == 0
    for title, kind in (("Never edit the lockfile", "warning"), ("Store money in cents", "decision")):
        result = run(
            repo,
            "propose",
            "--type",
            kind,
            "--title",
            title,
            "--body",
            f"{title}.",
            "--sensitivity",
            "repo-safe",
            "--apply",
            "--json",
        )
        assert result.exit_code == 0, result.stderr
    return repo


def test_export_json_and_byte_stability(repo: Repo) -> None:
    seeded(repo)
    (repo.root / "AGENTS.md").write_text("# Mine\n", "utf-8")
    first = json.loads(run(repo, "export", "agents-md", "--file", "AGENTS.md", "--json").stdout)
    assert first["files"] == [{"path": "AGENTS.md", "action": "appended"}] and first["record_count"] == 2
    snapshot = (repo.root / "AGENTS.md").read_bytes()
    again = json.loads(run(repo, "export", "agents-md", "--file", "AGENTS.md", "--json").stdout)
    assert again["files"] == [{"path": "AGENTS.md", "action": "unchanged"}]
    assert (repo.root / "AGENTS.md").read_bytes() == snapshot and snapshot.startswith(b"# Mine\n\n<!-- BEGIN")
    okf = run(repo, "export", "okf")
    assert okf.exit_code == 0 and okf.stdout.splitlines()[-1] == "exported 2 repo record(s) as okf"
    assert run(repo, "export", "claude-md", "--scope-kind", "team", "--json").exit_code == 0


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["export", "html"], 2),
        (["export", "okf", "--file", "AGENTS.md"], 2),
        (["export", "agents-md", "--file", "../AGENTS.md"], 2),
        (["export", "agents-md", "--scope-kind", "galaxy"], 2),
    ],
)
def test_export_usage_errors(repo: Repo, args: list[str], code: int) -> None:
    seeded(repo)
    result = run(repo, *args, "--json")
    assert result.exit_code == code and "error" in json.loads(result.stdout)
