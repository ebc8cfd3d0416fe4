"""The installed git hooks end to end: real `git commit`, `git merge`, worktrees and core.hooksPath (BR-18, BR-21)."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import re
import shutil
import string
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from git_memzoi.integrations import git_hooks
from git_memzoi.memzoi.layout import Layout, init
from tests.support.repos import PROJECT, Repo, entry_text

BIN = Path(sys.executable).parent


def fake_token() -> str:
    """A GitHub-token-shaped string built at test time (never a literal secret in the repository)."""
    rng = random.Random(1234)
    return "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


def record_text(rid: str, body: str = "A reviewed decision.", extra: str = "") -> str:
    return (
        f"---\nid: {rid}\nkind: memory\nprofile: memzoi\nretention: {{}}\norigin:\n"
        f'  origin_key: "repository-record:{rid}"\n  route: repository_proposal\ntype: decision\n'
        f'lane: semantic\ntitle: "Guidance {rid}"\ntimestamp: "2026-07-01T00:00:00Z"\n'
        f"status: active\nscope: repo\nvisibility: repo\ncontent_class: general_repo_knowledge\n{extra}"
        f"confidence: 1\n---\n\n# Guidance {rid}\n\n{body}\n"
    )


def git(repo_root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git with the venv's bin on PATH, so the shims find git-memzoi."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["git", *args], cwd=repo_root, env=env, capture_output=True, text=True, check=False)


def out(proc: subprocess.CompletedProcess[str]) -> str:
    return proc.stdout + proc.stderr


@pytest.fixture
def hooked(repo: Repo) -> Repo:
    """A repository with .memzoi/, a memkeep entry scoped to src/**, one commit, and the hooks installed."""
    init(Layout(repo.root))
    repo.write("src/app.py", "print('v1')\n")
    repo.write("agent-memory/entries/app-prints.md", entry_text("app-prints", anchor=None, scope=["src/**"]))
    base = repo.commit("base")
    repo.write("agent-memory/entries/app-prints.md", entry_text("app-prints", anchor=base, scope=["src/**"]))
    repo.commit("anchor")
    git_hooks.install(repo.root)
    return repo


def test_commit_touching_scope_reports_the_entry(hooked: Repo) -> None:
    hooked.write("src/app.py", "print('v2')\n")
    git(hooked.root, "add", "-A")
    proc = git(hooked.root, "commit", "-m", "change app")
    assert proc.returncode == 0, out(proc)
    assert "then verify them after this commit" in out(proc) and "app-prints" in out(proc)


def test_commit_names_the_entries_it_cannot_read_since_their_scope_is_unknown(hooked: Repo) -> None:
    hooked.write("agent-memory/entries/broken.md", "---\nid: broken\nscope: [src/**\n---\nA claim.\n")
    git(hooked.root, "add", "agent-memory/entries/broken.md")
    git(hooked.root, "commit", "-m", "broken entry", "--no-verify")
    hooked.write("src/app.py", "print('v2')\n")
    git(hooked.root, "add", "-A")
    proc = git(hooked.root, "commit", "-m", "change app")
    assert proc.returncode == 0, out(proc)  # said, never blocked: the staged change is fine
    said = out(proc).splitlines()
    start = said.index("memkeep: these entries cannot be read, so whether this change touches them is unknown:")
    assert said[start + 1 : start + 3] == [
        "  agent-memory/entries/broken.md:4",  # where lint places it: the block's flow list never closes
        "  (git memkeep lint says what is wrong with each)",
    ]
    assert "agent-memory/entries/broken.md:4: " in out(git(hooked.root, "memkeep", "lint"))
    hooked.write("agent-memory/entries/broken.md", entry_text("broken", anchor=hooked.head(), scope=["docs/**"]))
    git(hooked.root, "add", "-A")  # the fixed version staged: nothing unreadable is left to name
    fixed = git(hooked.root, "commit", "-m", "fix the entry")
    assert fixed.returncode == 0, out(fixed)
    assert "cannot be read" not in out(fixed)


def test_secret_in_record_is_refused_and_never_echoed(hooked: Repo) -> None:
    token = fake_token()
    before = hooked.head()
    hooked.write(".memzoi/records/leak.md", record_text("leak", body=f"Use token {token} for the API."))
    git(hooked.root, "add", "-A")
    proc = git(hooked.root, "commit", "-m", "leak")
    assert proc.returncode != 0
    assert hooked.head() == before
    assert token not in out(proc)
    assert ".memzoi/records/leak.md:" in out(proc) and "GitHub Token" in out(proc)


def test_secret_refused_through_commit_all_temporary_index(hooked: Repo) -> None:
    hooked.write(".memzoi/records/ok.md", record_text("ok"))
    git(hooked.root, "add", "-A")
    assert git(hooked.root, "commit", "-m", "ok").returncode == 0
    before = hooked.head()
    key = "-----BEGIN " + "RSA PRIVATE KEY-----"
    hooked.write(".memzoi/records/ok.md", record_text("ok", body=f"{key}\nabc\n"))
    proc = git(hooked.root, "commit", "-a", "-m", "key")  # git points GIT_INDEX_FILE at a temporary index
    assert proc.returncode != 0 and hooked.head() == before
    assert "private_key_block" in out(proc)


def test_forced_local_file_is_refused(hooked: Repo) -> None:
    before = hooked.head()
    hooked.write(".memzoi/local/runtime.md", "private notes\n")
    git(hooked.root, "add", "-f", ".memzoi/local/runtime.md")
    proc = git(hooked.root, "commit", "-m", "local")
    assert proc.returncode != 0 and hooked.head() == before
    assert ".memzoi/local/runtime.md" in out(proc) and "private_local" in out(proc)


def test_record_not_repo_safe_is_refused(hooked: Repo) -> None:
    hooked.write(".memzoi/records/raw.md", record_text("raw").replace("general_repo_knowledge", "raw_transcript"))
    git(hooked.root, "add", "-A")
    proc = git(hooked.root, "commit", "-m", "raw")
    assert proc.returncode != 0 and "not_repo_safe" in out(proc)


def test_malformed_record_names_file_and_line(hooked: Repo) -> None:
    hooked.write(".memzoi/records/bad.md", "---\nid: bad\ntitle: KB: Cache rules\n---\nBody.\n")
    git(hooked.root, "add", "-A")
    proc = git(hooked.root, "commit", "-m", "bad")
    assert proc.returncode != 0 and ".memzoi/records/bad.md:" in out(proc)


def test_merge_that_makes_an_entry_suspect_is_reported(hooked: Repo) -> None:
    git(hooked.root, "checkout", "-q", "-b", "feature")
    hooked.write("src/app.py", "print('v3')\n")
    git(hooked.root, "commit", "-qam", "feature change")
    checkout = git(hooked.root, "checkout", "-q", "main")
    assert checkout.returncode == 0
    proc = git(hooked.root, "merge", "--no-edit", "feature")
    assert proc.returncode == 0, out(proc)
    assert "became suspect" in out(proc) and "app-prints" in out(proc)


def test_file_checkout_and_detached_head_never_fail(hooked: Repo) -> None:
    assert git(hooked.root, "checkout", "HEAD~1", "--", "src/app.py").returncode == 0
    proc = git(hooked.root, "checkout", "-q", "--detach", "HEAD~1")
    assert proc.returncode == 0 and "Traceback" not in out(proc)


def test_br18_installs_into_core_hooks_path_and_blocks(repo: Repo) -> None:
    init(Layout(repo.root))
    repo.git("config", "core.hooksPath", ".husky/_")
    report = git_hooks.install(repo.root)
    assert report.dirs.effective == repo.root / ".husky" / "_"
    assert (repo.root / ".husky/_/pre-commit").is_file() and not (repo.root / ".git/hooks/pre-commit").exists()
    repo.write(".memzoi/records/broken.md", "---\nid: broken\n---\nno fields\n")
    git(repo.root, "add", "-A")
    proc = git(repo.root, "commit", "-m", "broken")
    assert proc.returncode != 0 and "broken.md" in out(proc)


def test_br18_status_tells_bypassed_apart(repo: Repo) -> None:
    git_hooks.install(repo.root)
    repo.git("config", "core.hooksPath", ".husky/_")
    states = {h.hook: h for h in git_hooks.status(repo.root).hooks}
    assert states["pre-commit"].state == "bypassed"
    assert (
        "installed in" in states["pre-commit"].detail
        and "bypassed by core.hooksPath=.husky/_" in states["pre-commit"].detail
    )


def test_foreign_hook_is_chained_and_restored(repo: Repo) -> None:
    foreign = "#!/bin/sh\necho foreign-hook-ran\n"
    hook = repo.root / ".git/hooks/pre-commit"
    hook.write_text(foreign)
    hook.chmod(0o755)
    git_hooks.install(repo.root)
    assert (repo.root / ".git/hooks/pre-commit.before-memzoi").read_text() == foreign
    repo.write("a.txt", "a\n")
    git(repo.root, "add", "-A")
    proc = git(repo.root, "commit", "-m", "a")
    assert proc.returncode == 0 and "foreign-hook-ran" in out(proc)
    git_hooks.uninstall(repo.root)
    assert hook.read_text() == foreign and not (repo.root / ".git/hooks/pre-commit.before-memzoi").exists()


def test_first_commit_in_empty_repository_passes(repo: Repo) -> None:
    init(Layout(repo.root))
    git_hooks.install(repo.root)
    repo.write(".memzoi/records/first.md", record_text("first"))
    git(repo.root, "add", "-A")
    proc = git(repo.root, "commit", "-m", "first")
    assert proc.returncode == 0, out(proc)
    assert "fatal" not in out(proc) and "Traceback" not in out(proc)


def test_linked_worktree_shares_the_hooks(hooked: Repo, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    assert git(hooked.root, "worktree", "add", "-q", "-b", "wt", str(worktree)).returncode == 0
    assert all(h.state == "installed" for h in git_hooks.status(worktree).hooks)
    Repo(worktree).write(".memzoi/records/leak.md", record_text("leak", body=fake_token()))
    git(worktree, "add", "-A")
    proc = git(worktree, "commit", "-m", "leak")
    assert proc.returncode != 0 and "GitHub Token" in out(proc)


def test_shipped_shims_match_the_manual_copies() -> None:
    shipped = PROJECT / "git_memzoi" / "resources" / "hooks"
    names = sorted(p.name for p in shipped.iterdir())
    assert names == sorted(p.name for p in (PROJECT / "hooks").iterdir()) == sorted(git_hooks.HOOK_TYPES)
    for name in names:
        assert (shipped / name).read_bytes() == (PROJECT / "hooks" / name).read_bytes()
        lines = (shipped / name).read_text().splitlines()
        assert git_hooks.MARKER in lines
        begin, end = lines.index(git_hooks.PYTHON_BEGIN), lines.index(git_hooks.PYTHON_END)
        assert "INSTALL_PYTHON=''" in lines[begin:end]  # the template's placeholder: no interpreter pinned
        assert git_hooks.pinned_python(shipped / name) == ""
        assert os.access(PROJECT / "hooks" / name, os.X_OK)


def test_install_pins_the_installing_interpreter(repo: Repo) -> None:
    git_hooks.install(repo.root)
    for hook in git_hooks.HOOK_TYPES:
        shim = repo.root / ".git" / "hooks" / hook
        assert git_hooks.pinned_python(shim) == sys.executable
        template = git_hooks.template_text(hook).splitlines()
        installed = shim.read_text().splitlines()
        outside = [line for line in installed if not line.startswith("INSTALL_PYTHON=")]
        assert outside == [line for line in template if not line.startswith(("INSTALL_PYTHON=", "# (template"))]


def test_quoted_interpreter_path_round_trips(tmp_path: Path) -> None:
    odd = '/opt/it\'s a "py" $HOME/bin/python'
    shim = tmp_path / "pre-commit"
    shim.write_text(git_hooks.shim_text("pre-commit", odd))
    assert git_hooks.pinned_python(shim) == odd
    probe = subprocess.run(["sh", "-c", f". {shim} >/dev/null 2>&1; exit 0"], check=False)
    assert probe.returncode == 0


def _path_without_memzoi() -> str:
    git_dir = str(Path(shutil.which("git") or "/usr/bin/git").parent)
    if shutil.which("git-memzoi", path=git_dir):
        pytest.skip("git-memzoi is installed next to git: cannot hide it from PATH")
    return git_dir


def test_shim_falls_back_to_the_pinned_interpreter(hooked: Repo) -> None:
    path = _path_without_memzoi()
    before = hooked.head()
    hooked.write(".memzoi/records/leak.md", record_text("leak", body=fake_token()))
    git(hooked.root, "add", "-A")
    env = {**os.environ, "PATH": path}
    proc = subprocess.run(
        ["git", "commit", "-m", "leak"], cwd=hooked.root, env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode != 0 and hooked.head() == before and "GitHub Token" in out(proc)


def test_shim_says_one_line_when_the_pinned_interpreter_lost_the_package(hooked: Repo, tmp_path: Path) -> None:
    path = _path_without_memzoi()
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 1\n")  # an interpreter without git_memzoi: `-c import git_memzoi` fails
    fake.chmod(0o755)
    shim = hooked.root / ".git" / "hooks" / "pre-commit"
    shim.write_text(git_hooks.shim_text("pre-commit", str(fake)))
    hooked.write(".memzoi/records/leak.md", record_text("leak", body=fake_token()))
    git(hooked.root, "add", "-A")
    env = {**os.environ, "PATH": path}
    proc = subprocess.run(
        ["git", "commit", "-qm", "unguarded"], cwd=hooked.root, env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0 and proc.stderr == (  # never a silent pass: the commit goes on unchecked, said once
        f"git-memzoi: pre-commit hook skipped: no git-memzoi on PATH, and the pinned python ({fake}) cannot run "
        "git_memzoi; run 'git memzoi hooks install' again\n"
    )


def test_checkout_and_merge_refresh_the_derived_index(hooked: Repo) -> None:
    from git_memzoi.memzoi.recall.index import db as index_db

    index = index_db.index_path(Layout(hooked.root))
    index.unlink(missing_ok=True)
    assert git(hooked.root, "checkout", "-q", "-b", "feature").returncode == 0
    assert index.is_file()  # post-checkout rebuilt it
    hooked.write(".memzoi/records/merged.md", record_text("merged"))
    git(hooked.root, "add", "-A")
    assert git(hooked.root, "commit", "-qm", "record").returncode == 0
    assert git(hooked.root, "checkout", "-q", "main").returncode == 0
    assert _indexed_ids(index) == set()  # post-checkout dropped the row of the file that left the working tree
    proc = git(hooked.root, "merge", "--no-edit", "feature")
    assert proc.returncode == 0, out(proc)
    assert _indexed_ids(index) == {"merged"}  # post-merge read the incoming record


def _indexed_ids(index: Path) -> set[str]:
    """The record ids the index file holds (memkeep entries, indexed beside them, left out), read without
    refreshing it."""
    import sqlite3

    with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as conn:
        return {row[0] for row in conn.execute("SELECT id FROM records WHERE store = 'record'")}


def test_index_refresh_failure_never_fails_the_checkout(hooked: Repo) -> None:
    from git_memzoi.memzoi.recall.index import db as index_db

    index = index_db.index_path(Layout(hooked.root))
    index.unlink(missing_ok=True)
    index.mkdir(parents=True)  # a directory where the index file belongs: the refresh cannot open or replace it
    (index / "keep").write_text("x")
    proc = git(hooked.root, "checkout", "-q", "-b", "elsewhere")
    assert proc.returncode == 0 and "Traceback" not in out(proc)


def test_repository_without_memzoi_gets_no_index(repo: Repo) -> None:
    repo.write("a.txt", "a\n")
    repo.commit("a")
    git_hooks.install(repo.root)
    proc = git(repo.root, "checkout", "-q", "-b", "other")
    assert proc.returncode == 0 and out(proc) == "" and not (repo.root / ".memzoi").exists()


def offline_pre_commit_env(home: Path) -> dict[str, str]:
    """An environment in which ``pre-commit`` builds a ``language: python`` hook without the network.

    pre-commit makes a virtualenv (seeded from virtualenv's bundled wheels) and runs ``pip install .`` in it.
    pip reads no config file, no index (a dead ``PIP_INDEX_URL`` and dead proxies show nothing is fetched) and
    no dependencies, and builds without isolation (pip reads ``PIP_NO_BUILD_ISOLATION=0`` as "isolation off"): the
    build backend (setuptools, a [test] extra) and the runtime dependencies come from this interpreter's
    site-packages on PYTHONPATH. This interpreter's bin leaves PATH, so the hooks run the console scripts
    installed in the hook environment, never the development copy.
    """
    dropped = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PRE_COMMIT_HOME", "NO_PROXY", "no_proxy"}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUALENV_")) and k not in dropped}
    bin_dir = BIN.resolve()
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p).resolve() != bin_dir]
    site_dirs = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    dead = "http://127.0.0.1:9/"  # the discard port: any attempt to fetch fails at once
    env.update(
        {
            "PATH": os.pathsep.join(path),
            "PRE_COMMIT_HOME": str(home),
            "PYTHONPATH": os.pathsep.join(site_dirs),
            "PYTHONNOUSERSITE": "1",
            "PIP_CONFIG_FILE": os.devnull,
            "PIP_NO_INDEX": "1",
            "PIP_INDEX_URL": dead,
            "PIP_NO_DEPS": "1",
            "PIP_NO_BUILD_ISOLATION": "0",
            "PIP_NO_COMPILE": "0",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "VIRTUALENV_NO_PERIODIC_UPDATE": "1",
            "VIRTUALENV_NO_DOWNLOAD": "1",
            "HTTP_PROXY": dead,
            "HTTPS_PROXY": dead,
            "ALL_PROXY": dead,
            "http_proxy": dead,
            "https_proxy": dead,
        }
    )
    return env


@pytest.mark.skipif(
    importlib.util.find_spec("pre_commit") is None,
    reason="pre-commit is not installed for this interpreter (the [test] extra brings it: pip install -e '.[test]')",
)
def test_pre_commit_framework_try_repo(repo: Repo, tmp_path: Path) -> None:
    """The published hooks, built by the framework offline, pass a clean commit and refuse private or secret memory."""
    exe = [sys.executable, "-m", "pre_commit"]  # this interpreter: its site-packages is the one on PYTHONPATH
    manifest = subprocess.run([*exe, "validate-manifest", str(PROJECT / ".pre-commit-hooks.yaml")], check=False)
    assert manifest.returncode == 0
    hook_repo = tmp_path / "hook-repo"  # a committed copy: try-repo only sees tracked files of the project
    shutil.copytree(PROJECT / "git_memzoi", hook_repo / "git_memzoi", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(PROJECT / "man", hook_repo / "man")  # the wheel's data files: pip install needs them
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(PROJECT / name, hook_repo / name)
    Repo(hook_repo).git("init", "-q")
    Repo(hook_repo).commit("snapshot")
    env = offline_pre_commit_env(tmp_path / "pc-home")

    def try_repo() -> str:  # no hook id: every pre-commit-stage hook of the manifest (memzoi-guard, memkeep-lint)
        proc = subprocess.run(
            [*exe, "try-repo", str(hook_repo)],
            cwd=repo.root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        return f"exit {proc.returncode}\n{proc.stdout}{proc.stderr}"

    init(Layout(repo.root))
    base = repo.commit("base", **{"src/app.py": "print('v1')\n"})
    repo.write("agent-memory/entries/app-prints.md", entry_text("app-prints", anchor=base, scope=["src/**"]))
    subprocess.run([str(BIN / "git-memkeep"), "-C", str(repo.root), "index"], check=True, capture_output=True)
    repo.write(".memzoi/records/ok.md", record_text("ok"))
    repo.git("add", "-A")
    clean = try_repo()
    assert clean.startswith("exit 0\n"), clean
    assert re.search(r"memzoi guard .*Passed", clean) and re.search(r"memkeep lint .*Passed", clean), clean

    repo.write(".memzoi/local/runtime.md", "private notes\n")
    repo.git("add", "-f", ".memzoi/local/runtime.md")
    private = try_repo()
    assert not private.startswith("exit 0\n") and re.search(r"memzoi guard .*Failed", private), private
    assert ".memzoi/local/runtime.md" in private and "private_local" in private, private
    repo.git("rm", "-q", "--cached", ".memzoi/local/runtime.md")

    token = fake_token()
    repo.write(".memzoi/records/leak.md", record_text("leak", body=f"Use token {token} for the API."))
    repo.git("add", "-A")
    leak = try_repo()
    assert not leak.startswith("exit 0\n") and re.search(r"memzoi guard .*Failed", leak), leak
    assert ".memzoi/records/leak.md:" in leak and "GitHub Token" in leak and token not in leak, leak
    repo.git("rm", "-q", "-f", ".memzoi/records/leak.md")

    repo.write("agent-memory/entries/late.md", entry_text("late", anchor=base, scope=["src/**"]))  # no INDEX.md update
    repo.git("add", "-A")
    unindexed = try_repo()
    assert not unindexed.startswith("exit 0\n") and re.search(r"memkeep lint .*Failed", unindexed), unindexed
    assert "agent-memory/INDEX.md: index: index_drift" in unindexed, unindexed
    assert re.search(r"memzoi guard .*Passed", unindexed), unindexed


def test_rebase_with_hooks_installed_never_fails(hooked: Repo) -> None:
    git(hooked.root, "checkout", "-q", "-b", "topic")
    hooked.write("notes.txt", "topic\n")
    git(hooked.root, "add", "-A")
    assert git(hooked.root, "commit", "-qm", "topic").returncode == 0
    git(hooked.root, "checkout", "-q", "main")
    hooked.write("src/app.py", "print('main')\n")
    git(hooked.root, "commit", "-qam", "main moves")
    proc = git(hooked.root, "rebase", "main", "topic")
    assert proc.returncode == 0 and "Traceback" not in out(proc)


def test_git_dir_and_work_tree_from_outside(hooked: Repo, tmp_path: Path) -> None:
    before = hooked.head()
    hooked.write(".memzoi/records/leak.md", record_text("leak", body=fake_token()))
    base = ["--git-dir", str(hooked.root / ".git"), "--work-tree", str(hooked.root)]
    git(tmp_path, *base, "add", "-A")
    proc = git(tmp_path, *base, "commit", "-m", "leak")
    assert proc.returncode != 0 and hooked.head() == before and "GitHub Token" in out(proc)


def test_merge_that_brings_typed_guidance_plans_a_capture_privately(hooked: Repo) -> None:
    git(hooked.root, "checkout", "-q", "-b", "docs")
    hooked.write("docs/guide.md", "# Guide\n\n## Decision: Settle in one transaction\n\nAll steps commit together.\n")
    git(hooked.root, "add", "-A")
    assert git(hooked.root, "commit", "-qm", "guidance").returncode == 0
    git(hooked.root, "checkout", "-q", "main")
    before = hooked.git("rev-parse", "HEAD")
    proc = git(hooked.root, "merge", "--no-ff", "--no-edit", "docs")
    assert proc.returncode == 0, out(proc)
    plans = sorted((hooked.root / ".git/memzoi/local/capture").glob("capture_*.json"))
    assert len(plans) == 1
    plan = json.loads(plans[0].read_text())
    locator = plan["request"]["sources"][0]["locator"]
    assert (locator["base"], locator["head"]) == (f"sha1:{before}", f"sha1:{hooked.git('rev-parse', 'HEAD')}")
    assert [c["memory"]["title"] for c in plan["candidates"]] == ["Settle in one transaction"]
    assert f"1 typed memory candidate(s) arrived in {before[:12]}.." in out(proc)
    assert not (hooked.root / ".memzoi/records/settle-in-one-transaction.md").exists()  # planned, never written
    assert hooked.git("status", "--porcelain", "--", ".memzoi") == ""  # the plan is private (ignored)


def test_shim_whose_python_is_gone_says_so_and_status_calls_it_broken(repo: Repo, tmp_path: Path) -> None:
    """A moved virtualenv: the shim cannot run the guard; it never passes silently, and status tells."""
    init(Layout(repo.root))
    repo.commit("code", **{"src/app.py": "x\n"})
    gone = tmp_path / "moved-venv" / "bin" / "python"
    for hook in ("pre-commit", "post-merge", "post-checkout"):
        path = repo.root / ".git" / "hooks" / hook
        path.write_text(git_hooks.shim_text(hook, str(gone)))
        path.chmod(0o755)
    report = git_hooks.status(repo.root)
    assert [(h.state, h.detail) for h in report.hooks] == [
        (
            "broken",
            f"its pinned python {gone} is gone: the hook only runs while git-memzoi is on PATH; run `git memzoi "
            "hooks install` again",
        )
    ] * 3
    assert report.exit_code == 1
    repo.write("notes.md", "n\n")
    repo.git("add", "-A")
    proc = subprocess.run(
        ["git", "commit", "-qm", "n"],
        cwd=repo.root,
        env={**os.environ, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stderr == (
        f"git-memzoi: pre-commit hook skipped: no git-memzoi on PATH, and the pinned python ({gone}) cannot run "
        "git_memzoi; run 'git memzoi hooks install' again\n"
    )
    git_hooks.install(repo.root)
    assert git_hooks.status(repo.root).exit_code == 0


def test_install_into_a_committed_hooks_folder_warns(repo: Repo) -> None:
    """core.hooksPath=.githooks, committed: the shims would reach a commit with this machine's python path."""
    repo.write(".githooks/pre-commit", "#!/bin/sh\necho team-hook\n")
    (repo.root / ".githooks/pre-commit").chmod(0o755)
    repo.commit("team hooks")
    repo.git("config", "core.hooksPath", ".githooks")
    report = git_hooks.install(repo.root)
    assert report.actions[1] == (
        f"warning: git tracks files in {repo.root / '.githooks'} (.githooks/pre-commit): the shims written there pin "
        "this machine's python; do not commit them (`git memzoi hooks uninstall` restores the committed hooks)"
    )
    git_hooks.uninstall(repo.root)
    assert repo.git("status", "--porcelain") == "?? .gitattributes"  # the merge driver's marks: committed by the user


def test_install_again_says_unchanged_and_writes_nothing(repo: Repo) -> None:
    git_hooks.install(repo.root)
    hooks = repo.root / ".git" / "hooks"
    stamps = {h: (hooks / h).stat().st_mtime_ns for h in ("pre-commit", "post-merge", "post-checkout")}
    again = git_hooks.install(repo.root)
    assert again.actions == tuple(f"unchanged {hooks / h}" for h in ("pre-commit", "post-merge", "post-checkout"))
    assert {h: (hooks / h).stat().st_mtime_ns for h in stamps} == stamps
