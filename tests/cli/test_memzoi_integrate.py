"""``git memzoi integrate | mcp config | quickstart`` (issue 6 "Claude Code and other agents").

In-process through click's CliRunner against real repositories in tmp_path.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from click.testing import Result

from git_memzoi.integrations import agents, merge_config
from tests.support import repos
from tests.support.repos import PROJECT, Repo

PYTHON = os.path.abspath(sys.executable)  # the interpreter an in-process install pins


def run(repo: Repo, *args: str, input: str | None = None) -> Result:
    """``git memzoi -C <repo> ...`` on the real clock."""
    return repos.run(repo, *args, env=None, input=input)


def ok_json(repo: Repo, *args: str) -> Any:
    return repos.ok_json(repo, *args, env=None)


def commands(settings: dict[str, Any], event: str) -> list[str]:
    return [h["command"] for g in settings["hooks"].get(event, []) for h in g["hooks"]]


# ------------------------------------------------------------------------------------------- claude-code install

FOREIGN = {
    "model": "opus",
    "permissions": {"allow": ["Bash(make test)"]},
    "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo mine"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}],
    },
}


def test_install_merges_into_existing_settings_and_is_idempotent(repo: Repo) -> None:
    path = repo.write(".claude/settings.json", json.dumps(FOREIGN, indent=4))
    first = ok_json(repo, "integrate", "install", "--profile", "claude-code")
    assert first["status"] == "updated" and len(first["added"]) == 5
    merged = json.loads(path.read_text())
    assert merged["model"] == "opus" and merged["permissions"] == FOREIGN["permissions"]
    assert merged["hooks"]["PreToolUse"] == FOREIGN["hooks"]["PreToolUse"]
    assert merged["hooks"]["SessionStart"][0] == FOREIGN["hooks"]["SessionStart"][0]
    ours = merged["hooks"]["SessionStart"][1]
    assert ours["matcher"] == "startup|resume|clear|compact"
    pinned = agents.settings_snippet(PYTHON)
    assert [h["command"] for h in ours["hooks"]] == commands(pinned, "SessionStart")
    assert all(c.startswith(f"p={agents.sh_quote(PYTHON)}; ") for c in commands(pinned, "SessionStart"))
    assert merged["hooks"]["PreCompact"][0]["matcher"] == "manual|auto"
    assert commands(merged, "PreCompact") == commands(pinned, "PreCompact")
    assert commands(merged, "Stop") == commands(pinned, "Stop")
    assert [agents.hook_name(c) for e in ("PreCompact", "Stop") for c in commands(merged, e)] == [
        "memkeep status --hook PreCompact",
        "memzoi integrate pre-compact",
        "memkeep status --hook Stop",
    ]
    assert "matcher" not in merged["hooks"]["Stop"][0]
    assert all(
        0 < h["timeout"] <= 15
        for e in ("SessionStart", "PreCompact", "Stop")
        for g in merged["hooks"][e][-1:]
        for h in g["hooks"]
    )

    before = path.read_bytes()
    again = ok_json(repo, "integrate", "install", "--profile", "claude-code")
    assert (again["status"], again["added"], again["replaced"], again["python"]) == ("unchanged", [], [], PYTHON)
    assert path.read_bytes() == before
    text = run(repo, "integrate", "install", "--profile", "claude-code")
    assert text.stdout == f"unchanged {path} (python: {PYTHON})\n"


def test_install_creates_settings_when_missing(repo: Repo) -> None:
    result = ok_json(repo, "integrate", "install", "--profile", "claude-code")
    assert result["status"] == "created"
    settings = json.loads((repo.root / ".claude/settings.json").read_text())
    assert settings == agents.settings_snippet(PYTHON)
    assert result["added"] == [
        f"{e}: {c}" for e in ("SessionStart", "PreCompact", "Stop") for c in commands(settings, e)
    ]


def test_install_says_what_it_added_and_replaced(repo: Repo) -> None:
    path = repo.root / ".claude/settings.json"
    created = run(repo, "integrate", "install", "--profile", "claude-code")
    assert created.stdout == (
        f"created {path} (python: {PYTHON})\n"
        "  added SessionStart: memkeep status --hook SessionStart\n"
        "  added SessionStart: memzoi integrate session-context\n"
        "  added PreCompact: memkeep status --hook PreCompact\n"
        "  added PreCompact: memzoi integrate pre-compact\n"
        "  added Stop: memkeep status --hook Stop\n"
        f"registered merge driver memzoi in the repository's git config: {merge_config.driver_command()}\n"
        "added /agent-memory/INDEX.md, /.memzoi/index.md, /.memzoi/records/** to .gitattributes (merge=memzoi): "
        "commit it so every clone merges them the same way\n"
    )
    old = path.read_text()
    legacy = 'git -C "$CLAUDE_PROJECT_DIR" memkeep status --hook Stop'
    stale = json.loads(old)
    stale["hooks"]["Stop"][0]["hooks"][0]["command"] = legacy  # as an earlier release installed it
    path.write_text(json.dumps(stale, indent=2) + "\n")
    replaced = run(repo, "integrate", "install", "--profile", "claude-code")
    assert (
        replaced.stdout
        == f"updated {path} (python: {PYTHON})\n  replaced Stop: memkeep status --hook Stop (was: {legacy})\n"
    )
    assert path.read_text() == old


def test_install_refuses_malformed_settings_and_writes_nothing(repo: Repo) -> None:
    path = repo.write(".claude/settings.json", '{"hooks": {,}')
    result = run(repo, "integrate", "install", "--profile", "claude-code")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and "not valid JSON" in result.stderr
    assert path.read_text() == '{"hooks": {,}'
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]
    path.write_text('{"hooks": []}')
    assert run(repo, "integrate", "install", "--profile", "claude-code").exit_code == 2
    assert path.read_text() == '{"hooks": []}'


def test_install_rejects_other_profiles(repo: Repo) -> None:
    assert run(repo, "integrate", "install", "--profile", "codex").exit_code == 2
    assert not (repo.root / ".claude").exists()


# ------------------------------------------------------------------------------------------------ instructions

USER_HEAD = "# My project\r\n\r\nHand-written rules — keep them.\n\n"
USER_TAIL = "\n\n## After\nMore user text, no trailing newline"


def test_instructions_replace_only_between_markers(repo: Repo) -> None:
    stale = f"{agents.START}\nold generated text\n{agents.END}"
    path = repo.write("AGENTS.md", "")
    path.write_bytes((USER_HEAD + stale + USER_TAIL).encode())
    result = ok_json(repo, "integrate", "instructions", "--profile", "codex")
    assert (result["status"], result["file"], result["profile"]) == ("replaced", str(path), "codex")
    data = path.read_bytes().decode()
    assert data.startswith(USER_HEAD) and data.endswith(USER_TAIL)
    assert data[len(USER_HEAD) : len(data) - len(USER_TAIL)] == agents.block("codex")
    assert "Never commit: secrets, raw_chat_transcripts, private_personal_data" in data
    again = ok_json(repo, "integrate", "instructions", "--profile", "codex")
    assert (again["status"], again["changed"]) == ("unchanged", False)
    assert path.read_bytes().decode() == data


def test_instructions_append_when_no_markers_and_refuse_broken_ones(repo: Repo) -> None:
    path = repo.write("CLAUDE.md", USER_HEAD)
    result = ok_json(repo, "integrate", "instructions", "--profile", "claude")
    assert (result["status"], result["file"], result["changed"]) == ("appended", str(path), True)
    assert path.read_bytes().decode() == USER_HEAD + "\n" + agents.block("claude") + "\n"
    # reversed, repeated or half markers are refused like `export --file` refuses them: exit 2, nothing written
    for broken in (
        f"{USER_HEAD}{agents.END}\nx\n{agents.START}\n",
        f"{USER_HEAD}{agents.START}\nx\n",
        f"{agents.START}\n{agents.END}\n{agents.START}\n{agents.END}\n",
    ):
        path.write_bytes(broken.encode())
        refused = run(repo, "integrate", "instructions", "--profile", "claude", "--json")
        assert refused.exit_code == 2
        assert json.loads(refused.stdout)["error"]["code"] == "broken_markers"
        assert path.read_bytes() == broken.encode()


def test_default_file_choice(repo: Repo) -> None:
    assert agents.default_file(repo.root, "codex") == repo.root / "AGENTS.md"
    assert agents.default_file(repo.root, "claude") == repo.root / "CLAUDE.md"
    assert agents.default_file(repo.root, "mcp") == repo.root / "AGENTS.md"
    repo.write("CLAUDE.md", "x")
    assert agents.default_file(repo.root, "mcp") == repo.root / "CLAUDE.md"
    repo.write("AGENTS.md", f"{agents.START}\n{agents.END}\n")
    assert agents.default_file(repo.root, "claude") == repo.root / "AGENTS.md"
    assert agents.default_file(repo.root, "mcp") == repo.root / "AGENTS.md"


def test_instructions_to_a_named_new_file(repo: Repo) -> None:
    result = ok_json(repo, "integrate", "instructions", "--profile", "mcp", "--file", "docs/AGENTS.md")
    assert result["status"] == "created"
    assert (repo.root / "docs/AGENTS.md").read_text() == agents.block("mcp") + "\n"


# ------------------------------------------------------------------------------------------ list, prompt, mcp


def test_list_prompt_and_mcp_config_write_nothing(repo: Repo) -> None:
    listed = ok_json(repo, "integrate", "list")
    assert [p["profile"] for p in listed["profiles"]] == ["codex", "claude", "mcp", "claude-code"]
    assert listed["marker"] == {"start": agents.START, "end": agents.END}
    prompt = run(repo, "integrate", "prompt", "--profile", "mcp")
    assert prompt.exit_code == 0 and "mcp config" in prompt.stdout and "never applies" in prompt.stdout
    assert run(repo, "integrate", "prompt", "--profile", "nope").exit_code == 2
    config = run(repo, "mcp", "config", "--project-root", str(repo.root))
    assert config.exit_code == 0
    server = json.loads(config.stdout)["mcpServers"]["memzoi"]
    assert Path(server["command"]).name == "git-memzoi"
    assert server["args"] == ["mcp", "serve", "--project-root", str(repo.root.resolve())]
    assert server["env"] == {}
    assert sorted(p.name for p in repo.root.iterdir()) == [".git"]


def test_quickstart_steps_and_sample(repo: Repo) -> None:
    plain = run(repo, "quickstart")
    assert plain.exit_code == 0 and "git memzoi init" in plain.stdout
    assert not (repo.root / ".memzoi").exists()
    result = ok_json(repo, "quickstart", "--apply-sample")
    sample = result["sample"]
    assert sample["status"] == "applied" and sample["record_id"]
    assert (repo.root / ".memzoi/records" / f"{sample['record_id']}.md").is_file()
    found = ok_json(repo, "search", "reviewed project memory")
    assert [r["record"]["id"] for r in found["results"]] == [sample["record_id"]]


# -------------------------------------------------------------------------------------------------- templates


def test_templates_mirror_package_data() -> None:
    for name in ("claude-code/settings.json", "agents/AGENTS.md", "agents/CLAUDE.md"):
        assert (PROJECT / "templates" / name).read_bytes() == (PROJECT / "git_memzoi/resources" / name).read_bytes()
    assert agents.settings_snippet() == json.loads((PROJECT / "templates/claude-code/settings.json").read_text())
