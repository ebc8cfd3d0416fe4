"""A new user's report, replayed on real repositories: a closed stdout, ``--path`` outside the repository,
symlinked memory files (guard, doctor, rebuild), the mode of atomically written files, and secrets inside the
memzoi-managed block of an exported CLAUDE.md.

Each case runs the CLI in-process (click's CliRunner) and, where the exit code is the point, as a subprocess.
"""

from __future__ import annotations

import json
import os
import random
import stat
import string
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import Result

from git_memzoi.cli.memkeep import cli as memkeep_cli
from git_memzoi.cli.memzoi import cli
from git_memzoi.core import atomic
from git_memzoi.integrations import git_hooks
from git_memzoi.memzoi.export import begin_marker, end_marker
from git_memzoi.memzoi.layout import Layout
from tests.support import repos
from tests.support.repos import NOW_TEXT as NOW
from tests.support.repos import PINNED, Repo, entry_text, spec_ids

BIN = Path(sys.executable).parent
BROKEN_PIPE = 141  # 128 + SIGPIPE


def invoke(repo: Repo, *args: str, group: object = cli) -> Result:
    """``git memzoi -C <repo> ...`` in-process with the clock pinned; never a traceback (a closed stdout exits
    with 141, as the shell reports SIGPIPE)."""
    return repos.invoke(group, ["-C", str(repo.root), *args], env=PINNED, exit_codes=(0, 1, 2, BROKEN_PIPE))


def subprocess_run(repo: Repo, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMZOI_NOW": NOW, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([str(BIN / tool), *args], cwd=repo.root, env=env, capture_output=True, text=True, check=False)


def git(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    """git with the venv's bin on PATH, so the installed hook shims find git-memzoi."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["git", *args], cwd=repo.root, env=env, capture_output=True, text=True, check=False)


def fake_token() -> str:
    """A GitHub-token-shaped string built at test time (never a literal secret in the repository)."""
    rng = random.Random(4321)
    return "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


@pytest.fixture
def memory(repo: Repo) -> Repo:
    """An initialised repository with one commit and two applied records (one bound to src/**)."""
    assert invoke(repo, "init").exit_code == 0
    spec_ids(repo.root)  # records named by their bare slugs (memzoi-spec v0 ids) below
    repo.write("src/app.py", "print('v1')\n")
    repo.commit("base")
    for title in ("Deploys run on Fridays", "Cache flushes on deploy"):
        result = invoke(
            repo,
            "propose",
            "--type",
            "decision",
            "--sensitivity",
            "repo-safe",
            "--title",
            title,
            "--body",
            f"{title}.",
            "--apply",
            "--json",
        )
        assert result.exit_code == 0, result.output
    return repo


# ------------------------------------------------------------------------------------- 1. a closed stdout


def closed_pipe_run(repo: Repo, tool: str, *args: str) -> tuple[int, bytes]:
    """Run ``tool`` with stdout on a pipe whose reader has already gone (what `| head -1` leaves behind)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        env = {**os.environ, "MEMZOI_NOW": NOW}
        proc = subprocess.run(
            [str(BIN / tool), *args], cwd=repo.root, env=env, stdout=write_end, stderr=subprocess.PIPE, check=False
        )
    finally:
        os.close(write_end)
    return proc.returncode, proc.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ("git-memzoi", "proposals", "list", "--status", "all"),
        ("git-memzoi", "proposal-files", "list"),
        ("git-memzoi", "doctor"),
        ("git-memzoi", "doctor", "--help"),
        ("git-memzoi", "--version"),
        ("git-memkeep", "help"),
    ],
)
def test_a_closed_stdout_ends_quietly_with_141(memory: Repo, argv: tuple[str, ...]) -> None:
    code, stderr = closed_pipe_run(memory, *argv)
    assert (code, stderr) == (BROKEN_PIPE, b"")


def test_a_reader_that_closes_early_gets_its_lines_and_no_error(memory: Repo) -> None:
    env = {**os.environ, "MEMZOI_NOW": NOW}
    proc = subprocess.Popen(
        [str(BIN / "git-memzoi"), "doctor"], cwd=memory.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # like `head -1`
    stderr = proc.stderr.read()
    proc.stderr.close()
    code = proc.wait(timeout=60)
    assert b" installation: git-memzoi " in first
    assert stderr == b"" and code in (0, BROKEN_PIPE)  # 0 when doctor wrote everything before the close


def test_a_broken_pipe_in_process_is_not_an_internal_error(memory: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    from git_memzoi.memzoi import doctor

    def closed(*_args: object) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(doctor, "run", closed)
    for args in (("doctor",), ("doctor", "--json")):
        result = invoke(memory, *args)
        assert (result.exit_code, result.stdout, result.stderr) == (BROKEN_PIPE, "", "")
    monkeypatch.setattr("git_memzoi.memkeep.api.status", closed)
    result = invoke(memory, "status", group=memkeep_cli)
    assert (result.exit_code, result.stdout, result.stderr) == (BROKEN_PIPE, "", "")


# ------------------------------------------------------------------------- 2. --path outside the repository


@pytest.mark.parametrize(
    "args",
    [
        ("precheck", "--path", "../../etc/passwd"),
        ("search", "foo", "--path", "../x"),
        ("search", "foo", "--path", "src/../../x"),
        ("search", "foo", "--path", "/etc"),
        ("context", "--task", "deploy", "--path", "../x"),
        ("handoff", "--path", "../x"),
        ("precheck", "--path", "C:/x"),
    ],
)
def test_a_path_outside_the_repository_is_bad_input(memory: Repo, args: tuple[str, ...]) -> None:
    local = Layout(memory.root).private
    assert local.is_dir()
    before = sorted((p.relative_to(local).as_posix(), p.read_bytes()) for p in local.rglob("*") if p.is_file())
    result = invoke(memory, *args, "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "path_outside_repo"
    line = f"error: path {args[args.index('--path') + 1]!r} is outside the repository {memory.root}\n"
    assert result.stderr == f"cli: {line}"
    after = sorted((p.relative_to(local).as_posix(), p.read_bytes()) for p in local.rglob("*") if p.is_file())
    assert after == before  # nothing written: no event, no index refresh
    proc = subprocess_run(memory, "git-memzoi", *args, "--json")
    assert proc.returncode == 2 and json.loads(proc.stdout)["error"]["code"] == "path_outside_repo"
    assert proc.stderr == f"git-memzoi: {line}"


def test_an_absolute_path_inside_the_repository_is_made_relative(memory: Repo) -> None:
    result = invoke(memory, "search", "deploy", "--path", f"{memory.root}/src/**", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["path"] == "src/**"
    assert invoke(memory, "precheck", "--path", str(memory.root / "src" / "app.py")).exit_code == 0
    assert subprocess_run(memory, "git-memzoi", "precheck", "--path", "src/app.py").returncode == 0


# ---------------------------------------------------------------------- 3. + 6. the pre-commit guard


@pytest.fixture
def hooked(memory: Repo) -> Repo:
    """``memory`` with a memkeep store, everything committed, and the hooks installed."""
    memory.write("agent-memory/entries/app-prints.md", entry_text("app-prints", anchor=None, scope=["src/**"]))
    memory.commit("memory")
    git_hooks.install(memory.root)
    return memory


def refused(repo: Repo) -> tuple[int, str]:
    """``git memzoi hook run pre-commit`` in-process: exit code and the report."""
    result = invoke(repo, "hook", "run", "pre-commit")
    return result.exit_code, result.output


def test_a_staged_symlinked_entry_or_record_is_refused_as_a_symlink(hooked: Repo, tmp_path: Path) -> None:
    target = tmp_path / "x.md"
    target.write_text("no frontmatter here\n")
    (hooked.root / "agent-memory/entries/linked.md").symlink_to(target)
    (hooked.root / ".memzoi/records/linked.md").symlink_to(target)
    (hooked.root / ".memzoi/proposals/pending/linked.md").symlink_to(target)
    hooked.git("add", "-A")
    code, output = refused(hooked)
    assert code == 1
    assert "  agent-memory/entries/linked.md  [symlink] a symlink; entries must be regular files\n" in output
    assert "  .memzoi/records/linked.md  [symlink] a symlink; records must be regular files\n" in output
    packet = "  .memzoi/proposals/pending/linked.md  [symlink] a symlink; proposal packets must be regular files\n"
    assert packet in output
    assert "no frontmatter" not in output
    before = hooked.head()
    proc = git(hooked, "commit", "-m", "links")
    assert proc.returncode == 1 and hooked.head() == before
    assert "[symlink] a symlink; entries must be regular files" in proc.stderr


def test_the_guard_reads_the_staged_mode_not_the_working_tree(hooked: Repo, tmp_path: Path) -> None:
    target = tmp_path / "x.md"
    target.write_text(entry_text("linked", anchor=None))
    entry = hooked.root / "agent-memory/entries/linked.md"
    entry.symlink_to(target)
    hooked.git("add", "-A")
    entry.unlink()
    entry.write_text(entry_text("linked", anchor=None))  # a regular file now, but the index holds the link
    code, output = refused(hooked)
    assert code == 1 and "agent-memory/entries/linked.md  [symlink]" in output
    hooked.git("add", "-A")  # the regular file is staged; a symlink in the working tree is no concern of the guard
    entry.unlink()
    entry.symlink_to(target)
    code, output = refused(hooked)
    assert "[symlink]" not in output


def projection(token_line: str) -> str:
    return (
        f"# My notes\n\nKeep this.\n\n{begin_marker('claude-md')}\n## Memzoi Projection for CLAUDE.md\n\n"
        f"{token_line}\n{end_marker('claude-md')}\n\nAfter the block.\n"
    )


def test_a_secret_inside_the_exported_block_is_refused(hooked: Repo) -> None:
    token = fake_token()
    hooked.write("CLAUDE.md", projection(f"Use token {token} for the API."))
    hooked.git("add", "-A")
    code, output = refused(hooked)
    assert code == 1 and token not in output
    assert (
        "  CLAUDE.md:8  [secret: GitHub Token] a memzoi-managed block must not hold a secret; remove it from the "
        "record it came from and export again (and rotate it if it was real)\n"
    ) in output
    before = hooked.head()
    proc = git(hooked, "commit", "-m", "projection")
    assert proc.returncode == 1 and hooked.head() == before
    assert token not in proc.stdout + proc.stderr and "CLAUDE.md:8  [secret: GitHub Token]" in proc.stderr


def test_text_outside_the_block_and_clean_blocks_pass(hooked: Repo) -> None:
    token = fake_token()
    hooked.write("CLAUDE.md", projection("Deploys run on Fridays.") + f"\nnot memzoi's: {token}\n")
    hooked.write("docs/AGENTS.md", projection("Cache flushes on deploy."))
    hooked.git("add", "-A")
    assert refused(hooked) == (0, "")
    assert git(hooked, "commit", "-q", "-m", "projection").returncode == 0


# ------------------------------------------------------------------------ 4. a symlinked record file


def test_a_symlinked_record_is_unreadable_for_doctor_and_rebuild(memory: Repo, tmp_path: Path) -> None:
    target = tmp_path / "x.md"
    target.write_text((memory.root / ".memzoi/records/deploys-run-on-fridays.md").read_text())
    (memory.root / ".memzoi/records/linked.md").symlink_to(target)
    result = invoke(memory, "doctor", "--json")
    assert result.exit_code == 1
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    assert (checks["records"]["status"], checks["records"]["message"]) == (
        "fail",
        "1 unreadable record file(s): .memzoi/records/linked.md",
    )
    result = invoke(memory, "rebuild", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["records"]["repo"] == 2
    reason = ".memzoi/records/linked.md: a symlink; records must be regular files"
    assert data["unreadable"] == [{"path": ".memzoi/records/linked.md", "code": "symlink", "reason": reason}]
    search = json.loads(invoke(memory, "search", "fridays", "--json").stdout)
    assert [r["record"]["id"] for r in search["results"]] == ["deploys-run-on-fridays"]
    result = invoke(memory, "expiry", "linked", "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "symlink"
    assert subprocess_run(memory, "git-memzoi", "doctor").returncode == 1


# ------------------------------------------------------------------ 5. the mode of atomically written files


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664), (0o077, 0o600)])
def test_a_new_file_gets_the_mode_open_would_give(tmp_path: Path, umask: None, mask: int, mode: int) -> None:
    os.umask(mask)
    atomic.write_bytes_atomic(tmp_path / "new.md", b"new\n", root=tmp_path)
    (tmp_path / "plain.md").write_bytes(b"plain\n")
    assert stat.S_IMODE((tmp_path / "new.md").stat().st_mode) == mode
    assert stat.S_IMODE((tmp_path / "plain.md").stat().st_mode) == mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.md", "plain.md"]  # no temp file left


@pytest.mark.parametrize("kept", [0o600, 0o755, 0o640])
def test_an_existing_file_keeps_its_mode(tmp_path: Path, umask: None, kept: int) -> None:
    target = tmp_path / "old.md"
    target.write_bytes(b"old\n")
    target.chmod(kept)
    os.umask(0o002)
    atomic.write_bytes_atomic(target, b"new\n", root=tmp_path)
    assert target.read_bytes() == b"new\n" and stat.S_IMODE(target.stat().st_mode) == kept


def test_records_written_by_the_cli_get_the_umask_mode(repo: Repo, umask: None) -> None:
    os.umask(0o027)
    assert invoke(repo, "init").exit_code == 0
    spec_ids(repo.root)  # records named by their bare slugs (memzoi-spec v0 ids) below
    result = invoke(
        repo, "propose", "--sensitivity", "repo-safe", "--title", "Use pnpm", "--body", "Install.", "--apply", "--json"
    )
    assert result.exit_code == 0
    assert stat.S_IMODE((repo.root / ".memzoi/records/use-pnpm.md").stat().st_mode) == 0o640
    os.umask(0o022)
    proc = subprocess_run(
        repo,
        "git-memzoi",
        "propose",
        "--sensitivity",
        "repo-safe",
        "--title",
        "Use uv",
        "--body",
        "Install.",
        "--apply",
    )
    assert proc.returncode == 0
    assert stat.S_IMODE((repo.root / ".memzoi/records/use-uv.md").stat().st_mode) == 0o644
