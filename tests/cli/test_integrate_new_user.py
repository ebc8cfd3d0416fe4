"""A new user's findings on `integrate` and `mcp serve`: unsafe --file targets, honest status words, broken
markers, startup checks, memkeep in the agent guidance, the full MCP tool list, a quiet session hook."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from git_memzoi.cli.memzoi import cli
from git_memzoi.integrations import agents
from git_memzoi.mcp import TOOL_NAMES
from tests.support import repos
from tests.support.repos import Repo, entry_text

GIT_MEMZOI = str(Path(sys.executable).parent / "git-memzoi")


def run(repo: Repo, *args: str, input: str | None = None) -> Result:
    """``git memzoi -C <repo> ...`` on the real clock."""
    return repos.run(repo, *args, env=None, input=input)


def proc(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GIT_MEMZOI, *args], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60, check=False
    )


def files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".git" not in p.parts)


@pytest.mark.parametrize("target", ["../outside-agents.md", "ABS", "docs/../../x.md"])
def test_instructions_refuse_a_file_outside_the_repository(repo: Repo, target: str) -> None:
    outside = repo.root.parent / "outside-agents.md"
    name = str(outside) if target == "ABS" else target
    result = run(repo, "integrate", "instructions", "--profile", "codex", "--file", name, "--json")
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "path_outside_repo"
    plain = proc(repo.root, "integrate", "instructions", "--profile", "codex", "--file", name)
    assert (plain.returncode, plain.stdout) == (2, "")
    assert plain.stderr == f"git-memzoi: error: path {name!r} is outside the repository {repo.root}\n"
    assert not outside.exists() and files(repo.root) == []


def test_instructions_refuse_git_and_symlinked_targets(repo: Repo, tmp_path: Path) -> None:
    (repo.root / "linked").symlink_to(tmp_path)
    for name in (".git/AGENTS.md", "linked/AGENTS.md"):
        result = run(repo, "integrate", "instructions", "--profile", "codex", "--file", name, "--json")
        assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "unsafe_target", name
    assert not (repo.root / ".git/AGENTS.md").exists() and not (tmp_path / "AGENTS.md").exists()
    inside = run(repo, "integrate", "instructions", "--profile", "codex", "--file", str(repo.root / "A.md"))
    assert inside.exit_code == 0 and inside.stdout == f"created {repo.root / 'A.md'}: new file with a memzoi block\n"


def test_instructions_say_what_happened(repo: Repo) -> None:
    path = repo.root / "AGENTS.md"
    steps = [("created", "new file with a memzoi block"), ("unchanged", "block already current; nothing written")]
    for status, reason in steps:
        result = run(repo, "integrate", "instructions", "--profile", "codex")
        assert (result.exit_code, result.stdout) == (0, f"{status} {path}: {reason}\n")
    path.write_text("# Mine\n")
    appended = run(repo, "integrate", "instructions", "--profile", "codex")
    assert appended.stdout == f"appended {path}: no memzoi block yet; block appended\n"
    path.write_text(path.read_text().replace("precheck", "PRECHECK"))
    replaced = run(repo, "integrate", "instructions", "--profile", "codex")
    assert replaced.stdout == f"replaced {path}: the block between the markers replaced\n"
    assert path.read_text() == "# Mine\n\n" + agents.block("codex") + "\n"


def test_instructions_refuse_an_unclosed_marker(repo: Repo) -> None:
    path = repo.write("AGENTS.md", f"# Mine\n{agents.START}\nhalf a block\n")
    before = path.read_bytes()
    result = run(repo, "integrate", "instructions", "--profile", "codex", "--json")
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "broken_markers"
    plain = proc(repo.root, "integrate", "instructions", "--profile", "codex")
    assert (plain.returncode, plain.stdout, len(plain.stderr.splitlines())) == (2, "", 1)
    assert plain.stderr == (
        f"git-memzoi: error: {path}: the memzoi markers must be one start line followed by one "
        "end line (found 1 start, 0 end); fix or remove them, nothing was written\n"
    )
    assert path.read_bytes() == before


@pytest.mark.parametrize("where", ["/nonexistent", "TMP"])
def test_mcp_serve_refuses_a_bad_project_root_at_startup(tmp_path: Path, where: str) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    root = str(plain) if where == "TMP" else where
    served = proc(tmp_path, "mcp", "serve", "--project-root", root)
    assert (served.returncode, served.stdout) == (2, "")
    message = f"cannot run in {root}: no such directory" if where != "TMP" else f"not a git repository: {root}"
    assert served.stderr == f"git-memzoi: error: {message}\n"
    assert proc(tmp_path, "mcp", "config", "--project-root", root).stderr == served.stderr
    result = CliRunner().invoke(cli, ["mcp", "serve", "--project-root", root], prog_name="git-memzoi")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", served.stderr)  # refused before serving


def test_mcp_serve_without_the_mcp_extra_names_the_install_command(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a))
    result = CliRunner().invoke(cli, ["-C", str(repo.root), "mcp", "serve"], prog_name="git-memzoi")
    hint = (
        "git-memzoi: error: the MCP server needs the mcp extra, which is not installed: pip install 'git-memzoi[mcp]'\n"
    )
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", hint)
    assert "mcpServers" in run(repo, "mcp", "config").stdout  # config works without the SDK


MEMKEEP_LINES = [
    "## Earned Memory (git memkeep)",
    "- Before relying on a claim, run `git memkeep status`: an entry is suspect when a file in its scope changed",
    "- After re-testing a claim, run `git memkeep verify <id>` (it runs the entry's check; `--manual` records a",
    "- Never edit `anchor` or `verified_at` by hand: only `git memkeep verify` moves them.",
]


@pytest.mark.parametrize("profile", ["codex", "claude", "mcp", "claude-code"])
def test_every_prompt_and_block_explains_memkeep(repo: Repo, profile: str) -> None:
    texts = [run(repo, "integrate", "prompt", "--profile", profile).stdout]
    if profile in agents.PROFILES:
        texts.append(agents.block(profile))
    for text in texts:
        assert "`agent-memory/entries/`" in text
        lines = text.splitlines()
        assert all(line in lines for line in MEMKEEP_LINES), profile


def test_mcp_prompt_lists_every_registered_tool(repo: Repo) -> None:
    from git_memzoi.mcp.server import build_server

    registered = [tool.name for tool in asyncio.run(build_server(repo.root).list_tools())]  # what a client sees
    assert registered == list(TOOL_NAMES) and "plan_capture_v1" in registered
    prompt = run(repo, "integrate", "prompt", "--profile", "mcp").stdout
    assert f"Tools: {', '.join(registered)}.\n" in prompt


def test_session_context_is_silent_in_a_memkeep_only_repository(repo: Repo) -> None:
    base = repo.commit("base", **{"src/a.py": "a\n"})
    repo.commit("entry", **{"agent-memory/entries/a.md": entry_text("a", anchor=base, scope=["src/a.py"])})
    hook_input = json.dumps({"hook_event_name": "SessionStart", "source": "startup"})
    result = run(repo, "integrate", "session-context", input=hook_input)
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    done = subprocess.run(
        [GIT_MEMZOI, "integrate", "session-context"],
        cwd=repo.root,
        input=hook_input,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
