"""``git memkeep status --format sarif`` on a real repository: every result has a location (the entry file, the
line of the field it is about), and the log validates against the SARIF 2.1.0 schema (kept in ``data/``, see
``data/SOURCES.md``) and against GitHub code scanning's upload rules, which reject a whole upload when one result
has no location (``locationFromSarifResult: expected at least one location``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from git_memzoi.cli.memkeep import cli as memkeep_cli
from git_memzoi.integrations import ci_report
from tests.support.repos import Repo, entry_text

DATA = Path(__file__).parent / "data"


def github_upload_problems(log: dict[str, Any], root: Path) -> list[str]:
    """What GitHub's SARIF upload (docs: "SARIF support for code scanning") refuses or cannot show: no runs or
    more than 20, a run without ``tool.driver.name`` or with more than 25 000 results, a result without a
    message text, without at least one location (or with more than 1000), a location without a relative
    ``artifactLocation.uri`` naming a file of the repository or without a ``region.startLine`` ≥ 1, a ``ruleId``
    missing from the driver's rules."""
    problems = []
    runs = log.get("runs") or []
    if log.get("version") != "2.1.0" or not 1 <= len(runs) <= 20:
        problems.append("version 2.1.0 with 1 to 20 runs")
    for run in runs:
        driver = run.get("tool", {}).get("driver", {})
        if not driver.get("name"):
            problems.append("tool.driver.name")
        rules = {r["id"] for r in driver.get("rules", [])}
        results = run.get("results", [])
        if len(results) > 25_000:
            problems.append("more than 25000 results")
        for n, result in enumerate(results):
            if not result.get("message", {}).get("text"):
                problems.append(f"result {n}: message.text")
            if result.get("ruleId") not in rules:
                problems.append(f"result {n}: ruleId not in the rules")
            locations = result.get("locations") or []
            if not 1 <= len(locations) <= 1000:
                problems.append(f"result {n}: expected at least one location")
            for location in locations:
                physical = location.get("physicalLocation", {})
                uri = physical.get("artifactLocation", {}).get("uri", "")
                if not uri or uri.startswith("/") or "://" in uri or not (root / uri).is_file():
                    problems.append(f"result {n}: uri {uri!r} is not a repository file")
                if not physical.get("region", {}).get("startLine", 0) >= 1:
                    problems.append(f"result {n}: region.startLine")
    return problems


@pytest.fixture
def findings(repo: Repo) -> Repo:
    """One entry of each finding: scope_hit, stale, unchecked (no scope), an unreadable file."""
    base = repo.commit("base", **{"src/a.py": "1\n"})
    repo.commit(
        "entries",
        **{
            "agent-memory/entries/hit.md": entry_text("hit", anchor=base, scope=["src/**"]),
            "agent-memory/entries/old.md": entry_text("old", anchor=base, scope=["docs/**"], status="stale"),
            "agent-memory/entries/free.md": entry_text("free", anchor=base),
            "agent-memory/entries/bad.md": "---\nid: [\n---\nbroken\n",
        },
    )
    repo.commit("change", **{"src/a.py": "2\n"})
    return repo


def sarif_log(repo: Repo) -> dict[str, Any]:
    result = CliRunner().invoke(memkeep_cli, ["-C", str(repo.root), "status", "--format", "sarif"])
    assert result.exit_code == 1, result.output
    return json.loads(result.output)


def test_every_result_has_the_entry_file_and_the_field_line(findings: Repo) -> None:
    results = sarif_log(findings)["runs"][0]["results"]
    where = {
        (r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]): r["locations"][0][
            "physicalLocation"
        ]["region"]["startLine"]
        for r in results
    }
    # entry_text: line 5 is status:, 9 scope:; the YAML parser names line 3 of the broken file (its closing ---)
    assert where == {
        ("unreadable/bad_frontmatter", "agent-memory/entries/bad.md"): 3,
        ("scope_hit", "agent-memory/entries/hit.md"): 9,
        ("stale", "agent-memory/entries/old.md"): 5,
        ("unchecked/scope", "agent-memory/entries/free.md"): 1,
    }


def test_the_log_validates_against_the_sarif_2_1_0_schema(findings: Repo) -> None:
    schema = json.loads((DATA / "sarif-2.1.0.json").read_text("utf-8"))
    validator = jsonschema.Draft4Validator(schema)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(sarif_log(findings))]
    assert errors == []


def test_the_log_passes_githubs_upload_rules(findings: Repo) -> None:
    assert github_upload_problems(sarif_log(findings), findings.root) == []


def test_the_upload_rules_refuse_a_result_without_a_location(findings: Repo) -> None:
    log = sarif_log(findings)
    del log["runs"][0]["results"][0]["locations"]
    assert github_upload_problems(log, findings.root) == ["result 0: expected at least one location"]


def test_field_line_reads_only_the_frontmatter() -> None:
    text = "---\nid: a\nscope:\n  - src/**\n---\nscope: in the body\n"
    assert ci_report.field_line(text, "scope") == 3
    assert ci_report.field_line(text, "explains") == 1
    assert ci_report.field_line("no frontmatter\nscope: x\n", "scope") == 1
    assert ci_report.field_line(None, "scope") == 1
