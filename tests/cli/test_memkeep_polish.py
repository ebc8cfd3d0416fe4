"""``git memkeep`` after a new user's first session: each reported problem, pinned to the right behaviour.

Real repositories in tmp_path; commands run in-process through click's CliRunner (and once as a subprocess, for
the program name a user sees).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from git_memzoi.core.clock import FixedClock
from git_memzoi.core.gitview_fake import linear_history
from git_memzoi.memkeep.entries import Entry, parse_check
from git_memzoi.memkeep.staleness import compute
from tests.support.repos import PROJECT, Repo, entry_text, memkeep

STORE = "agent-memory"


def put(repo: Repo, entry_id: str, *, anchor: str | None, scope: list[str] | None = None, **kw: Any) -> Path:
    return repo.write(f"{STORE}/entries/{entry_id}.md", entry_text(entry_id, anchor=anchor, scope=scope, **kw))


def run(repo: Repo | None, *args: str) -> Result:
    where = ["-C", str(repo.root)] if repo else []
    return memkeep(*where, *args)


def as_json(result: Any) -> dict[str, Any]:
    return json.loads(result.stdout)


def raw(entry_id: str, anchor: str, *, drop: str = "", add: str = "", extra: str = "") -> str:
    """A valid entry's text, with the line of field ``drop`` replaced by ``add``."""
    fields = {
        "schema_version": "1",
        "id": entry_id,
        "type": "fact",
        "status": "verified",
        "written_at": "2026-11-01",
        "anchor": anchor,
        "scope": "\n  - src/**",
        "evidence": "|\n  Seen in the code.",
    }
    lines = ["---"]
    for key, value in fields.items():
        if key == drop:
            if add:
                lines.append(add)
            continue
        lines.append(f"{key}:{value}" if value.startswith("\n") else f"{key}: {value}")
    if extra:
        lines.append(extra)
    return "\n".join([*lines, "---", "A claim that holds.", ""])


@pytest.fixture
def base(repo: Repo) -> Repo:
    """Two commits: src/a.py changed after ``repo.first``."""
    repo.first = repo.commit_paths("first", {"src/a.py": "a\n"})
    repo.commit_paths("second", {"src/a.py": "a2\n"})
    return repo


# ---------------------------------------------------------------- 1. a misspelled required field


@pytest.mark.parametrize(
    ("field", "typo", "rule"),
    [
        ("status", "stauts: verified", "status_missing"),
        ("type", "typ: fact", "type_missing"),
        ("schema_version", "schemaversion: 1", "schema_version_missing"),
        ("written_at", "writen_at: 2026-11-01", "date_missing"),
        ("id", "idd: subject", "id_missing"),
    ],
)
def test_missing_required_field_names_the_misspelled_key(repo: Repo, field: str, typo: str, rule: str) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.write(f"{STORE}/entries/subject.md", raw("subject", head, drop=field, add=typo, extra="owner: team-a"))
    run(repo, "index")
    data = as_json(run(repo, "lint", "--json"))
    found = [v for v in data["violations"] if v["field"] == field]
    assert [v["rule"] for v in found] == [rule]
    key = typo.split(":")[0]
    assert found[0]["message"].endswith(f"unknown field '{key}' — did you mean {field}?")
    assert not any(v["field"] == "owner" for v in data["violations"])  # other unknown fields stay ignored


def test_invalid_status_is_still_status_invalid(repo: Repo) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.write(f"{STORE}/entries/subject.md", raw("subject", head, drop="status", add="status: fresh"))
    run(repo, "index")
    assert [v["rule"] for v in as_json(run(repo, "lint", "--json"))["violations"]] == ["status_invalid"]


# ---------------------------------------------------------------- 2. id field differs from the file name


def test_id_mismatch_wording_and_status_keys_entries_by_file_name(base: Repo) -> None:
    first = base.first
    base.write(f"{STORE}/entries/timeout-30.md", raw("timeout30", first))
    put(base, "user", anchor=base.head(), scope=["docs/**"], extra="explains: [timeout-30]")
    put(base, "other", anchor=base.head(), scope=["docs/**"], extra="explains: [timeout30]")
    run(base, "index")
    lint = as_json(run(base, "lint", "--json"))
    mismatch = [v for v in lint["violations"] if v["rule"] == "id_mismatch"]
    assert mismatch[0]["message"].startswith("id 'timeout30' differs from the file name 'timeout-30.md'")
    target = [v for v in lint["violations"] if v["rule"] == "explains_target"]
    assert [v["id"] for v in target] == ["other"]
    assert "timeout-30.md says id: timeout30" in target[0]["message"]

    data = as_json(run(base, "status", "--json"))
    pairs = [(v["id"], v["reason"]) for v in data["verdicts"]]
    assert pairs == [("other", "dependency_suspect"), ("timeout-30", "scope_hit"), ("user", "dependency_suspect")]
    user = next(v for v in data["verdicts"] if v["id"] == "user")
    assert user["dependencies"] == ["timeout-30"] and "unresolved" not in user
    other = next(v for v in data["verdicts"] if v["id"] == "other")
    assert other["unresolved"] == {"timeout30": "missing"}


# ---------------------------------------------------------------- 3. an entry status cannot watch


def test_invalid_scope_is_unchecked_never_all_clear(base: Repo) -> None:
    put(base, "unwatched", anchor=base.head(), scope=["../x"])
    put(base, "partly", anchor=base.head(), scope=["docs/**", "../y"])
    result = run(base, "status", "--json")
    assert result.exit_code == 1
    data = as_json(result)
    assert data["verdicts"] == [] and data["summary"]["suspect"] == 0
    assert [(u["id"], u["field"]) for u in data["unchecked"]] == [("partly", "scope"), ("unwatched", "scope")]
    assert "'../x' is never matched" in data["unchecked"][1]["message"]
    text = run(base, "status")
    assert text.exit_code == 1
    assert "  unchecked  unwatched  scope: " in text.stdout
    assert "All claims hold" not in text.stdout
    hook = run(base, "status", "--hook", "SessionStart")
    assert "unwatched" in json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]


def test_missing_scope_and_bad_ttl_are_unchecked(base: Repo) -> None:
    put(base, "no-scope", anchor=base.head(), scope=None)
    put(base, "bad-ttl", anchor=base.head(), scope=["src/**"], extra="ttl_days: 30d")
    put(base, "empty-ttl", anchor=base.head(), scope=["src/**"], extra="ttl_days:")  # null: no ttl, unchecked too
    data = as_json(run(base, "status", "--json"))
    assert [(u["id"], u["field"], u["message"]) for u in data["unchecked"]] == [
        ("bad-ttl", "ttl_days", "ttl_days '30d' is not a positive whole number: the claim never expires"),
        ("empty-ttl", "ttl_days", "ttl_days has no value: the claim never expires"),
        ("no-scope", "scope", data["unchecked"][2]["message"]),
    ]


def test_stale_only_store_does_not_say_all_claims_hold(base: Repo) -> None:
    put(base, "old", anchor=base.head(), scope=["src/**"], status="stale")
    assert "All claims hold" not in run(base, "status").stdout


# ---------------------------------------------------------------- 4. dependency on an unreadable entry


def test_dependency_on_unreadable_entry_is_named_and_makes_dependents_suspect(base: Repo) -> None:
    head = base.head()
    base.write(f"{STORE}/entries/timeout-30.md", "---\nid: [\n---\nbroken\n")
    put(base, "user", anchor=head, scope=["docs/**"], extra="explains: [timeout-30]")
    put(base, "user-of-user", anchor=head, scope=["docs/**"], extra="explains: [user]")
    run(base, "index")
    lint = as_json(run(base, "lint", "--json"))
    explains = [v for v in lint["violations"] if v["field"] == "explains"]
    assert [v["rule"] for v in explains] == ["explains_unreadable"]
    assert "cannot be read" in explains[0]["message"] and "no entry" not in explains[0]["message"]

    result = run(base, "status", "--json")
    assert result.exit_code == 1
    verdicts = {v["id"]: v for v in as_json(result)["verdicts"]}
    assert verdicts["user"]["unresolved"] == {"timeout-30": "unreadable"}
    assert verdicts["user"]["message"] == "depends on timeout-30 (unreadable)"
    assert verdicts["user-of-user"]["message"] == "depends on user (suspect)"


def test_pure_core_takes_unreadable_ids_as_data() -> None:
    view = linear_history({"src/a.py": "1"}, {"src/a.py": "1"})
    fields = {"status": "verified", "anchor": "c1", "scope": ["src/**"]}
    entries = [Entry("e/a.md", {**fields, "explains": ["b", "c"]}, "A.", 1, "a")]
    report = compute(entries, view, FixedClock(dt.date(2026, 11, 30)), unreadable=["b"])
    assert [(v.id, v.reason, dict(v.evidence)) for v in report.verdicts] == [
        ("a", "dependency_suspect", {"dependencies": ["b", "c"], "unresolved": {"b": "unreadable", "c": "missing"}}),
    ]


# ---------------------------------------------------------------- 5. verify ID --all-safe


def test_verify_with_id_and_all_safe_says_not_both(base: Repo) -> None:
    put(base, "x", anchor=base.head(), scope=["src/**"])
    result = run(base, "verify", "x", "--all-safe")
    assert result.exit_code == 2
    assert result.stderr.strip().endswith("name one entry id or pass --all-safe, not both")
    assert "not both" not in run(base, "verify").stderr


# ---------------------------------------------------------------- 6. hook event names


@pytest.mark.parametrize(("event", "hint"), [("Bogus", "not a Claude Code event"), ("sessionstart", "SessionStart")])
def test_unknown_hook_event_warns_on_stderr_and_still_answers(base: Repo, event: str, hint: str) -> None:
    put(base, "hit", anchor=base.first, scope=["src/**"])
    result = run(base, "status", "--hook", event)
    assert result.exit_code == 0
    assert "hit" in json.loads(result.stdout)["systemMessage"]
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"git-memkeep: warning: unknown hook event '{event}'")
    assert hint in lines[0]
    assert run(base, "status", "--hook", "Stop").stderr == ""


def test_status_json_with_hook_is_a_usage_error(base: Repo) -> None:
    result = run(base, "status", "--json", "--hook", "Stop")
    assert result.exit_code == 2
    assert as_json(result)["error"]["code"] == "bad_usage"
    assert len(result.stderr.splitlines()) == 1


# ---------------------------------------------------------------- 7. one-line usage errors


def test_usage_errors_are_one_line_pointing_at_dash_h(base: Repo) -> None:
    result = run(None, "frobnicate")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "git-memkeep: error: No such command 'frobnicate'. (see git memkeep -h)\n"
    assert as_json(run(None, "frobnicate", "--json"))["error"] == {
        "code": "bad_usage",
        "message": "No such command 'frobnicate'. (see git memkeep -h)",
        "exit_code": 2,
    }
    option = run(base, "status", "--bogus", "--json")
    assert option.stderr == "git-memkeep: error: No such option '--bogus'. (see git memkeep status -h)\n"
    assert as_json(option)["error"]["exit_code"] == 2
    assert run(None, "--bogus").stderr == "git-memkeep: error: No such option '--bogus'. (see git memkeep -h)\n"


def test_usage_error_one_line_in_a_subprocess_and_for_git_memzoi(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "from git_memzoi.cli.memkeep import main; main()", "frobnicate"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ},
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "git-memkeep: error: No such command 'frobnicate'. (see git memkeep -h)\n"
    from git_memzoi.cli.memzoi import cli as memzoi_cli

    result = CliRunner().invoke(memzoi_cli, ["frobnicate"], prog_name="git-memzoi")
    assert result.exit_code == 2
    assert result.stderr == "git-memzoi: error: No such command 'frobnicate'. (see git memzoi -h)\n"


# ---------------------------------------------------------------- 8. help without --help


def test_help_subcommand(base: Repo) -> None:
    top = run(None, "help")
    assert top.exit_code == 0
    assert "Commands:" in top.stdout and "verify" in top.stdout and "help" in top.stdout
    one = run(None, "help", "status")
    assert one.exit_code == 0 and "--hook" in one.stdout and "Usage: git-memkeep status" in one.stdout
    missing = run(None, "help", "nope")
    assert missing.exit_code == 2
    assert missing.stderr == "git-memkeep: error: No such command 'nope'. (see git memkeep -h)\n"


# ---------------------------------------------------------------- 9. --store missing and outside


def test_store_missing_and_outside_says_missing_first(base: Repo, tmp_path: Path) -> None:
    put(base, "x", anchor=base.head(), scope=["src/**"])
    result = run(base, "status", "--json", "--store", str(tmp_path / "newuser" / "nope"))
    error = as_json(result)["error"]
    assert (error["code"], result.exit_code) == ("store_not_found", 2)
    assert "no such folder" in error["message"] and "outside the repository" in error["message"]
    assert error["message"].index("no such folder") < error["message"].index("outside the repository")


# ---------------------------------------------------------------- 10. singular and plural


def test_counts_are_singular_or_plural(base: Repo) -> None:
    put(base, "x", anchor=base.head(), scope=["src/**"])
    assert run(base, "index").stdout.strip() == "INDEX.md rewritten: 1 entry"
    assert run(base, "lint").stdout.strip() == "memkeep lint: 1 entry, 0 violations"
    assert run(base, "status").stdout.startswith("memkeep: 1 entry in agent-memory/, 0 suspect")
    put(base, "y", anchor=base.head(), scope=["src/**"], entry_type="note")
    run(base, "index")
    assert run(base, "lint").stdout.splitlines()[-1] == "memkeep lint: 2 entries, 1 violation"


# ---------------------------------------------------------------- 11. healed, but still suspect


def test_manual_heal_that_stays_suspect_says_so(base: Repo) -> None:
    first = base.first
    put(base, "y", anchor=base.head(), scope=["docs/**"], status="stale")
    put(base, "x", anchor=first, scope=["src/**"], extra="explains: [y]")
    result = run(base, "verify", "x", "--manual")
    assert result.exit_code == 1
    assert result.stdout.strip().endswith("recorded a manual re-test (still suspect: depends on y (stale))")
    assert result.stdout.startswith("healed")
    status = as_json(run(base, "status", "--json"))
    assert [(v["id"], v["reason"]) for v in status["verdicts"]] == [("x", "dependency_suspect")]
    put(base, "z", anchor=first, scope=["src/**"])
    clean = run(base, "verify", "z", "--manual", "--json")
    assert clean.exit_code == 0
    assert as_json(clean)["items"][0]["still_suspect"] == []


def test_check_heal_that_stays_suspect_says_so(base: Repo) -> None:
    first = base.first
    put(base, "y", anchor=base.head(), scope=["docs/**"], status="stale")
    put(base, "x", anchor=first, scope=["src/**"], extra="explains: [y]\ncheck: {run: 'true', safe: true}")
    result = run(base, "verify", "x", "--json")
    assert result.exit_code == 1
    item = as_json(result)["items"][0]
    assert (item["action"], item["still_suspect"]) == ("healed", ["depends on y (stale)"])


# ---------------------------------------------------------------- 12. dry-run exit code


def test_dry_run_exits_one_when_it_previews_suspects(base: Repo) -> None:
    put(base, "fine", anchor=base.head(), scope=["src/**"], extra="check: {run: 'true', safe: true}")
    clean = run(base, "verify", "--all-safe", "--dry-run")
    assert (clean.exit_code, clean.stdout.strip()) == (0, "nothing to verify: no suspect entry")
    put(base, "hit", anchor=base.first, scope=["src/**"], extra="check: {run: 'true', safe: true}")
    dirty = run(base, "verify", "--all-safe", "--dry-run", "--json")
    assert dirty.exit_code == 1
    assert [i["id"] for i in as_json(dirty)["items"]] == ["hit"]
    assert "hit" in (base.root / STORE / "entries" / "hit.md").read_text()  # nothing written


# ---------------------------------------------------------------- 13. demo noise


def test_block_check_command_is_stripped_for_display_and_running(base: Repo) -> None:
    check = "check:\n  run: |\n    test -f src/a.py\n  safe: true"
    put(base, "hit", anchor=base.first, scope=["src/**"], extra=check)
    text = run(base, "verify", "--all-safe", "--dry-run").stdout
    assert "" not in text.splitlines()
    assert "  hit  [scope_hit]  test -f src/a.py" in text.splitlines()
    assert parse_check({"run": "  grep -q x f\n", "safe": True}, "check").run == "grep -q x f"


def test_license_is_a_plain_spdx_string() -> None:
    project = tomllib.loads((PROJECT / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["license"] == "MIT"


def test_demo_prints_no_colour_codes_when_not_a_terminal() -> None:
    script = (PROJECT / "scripts" / "demo.sh").read_text("utf-8")
    helpers = "\n".join(line for line in script.splitlines() if line.startswith(("if [ -t 1 ]", "say()", "note()")))
    proc = subprocess.run(["bash", "-c", helpers + "\nsay hello; note why"], capture_output=True, text=True, check=True)
    assert "\x1b" not in proc.stdout
    assert proc.stdout == "\n== hello\n   (why)\n"


# ---------------------------------------------------------------- 14. --store-dir help


def test_store_dir_help_says_discovery_walks_up() -> None:
    text = " ".join(run(None, "-h").stdout.split())
    assert "looked for from the current folder (or -C DIR) up to the repository root" in text
    assert "at the repository root" not in text
