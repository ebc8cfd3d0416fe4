"""The PreCompact checkpoint (``integrate pre-compact``) and the opt-in UserPromptSubmit pack
(``integrate prompt-context``), and how ``integrate install`` adds them (issue 15)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.integrations import agents
from tests.integrations.test_claude_code import validate_output
from tests.integrations.test_session_context import context, propose
from tests.support import repos
from tests.support.repos import Repo

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def project(repo: Repo) -> Repo:
    """A branch ``feature`` off main that changed src/a.py, one staged and one untracked file; a risk on src/a.py."""
    repo.commit("base", **{"src/a.py": "a\n", "src/b.py": "b\n"})
    repos.ok_json(repo, "init", env=None)
    repos.spec_ids(repo.root)
    propose(repo, "risk", "Token refresh races", "Two refreshes at once log the user out.", "src/a.py")
    repo.commit("memory")
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("single-flight refresh", **{"src/a.py": "a2\n"})
    repo.write("src/b.py", "b2\n")
    repo.git("add", "src/b.py")
    repo.write("notes.txt", "n\n")
    return repo


def transcript(tmp_path: Path, *prompts: str) -> Path:
    """A Claude Code transcript (JSONL) in which the user typed ``prompts``, with replies and a tool result."""
    lines: list[dict[str, Any]] = []
    for prompt in prompts:
        lines.append({"type": "user", "message": {"role": "user", "content": prompt}})
        lines.append({"type": "assistant", "message": {"content": [{"type": "text", "text": "On it."}]}})
        lines.append({"type": "user", "message": {"content": [{"type": "tool_result", "content": "ok"}]}})
    path = tmp_path / "transcript.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    return path


def pre_compact(repo: Repo, *args: str, hook_input: dict[str, Any]) -> None:
    given = {"session_id": "s1", "hook_event_name": "PreCompact", "trigger": "auto", **hook_input}
    result = repos.run(repo, "integrate", "pre-compact", *args, env=None, input=json.dumps(given))
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")  # stdout would be compaction instructions


def checkpoints(repo: Repo) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = repos.ok_json(repo, "checkpoint", "list", env=None)["records"]
    return found


def test_pre_compact_writes_the_branch_state_and_the_next_session_resumes_it(project: Repo, tmp_path: Path) -> None:
    pre_compact(project, hook_input={"transcript_path": str(transcript(tmp_path, "Make refresh single-flight"))})
    (written,) = checkpoints(project)
    assert written["title"] == "Work on branch feature (before auto compaction)"
    fork = project.git("merge-base", "main", "HEAD")[:12]
    head = project.git("rev-parse", "HEAD")[:12]
    assert written["body"].splitlines() == [
        f"Branch: feature, forked from main at {fork}",
        "Changed on the branch: src/a.py",
        "Staged: src/b.py",
        "Untracked: notes.txt",
        "Last commits:",
        f"- {head} single-flight refresh",
        f"- {fork} memory",
        f"- {project.git('rev-parse', 'HEAD~2')[:12]} base",
    ]
    assert "single-flight" not in written["title"]  # the transcript is read only when the user opted in
    assert written["id"] not in project.git("status", "--porcelain", "--ignored")  # private: in the git directory
    lines = context(project).splitlines()
    assert lines[2] == (
        f"Resuming: {written['title']} [{written['id']}, .git/memzoi/local/runtime/session/{written['id']}.md:"
        f"{_body_line(project, written['id'])}]"
    )
    assert lines[3:5] == [f"  Branch: feature, forked from main at {fork}", "  Changed on the branch: src/a.py"]
    assert any(line.startswith("- risk on src/a.py: Token refresh races") for line in lines)


def _body_line(repo: Repo, checkpoint_id: str) -> int:
    text = (repo.root / ".git/memzoi/local/runtime/session" / f"{checkpoint_id}.md").read_text("utf-8").splitlines()
    return text.index("---", 1) + 2


def test_the_transcript_is_read_when_opted_in_by_flag_or_config(project: Repo, tmp_path: Path) -> None:
    path = transcript(tmp_path, "First ask", "Make refresh single-flight   and keep\nthe retries")
    pre_compact(project, "--from-transcript", hook_input={"transcript_path": str(path), "trigger": "manual"})
    (written,) = checkpoints(project)
    assert written["title"] == "Make refresh single-flight and keep the retries"  # the branch is in the note
    assert written["id"] == "session-make-refresh-single-flight-and-keep-the-retries"
    assert written["body"].splitlines()[:3] == [
        "Last requests:",
        "- First ask",
        "- Make refresh single-flight and keep the retries",
    ]
    (project.root / ".memzoi" / "config.toml").write_text("[session]\ncheckpoint_transcript = true\n")
    pre_compact(project, hook_input={"transcript_path": str(transcript(tmp_path, "Second session ask"))})
    assert any(c["body"].startswith("Last requests:\n- Second session ask\n") for c in checkpoints(project))


def test_a_transcript_holding_a_credential_is_left_out(project: Repo, tmp_path: Path) -> None:
    path = transcript(tmp_path, f"deploy with token {TOKEN}")
    pre_compact(project, "--from-transcript", hook_input={"transcript_path": str(path)})
    (written,) = checkpoints(project)
    assert TOKEN not in json.dumps(written)
    assert written["title"] == "Work on branch feature (before auto compaction)"
    assert written["body"].splitlines()[-1] == "Transcript excerpt left out: it holds a credential."


@pytest.mark.parametrize("given", [{}, {"transcript_path": "/nonexistent/t.jsonl"}, {"transcript_path": 7}])
def test_a_missing_or_odd_transcript_falls_back_to_the_working_tree(project: Repo, given: dict[str, Any]) -> None:
    pre_compact(project, "--from-transcript", hook_input=given)
    (written,) = checkpoints(project)
    assert written["body"].startswith("Branch: feature, forked from main at ")


def test_pre_compact_without_memzoi_writes_nothing_and_exits_0(repo: Repo) -> None:
    repo.commit("base", **{"a.txt": "a\n"})
    result = repos.run(repo, "integrate", "pre-compact", env=None, input='{"hook_event_name": "PreCompact"}')
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    assert not (repo.root / ".memzoi").exists()


def prompt_context(repo: Repo, prompt: str | None) -> str:
    given = {"session_id": "s1", "hook_event_name": "UserPromptSubmit", "cwd": str(repo.root)}
    if prompt is not None:
        given["prompt"] = prompt
    result = repos.run(repo, "integrate", "prompt-context", env=None, input=json.dumps(given))
    assert (result.exit_code, result.stderr) == (0, ""), result.stderr
    return result.stdout


def test_prompt_context_is_silent_for_an_unrelated_prompt_and_packs_a_related_one(project: Repo) -> None:
    propose(project, "decision", "Retries use exponential backoff", "Retry the refresh call with backoff.")
    assert prompt_context(project, "What is the weather like in Paris today?") == ""
    assert prompt_context(project, "please fix the test") == ""  # only words that match anything
    assert prompt_context(project, None) == ""
    out = prompt_context(project, "The token refresh races again, can you look?")
    payload = validate_output(out)
    text = payload["hookSpecificOutput"]["additionalContext"]
    assert payload["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    # the pack's own order: a suspect memory after the trusted ones (recall/pack.py)
    assert text.startswith("# Memzoi Context\n- [retries-use-exponential-backoff] (decision/")
    assert "\n- [token-refresh-races] (risk/" in text and text.endswith(
        "Suspect: scope_hit; re-verify before relying on it"
    )


def test_prompt_context_needs_min_terms_key_words(project: Repo) -> None:
    given = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "refresh"})
    one = repos.run(project, "integrate", "prompt-context", env=None, input=given)
    assert "token-refresh-races" in one.stdout  # a one-word prompt: its one key word is enough
    given = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "refresh the cache layout"})
    two = repos.run(project, "integrate", "prompt-context", env=None, input=given)
    assert two.stdout == ""  # one of three key words: below the default threshold of two
    three = repos.run(project, "integrate", "prompt-context", "--min-terms", "1", env=None, input=given)
    assert "token-refresh-races" in three.stdout


def test_install_adds_the_prompt_hook_only_when_asked_and_the_transcript_form_in_place(repo: Repo) -> None:
    plain = repos.ok_json(repo, "integrate", "install", "--profile", "claude-code", env=None)
    settings = json.loads((repo.root / agents.SETTINGS_FILE).read_text("utf-8"))
    assert "UserPromptSubmit" not in settings["hooks"]
    names = [agents.hook_name(h["command"]) for g in settings["hooks"]["PreCompact"] for h in g["hooks"]]
    assert names == ["memkeep status --hook PreCompact", "memzoi integrate pre-compact"]
    assert len(plain["added"]) == 5

    opted = repos.ok_json(
        repo,
        "integrate",
        "install",
        "--profile",
        "claude-code",
        "--prompt-context",
        "--checkpoint-transcript",
        env=None,
    )
    settings = json.loads((repo.root / agents.SETTINGS_FILE).read_text("utf-8"))
    (prompt_hook,) = [h for g in settings["hooks"]["UserPromptSubmit"] for h in g["hooks"]]
    assert agents.hook_name(prompt_hook["command"]) == "memzoi integrate prompt-context"
    assert "-m git_memzoi integrate prompt-context; elif" in prompt_hook["command"]
    assert [a.split(": ", 1)[0] for a in opted["added"]] == ["UserPromptSubmit"]
    (changed,) = opted["replaced"]
    assert (changed["event"], changed["hook"]) == ("PreCompact", "memzoi integrate pre-compact")
    assert "integrate pre-compact --from-transcript; elif" in changed["new"]
    assert changed["new"].endswith(f"{agents.HOOK_MARKER}memzoi integrate pre-compact")

    back = repos.ok_json(repo, "integrate", "install", "--profile", "claude-code", env=None)
    assert [r["hook"] for r in back["replaced"]] == ["memzoi integrate pre-compact"]  # the working-tree form again
    assert "--from-transcript" not in back["replaced"][0]["new"]


def test_the_installed_hooks_carry_a_checkpoint_into_the_next_session(project: Repo, tmp_path: Path) -> None:
    """As Claude Code runs them (``sh -c``, a bare PATH, the event JSON on stdin): PreCompact writes the
    checkpoint, the SessionStart after the compaction resumes it, a related prompt gets its pack."""
    from tests.integrations.test_claude_code_install import installed, run_hook

    agents.install_claude_code(project.root, prompt_context=True)
    hooks = {agents.hook_name(c): (e, c) for e, c in installed(project.root)}
    event, command = hooks["memzoi integrate pre-compact"]
    done = run_hook(command, event, project.root, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    event, command = hooks["memzoi integrate session-context"]
    done = run_hook(command, event, project.root, cwd=tmp_path)
    text = validate_output(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert text.splitlines()[2].startswith("Resuming: Work on branch feature (before auto compaction) [")
    assert "- risk on src/a.py: Token refresh races: " in text
    event, command = hooks["memzoi integrate prompt-context"]
    assert event == "UserPromptSubmit"
    done = subprocess.run(
        ["sh", "-c", command],
        env={"PATH": "/usr/bin:/bin", "CLAUDE_PROJECT_DIR": str(project.root)},
        cwd=tmp_path,
        input=json.dumps({"hook_event_name": event, "prompt": "why do token refresh calls race?"}),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert "[token-refresh-races]" in validate_output(done.stdout)["hookSpecificOutput"]["additionalContext"]


def test_a_retried_pre_compact_of_one_session_reuses_its_checkpoint(project: Repo) -> None:
    """The hook input's session_id keys the checkpoint (issue 15): the same state noted twice is one checkpoint; a
    changed working tree is a new event; another session writes its own."""
    pre_compact(project, hook_input={})
    pre_compact(project, hook_input={})
    assert len(checkpoints(project)) == 1
    project.write("more.txt", "x\n")
    pre_compact(project, hook_input={})
    assert len(checkpoints(project)) == 2
    pre_compact(project, hook_input={"session_id": "s2"})
    assert len(checkpoints(project)) == 3
