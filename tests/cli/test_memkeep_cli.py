"""``git memkeep`` command line: store discovery, errors, hooks, lint, verify and the exit-code contract.

Commands run in-process through click's CliRunner against real repositories in tmp_path; the exit-code
contract (0 clean, 1 suspect or violation, 2 tool error) is also pinned through a real subprocess.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests.support.repos import TODAY, Repo, entry_text, invoke, memkeep

STORE = "agent-memory"


# --------------------------------------------------------------------------------------------- helpers


def put(
    repo: Repo, entry_id: str, *, anchor: str | None, scope: list[str] | None = None, store: str = STORE, **kw: Any
) -> Path:
    """Write one valid entry into ``store``; return its file."""
    text = entry_text(entry_id, anchor=anchor, scope=scope, **kw)
    if anchor:  # an id of digits only (or digits and one `e`) would load as a YAML number
        text = text.replace(f"\nanchor: {anchor}\n", f"\nanchor: '{anchor}'\n")
    return repo.write(f"{store}/entries/{entry_id}.md", text)


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    """Invoke the CLI in-process; never a traceback, never an internal error."""
    return memkeep(*args, env=env)


def in_repo(repo: Repo, *args: str, env: dict[str, str] | None = None) -> Any:
    return run("-C", str(repo.root), *args, env=env)


def as_json(result: Any) -> dict[str, Any]:
    return json.loads(result.stdout)


def error_code(result: Any) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    return as_json(result)["error"]["code"]


def pairs(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(v["id"], v["reason"]) for v in data["verdicts"]]


@pytest.fixture
def base(repo: Repo) -> Repo:
    """A repository with two commits: src/a.py edited after the first (``repo.first``)."""
    repo.first = repo.commit_paths("first", {"src/a.py": "a\n", "docs/d.md": "d\n"})
    repo.commit_paths("second", {"src/a.py": "a2\n"})
    return repo


# ------------------------------------------------------------------------------------- store discovery


def _stores(repo: Repo) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    for name in ("explicit", "envstore", "custom", "cfgstore", STORE):
        put(repo, f"in-{name}", anchor=head, scope=["src/**"], store=name)


def _store_of(repo: Repo, *args: str, env: dict[str, str] | None = None) -> str:
    result = in_repo(repo, "status", "--json", *args, env=env)
    assert result.exit_code == 0, result.output
    data = as_json(result)
    assert [v for v in data["verdicts"]] == []
    return data["store"]


def test_store_precedence(repo: Repo) -> None:
    _stores(repo)
    env = {"MEMKEEP_STORE": "envstore"}
    assert _store_of(repo) == STORE  # default
    repo.write(".memkeep.yml", "store_dir: cfgstore\n")
    assert _store_of(repo) == "cfgstore"  # .memkeep.yml > default
    assert _store_of(repo, "--store-dir", "custom") == "custom"  # --store-dir > .memkeep.yml
    assert _store_of(repo, "--store-dir", "custom", env=env) == "envstore"  # MEMKEEP_STORE > --store-dir
    assert _store_of(repo, "--store", "explicit", "--store-dir", "custom", env=env) == "explicit"  # --store wins


def test_store_options_accepted_before_the_subcommand(repo: Repo) -> None:
    _stores(repo)
    result = run("-C", str(repo.root), "--store-dir", "custom", "status", "--json")
    assert (result.exit_code, as_json(result)["store"]) == (0, "custom")
    result = run("--store", str(repo.root / "explicit"), "-C", str(repo.root), "status", "--json")
    assert (result.exit_code, as_json(result)["store"]) == (0, "explicit")


def test_explicit_store_beats_environment_wherever_it_is_given(repo: Repo) -> None:
    """`--store` before the subcommand is as explicit as after it: MEMKEEP_STORE must not override it."""
    _stores(repo)
    env = {"MEMKEEP_STORE": "envstore"}
    assert _store_of(repo, "--store", "explicit", env=env) == "explicit"
    result = run("--store", "explicit", "-C", str(repo.root), "status", "--json", env=env)
    assert (result.exit_code, as_json(result)["store"]) == (0, "explicit")


def test_discovery_walks_up_from_a_subdirectory(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    head = repo.commit_paths("base", {"src/deep/er/x.py": "x\n"})
    put(repo, "top", anchor=head, scope=["src/**"])
    monkeypatch.chdir(repo.root / "src" / "deep" / "er")
    result = run("status", "--json")
    assert (result.exit_code, as_json(result)["store"]) == (0, STORE)
    assert as_json(result)["summary"]["entries"] == 1
    # a nearer store wins over the one at the root
    put(repo, "nested", anchor=head, scope=["src/**"], store=f"src/deep/{STORE}")
    result = run("status", "--json")
    assert as_json(result)["store"] == f"src/deep/{STORE}"
    # -C points somewhere else entirely
    result = run("-C", str(repo.root), "status", "--json")
    assert as_json(result)["store"] == STORE


def test_nearest_memkeep_yml_is_read_when_started_below(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    head = repo.commit_paths("base", {"pkg/x.py": "x\n"})
    repo.write(".memkeep.yml", "store_dir: memory\n")
    put(repo, "cfg", anchor=head, scope=["pkg/**"], store="memory")
    monkeypatch.chdir(repo.root / "pkg")
    result = run("status", "--json")
    assert (result.exit_code, as_json(result)["store"]) == (0, "memory")


def test_relative_store_is_relative_to_dash_c(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _stores(repo)
    monkeypatch.chdir(tmp_path)
    result = run("-C", str(repo.root), "status", "--json", "--store", "explicit")
    assert (result.exit_code, as_json(result)["store"]) == (0, "explicit")


def test_store_outside_repository_is_refused(repo: Repo, tmp_path: Path) -> None:
    repo.commit_paths("base", {"src/a.py": "a\n"})
    outside = tmp_path / "outside"
    (outside / "entries").mkdir(parents=True)
    assert error_code(in_repo(repo, "status", "--json", "--store", str(outside))) == "path_outside_repo"
    assert error_code(in_repo(repo, "status", "--json", "--store", "../outside")) == "path_outside_repo"
    assert error_code(in_repo(repo, "lint", "--json", env={"MEMKEEP_STORE": str(outside)})) == "path_outside_repo"
    (repo.root / "linked").symlink_to(outside)
    assert error_code(in_repo(repo, "status", "--json", "--store", "linked")) == "path_outside_repo"
    # discovery refuses a store directory that is a symlink leading out of the repository
    (repo.root / STORE).symlink_to(outside)
    assert error_code(in_repo(repo, "status", "--json")) == "path_outside_repo"
    text = in_repo(repo, "status", "--store", str(outside))
    assert text.exit_code == 2
    assert text.stdout == ""
    assert "outside" in text.stderr


def test_missing_store(repo: Repo) -> None:
    repo.commit_paths("base", {"src/a.py": "a\n"})
    assert error_code(in_repo(repo, "status", "--json")) == "store_not_found"
    assert error_code(in_repo(repo, "status", "--json", "--store", "nowhere")) == "store_not_found"
    assert error_code(in_repo(repo, "lint", "--json", "--store-dir", "memory")) == "store_not_found"
    (repo.root / STORE).mkdir()  # a folder without entries/ is not a store
    assert error_code(in_repo(repo, "index", "--json")) == "store_not_found"


def test_not_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    (plain / STORE / "entries").mkdir(parents=True)
    for command in ("status", "lint", "index"):
        assert error_code(run("-C", str(plain), command, "--json")) == "not_a_repository"
    assert error_code(run("-C", str(plain), "verify", "x", "--json")) == "not_a_repository"
    text = run("-C", str(plain), "status")
    assert text.exit_code == 2
    assert "not a git repository" in text.stderr


def test_bad_directory_and_bad_config(repo: Repo, tmp_path: Path) -> None:
    assert error_code(run("-C", str(tmp_path / "missing"), "status", "--json")) == "bad_directory"
    repo.commit_paths("base", {"src/a.py": "a\n"})
    (repo.root / STORE / "entries").mkdir(parents=True)
    repo.write(".memkeep.yml", "store_dir: [unclosed\n")
    assert error_code(in_repo(repo, "status", "--json")) == "bad_config"
    repo.write(".memkeep.yml", "referential_check: yes\n")  # YAML 1.2: a string, not a boolean
    assert error_code(in_repo(repo, "status", "--json")) == "bad_config"
    repo.write(".memkeep.yml", "store_dir: agent-memory\nreferential_checks: true\n")  # misspelt: not ignored
    result = in_repo(repo, "status")
    assert (result.exit_code, result.stderr) == (
        2,
        f"git-memkeep: error: {repo.root / '.memkeep.yml'}: unknown "
        "field 'referential_checks' (known: store_dir, "
        "referential_check, siblings)\n",
    )
    for text, problem in (
        ("store_dir: 5\n", "store_dir must be a folder name, not 5"),
        ("siblings: []\n", "siblings must be a mapping, not []"),
        ("siblings: ''\n", "siblings must be a mapping, not ''"),
        ("- a\n", "the file is not a mapping of keys to values"),
        (": x\n", "a key is empty"),
    ):
        repo.write(".memkeep.yml", text)
        result = in_repo(repo, "status")
        where = repo.root / ".memkeep.yml"
        assert (result.exit_code, result.stderr) in (
            (2, f"git-memkeep: error: {where}: {problem}\n"),
            (2, f"git-memkeep: error: {where}:1: {problem}\n"),
        ), text
    repo.write(".memkeep.yml", "store_dir: a/b\n")
    assert error_code(in_repo(repo, "status", "--json")) == "bad_store_dir"
    repo.write(".memkeep.yml", "")  # an empty config is the defaults
    assert in_repo(repo, "status", "--json").exit_code == 0


# ----------------------------------------------------------------------------------------------- hooks


def _hook(repo: Repo, event: str) -> Any:
    result = in_repo(repo, "status", "--hook", event)
    assert result.exit_code == 0
    return result


def test_hook_session_start_with_suspects(base: Repo) -> None:
    put(base, "hit", anchor=base.first, scope=["src/**"])
    result = _hook(base, "SessionStart")
    payload = json.loads(result.stdout)
    assert set(payload) == {"hookSpecificOutput"}
    assert payload["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = payload["hookSpecificOutput"]["additionalContext"]
    assert "hit" in context and "scope_hit" in context
    assert len(result.stdout.strip().splitlines()) == 1


@pytest.mark.parametrize("event", ["UserPromptSubmit", "PostToolUse"])
def test_hook_context_events_echo_their_own_name(base: Repo, event: str) -> None:
    put(base, "hit", anchor=base.first, scope=["src/**"])
    payload = json.loads(_hook(base, event).stdout)
    assert payload["hookSpecificOutput"]["hookEventName"] == event


def test_hook_stop_uses_additional_context(base: Repo) -> None:
    put(base, "hit", anchor=base.first, scope=["src/**"])
    payload = json.loads(_hook(base, "Stop").stdout)
    assert payload["hookSpecificOutput"]["hookEventName"] == "Stop"
    assert "hit" in payload["hookSpecificOutput"]["additionalContext"]


def test_hook_pre_compact_prints_plain_instructions(base: Repo) -> None:
    put(base, "hit", anchor=base.first, scope=["src/**"])
    out = _hook(base, "PreCompact").stdout
    assert not out.lstrip().startswith("{") and "hit" in out


@pytest.mark.parametrize("event", ["SessionStart", "PreCompact", "Stop"])
def test_hook_is_silent_on_a_clean_store(repo: Repo, event: str) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    put(repo, "fine", anchor=head, scope=["src/**"])
    assert _hook(repo, event).stdout == ""


def test_hook_reports_stale_and_unreadable(repo: Repo) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    put(repo, "old", anchor=head, scope=["src/**"], status="stale")
    repo.write(f"{STORE}/entries/broken.md", "---\nid: [\n---\nx\n")
    context = json.loads(_hook(repo, "SessionStart").stdout)["hookSpecificOutput"]["additionalContext"]
    assert "old" in context and "broken.md" in context


def test_hook_errors_are_silent_on_stdout(tmp_path: Path, repo: Repo) -> None:
    result = run("-C", str(tmp_path), "status", "--hook", "SessionStart")
    assert (result.exit_code, result.stdout) == (0, "")
    assert "not a git repository" in result.stderr
    result = run("-C", str(repo.root), "status", "--hook", "Stop")  # empty repo, no store
    assert (result.exit_code, result.stdout) == (0, "")


def test_hook_in_empty_repository(repo: Repo) -> None:
    put(repo, "anchored", anchor="abcdef1234", scope=["src/**"])
    payload = json.loads(_hook(repo, "SessionStart").stdout)
    assert "no commits yet" in payload["hookSpecificOutput"]["additionalContext"]


def test_hook_output_stays_small_with_500_suspects(base: Repo) -> None:
    first = base.first
    for i in range(500):
        put(base, f"claim-{i:03d}", anchor=first, scope=["src/**"], claim=f"Claim number {i} about src " + "x" * 60)
    status = in_repo(base, "status", "--json")
    assert as_json(status)["summary"]["suspect"] == 500
    for event in ("SessionStart", "PreCompact", "Stop"):
        out = _hook(base, event).stdout
        assert 0 < len(out.encode("utf-8")) < 10 * 1024
        if event != "PreCompact":  # PreCompact prints plain instructions
            json.loads(out)


# ----------------------------------------------------------------------------------------------- lint


def raw_entry(entry_id: str, head: str, claim: str = "A claim that holds.", **fields: str | None) -> str:
    """Entry text from a valid baseline; a field set to None is left out, others replace the baseline."""
    base: dict[str, str | None] = {
        "schema_version": "1",
        "id": entry_id,
        "type": "fact",
        "status": "verified",
        "written_at": "2026-11-01",
        "verified_at": "2026-11-01",
        "anchor": head,
        "scope": "\n  - src/**",
        "evidence": "|\n  Seen in the code.",
    }
    base.update(fields)
    lines = ["---"] + [f"{k}: {v}" if not v.startswith("\n") else f"{k}:{v}" for k, v in base.items() if v is not None]
    return "\n".join([*lines, "---", claim, ""])


def _lint_store(repo: Repo, files: dict[str, str], *, index: bool = True) -> dict[str, Any]:
    for name, text in files.items():
        repo.write(f"{STORE}/entries/{name}.md", text)
    if index:  # exit 1 when an unreadable entry was left out of INDEX.md
        assert in_repo(repo, "index").exit_code == (1 if "broken" in files else 0)
    result = in_repo(repo, "lint", "--json")
    data = as_json(result)
    assert result.exit_code == (1 if data["violations"] else 0)
    return data


LINT_CASES: dict[str, list[dict[str, Any]]] = {
    "schema_version": [{"schema_version": "2"}],
    "id_mismatch": [{"id": "other-name"}],
    "type_invalid": [{"type": "note"}],
    "status_invalid": [{"status": "fresh"}],
    "date_invalid": [
        {"verified_at": "2026-13-01"},
        {"written_at": "2026-03-16T09:05:28-06:00"},
        {"verified_at": "16/03/2026"},
    ],
    "anchor_required": [{"anchor": None}, {"status": "observed", "anchor": None}],
    "scope_required": [{"scope": None}, {"scope": "[]"}],
    "scope_glob": [{"scope": "\n  - ../outside/**"}, {"scope": "\n  - '!src/a.py'"}, {"scope": "\n  - '#x'"}],
    "evidence_required": [{"evidence": None}, {"status": "observed", "evidence": "''"}],
    "ttl_required": [{"status": "inferred"}],
    "ttl_type": [  # written but no positive whole number: a key with no value is null, not absent
        {"ttl_days": ""},
        {"status": "inferred", "ttl_days": "~"},
        {"ttl_days": "0"},
        {"ttl_days": "'30'"},
        {"ttl_days": "true"},
    ],
    "ttl_cap": [
        {"status": "inferred", "ttl_days": "31"},
        {"ttl_days": "366"},
        {"status": "observed", "ttl_days": "181"},
    ],
    "model_predictions": [
        {"type": "model"},
        {"predictions": "\n  - claim: x\n    check: 'true'"},
        {"type": "model", "predictions": "\n  - check: 'true'"},
    ],
    "tombstone_reason": [{"status": "tombstone"}],
    "explains_target": [{"explains": "\n  - nobody"}],
    "claim_length": [{"__claim__": "x" * 141}],
}


@pytest.mark.parametrize(
    ("rule", "fields"),
    [(rule, f) for rule, cases in LINT_CASES.items() for f in cases],
    ids=[f"{rule}-{i}" for rule, cases in LINT_CASES.items() for i in range(len(cases))],
)
def test_lint_rule(repo: Repo, rule: str, fields: dict[str, Any]) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    fields = dict(fields)
    claim = fields.pop("__claim__", "A claim that holds.")
    data = _lint_store(repo, {"subject": raw_entry("subject", head, claim, **fields)})
    assert {(v["rule"], v["path"]) for v in data["violations"]} == {(rule, f"{STORE}/entries/subject.md")}
    assert all(v["message"] for v in data["violations"])


def test_lint_says_whether_a_date_is_misspelt_or_no_calendar_day(repo: Repo) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    files = {
        "impossible": raw_entry("impossible", head, verified_at="2026-02-30"),
        "misspelt": raw_entry("misspelt", head, verified_at="16/03/2026"),
    }
    data = _lint_store(repo, files)
    assert sorted((v["id"], v["message"]) for v in data["violations"]) == [
        ("impossible", "verified_at 2026-02-30 is no calendar date"),
        ("misspelt", "verified_at must be a date written YYYY-MM-DD"),
    ]


def test_lint_refuses_a_merge_conflict_left_in_an_entry(repo: Repo) -> None:
    """A fresh user's walk committed an entry whose claim was ``<<<<<<< HEAD``: lint and the commit guard pass it."""
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    conflicted = "<<<<<<< HEAD\nThe timeout is 30 s.\n=======\nThe timeout is 60 s.\n>>>>>>> theirs"
    files = {
        "conflicted": raw_entry("conflicted", head, conflicted),
        "in-evidence": raw_entry("in-evidence", head, evidence="|\n  ran it\n  >>>>>>> theirs"),
        "heading": raw_entry("heading", head, "A claim that holds.\n\nDetails\n=======\n\nA setext heading."),
        "example": raw_entry("example", head, "Resolve INDEX.md conflicts with lint --fix.\n\n```\n<<<<<<< HEAD\n```"),
    }
    data = _lint_store(repo, files, index=False)  # the conflicted file is unreadable (core/frontmatter.py)
    assert sorted((v["path"], v["rule"], v["field"], v["message"]) for v in data["violations"][1:]) == [
        (
            f"{STORE}/entries/conflicted.md",
            "conflict_marker",
            "frontmatter",
            "unresolved merge conflict (<<<<<<< on line 14): resolve it, then git add the file",
        ),
        (
            f"{STORE}/entries/in-evidence.md",
            "conflict_marker",
            "evidence",
            "evidence holds a merge conflict marker; resolve the conflict",
        ),
    ]
    assert data["violations"][0]["rule"] == "index_missing"


def test_lint_clean_baseline_and_boundaries(repo: Repo) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    files = {
        "plain": raw_entry("plain", head),
        "claim-140": raw_entry("claim-140", head, "y" * 140),
        "ttl-365": raw_entry("ttl-365", head, ttl_days="365"),
        "inferred-30": raw_entry("inferred-30", head, status="inferred", ttl_days="30", anchor=None, evidence=None),
        "tomb": raw_entry("tomb", head, status="tombstone", tombstone_reason="replaced by plain", scope=None),
        "tomb2": raw_entry("tomb2", head, status="tombstone", superseded_by="plain"),
        "model": raw_entry(
            "model",
            head,
            type="model",
            predictions="\n  - claim: a holds\n    check: {run: 'true', safe: true, timeout_s: 60}",
        ),
        "user": raw_entry(
            "user",
            head,
            explains="\n  - plain\n  - model",
            check="'true'",
            extra_field="agents may add their own fields",
        ),
    }
    data = _lint_store(repo, files)
    assert data["violations"] == []
    assert data["summary"] == {"entries": 8, "violations": 0}
    assert in_repo(repo, "lint").exit_code == 0


def test_lint_flags_a_scope_left_behind_by_a_rename(repo: Repo) -> None:
    head = repo.commit_paths("base", {"src/db/pool.py": "SIZE = 10\n", "src/app.py": "x\n"})
    put(repo, "pool-size", anchor=head, scope=["src/db/pool.py"])
    put(repo, "app", anchor=head, scope=["src/app.py", "src/gone.py"])  # one pattern still matches: watched
    put(repo, "grave", anchor=head, scope=["src/db/pool.py"], status="tombstone", extra="tombstone_reason: old")
    assert in_repo(repo, "index").exit_code == 0
    assert in_repo(repo, "lint").exit_code == 0
    repo.git("mv", "src/db/pool.py", "src/db/connection_pool.py")
    repo.commit("rename the pool")
    data = as_json(in_repo(repo, "lint", "--json"))
    assert [(v["id"], v["field"], v["rule"], v["message"]) for v in data["violations"]] == [
        (
            "pool-size",
            "scope",
            "scope_unmatched",
            "scope matches no tracked file (renamed or deleted?), so no change "
            "can flag this claim; point it at the files the claim is about",
        )
    ]


def test_lint_explains_cycle(repo: Repo) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    files = {
        "a": raw_entry("a", head, explains="\n  - b"),
        "b": raw_entry("b", head, explains="\n  - c"),
        "c": raw_entry("c", head, explains="\n  - a"),
        "d": raw_entry("d", head, explains="\n  - a"),
    }
    data = _lint_store(repo, files)
    assert [v["rule"] for v in data["violations"]] == ["explains_cycle"]
    assert data["violations"][0]["id"] == "a"
    assert set(data["violations"][0]["message"].split(": ", 1)[1].split(" -> ")) == {"a", "b", "c"}


def test_lint_index_missing_and_drift_then_fix(repo: Repo) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    data = _lint_store(repo, {"one": raw_entry("one", head)}, index=False)
    assert [(v["rule"], v["path"]) for v in data["violations"]] == [("index_missing", f"{STORE}/INDEX.md")]

    fixed = in_repo(repo, "lint", "--fix", "--json")
    assert fixed.exit_code == 0
    assert as_json(fixed)["fixed_index"] is True
    index = (repo.root / STORE / "INDEX.md").read_text()
    assert "one | fact | verified | A claim that holds." in index

    repo.write(f"{STORE}/entries/two.md", raw_entry("two", head, claim="Another claim."))
    data = as_json(in_repo(repo, "lint", "--json"))
    assert [v["rule"] for v in data["violations"]] == ["index_drift"]
    (repo.root / STORE / "INDEX.md").write_text(index + "stray | fact | verified | hand edit\n")
    text = in_repo(repo, "lint")
    assert text.exit_code == 1 and "index_drift" in text.stdout

    fixed = in_repo(repo, "lint", "--fix")
    assert fixed.exit_code == 0
    assert "INDEX.md regenerated" in fixed.stdout
    assert in_repo(repo, "lint").exit_code == 0
    regenerated = (repo.root / STORE / "INDEX.md").read_text()
    assert "two | fact | verified | Another claim." in regenerated and "stray" not in regenerated
    assert in_repo(repo, "index").stdout.startswith("INDEX.md already current")


def test_lint_fix_leaves_other_violations(repo: Repo) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.write(f"{STORE}/entries/bad.md", raw_entry("bad", head, type="note"))
    result = in_repo(repo, "lint", "--fix", "--json")
    data = as_json(result)
    assert result.exit_code == 1
    assert data["fixed_index"] is True
    assert [v["rule"] for v in data["violations"]] == ["type_invalid"]


def test_lint_names_unreadable_entries_with_rule_parse(repo: Repo) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    data = _lint_store(repo, {"good": raw_entry("good", head), "broken": "---\nid: broken\nscope: [x\n---\nClaim.\n"})
    assert [(v["rule"], v["path"]) for v in data["violations"]] == [("parse", f"{STORE}/entries/broken.md")]
    assert isinstance(data["violations"][0]["line"], int)
    assert data["summary"]["entries"] == 1


def test_lint_names_a_symlinked_entry_and_a_symlinked_folder(repo: Repo, tmp_path: Path) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "hidden.md").write_text(raw_entry("hidden", head), "utf-8")
    entries = repo.root / STORE / "entries"
    entries.mkdir(parents=True)
    (entries / "linked.md").symlink_to(outside / "hidden.md")
    (entries / "more").symlink_to(outside)
    data = as_json(in_repo(repo, "lint", "--json"))
    assert [(v["rule"], v["path"], v["message"]) for v in data["violations"] if v["rule"] == "parse"] == [
        ("parse", f"{STORE}/entries/linked.md", "a symlink; entries must be regular files"),
        ("parse", f"{STORE}/entries/more", "a symlink; entries must be regular files"),
    ]


def test_lint_nfd_named_entry_file(repo: Repo) -> None:
    """BR-23 part 2: an entry file stored under its NFD name is read, linted and verified without a crash."""
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    nfd = "cafe\u0301"
    repo.write(f"{STORE}/entries/{nfd}.md", raw_entry("caf\u00e9", head, check="{run: 'true', safe: true}"))
    assert in_repo(repo, "index").exit_code == 0
    result = in_repo(repo, "lint", "--json")
    assert (result.exit_code, as_json(result)["violations"]) == (0, [])
    result = in_repo(repo, "verify", "caf\u00e9", "--json")
    assert result.exit_code == 0, result.output
    assert [i["action"] for i in as_json(result)["items"]] == ["healed"]
    assert sorted(p.name for p in (repo.root / STORE / "entries").iterdir()) == [f"{nfd}.md"]  # no second file


# ---------------------------------------------------------------------------------------------- verify


def _lines_changed(before: bytes, after: bytes) -> list[tuple[bytes, bytes]]:
    old, new = before.split(b"\n"), after.split(b"\n")
    assert len(old) == len(new), (before, after)
    return [(a, b) for a, b in zip(old, new, strict=True) if a != b]


def _verify_entry(anchor: str, check: str, *, status: str = "verified") -> str:
    return (
        "---\n"
        "schema_version: 1\n"
        "id: subject   # the file name\n"
        "type: fact\n"
        f"status: {status}\n"
        "written_at: 2026-03-16\n"
        "verified_at: 2026-03-16  # last confirmed\n"
        f"anchor: {anchor}\n"
        "scope:\n"
        "  - src/**\n"
        "evidence: |\n"
        "  Seen in src/a.py.\n"
        f"check: {check}\n"
        "observed_at: 2026-03-16T09:05:28-06:00\n"
        "owner: 'team-a'\n"
        "---\n"
        "The file src/a.py exists.\n"
        "\n"
        "Body text stays as it is.   \n"
    )


def test_verify_pass_heals_only_anchor_and_verified_at(base: Repo) -> None:
    first = base.first
    path = base.write(f"{STORE}/entries/subject.md", _verify_entry(first, "{run: 'test -f src/a.py', safe: true}"))
    before = path.read_bytes()
    assert pairs(as_json(in_repo(base, "status", "--json"))) == [("subject", "scope_hit")]
    result = in_repo(base, "verify", "subject", "--json")
    assert result.exit_code == 0, result.output
    data = as_json(result)
    assert data["head"] == base.head()
    assert [(i["id"], i["action"]) for i in data["items"]] == [("subject", "healed")]
    assert data["items"][0]["reasons"] == ["scope_hit"]
    assert [c["outcome"] for c in data["items"][0]["checks"]] == ["pass"]
    assert _lines_changed(before, path.read_bytes()) == [
        (b"verified_at: 2026-03-16  # last confirmed", b"verified_at: 2026-11-30  # last confirmed"),
        (f"anchor: {first}".encode(), f"anchor: {base.head()}".encode()),
    ]
    assert (in_repo(base, "status", "--json").exit_code, pairs(as_json(in_repo(base, "status", "--json")))) == (0, [])


def test_verify_fail_marks_stale(base: Repo) -> None:
    first = base.first
    path = base.write(f"{STORE}/entries/subject.md", _verify_entry(first, "'test -f src/nope.py'"))
    before = path.read_bytes()
    result = in_repo(base, "verify", "subject", "--json")
    assert result.exit_code == 1
    assert [i["action"] for i in as_json(result)["items"]] == ["marked_stale"]
    assert as_json(result)["items"][0]["checks"][0]["exit_code"] == 1
    assert _lines_changed(before, path.read_bytes()) == [(b"status: verified", b"status: stale")]
    status = as_json(in_repo(base, "status", "--json"))
    assert status["stale"] == ["subject"]


def test_verify_stale_entry_that_passes_is_verified_again(base: Repo) -> None:
    first = base.first
    path = base.write(f"{STORE}/entries/subject.md", _verify_entry(first, "'true'", status="stale"))
    before = path.read_bytes()
    result = in_repo(base, "verify", "subject")
    assert result.exit_code == 0
    changed = _lines_changed(before, path.read_bytes())
    assert (b"status: stale", b"status: verified") in changed
    assert len(changed) == 3


@pytest.mark.parametrize(("status", "check", "after"), [("verified", "false", "stale"), ("stale", "true", "verified")])
def test_verify_keeps_index_in_step_with_the_status_it_writes(base: Repo, status: str, check: str, after: str) -> None:
    base.write(f"{STORE}/entries/subject.md", _verify_entry(base.first, f"'{check}'", status=status))
    assert in_repo(base, "index").exit_code == 0
    index = base.root / STORE / "INDEX.md"
    assert f"| {status} |" in index.read_text()
    result = in_repo(base, "verify", "subject")
    assert result.stdout.splitlines()[-1] == "INDEX.md regenerated: a verified entry's status or claim changed"
    assert f"subject | fact | {after} | The file src/a.py exists." in index.read_text()
    assert in_repo(base, "lint").exit_code == 0


def test_verify_without_index_does_not_create_one(base: Repo) -> None:
    base.write(f"{STORE}/entries/subject.md", _verify_entry(base.first, "'false'"))
    index = base.root / STORE / "INDEX.md"
    index.unlink(missing_ok=True)
    assert in_repo(base, "verify", "subject").exit_code == 1
    assert not index.exists()


@pytest.mark.parametrize("command", ["exit 3", "exit 127", "sleep 5"])
def test_verify_check_tool_error_leaves_entry_untouched(base: Repo, command: str) -> None:
    first = base.first
    check = f"{{run: '{command}', safe: true, timeout_s: 1}}"
    path = base.write(f"{STORE}/entries/subject.md", _verify_entry(first, check))
    before = path.read_bytes()
    result = in_repo(base, "verify", "subject", "--json")
    assert result.exit_code == 2
    assert [i["action"] for i in as_json(result)["items"]] == ["tool_error"]
    assert path.read_bytes() == before


def test_a_heal_against_uncommitted_changes_in_scope_says_it_is_anchored_at_head(base: Repo) -> None:
    """verify re-tests the working tree but anchors at HEAD (memkeep README): with the scope's changes not yet
    committed, the entry would turn suspect right after the commit, or hold at HEAD only by luck; the heal says
    so as still suspect (exit 1). Committed, the same verify is clean (a fresh user's walk)."""
    base.write(f"{STORE}/entries/subject.md", _verify_entry(base.first, "{run: 'true', safe: true}"))
    base.git("add", "-A")
    base.git("commit", "-qm", "entry")
    base.write("src/a.py", "a3\n")
    base.git("add", "src/a.py")
    uncommitted = in_repo(base, "verify", "subject", "--json")
    assert uncommitted.exit_code == 1
    (item,) = as_json(uncommitted)["items"]
    assert (item["action"], item["still_suspect"]) == (
        "healed",
        [
            "re-tested against uncommitted changes to src/a.py, but anchored at HEAD: it turns suspect when they are "
            "committed; commit them, then verify again"
        ],
    )
    base.git("commit", "-qam", "code")
    committed = in_repo(base, "verify", "subject", "--json")
    assert (committed.exit_code, as_json(committed)["items"][0]["still_suspect"]) == (0, [])


def test_verify_all_safe_says_how_many_entry_files_it_could_not_read(base: Repo) -> None:
    base.write(f"{STORE}/entries/subject.md", _verify_entry(base.first, "{run: 'true', safe: true}"))
    base.write(f"{STORE}/entries/broken.md", "---\nid: broken\n")
    result = in_repo(base, "verify", "--all-safe")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == (
        "note: 1 entry file cannot be read, so it is left out (git memkeep lint says why)"
    )


def test_a_timed_out_check_stops_what_its_shell_started(base: Repo, tmp_path: Path) -> None:
    """The timeout kills the check's process group: a ``sleep`` the shell started was left running, re-parented
    to init (a fresh user's walk), and with it anything a hung check holds (a test server, a port)."""
    started = tmp_path / "child.pid"
    check = f"{{run: 'sleep 30 & echo $! > {started}; wait', safe: true, timeout_s: 1}}"
    base.write(f"{STORE}/entries/subject.md", _verify_entry(base.first, check))
    assert in_repo(base, "verify", "subject").exit_code == 2
    status = Path(f"/proc/{int(started.read_text())}/status")

    def running() -> bool:  # killed but not yet reaped by init (a container's may never reap) is a zombie
        with contextlib.suppress(FileNotFoundError):
            return "\nState:\tZ" not in status.read_text()
        return False

    for _ in range(100):  # SIGKILL is delivered asynchronously: wait (at most 5 s) for it to land
        if not running():
            break
        time.sleep(0.05)
    assert not running()


def test_verify_all_safe_runs_only_safe_checks_of_suspect_entries(base: Repo, tmp_path: Path) -> None:
    first, head = base.first, base.head()
    marks = tmp_path / "marks"
    marks.mkdir()

    def check(name: str, safe: bool, code: int = 0) -> str:
        return f"check: {{run: 'touch {marks}/{name}; exit {code}', safe: {str(safe).lower()}}}"

    put(base, "safe-hit", anchor=first, scope=["src/**"], extra=check("safe-hit", True))
    put(base, "safe-fail", anchor=first, scope=["src/**"], extra=check("safe-fail", True, 1))
    put(base, "unsafe-hit", anchor=first, scope=["src/**"], extra=check("unsafe-hit", False))
    put(base, "bare-string", anchor=first, scope=["src/**"], extra=f"check: 'touch {marks}/bare-string'")
    put(base, "no-check", anchor=first, scope=["src/**"])
    put(base, "safe-clean", anchor=head, scope=["src/**"], extra=check("safe-clean", True))
    files = {p.name: p.read_bytes() for p in (base.root / STORE / "entries").iterdir()}

    dry = in_repo(base, "verify", "--all-safe", "--dry-run", "--json")
    assert dry.exit_code == 1  # a dry run that previews suspects exits 1
    assert {i["id"]: i["action"] for i in as_json(dry)["items"]} == {
        "bare-string": "skipped",
        "no-check": "skipped",
        "safe-fail": "would_run",
        "safe-hit": "would_run",
        "unsafe-hit": "skipped",
    }
    assert list(marks.iterdir()) == []
    assert {p.name: p.read_bytes() for p in (base.root / STORE / "entries").iterdir()} == files
    text = in_repo(base, "verify", "--all-safe", "--dry-run")
    assert "dry run" in text.stdout and "safe-hit" in text.stdout

    result = in_repo(base, "verify", "--all-safe", "--json")
    assert result.exit_code == 1  # safe-fail failed
    assert {i["id"]: i["action"] for i in as_json(result)["items"]} == {
        "bare-string": "skipped",
        "no-check": "skipped",
        "safe-fail": "marked_stale",
        "safe-hit": "healed",
        "unsafe-hit": "skipped",
    }
    assert sorted(p.name for p in marks.iterdir()) == ["safe-fail", "safe-hit"]
    assert (base.root / STORE / "entries" / "safe-clean.md").read_bytes() == files["safe-clean.md"]
    status = as_json(in_repo(base, "status", "--json"))
    assert status["stale"] == ["safe-fail"]
    assert sorted({v["id"] for v in status["verdicts"]}) == ["bare-string", "no-check", "unsafe-hit"]


def test_verify_dry_run_single_entry_writes_nothing(base: Repo, tmp_path: Path) -> None:
    first = base.first
    mark = tmp_path / "ran"
    path = base.write(f"{STORE}/entries/subject.md", _verify_entry(first, f"{{run: 'touch {mark}', safe: true}}"))
    before = path.read_bytes()
    result = in_repo(base, "verify", "subject", "--dry-run", "--json")
    assert result.exit_code == 1  # a dry run that previews suspects exits 1
    assert [i["action"] for i in as_json(result)["items"]] == ["would_run"]
    assert not mark.exists()
    assert path.read_bytes() == before


def test_verify_manual_heals_without_running(base: Repo, tmp_path: Path) -> None:
    first = base.first
    mark = tmp_path / "ran"
    path = base.write(f"{STORE}/entries/subject.md", _verify_entry(first, f"'touch {mark}; exit 1'"))
    before = path.read_bytes()
    result = in_repo(base, "verify", "subject", "--manual", "--json")
    assert result.exit_code == 0
    assert [(i["action"], i["checks"]) for i in as_json(result)["items"]] == [("healed", [])]
    assert not mark.exists()
    assert [new for _, new in _lines_changed(before, path.read_bytes())] == [
        b"verified_at: 2026-11-30  # last confirmed",
        f"anchor: {base.head()}".encode(),
    ]


def test_verify_manual_on_entry_without_anchor_appends_it(base: Repo) -> None:
    path = put(base, "loose", anchor=None, scope=["src/**"], status="inferred", extra="ttl_days: 30")
    before = path.read_text()
    assert in_repo(base, "verify", "loose", "--manual").exit_code == 0
    after = path.read_text()
    assert after.replace(f"anchor: {base.head()}\n", "").replace("2026-11-30", "2026-11-01") == before
    assert as_json(in_repo(base, "status", "--json"))["verdicts"] == []


def test_verify_model_runs_every_prediction(base: Repo) -> None:
    first = base.first
    predictions = (
        "predictions:\n"
        "  - claim: a exists\n    check: {run: 'test -f src/a.py', safe: true}\n"
        "  - claim: d exists\n    check: {run: 'test -f docs/d.md', safe: true}"
    )
    put(base, "model", anchor=first, scope=["src/**"], entry_type="model", extra=predictions)
    result = in_repo(base, "verify", "model", "--json")
    assert result.exit_code == 0
    assert [c["label"] for c in as_json(result)["items"][0]["checks"]] == ["prediction 1", "prediction 2"]


def test_verify_text_names_the_failing_prediction(base: Repo) -> None:
    predictions = (
        "predictions:\n"
        "  - claim: a exists\n    check: {run: 'test -f src/a.py', safe: true}\n"
        "  - claim: z exists\n    check: {run: 'test -f src/z.py', safe: true}"
    )
    put(base, "model", anchor=base.first, scope=["src/**"], entry_type="model", extra=predictions)
    result = in_repo(base, "verify", "model")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:2] == [
        "marked_stale  model  a check failed: marked stale",
        "    prediction 2: fail (exit 1): test -f src/z.py",
    ]


@pytest.mark.parametrize(
    ("timeout", "problem"),
    [
        ('"1"', "timeout_s must be a whole number of seconds, 1 to 3600"),
        ("1.5", "timeout_s must be a whole number of seconds, 1 to 3600"),
        ("0", "timeout_s must be a whole number of seconds, 1 to 3600"),
    ],
)
def test_verify_never_runs_a_malformed_check(base: Repo, timeout: str, problem: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = base.write(
        f"{STORE}/entries/subject.md",
        _verify_entry(base.first, f"{{run: 'touch {marker}', safe: true, timeout_s: {timeout}}}"),
    )
    before = path.read_bytes()
    result = in_repo(base, "verify", "subject", "--json")
    assert (result.exit_code, error_code(result)) == (2, "check_format")
    assert result.stderr == f"git-memkeep: error: subject: check: {problem}; nothing was run (see git memkeep lint)\n"
    batch = in_repo(base, "verify", "--all-safe", "--json")
    assert [(i["id"], i["action"], i["message"]) for i in as_json(batch)["items"]] == [
        ("subject", "skipped", f"its check is malformed ({problem}); see git memkeep lint")
    ]
    assert not marker.exists() and path.read_bytes() == before
    lint = as_json(in_repo(base, "lint", "--json"))
    assert [(v["rule"], v["message"]) for v in lint["violations"] if v["id"] == "subject"] == [
        ("check_format", problem)
    ]


def test_a_heal_that_changes_no_status_leaves_index_alone(base: Repo) -> None:
    base.write(f"{STORE}/entries/subject.md", _verify_entry(base.first, "'true'"))
    assert in_repo(base, "index").exit_code == 0
    index = base.root / STORE / "INDEX.md"
    before = index.read_bytes()
    put(base, "newcomer", anchor=base.first, scope=["docs/**"])
    result = in_repo(base, "verify", "subject", "--json")
    assert (result.exit_code, as_json(result)["index_updated"]) == (0, False)
    assert index.read_bytes() == before


def test_a_heal_after_the_claim_was_edited_rewrites_its_index_line(base: Repo) -> None:
    """The claim is INDEX.md's fourth cell: healed after an edit of the claim, the old line was left for
    commit (only lint noticed); an unrelated entry added meanwhile is not verify's to index, but comes along."""
    path = base.root / STORE / "entries" / "subject.md"
    base.write(f"{STORE}/entries/subject.md", _verify_entry(base.first, "'true'"))
    assert in_repo(base, "index").exit_code == 0
    index = base.root / STORE / "INDEX.md"
    old_line = next(line for line in index.read_text().splitlines() if line.startswith("subject | "))
    base.write(f"{STORE}/entries/subject.md", path.read_text().replace(old_line.split(" | ")[3], "A reworded claim."))
    result = in_repo(base, "verify", "subject", "--json")
    assert (result.exit_code, as_json(result)["index_updated"]) == (0, True)
    rows = [line for line in index.read_text().splitlines() if line.startswith("subject | ")]
    assert rows == [" | ".join([*old_line.split(" | ")[:3], "A reworded claim."])]
    assert as_json(in_repo(base, "lint", "--json"))["violations"] == []


def test_verify_errors(base: Repo) -> None:
    first = base.first
    put(base, "no-check", anchor=first, scope=["src/**"])
    put(base, "grave", anchor=first, scope=["src/**"], status="tombstone", extra="tombstone_reason: old")
    base.write(f"{STORE}/entries/broken.md", "---\nid: [\n---\nx\n")
    assert error_code(in_repo(base, "verify", "nobody", "--json")) == "unknown_id"
    assert error_code(in_repo(base, "verify", "no-check", "--json")) == "no_check"
    assert error_code(in_repo(base, "verify", "grave", "--json")) == "tombstone"
    assert error_code(in_repo(base, "verify", "broken", "--json")) == "unreadable_entry"
    unreadable = in_repo(base, "verify", "broken")
    assert (unreadable.exit_code, unreadable.stderr) == (
        2,
        f"git-memkeep: error: {STORE}/entries/broken.md:3: cannot be read, so it cannot be verified: "
        "expected the node content, but found '<stream end>'\n",  # the reason lint gives, from ruamel
    )
    assert error_code(in_repo(base, "verify", "--json")) == "bad_usage"
    assert error_code(in_repo(base, "verify", "no-check", "--all-safe", "--json")) == "bad_usage"
    assert error_code(in_repo(base, "verify", "--all-safe", "--manual", "--json")) == "bad_usage"
    dry = in_repo(base, "verify", "no-check", "--manual", "--dry-run")
    assert (dry.exit_code, dry.stderr) == (
        2,
        "git-memkeep: error: --manual writes the re-test you did; there is nothing to preview (leave out --dry-run)\n",
    )
    text = in_repo(base, "verify", "nobody")
    assert text.exit_code == 2 and "nobody" in text.stderr and text.stdout == ""


def test_verify_in_empty_repository(repo: Repo) -> None:
    put(repo, "x", anchor=None, scope=["src/**"], status="inferred", extra="ttl_days: 30\ncheck: 'true'")
    assert error_code(in_repo(repo, "verify", "x", "--json")) == "no_commits"


# ------------------------------------------------------------------------------------------------ index


def test_index_command(repo: Repo) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    put(repo, "b-entry", anchor=head, scope=["src/**"], claim="Pipes | are escaped.")
    put(repo, "a-entry", anchor=head, scope=["src/**"], status="observed")
    repo.write(f"{STORE}/entries/broken.md", "---\nid: [\n---\nx\n")
    result = in_repo(repo, "index", "--json")
    assert result.exit_code == 1  # written without the broken entry, which is named
    data = as_json(result)
    assert (data["changed"], data["entries"]) == (True, 2)
    assert [u["path"] for u in data["unreadable"]] == [f"{STORE}/entries/broken.md"]
    lines = (repo.root / STORE / "INDEX.md").read_text().splitlines()
    assert lines[-2:] == [
        "a-entry | fact | observed | A claim that holds.",
        "b-entry | fact | verified | Pipes \\| are escaped.",
    ]
    assert as_json(in_repo(repo, "index", "--json"))["changed"] is False


# -------------------------------------------------------------------------------- exit-code contract


def _subprocess(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMZOI_TODAY": TODAY}
    proc = subprocess.run(
        [sys.executable, "-c", "from git_memzoi.cli.memkeep import main; main()", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def test_exit_code_contract_in_a_subprocess(base: Repo, tmp_path: Path) -> None:
    first, head = base.first, base.head()
    put(base, "fine", anchor=head, scope=["src/**"])
    assert _subprocess("index", cwd=base.root).returncode == 0
    clean = _subprocess("status", cwd=base.root)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert _subprocess("lint", cwd=base.root).returncode == 0

    put(base, "hit", anchor=first, scope=["src/**"])
    suspect = _subprocess("status", "--json", cwd=base.root)
    assert suspect.returncode == 1
    assert pairs(json.loads(suspect.stdout)) == [("hit", "scope_hit")]
    assert _subprocess("lint", cwd=base.root).returncode == 1  # INDEX.md drifted
    hook = _subprocess("status", "--hook", "Stop", cwd=base.root)
    assert hook.returncode == 0 and "hit" in json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]

    not_repo = tmp_path / "plain"
    not_repo.mkdir()
    tool = _subprocess("status", "--json", cwd=not_repo)
    assert tool.returncode == 2
    assert json.loads(tool.stdout)["error"]["code"] == "not_a_repository"
    assert _subprocess("verify", "nobody", cwd=base.root).returncode == 2
    assert _subprocess("status", "--no-such-flag", cwd=base.root).returncode == 2

    helped = _subprocess("--help", cwd=base.root)
    assert helped.returncode == 0 and "status" in helped.stdout
    assert _subprocess("status", "--help", cwd=base.root).returncode == 0
    assert _subprocess("--version", cwd=base.root).returncode == 0


def test_console_script_when_installed(base: Repo) -> None:
    import shutil

    exe = shutil.which("git-memkeep") or str(Path(sys.executable).parent / "git-memkeep")
    if not Path(exe).exists():
        pytest.skip("git-memkeep console script not installed")
    assert subprocess.run([exe, "--help"], capture_output=True, check=False).returncode == 0
    put(base, "hit", anchor=base.first, scope=["src/**"])
    proc = subprocess.run(
        [exe, "-C", str(base.root), "status"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "MEMZOI_TODAY": TODAY},
    )
    assert proc.returncode == 1 and "hit" in proc.stdout


def test_verify_keeps_bom_and_crlf(base: Repo) -> None:
    first = base.first
    text = _verify_entry(first, "{run: 'true', safe: true}").replace("\n", "\r\n")
    path = base.root / STORE / "entries" / "subject.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    before = path.read_bytes()
    assert in_repo(base, "verify", "subject").exit_code == 0
    after = path.read_bytes()
    assert after.startswith(b"\xef\xbb\xbf---\r\n")
    assert after.count(b"\r\n") == before.count(b"\r\n") and after.count(b"\n") == before.count(b"\n")
    assert [new for _, new in _lines_changed(before, after)] == [
        b"verified_at: 2026-11-30  # last confirmed\r",
        f"anchor: {base.head()}\r".encode(),
    ]


def test_verify_check_gets_entry_environment_not_git_dir(base: Repo) -> None:
    first = base.first
    run_ = 'test "$MK_MODE" = strict && test -z "$GIT_DIR" && test -f src/a.py'
    extra = f"check: {{run: '{run_}', safe: true}}\nenvironment:\n  MK_MODE: strict"
    put(base, "env", anchor=first, scope=["src/**"], extra=extra)
    result = in_repo(base, "verify", "env", "--json", env={"GIT_DIR": str(base.root / ".git")})
    assert result.exit_code == 0, result.output
    assert [i["action"] for i in as_json(result)["items"]] == ["healed"]


def test_lint_and_index_in_empty_repository(repo: Repo) -> None:
    put(repo, "first", anchor=None, scope=["src/**"], status="inferred", extra="ttl_days: 30")
    assert in_repo(repo, "index").exit_code == 0
    result = in_repo(repo, "lint", "--json")
    assert (result.exit_code, as_json(result)["violations"]) == (0, [])


def test_hook_stop_is_silent_when_a_stop_hook_already_continued_the_turn(base: Repo) -> None:
    put(base, "hit", anchor=base.first, scope=["src/**"])
    from git_memzoi.cli.memkeep import cli

    stdin = '{"hook_event_name": "Stop", "stop_hook_active": true}'
    result = invoke(cli, ["-C", str(base.root), "status", "--hook", "Stop"], input=stdin)
    assert result.exit_code == 0 and result.stdout == ""


def test_a_checks_background_job_ends_with_the_check(base: Repo, tmp_path: Path) -> None:
    """``sleep 40 >/dev/null 2>&1 & true`` exits 0 at once and healed, leaving the sleep under init (a fresh
    user's walk): the check's process group is stopped whatever it exited with."""
    started = tmp_path / "child.pid"
    check = f"{{run: 'sleep 30 >/dev/null 2>&1 & echo $! > {started}; true', safe: true, timeout_s: 5}}"
    base.write(f"{STORE}/entries/subject.md", _verify_entry(base.first, check))
    assert in_repo(base, "verify", "subject").exit_code == 0
    status = Path(f"/proc/{int(started.read_text())}/status")
    for _ in range(100):  # SIGKILL lands asynchronously (at most 5 s)
        if not status.exists() or "\nState:\tZ" in status.read_text():
            break
        time.sleep(0.05)
    assert not status.exists() or "\nState:\tZ" in status.read_text()
