"""husky and lefthook under the shims (issue 12, husky and other hook managers): after `git memzoi hooks install`
each manager's hooks still run, under their own name, beside the guard; uninstall leaves every file byte for byte
as it was; `hooks status` tells a shim the manager rewrote apart and recommends the manager's own files.

Every test runs a real ``git commit`` (or checkout) through the installed hooks, with a timeout. The always-on
tests use a faithful copy of each manager's layout: husky 9.1.7's ``h`` (tests/integrations/data, see SOURCES.md)
and the stubs its ``index.js`` writes; lefthook 2.2's hook script (``hook.tmpl``, trimmed to ``LEFTHOOK_BIN`` and
``PATH``). The ``real`` tests run the tools themselves: husky from npm (``MEMZOI_HUSKY_DIR`` names an installed
``node_modules/husky``, else a session fixture installs ``husky@9.1.7`` with npm into a tmp dir) and the ``lefthook``
binary (the [test] extra installs it from PyPI; ``MEMZOI_LEFTHOOK`` names another); they skip, saying why, when
the tool cannot be had.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from git_memzoi.integrations import git_hooks, hook_managers, merge_config
from tests.support.repos import Repo, entry_text

BIN = Path(sys.executable).parent
DATA = Path(__file__).parent / "data"
TIMEOUT = 60  # seconds: far above a commit's real time, far below "hangs forever"
GUARD_RAN = "memkeep: this change touches the scope of these entries; check their claims, then verify them after this commit (verify anchors at HEAD):"
HUSKY_DIR = os.environ.get("MEMZOI_HUSKY_DIR")  # read at import: the hermetic environment clears MEMZOI_*
HUSKY_VERSION = "9.1.7"  # the version tests/integrations/data/husky-9.1.7-h was copied from
NPM_ENV = dict(os.environ)  # npm with the user's HOME (its ~/.npmrc and cache), not the tests' hermetic one
LEFTHOOK = os.environ.get("MEMZOI_LEFTHOOK") or shutil.which(
    "lefthook", path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
)
# husky 9.1.7 index.js: the hooks it writes a stub for, and the stub (no final newline)
HUSKY_HOOKS = [
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-rebase",
    "post-rewrite",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-auto-gc",
]
HUSKY_STUB = '#!/usr/bin/env sh\n. "$(dirname "$0")/h"'
HUSKY_SH = (  # index.js's template literal: \n is a newline there, \\" a backslash and a quote
    'echo "husky - DEPRECATED\n\nPlease remove the following two lines from $0:\n\n#!/usr/bin/env sh\n'
    '. \\"\\$(dirname -- \\"\\$0\\")/_/husky.sh\\"\n\nThey WILL FAIL in v10.0.0\n"'
)
# lefthook 2.2.2 hook.tmpl as `lefthook install` renders it, trimmed to the LEFTHOOK_BIN and PATH lookups
LEFTHOOK_SCRIPT = """#!/bin/sh

if [ "$LEFTHOOK_VERBOSE" = "1" -o "$LEFTHOOK_VERBOSE" = "true" ]; then
  set -x
fi

if [ "$LEFTHOOK" = "0" ]; then
  exit 0
fi

call_lefthook()
{{
  if test -n "$LEFTHOOK_BIN"
  then
    "$LEFTHOOK_BIN" "$@"
  elif lefthook -h >/dev/null 2>&1
  then
    lefthook "$@"
  else
    echo "Can't find lefthook in PATH"
  fi
}}

call_lefthook run "{hook}" "$@"
"""
# a stand-in lefthook binary: says which hook lefthook was asked to run, with git's arguments
FAKE_LEFTHOOK = '#!/bin/sh\n[ "$1" = -h ] && exit 0\necho "lefthook $*"\nexit "${LEFTHOOK_FAIL:-0}"\n'


def env(**extra: str) -> dict[str, str]:
    """This environment with the venv's bin first on PATH (git-memzoi, lefthook)."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **extra}


def run(root: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), cwd=root, env=env(**extra), capture_output=True, text=True, check=False, timeout=TIMEOUT
    )


def commit(root: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    """Stage a change inside the entry's scope and commit it through the installed hooks."""
    path = root / "src" / "app.py"
    path.write_text(path.read_text() + "print('more')\n")
    run(root, "git", "add", "-A")
    return run(root, "git", "commit", "-m", "change", **extra)


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file in ``folder`` (samples aside): its bytes and its mode bits."""
    return {
        p.name: (p.read_bytes(), p.stat().st_mode) for p in sorted(folder.iterdir()) if not p.name.endswith(".sample")
    }


def output(proc: subprocess.CompletedProcess[str]) -> str:
    return proc.stdout + proc.stderr


def banner(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """The hook names lefthook's banners name (``hook: pre-commit``, colour codes aside: it prints them anyway)."""
    return re.findall(r"hook:\s+([\w-]+)", re.sub(r"\x1b\[[0-9;]*m", "", output(proc)))


@pytest.fixture
def project(repo: Repo) -> Repo:
    """A repository with a memkeep entry scoped to src/** (so the guard says it ran) and two commits."""
    repo.write("src/app.py", "print('v1')\n")
    repo.write("agent-memory/entries/app-prints.md", entry_text("app-prints", anchor=None, scope=["src/**"]))
    base = repo.commit("base")
    repo.write("agent-memory/entries/app-prints.md", entry_text("app-prints", anchor=base, scope=["src/**"]))
    repo.commit("anchor")
    return repo


# ------------------------------------------------------------------------------------------------ husky


def husky_install(root: Path) -> None:
    """What husky 9.1.7's ``npx husky`` does (index.js): core.hooksPath=.husky/_, ``h``, a stub per hook. Like
    node's writeFileSync, a stub that exists keeps its mode."""
    subprocess.run(["git", "config", "core.hooksPath", ".husky/_"], cwd=root, check=True)
    folder = root / ".husky" / "_"
    (folder / "husky.sh").unlink(missing_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".gitignore").write_text("*")
    shutil.copyfile(DATA / "husky-9.1.7-h", folder / "h")
    for hook in HUSKY_HOOKS:
        created = not (folder / hook).exists()
        (folder / hook).write_text(HUSKY_STUB)
        if created:
            (folder / hook).chmod(0o755)
    (folder / "husky.sh").write_text(HUSKY_SH)


def husky_scripts(root: Path) -> None:
    """The user's .husky/ scripts (husky runs them with ``sh -e``): each says its name as husky passed it."""
    (root / ".husky").mkdir(exist_ok=True)
    (root / ".husky" / "pre-commit").write_text(
        'echo "husky ran $(basename "$0")"\n[ -z "${HUSKY_FAIL:-}" ] || exit "$HUSKY_FAIL"\n'
    )
    (root / ".husky" / "post-checkout").write_text('echo "husky ran $(basename "$0") $3"\n')


@pytest.fixture(scope="session")
def real_husky(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a real husky 9 package: ``MEMZOI_HUSKY_DIR``, else ``npm install husky@9.1.7`` in a tmp dir."""
    if HUSKY_DIR:
        return Path(HUSKY_DIR)
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("npm and node are not on PATH: the real-husky tests need husky@9 from npm (or MEMZOI_HUSKY_DIR)")
    prefix = tmp_path_factory.mktemp("husky-pkg")
    try:
        proc = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--no-save", "--prefix", str(prefix), f"husky@{HUSKY_VERSION}"],
            env=NPM_ENV,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm install husky@{HUSKY_VERSION} did not finish within 300s (or set MEMZOI_HUSKY_DIR)")
    package = prefix / "node_modules" / "husky"
    if proc.returncode != 0 or not (package / "husky").is_file():
        pytest.skip(
            f"npm could not install husky@{HUSKY_VERSION} (or set MEMZOI_HUSKY_DIR): {proc.stderr.strip()[-300:]}"
        )
    return package


def npx_husky(root: Path, package: Path) -> None:
    """Run the real husky's ``husky`` command (what ``npx husky`` and the ``prepare`` script run)."""
    bin_js = json.loads((package / "package.json").read_text())["bin"]["husky"]  # bin.js (9.1), bin.mjs (9.0)
    proc = run(root, "node", str(package / bin_js))
    assert proc.returncode == 0 and proc.stdout == "", output(proc)


@dataclass(frozen=True)
class Husky:
    """A project with husky installed, and what writes husky's folder again (``npx husky``)."""

    project: Repo
    regenerate: Callable[[], None]


@pytest.fixture(params=["copy", "real"])
def husky(request: pytest.FixtureRequest, project: Repo) -> Husky:
    """``project`` with husky installed: by the faithful copy, or by the real package (``real_husky``)."""
    if request.param == "real":
        package = request.getfixturevalue("real_husky")
        setup = Husky(project, lambda: npx_husky(project.root, package))
    else:
        setup = Husky(project, lambda: husky_install(project.root))
    setup.regenerate()
    husky_scripts(project.root)
    return setup


def test_real_husky_writes_the_layout_the_copy_writes(project: Repo, real_husky: Path) -> None:
    version = json.loads((real_husky / "package.json").read_text())["version"]
    if version != HUSKY_VERSION:
        pytest.skip(f"MEMZOI_HUSKY_DIR holds husky {version}; the copy is of {HUSKY_VERSION}")
    npx_husky(project.root, real_husky)
    real = snapshot(project.root / ".husky" / "_")
    husky_install(project.root)
    assert snapshot(project.root / ".husky" / "_") == real
    assert (real_husky / "husky").read_bytes() == (DATA / "husky-9.1.7-h").read_bytes()


def test_husky_hooks_run_under_their_own_name_after_install(husky: Husky) -> None:
    project = husky.project
    folder = project.root / ".husky" / "_"
    git_hooks.install(project.root)
    assert (git_hooks.owner(folder / "pre-commit"), git_hooks.owner(folder / "pre-commit.before-memzoi")) == (
        "memzoi",
        "husky",
    )
    proc = commit(project.root)
    assert proc.returncode == 0, output(proc)
    assert proc.stderr.splitlines()[0] == "husky ran pre-commit"  # .husky/pre-commit ran, by its own name
    assert output(proc).count(GUARD_RAN) == 1 and "git-memzoi:" not in output(proc)
    proc = run(project.root, "git", "checkout", "-q", "-b", "other")
    assert proc.returncode == 0 and proc.stderr == "husky ran post-checkout 1\n", output(proc)


def test_failing_husky_pre_commit_stops_the_commit(husky: Husky) -> None:
    project = husky.project
    git_hooks.install(project.root)
    head = project.head()
    proc = commit(project.root, HUSKY_FAIL="3")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == ["husky ran pre-commit", "husky - pre-commit script failed (code 3)"]
    assert GUARD_RAN not in output(proc) and project.head() == head


def test_husky_uninstall_restores_every_byte(husky: Husky) -> None:
    project = husky.project
    folder = project.root / ".husky" / "_"
    before = snapshot(folder)
    git_hooks.install(project.root)
    git_hooks.uninstall(project.root)
    assert snapshot(folder) == before


def test_husky_regenerating_its_folder_is_told_apart(husky: Husky) -> None:
    project, regenerate = husky.project, husky.regenerate
    folder = project.root / ".husky" / "_"
    before = snapshot(folder)
    git_hooks.install(project.root)
    regenerate()  # npm install / npx husky: every stub written again, over the shims
    report = git_hooks.status(project.root)
    assert [(h.state, h.owner, h.path) for h in report.hooks] == [
        ("overwritten", "husky", str(folder / hook)) for hook in ("pre-commit", "post-merge", "post-checkout")
    ]
    assert report.hooks[0].detail == (
        "husky wrote its hook again over the shim; pre-commit.before-memzoi is the copy install kept (install again)"
    )
    assert report.recommendation == (
        "husky is in use and rewrites .husky/_ on `npm install` and `npx husky`, which drops the shims: add "
        '`git memzoi hook run pre-commit` to .husky/pre-commit, `git memzoi hook run post-merge -- "$@"` to '
        '.husky/post-merge, `git memzoi hook run post-checkout -- "$@"` to .husky/post-checkout '
        "(docs/integrations.md, husky), then run `git memzoi hooks uninstall --keep-merge-driver`"
    )
    assert report.exit_code == 1
    proc = run(project.root, "git", "memzoi", "hooks", "status")
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0] == f"overwritten  pre-commit     husky  {folder / 'pre-commit'}: " + (
        report.hooks[0].detail
    )
    assert proc.stdout.splitlines()[-1] == f"recommended: {report.recommendation}"
    proc = commit(project.root)  # husky alone now: its hook runs, the guard does not
    assert proc.returncode == 0 and proc.stderr.splitlines()[0] == "husky ran pre-commit"
    assert GUARD_RAN not in output(proc)
    git_hooks.install(project.root)  # installing again chains husky's new stub over the kept copy
    assert output(commit(project.root)).count(GUARD_RAN) == 1
    git_hooks.uninstall(project.root)
    assert snapshot(folder) == before
    regenerate()
    git_hooks.install(project.root)
    regenerate()
    git_hooks.uninstall(project.root)  # the kept copies of the rewritten stubs go too
    assert snapshot(folder) == before


def test_husky_script_running_memzoi_is_the_durable_install(husky: Husky) -> None:
    project = husky.project
    pre_commit = project.root / ".husky" / "pre-commit"
    pre_commit.write_text(pre_commit.read_text() + "git memzoi hook run pre-commit\n")
    report = git_hooks.install(project.root)
    folder = project.root / ".husky" / "_"
    assert report.actions[1] == (f"left {folder / 'pre-commit'} as it is: husky runs memzoi from .husky/pre-commit")
    state = report.hooks[0]
    assert (state.state, state.owner, state.path) == ("installed", "husky", str(pre_commit))
    assert state.detail == "husky runs `git memzoi hook run pre-commit` from .husky/pre-commit"
    assert git_hooks.owner(folder / "pre-commit") == "husky"
    proc = commit(project.root)
    assert proc.returncode == 0 and output(proc).count(GUARD_RAN) == 1, output(proc)
    assert report.recommendation.endswith(
        '`git memzoi hook run post-checkout -- "$@"` to .husky/post-checkout (docs/integrations.md, husky), '
        "then run `git memzoi hooks uninstall --keep-merge-driver`"
    )
    assert "to .husky/pre-commit" not in report.recommendation


def test_husky_durable_everywhere_with_shims_left_recommends_uninstall(husky: Husky) -> None:
    project = husky.project
    git_hooks.install(project.root)
    for hook, line in hook_managers.HUSKY_LINES.items():
        script = project.root / ".husky" / hook
        script.write_text((script.read_text() if script.exists() else "") + line + "\n")
    report = git_hooks.status(project.root)
    assert report.recommendation == (
        "husky runs git memzoi for every hook: run `git memzoi hooks uninstall --keep-merge-driver` (the shims are not needed)"
    )
    git_hooks.uninstall(project.root)
    report = git_hooks.status(project.root)
    assert [(h.state, h.owner) for h in report.hooks] == [("installed", "husky")] * 3
    # uninstall took the merge driver too, which .gitattributes still asks for: install registers it again and,
    # husky running memzoi for every hook, writes no shim
    assert (report.recommendation, report.exit_code) == (merge_config.unregistered_hint(project.root), 0)
    assert report.recommendation
    git_hooks.install(project.root)
    report = git_hooks.status(project.root)
    assert [(h.state, h.owner) for h in report.hooks] == [("installed", "husky")] * 3
    assert (report.recommendation, report.exit_code) == ("", 0)


def test_husky_line_and_shims_together_run_the_guard_once(husky: Husky) -> None:
    """Until the shims are uninstalled, husky's own memzoi line runs inside the shim's chain: it stands down,
    and the shim's own run is the one check of the commit."""
    project = husky.project
    git_hooks.install(project.root)
    script = project.root / ".husky" / "pre-commit"
    script.write_text(script.read_text() + hook_managers.HUSKY_LINES["pre-commit"] + "\n")
    proc = commit(project.root)
    assert proc.returncode == 0 and output(proc).count(GUARD_RAN) == 1, output(proc)
    assert output(proc).count("husky ran pre-commit") == 1


def test_husky_hook_that_hangs_is_stopped(husky: Husky) -> None:
    project = husky.project
    (project.root / ".husky" / "pre-commit").write_text("sleep 50\n")
    git_hooks.install(project.root)
    started = time.monotonic()
    proc = commit(project.root, GIT_MEMZOI_HOOK_TIMEOUT="1")
    assert proc.returncode == 0, output(proc)
    assert (
        "git-memzoi: pre-commit hook: .husky/_/pre-commit.before-memzoi did not finish within 1s; stopped it and went on "
        "(warning)"
    ) in output(proc).splitlines()
    assert output(proc).count(GUARD_RAN) == 1 and time.monotonic() - started < 20


def test_husky_script_calling_the_hook_again_is_cut(husky: Husky) -> None:
    project = husky.project
    (project.root / ".husky" / "pre-commit").write_text('echo husky-once\n.husky/_/pre-commit "$@"\n')
    git_hooks.install(project.root)
    proc = commit(project.root)
    assert proc.returncode == 0, output(proc)
    assert output(proc).count("husky-once") == 1 and output(proc).count("hook chain came back to") == 1
    assert output(proc).count(GUARD_RAN) == 1


# ------------------------------------------------------------------------------------------------ the chained $0


@pytest.mark.parametrize(
    ("shebang", "seen"),
    [
        ("#!/bin/sh", ".git/hooks/post-checkout"),
        ("#!/usr/bin/env sh", ".git/hooks/post-checkout"),
        ("#!/bin/sh -u", ".git/hooks/post-checkout"),
        # any other interpreter runs the file itself (bash: a script may compare BASH_SOURCE with $0)
        ("#!/usr/bin/env bash", ".git/hooks/post-checkout.before-memzoi"),
    ],
)
def test_chained_shell_script_sees_the_hooks_own_path_and_arguments(project: Repo, shebang: str, seen: str) -> None:
    hook = project.root / ".git" / "hooks" / "post-checkout"
    hook.write_text(f'{shebang}\necho "legacy saw $0 $# $3"\n')
    hook.chmod(0o755)
    git_hooks.install(project.root)
    proc = run(project.root, "git", "checkout", "-q", "-b", "other")
    assert proc.returncode == 0 and proc.stderr == f"legacy saw {seen} 3 1\n", output(proc)


def test_chained_script_flags_of_its_shebang_hold(project: Repo) -> None:
    hook = project.root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh -e\nfalse\necho not-reached\n")
    hook.chmod(0o755)
    git_hooks.install(project.root)
    proc = commit(project.root)
    assert proc.returncode == 1 and "not-reached" not in output(proc) and GUARD_RAN not in output(proc)


# ------------------------------------------------------------------------------------------------ lefthook


def lefthook_copy(root: Path, hooks: tuple[str, ...] = ("pre-commit", "post-checkout")) -> dict[str, str]:
    """What ``lefthook install`` does (lefthook 2.2): a hook that is not its own becomes ``<hook>.old``, then
    its script per configured hook; the stand-in binary is reached through ``LEFTHOOK_BIN``."""
    folder = root / ".git" / "hooks"
    for hook in hooks:
        target = folder / hook
        if target.exists() and hook_managers.manager(target) != "lefthook":
            os.replace(target, folder / f"{hook}.old")
        target.write_text(LEFTHOOK_SCRIPT.format(hook=hook))
        target.chmod(0o755)
    fake = root.parent / "fake-lefthook"
    fake.write_text(FAKE_LEFTHOOK)
    fake.chmod(0o755)
    return {"LEFTHOOK_BIN": str(fake)}


def test_lefthook_hooks_run_under_their_own_name_after_install(project: Repo) -> None:
    extra = lefthook_copy(project.root)
    folder = project.root / ".git" / "hooks"
    before = snapshot(folder)
    git_hooks.install(project.root)
    assert git_hooks.owner(folder / "pre-commit.before-memzoi") == "lefthook"
    proc = commit(project.root, **extra)
    assert proc.returncode == 0 and proc.stderr.splitlines()[0] == "lefthook run pre-commit", output(proc)
    assert output(proc).count(GUARD_RAN) == 1
    proc = run(project.root, "git", "checkout", "-q", "-b", "other", **extra)
    head = project.head()
    assert proc.returncode == 0 and proc.stderr == f"lefthook run post-checkout {head} {head} 1\n", output(proc)
    assert commit(project.root, LEFTHOOK_FAIL="1", **extra).returncode == 1  # a failing lefthook stops the commit
    git_hooks.uninstall(project.root)
    assert snapshot(folder) == before


def test_lefthook_install_over_the_shims_is_told_apart(project: Repo) -> None:
    folder = project.root / ".git" / "hooks"
    git_hooks.install(project.root)
    extra = lefthook_copy(project.root, ("pre-commit",))  # our pre-commit shim is now pre-commit.old
    state = git_hooks.status(project.root).hooks[0]
    assert (state.state, state.owner) == ("overwritten", "lefthook")
    assert state.detail == "lefthook replaced the shim and keeps it as pre-commit.old, unrun"
    assert git_hooks.status(project.root).recommendation.startswith(
        "lefthook is in use and `lefthook install` replaces the shims: add to lefthook.yml the commands "
        "`git memzoi hook run pre-commit` under pre-commit,"
    )
    lefthook_only = (folder / "pre-commit").read_bytes()
    git_hooks.install(project.root)  # chains lefthook's script like any hook
    assert output(commit(project.root, **extra)).count(GUARD_RAN) == 1
    git_hooks.uninstall(project.root)  # our shim set aside as pre-commit.old goes too
    assert {name: data for name, (data, _) in snapshot(folder).items()} == {"pre-commit": lefthook_only}


def test_lefthook_config_running_memzoi_is_the_durable_install(project: Repo) -> None:
    lefthook_copy(project.root)
    project.write(
        "lefthook.yml",
        "".join(
            f"{hook}:\n  commands:\n    memzoi:\n      run: {line}\n"
            for hook, line in hook_managers.LEFTHOOK_LINES.items()
            if hook != "post-merge"
        ),
    )
    report = git_hooks.install(project.root)
    folder = project.root / ".git" / "hooks"
    assert report.actions == (
        f"left {folder / 'pre-commit'} as it is: lefthook runs memzoi from lefthook.yml",
        f"installed {folder / 'post-merge'}",
        f"left {folder / 'post-checkout'} as it is: lefthook runs memzoi from lefthook.yml",
    )
    assert [(h.state, h.owner) for h in report.hooks] == [
        ("installed", "lefthook"),
        ("installed", "memzoi"),
        ("installed", "lefthook"),
    ]
    assert report.recommendation == (
        "lefthook is in use and `lefthook install` replaces the shims: add to lefthook.yml the commands "
        "`git memzoi hook run post-merge -- {0}` under post-merge (docs/integrations.md, lefthook), then run "
        "`git memzoi hooks uninstall --keep-merge-driver`"
    )


# ------------------------------------------------------------------------------------------------ real lefthook


@pytest.fixture
def lefthook(project: Repo) -> str:
    """The real lefthook binary, and ``project`` with a lefthook.yml whose commands say they ran."""
    if LEFTHOOK is None:
        pytest.skip("lefthook is not installed (the [test] extra brings it from PyPI: pip install -e '.[test]')")
    project.write(
        "lefthook.yml",
        "pre-commit:\n  commands:\n    hello:\n      run: echo lefthook-pre-commit-ran\n"
        "post-checkout:\n  commands:\n    hello:\n      run: echo lefthook-post-checkout-ran {3}\n",
    )
    project.commit("lefthook config")
    return LEFTHOOK


def test_real_lefthook_hooks_run_after_install_and_uninstall_restores(project: Repo, lefthook: str) -> None:
    folder = project.root / ".git" / "hooks"
    assert run(project.root, lefthook, "install").returncode == 0
    before = snapshot(folder)
    assert git_hooks.owner(folder / "pre-commit") == "lefthook"
    git_hooks.install(project.root)
    proc = commit(project.root)
    assert proc.returncode == 0, output(proc)
    assert output(proc).count("lefthook-pre-commit-ran") == 1 and banner(proc) == ["pre-commit"]
    assert output(proc).count(GUARD_RAN) == 1
    proc = run(project.root, "git", "checkout", "-q", "-b", "other")
    assert proc.returncode == 0 and output(proc).count("lefthook-post-checkout-ran 1") == 1, output(proc)
    assert banner(proc) == ["post-checkout"]
    git_hooks.uninstall(project.root)
    assert snapshot(folder) == before


def test_real_lefthook_installed_over_the_shims(project: Repo, lefthook: str) -> None:
    folder = project.root / ".git" / "hooks"
    git_hooks.install(project.root)
    assert run(project.root, lefthook, "install").returncode == 0  # renames our shims to <hook>.old
    states = {h.hook: (h.state, h.owner) for h in git_hooks.status(project.root).hooks}
    assert states == {
        "pre-commit": ("overwritten", "lefthook"),
        "post-merge": ("installed", "memzoi"),
        "post-checkout": ("overwritten", "lefthook"),
    }
    lefthook_only = {name: data for name, (data, _) in snapshot(folder).items() if not name.endswith(".old")}
    del lefthook_only["post-merge"]
    git_hooks.install(project.root)
    proc = commit(project.root)
    assert proc.returncode == 0 and output(proc).count("lefthook-pre-commit-ran") == 1, output(proc)
    assert output(proc).count(GUARD_RAN) == 1
    git_hooks.uninstall(project.root)
    assert {name: data for name, (data, _) in snapshot(folder).items()} == lefthook_only


def test_real_lefthook_running_memzoi_from_its_config(project: Repo, lefthook: str) -> None:
    config = "".join(
        f"{hook}:\n  commands:\n    memzoi:\n      run: {line}\n" for hook, line in hook_managers.LEFTHOOK_LINES.items()
    )
    project.commit("memzoi in lefthook", **{"lefthook.yml": config})
    assert run(project.root, lefthook, "install").returncode == 0
    report = git_hooks.status(project.root)
    assert [(h.state, h.owner) for h in report.hooks] == [("installed", "lefthook")] * 3
    assert (report.recommendation, report.exit_code) == ("", 0)
    proc = commit(project.root)
    assert proc.returncode == 0 and output(proc).count(GUARD_RAN) == 1, output(proc)
