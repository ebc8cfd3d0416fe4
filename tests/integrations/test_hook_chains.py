"""Hook chains (issue 12): the shims and the real pre-commit framework coexist in either install order, a shim
never runs itself, uninstall restores the exact files (bytes and mode), and a chained hook that hangs is stopped.

Every ``git commit`` runs with a timeout, so a regression (a chain that loops) fails instead of hanging.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_memzoi.integrations import git_hooks
from git_memzoi.memzoi.layout import Layout, init
from tests.support.repos import Repo, entry_text

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pre_commit") is None,
    reason="pre-commit is not installed for this interpreter (the [test] extra brings it: pip install -e '.[test]')",
)

BIN = Path(sys.executable).parent
TIMEOUT = 60  # seconds: far above a commit's real time, far below "hangs forever"
CONFIG = """repos:
  - repo: local
    hooks:
      - id: say-hello
        name: say hello
        entry: echo pre-commit-framework-hook-ran
        language: system
        always_run: true
        pass_filenames: false
        verbose: true
"""
GUARD_RAN = "memkeep: this change touches the scope of these entries; check their claims, then verify them after this commit (verify anchors at HEAD):"


def env(**extra: str) -> dict[str, str]:
    """This environment with the venv's bin first on PATH (git-memzoi and pre-commit) and a private PRE_COMMIT_HOME."""
    path = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    home = Path(os.environ["HOME"]) / "pre-commit-home"
    return {**os.environ, "PATH": path, "PRE_COMMIT_HOME": str(home), **extra}


def run(root: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), cwd=root, env=env(**extra), capture_output=True, text=True, check=False, timeout=TIMEOUT
    )


def pre_commit(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = run(root, str(BIN / "pre-commit"), *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def commit(root: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    """Stage a change inside the entry's scope and commit it through the installed hooks."""
    path = root / "src" / "app.py"
    path.write_text(path.read_text() + "print('more')\n")
    run(root, "git", "add", "-A")
    return run(root, "git", "commit", "-m", "change", **extra)


def snapshot(hooks: Path) -> dict[str, tuple[bytes, int]]:
    """Every file in the hooks dir (samples aside): its bytes (a symlink's target) and its mode bits."""
    files: dict[str, tuple[bytes, int]] = {}
    for path in sorted(hooks.iterdir()):
        if path.name.endswith(".sample"):
            continue
        st = path.lstat()
        data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
        files[path.name] = (data, st.st_mode)
    return files


@pytest.fixture
def project(repo: Repo) -> Repo:
    """A repository with a memkeep entry scoped to src/**, a .pre-commit-config.yaml of one local hook, one commit."""
    repo.write("src/app.py", "print('v1')\n")
    repo.write(".pre-commit-config.yaml", CONFIG)
    repo.write("agent-memory/entries/app-prints.md", entry_text("app-prints", anchor=None, scope=["src/**"]))
    base = repo.commit("base")
    repo.write("agent-memory/entries/app-prints.md", entry_text("app-prints", anchor=base, scope=["src/**"]))
    repo.commit("anchor")
    return repo


def hooks_dir(repo: Repo) -> Path:
    return repo.root / ".git" / "hooks"


def output_of(proc: subprocess.CompletedProcess[str]) -> str:
    return proc.stdout + proc.stderr


def assert_both_ran(proc: subprocess.CompletedProcess[str]) -> None:
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert output.count(GUARD_RAN) == 1 and "app-prints" in output  # our guard ran, once
    assert output.count("pre-commit-framework-hook-ran") == 1  # pre-commit's hooks ran, once
    assert "migration mode" not in output and "git-memzoi:" not in output  # no warning: nothing looped


def test_memzoi_then_pre_commit_commits(project: Repo) -> None:
    git_hooks.install(project.root)
    pre_commit(project.root, "install")
    hooks = hooks_dir(project)
    assert git_hooks.owner(hooks / "pre-commit") == "pre-commit"
    assert git_hooks.owner(hooks / "pre-commit.legacy") == "memzoi"
    assert_both_ran(commit(project.root))


def test_pre_commit_then_memzoi_commits(project: Repo) -> None:
    pre_commit(project.root, "install")
    framework = snapshot(hooks_dir(project))["pre-commit"]
    report = git_hooks.install(project.root)
    hooks = hooks_dir(project)
    assert report.actions[0] == (
        f"installed {hooks / 'pre-commit.legacy'}; the pre-commit framework's pre-commit hook runs it first"
    )
    assert snapshot(hooks)["pre-commit"] == framework  # the framework's script is left exactly as it was
    assert_both_ran(commit(project.root))
    git_hooks.install(project.root)  # installing again updates the shim in place, never chains the framework
    assert snapshot(hooks)["pre-commit"] == framework
    assert_both_ran(commit(project.root))


def test_status_names_the_owner_and_recommends_the_manifest(project: Repo) -> None:
    pre_commit(project.root, "install")
    git_hooks.install(project.root)
    report = git_hooks.status(project.root)
    hooks = hooks_dir(project)
    rows = [(h.hook, h.state, h.owner, h.path) for h in report.hooks]
    assert rows == [
        ("pre-commit", "installed", "pre-commit", str(hooks / "pre-commit.legacy")),
        ("post-merge", "installed", "memzoi", str(hooks / "post-merge")),
        ("post-checkout", "installed", "memzoi", str(hooks / "post-checkout")),
    ]
    hint = git_hooks.MANIFEST_HINT + ", then run `git memzoi hooks uninstall --keep-merge-driver`"
    assert report.recommendation == hint and report.as_json()["recommendation"] == hint
    proc = run(project.root, "git", "memzoi", "hooks", "status")
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[0] == (
        f"installed  pre-commit     pre-commit  {hooks / 'pre-commit.legacy'}: "
        "the pre-commit framework runs this shim first, as pre-commit.legacy"
    )
    assert proc.stdout.splitlines()[-1] == f"recommended: {hint}"


def test_status_without_the_framework_recommends_the_shims(repo: Repo) -> None:
    hook = hooks_dir(repo) / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    states = {h.hook: h for h in git_hooks.status(repo.root).hooks}
    assert (states["pre-commit"].owner, states["post-merge"].owner) == ("other", "none")
    assert git_hooks.status(repo.root).recommendation == (
        "run `git memzoi hooks install` to install the shims where git runs hooks"
    )
    git_hooks.install(repo.root)
    assert [h.owner for h in git_hooks.status(repo.root).hooks] == ["memzoi"] * 3
    assert git_hooks.status(repo.root).recommendation == ""


def test_uninstall_after_pre_commit_then_memzoi_restores_the_framework(project: Repo) -> None:
    pre_commit(project.root, "install")
    before = snapshot(hooks_dir(project))
    git_hooks.install(project.root)
    git_hooks.uninstall(project.root)
    assert snapshot(hooks_dir(project)) == before


def test_uninstall_after_memzoi_then_pre_commit_in_either_order(project: Repo) -> None:
    hooks = hooks_dir(project)
    before = snapshot(hooks)
    git_hooks.install(project.root)
    shims = snapshot(hooks)
    pre_commit(project.root, "install")
    framework = snapshot(hooks)["pre-commit"]
    pre_commit(project.root, "uninstall")  # the framework puts our shim back where it found it
    assert snapshot(hooks) == shims
    git_hooks.uninstall(project.root)
    assert snapshot(hooks) == before
    git_hooks.install(project.root)
    pre_commit(project.root, "install")
    git_hooks.uninstall(project.root)  # ours first: the framework's script stays, alone, as it wrote it
    assert snapshot(hooks) == {"pre-commit": framework}


def test_foreign_hook_bytes_and_mode_survive_install_and_uninstall(project: Repo) -> None:
    hook = hooks_dir(project) / "post-merge"
    hook.write_bytes(b"#!/bin/sh\r\necho foreign\r\n")
    hook.chmod(0o750)
    before = snapshot(hooks_dir(project))
    git_hooks.install(project.root)
    assert (hooks_dir(project) / "post-merge.before-memzoi").stat().st_mode & 0o777 == 0o750
    git_hooks.uninstall(project.root)
    assert snapshot(hooks_dir(project)) == before


def test_framework_already_chaining_a_hook_keeps_it_chained(project: Repo) -> None:
    """pre-commit in migration mode (a foreign hook as pre-commit.legacy), then the shims: the shim takes the
    framework's slot and keeps the foreign hook beside it; all three run; uninstall gives back the exact files."""
    hook = hooks_dir(project) / "pre-commit"
    hook.write_text("#!/bin/sh\necho foreign-hook-ran\n")
    hook.chmod(0o755)
    pre_commit(project.root, "install")  # migration mode: the foreign hook is pre-commit.legacy
    before = snapshot(hooks_dir(project))
    git_hooks.install(project.root)
    hooks = hooks_dir(project)
    assert (git_hooks.owner(hooks / "pre-commit.legacy"), git_hooks.owner(hooks / "pre-commit.before-memzoi")) == (
        "memzoi",
        "other",
    )
    state = git_hooks.status(project.root).hooks[0]
    assert (state.state, state.owner) == ("installed", "pre-commit")
    assert state.detail == (
        "the pre-commit framework runs this shim first, as pre-commit.legacy, and the shim chains "
        "pre-commit.before-memzoi"
    )
    proc = commit(project.root)
    assert_both_ran(proc)
    assert output_of(proc).count("foreign-hook-ran") == 1
    git_hooks.uninstall(project.root)
    assert snapshot(hooks_dir(project)) == before


def test_pre_commit_install_after_the_shims_never_loses_a_kept_hook(project: Repo) -> None:
    """A foreign hook, the shims, then `pre-commit install`: the framework moves the shim to pre-commit.legacy,
    which must not overwrite the foreign hook (a 0.1 shim kept it there, and pre-commit replaced it)."""
    hook = hooks_dir(project) / "pre-commit"
    hook.write_text("#!/bin/sh\necho foreign-hook-ran\n")
    hook.chmod(0o755)
    foreign = hook.read_bytes()
    git_hooks.install(project.root)
    pre_commit(project.root, "install")
    hooks = hooks_dir(project)
    assert (hooks / "pre-commit.before-memzoi").read_bytes() == foreign
    proc = commit(project.root)
    assert_both_ran(proc)
    assert output_of(proc).count("foreign-hook-ran") == 1
    git_hooks.uninstall(project.root)  # the foreign hook goes where the framework keeps the hook it replaced
    assert git_hooks.owner(hooks / "pre-commit") == "pre-commit"
    assert (hooks / "pre-commit.legacy").read_bytes() == foreign
    assert not (hooks / "pre-commit.before-memzoi").exists()


def test_a_0_1_layout_keeps_working_and_install_moves_its_kept_hook(project: Repo) -> None:
    """A 0.1 shim kept the foreign hook as pre-commit.legacy: the new shim still chains it from there, and
    install moves it to pre-commit.before-memzoi, where `pre-commit install` cannot overwrite it."""
    hooks = hooks_dir(project)
    (hooks / "pre-commit.legacy").write_text("#!/bin/sh\necho foreign-hook-ran\n")
    (hooks / "pre-commit.legacy").chmod(0o755)
    (hooks / "pre-commit").write_text(git_hooks.shim_text("pre-commit"))
    (hooks / "pre-commit").chmod(0o755)
    assert "foreign-hook-ran" in output_of(commit(project.root))
    assert git_hooks.status(project.root).hooks[0].detail == "chains pre-commit.legacy"
    git_hooks.install(project.root)
    assert not (hooks / "pre-commit.legacy").exists() and (hooks / "pre-commit.before-memzoi").is_file()
    assert "foreign-hook-ran" in output_of(commit(project.root))


@pytest.mark.parametrize("how", ["symlink", "copy"])
def test_shim_chained_to_itself_warns_and_commits(project: Repo, how: str) -> None:
    git_hooks.install(project.root)
    hooks = hooks_dir(project)
    legacy = hooks / "pre-commit.legacy"
    if how == "symlink":
        legacy.symlink_to("pre-commit")
    else:
        legacy.write_bytes((hooks / "pre-commit").read_bytes())
        legacy.chmod(0o755)
    proc = commit(project.root)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    # git runs the hook by its path from the top of the work tree
    warning = "git-memzoi: pre-commit hook: .git/hooks/pre-commit.legacy is a git-memzoi shim too; not running it (it would run itself)"
    assert warning in output.splitlines(), output
    assert output.count(GUARD_RAN) == 1


def test_loop_of_two_hooks_is_cut_by_the_environment_guard(project: Repo) -> None:
    git_hooks.install(project.root)
    legacy = hooks_dir(project) / "pre-commit.legacy"
    legacy.write_text('#!/bin/sh\necho foreign-ran\nexec "$(dirname "$0")/pre-commit" "$@"\n')  # calls the shim back
    legacy.chmod(0o755)
    proc = commit(project.root)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert output.count("foreign-ran") == 1
    assert output.count("hook chain came back to") == 1
    assert output.count(GUARD_RAN) == 1


def test_chained_hook_that_hangs_is_stopped_and_the_commit_goes_on(project: Repo) -> None:
    git_hooks.install(project.root)
    legacy = hooks_dir(project) / "pre-commit.legacy"
    legacy.write_text("#!/bin/sh\nsleep 50\n")
    legacy.chmod(0o755)
    started = time.monotonic()
    proc = commit(project.root, GIT_MEMZOI_HOOK_TIMEOUT="1")
    elapsed = time.monotonic() - started
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "did not finish within 1s; stopped it and went on (warning)" in output
    assert output.count(GUARD_RAN) == 1
    assert elapsed < 20


def test_failing_chained_pre_commit_still_stops_the_commit(project: Repo) -> None:
    git_hooks.install(project.root)
    legacy = hooks_dir(project) / "pre-commit.legacy"
    legacy.write_text("#!/bin/sh\nexit 3\n")
    legacy.chmod(0o755)
    proc = commit(project.root)
    assert proc.returncode == 1 and GUARD_RAN not in proc.stderr


CHECKOUT_CONFIG = """repos:
  - repo: local
    hooks:
      - id: after-checkout
        name: after checkout
        entry: echo framework-post-checkout-ran
        language: system
        always_run: true
        pass_filenames: false
        verbose: true
        stages: [post-checkout]
"""


@pytest.mark.parametrize("memzoi_first", [True, False], ids=["memzoi-first", "pre-commit-first"])
def test_post_checkout_chain_in_either_order(project: Repo, memzoi_first: bool) -> None:
    init(Layout(project.root))  # our post-checkout then says it rebuilt the derived index: it ran
    project.commit("checkout config", **{".pre-commit-config.yaml": CHECKOUT_CONFIG})
    hooks = hooks_dir(project)
    if memzoi_first:
        git_hooks.install(project.root)
    pre_commit(project.root, "install", "--hook-type", "post-checkout")
    if not memzoi_first:
        git_hooks.install(project.root)
    assert (git_hooks.owner(hooks / "post-checkout"), git_hooks.owner(hooks / "post-checkout.legacy")) == (
        "pre-commit",
        "memzoi",
    )
    proc = run(project.root, "git", "checkout", "-q", "-b", "other")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert output.count("framework-post-checkout-ran") == 1
    assert output.count("memzoi: rebuilt the derived index (.git/memzoi/worktree/index.sqlite)") == 1
    assert "migration mode" not in output and "git-memzoi:" not in output
