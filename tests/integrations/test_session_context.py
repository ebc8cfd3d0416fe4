"""``git memzoi integrate session-context`` (the SessionStart hook; issue 15 "Session start"): the context comes
from the repository's state — the risks bound to files this branch and the working tree changed, suspect claims
of both stores, the newest decisions, the review count, the latest checkpoint — cited, deduplicated and under a
byte budget; a repository without memory gets one line saying how to start."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from git_memzoi.core.gitview_branch import branch_state
from git_memzoi.memzoi.recall import session_context
from tests.integrations.test_claude_code import validate_output
from tests.support import repos
from tests.support.repos import Repo, entry_text

START = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": session_context.START_LINE}}
HOOK_INPUT = json.dumps({"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"})
RISK = "Token refresh races"
DECISION = "Sessions are validated server-side"
FACT = "Tests run with pytest"


def propose(repo: Repo, kind: str, title: str, body: str, *paths: str) -> str:
    """Propose and apply one repo-safe record (its envelope anchored at HEAD, scoped to ``paths``); its id."""
    args = ["propose", "--type", kind, "--sensitivity", "repo-safe", "--title", title, "--body", body, "--apply"]
    for path in paths:
        args += ["--applies-to", path]
    result = repos.ok_json(repo, *args, env=None)
    record_id: str = result["applied"]["record_id"]
    return record_id


def context(repo: Repo, *args: str, hook_input: str = HOOK_INPUT) -> str:
    """The additionalContext the hook prints (validated against Claude Code's hook output schema)."""
    result = repos.run(repo, "integrate", "session-context", *args, env=None, input=hook_input)
    assert (result.exit_code, result.stderr) == (0, ""), result.stderr
    payload = validate_output(result.stdout)
    assert payload["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    text: str = payload["hookSpecificOutput"]["additionalContext"]
    return text


def cite(repo: Repo, record_id: str) -> str:
    """``[id, .memzoi/records/<id>.md:<line>]``: the record's body line as the index gives it."""
    text = (repo.root / ".memzoi" / "records" / f"{record_id}.md").read_text("utf-8").splitlines()
    line = text.index("---", 1) + 2  # the first body line after the closing frontmatter fence
    return f"[{record_id}, .memzoi/records/{record_id}.md:{line}]"


@pytest.fixture
def project(repo: Repo) -> dict[str, str]:
    """On main: src/a.py and src/b.py, a risk bound to src/a.py, a decision, a fact; then a branch ``feature``
    changing src/a.py."""
    repo.commit("base", **{"src/a.py": "a\n", "src/b.py": "b\n"})
    repos.ok_json(repo, "init", env=None)
    ids = {
        "risk": propose(repo, "risk", RISK, "Two refreshes at once log the user out.", "src/a.py"),
        "decision": propose(repo, "decision", DECISION, "Protected routes check the session on the server."),
        "fact": propose(repo, "fact", FACT, "Run make test."),
    }
    repo.commit("memory")
    repo.git("checkout", "-q", "-b", "feature")
    ids["anchor"] = repo.git("rev-parse", "HEAD~1")[:12]
    repo.commit("change a", **{"src/a.py": "a2\n"})
    return ids


def test_the_risk_on_a_changed_file_and_the_decision_show_cited(repo: Repo, project: dict[str, str]) -> None:
    text = context(repo)
    lines = text.splitlines()
    assert lines[:2] == [
        session_context.HEADER,
        "Memory: 3 record(s), 0 entries; branch feature: 1 file(s) changed since main, 0 changed in the working tree.",
    ]
    risk = f"- risk on src/a.py: {RISK}: Two refreshes at once log the user out. {cite(repo, project['risk'])}"
    suspect = f"  Suspect: scope_hit (src/a.py changed since {project['anchor']}); re-verify before relying on it"
    decision = f"- decision: {DECISION}: Protected routes check the session on the server. "
    assert lines[2:] == [risk, suspect, decision + cite(repo, project["decision"])]
    assert FACT not in text  # a fact bound to nothing the branch changed is no session-start item


def test_a_record_made_suspect_by_a_change_shows_with_scope_hit(repo: Repo) -> None:
    base = repo.commit("base", **{"src/b.py": "b\n", "docs/x.md": "x\n"})
    repos.ok_json(repo, "init", env=None)
    fact = propose(repo, "fact", "B returns bytes", "b() returns bytes, never str.", "src/b.py")
    repo.commit("memory", **{"agent-memory/entries/hit.md": entry_text("hit", anchor=base, scope=["docs/**"])})
    repo.commit("change b and docs", **{"src/b.py": "b2\n", "docs/x.md": "x2\n"})
    anchor = base[:12]  # the record's: HEAD when it was proposed
    lines = context(repo).splitlines()
    assert "branch main: 0 changed in the working tree." in lines[1]  # on the default branch: no branch diff
    entry = lines.index("- suspect: A claim that holds. [hit, agent-memory/entries/hit.md:14]")
    assert lines[entry + 1].startswith("  Suspect: scope_hit (") and "docs/x.md" in lines[entry + 1]
    record = lines.index(f"- suspect: B returns bytes: b() returns bytes, never str. {cite(repo, fact)}")
    assert lines[record + 1] == (
        f"  Suspect: scope_hit (src/b.py changed since {anchor}); re-verify before relying on it"
    )
    assert record < entry  # records before entries among the suspect


@pytest.mark.parametrize("state", ["no-memzoi", "no-commit", "initialized-empty"])
def test_a_repository_without_memory_gets_the_one_start_line(repo: Repo, state: str) -> None:
    if state != "no-commit":
        repo.commit("base", **{"README.md": "hi\n"})
    if state == "initialized-empty":
        repos.ok_json(repo, "init", env=None)
    result = repos.run(repo, "integrate", "session-context", env=None, input=HOOK_INPUT)
    assert (result.exit_code, result.stderr) == (0, "")
    assert validate_output(result.stdout) == START
    assert "\n" not in session_context.START_LINE and "git memzoi init" in session_context.START_LINE


def test_a_memkeep_only_repository_stays_silent(repo: Repo) -> None:
    base = repo.commit("base", **{"src/a.py": "a\n"})
    repo.commit("entry", **{"agent-memory/entries/a.md": entry_text("a", anchor=base, scope=["src/a.py"])})
    result = repos.run(repo, "integrate", "session-context", env=None, input=HOOK_INPUT)
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def test_working_tree_changes_bind_without_a_default_branch(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "trunk")  # neither origin/HEAD nor main nor master
    repo.commit("base", **{"src/a.py": "a\n", "lib/c.py": "c\n"})
    repos.ok_json(repo, "init", env=None)
    warning = propose(repo, "warning", "C is generated", "Edit the template, not lib/c.py.", "lib/c.py")
    attempt = propose(repo, "failed_attempt", "New folder layout", "Tried vendor/ once; it broke imports.", "new/x.py")
    repo.commit("memory")
    repo.write("lib/c.py", "edited\n")  # unstaged
    repo.write("new/x.py", "x\n")  # untracked: git lists the folder new/
    lines = context(repo).splitlines()
    assert lines[1] == "Memory: 2 record(s), 0 entries; branch trunk: 2 changed in the working tree."
    assert f"- warning on lib/c.py: C is generated: Edit the template, not lib/c.py. {cite(repo, warning)}" in lines
    shown = [line for line in lines if line.startswith("- failed_attempt on new/: ")]
    assert shown == [
        f"- failed_attempt on new/: New folder layout: Tried vendor/ once; it broke imports. {cite(repo, attempt)}"
    ]


def test_the_default_branch_is_origin_head_first(repo: Repo) -> None:
    first = repo.commit("one", **{"a.txt": "1\n"})
    second = repo.commit("two", **{"b.txt": "2\n"})
    repo.git("update-ref", "refs/remotes/origin/trunk", first)
    repo.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
    state = branch_state(repo.root, recent=1)
    assert (state.branch, state.base, state.merge_base, state.branch_files) == (
        "main",
        "origin/trunk",
        first,
        ("b.txt",),
    )
    assert state.recent == ((second[:12], "two"),)


def test_the_budget_is_respected_to_the_byte(repo: Repo) -> None:
    repo.commit("base", **{"src/a.py": "a\n"})
    repos.ok_json(repo, "init", env=None)
    for n in range(14):
        propose(repo, "risk", f"Risk number {n} é", f"Risk body {n} " + "ü" * 40, "src/a.py")
        propose(repo, "decision", f"Decision number {n}", f"Decision body {n} " + "日本" * 30)
    repo.commit("memory")
    repo.write("src/a.py", "changed\n")
    full = context(repo)
    assert len(full.encode()) <= session_context.DEFAULT_BUDGET_BYTES
    for budget in (0, 1, 40, 180, 333, 700, 1500, 4000):
        text = context(repo, "--budget-bytes", str(budget)) if budget else None
        if text is None:  # an empty context prints nothing at all
            result = repos.run(repo, "integrate", "session-context", "--budget-bytes", "0", env=None, input="{}")
            assert (result.exit_code, result.stdout) == (0, "")
            continue
        assert len(text.encode("utf-8")) <= budget, budget
    text = context(repo, "--budget-bytes", "700")
    assert text.splitlines()[-1].startswith("… ") and "more not shown (budget 700 bytes)" in text
    # the first three of each kind come before the fourth of any: 14 risks outrank every decision, yet one shows
    text = context(repo, "--budget-bytes", "1500")
    assert text.count("- risk on src/a.py: ") == 3 and text.count("- decision: ") >= 1


def test_the_budget_comes_from_the_config_and_a_bad_one_never_fails_the_session(repo: Repo, project: Any) -> None:
    config = repo.root / ".memzoi" / "config.toml"
    config.write_text("[session]\ncontext_budget_bytes = 150\n")
    assert len(context(repo).encode()) <= 150
    assert len(context(repo, "--budget-bytes", "4000").encode()) > 150  # the flag wins
    config.write_text("[session]\ncontext_budget_bytes = 99999\n")
    result = repos.run(repo, "integrate", "session-context", env=None, input=HOOK_INPUT)
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == "git-memzoi: the session context budget must be 0 to 4000 bytes, not 99999\n"
    config.write_text("[session]\ncontext_budget = 1\n")
    result = repos.run(repo, "integrate", "session-context", env=None, input=HOOK_INPUT)
    assert (result.exit_code, result.stdout) == (0, "")
    assert "[session] has unknown key 'context_budget'" in result.stderr
    refused = repos.run(repo, "integrate", "session-context", "--budget-bytes", "4001", env=None, input=HOOK_INPUT)
    assert refused.exit_code == 2 and refused.stdout == ""


def test_a_bound_suspect_risk_shows_once_and_pending_reviews_are_counted(repo: Repo, project: Any) -> None:
    repos.ok_json(
        repo,
        "propose",
        "--type",
        "fact",
        "--sensitivity",
        "repo-safe",
        "--title",
        "Waiting",
        "--body",
        "For review.",
        "--manual",
        env=None,
    )
    text = context(repo)
    assert text.count(f"[{project['risk']}, ") == 1 and "- suspect: " not in text
    assert text.splitlines()[-1] == session_context.REVIEW_LINE.format(count=1)


def test_a_record_holding_a_credential_is_named_never_shown(repo: Repo, project: Any) -> None:
    path = repo.root / ".memzoi" / "records" / f"{project['decision']}.md"
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    path.write_text(path.read_text("utf-8").replace("on the server.", f"on the server. token={token}"), "utf-8")
    text = context(repo)
    assert token not in text
    assert (
        f"- [withheld] {project['decision']}: its body line 1 holds a credential (GitHub Token; not printed); " in text
    )


def test_the_hook_runs_as_a_subprocess_and_exits_0(repo: Repo, project: Any) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "git_memzoi", "integrate", "session-context"],
        cwd=repo.root,
        input=HOOK_INPUT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert RISK in validate_output(done.stdout)["hookSpecificOutput"]["additionalContext"]


def test_every_item_of_the_core_is_cited(repo: Repo, project: Any) -> None:
    built = session_context.build(repos.memzoi_workspace(repo), budget_bytes=4000)
    assert [(i.kind, i.key) for i in built.shown] == [
        ("bound", f"record:{project['risk']}"),
        ("decision", f"record:{project['decision']}"),
    ]
    assert all(i.cited and i.cited.startswith(".memzoi/records/") for i in built.shown)
    assert built.to_json()["bytes"] == len(built.text.encode()) <= 4000


def test_remembered_record_verdicts_follow_a_new_commit(repo: Repo) -> None:
    repo.commit("base", **{"src/b.py": "b\n"})
    repos.ok_json(repo, "init", env=None)
    propose(repo, "fact", "B returns bytes", "b() returns bytes, never str.", "src/b.py")
    repo.commit("memory")
    assert "- suspect: " not in context(repo)
    assert "- suspect: " not in context(repo)  # answered from <git dir>/memzoi/cache/
    repo.commit("change b", **{"src/b.py": "b2\n"})
    assert "- suspect: B returns bytes: " in context(repo)
