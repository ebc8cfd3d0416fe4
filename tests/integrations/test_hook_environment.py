"""The hooks under the environment git hands them (issue 12, the hook environment): ``--git-dir/--work-tree``,
``GIT_DIR`` + ``GIT_INDEX_FILE`` (``commit -a``, ``--amend``, rebase), linked worktrees, ``core.hooksPath``, bare
repositories, and checkouts between identical trees. Real ``git``, the real installed shims."""

from __future__ import annotations

import subprocess
from pathlib import Path

from git_memzoi.core import gitenv, gitview_pygit2
from git_memzoi.integrations import git_hooks
from git_memzoi.memzoi.layout import Layout, init
from tests.integrations.test_git_hooks import git, out
from tests.support.repos import Repo, entry_text

BOGUS = "agent-memory/entries/bogus.md"
REFUSED = "[status_invalid] status: status 'bogus' is not one of"


def stored(repo: Repo) -> Repo:
    """``repo`` with .memzoi/, an entry scoped to src/**, two commits, and the shims installed."""
    init(Layout(repo.root))
    repo.write("src/app.py", "print('v1')\n")
    repo.write("agent-memory/entries/app-prints.md", entry_text("app-prints", anchor=None, scope=["src/**"]))
    base = repo.commit("base")
    repo.write("agent-memory/entries/app-prints.md", entry_text("app-prints", anchor=base, scope=["src/**"]))
    repo.commit("anchor")
    git_hooks.install(repo.root)
    return repo


def stage_bogus(root: Path) -> None:
    (root / BOGUS).write_text(entry_text("bogus", anchor=None, status="bogus"), encoding="utf-8")


def test_git_dir_and_work_tree_relative_refuse_a_bogus_entry(repo: Repo) -> None:
    stored(repo)
    before = repo.head()
    stage_bogus(repo.root)
    parent, name = repo.root.parent, repo.root.name
    base = [f"--git-dir={name}/.git", f"--work-tree={name}"]
    git(parent, *base, "add", "-A")
    proc = git(parent, *base, "commit", "-m", "bogus")
    assert proc.returncode == 1 and repo.head() == before
    assert f"{BOGUS}  {REFUSED}" in out(proc), out(proc)


def test_git_dir_and_work_tree_dot_as_git_hands_them(repo: Repo) -> None:
    stored(repo)
    stage_bogus(repo.root)
    git(repo.root, "add", "-A")
    proc = git(repo.root, "--git-dir=.git", "--work-tree=.", "commit", "-m", "bogus")
    assert proc.returncode == 1 and f"{BOGUS}  {REFUSED}" in out(proc), out(proc)


def test_scope_warning_under_git_dir_and_work_tree(repo: Repo) -> None:
    stored(repo)
    repo.write("src/app.py", "print('v2')\n")
    base = [f"--git-dir={repo.root.name}/.git", f"--work-tree={repo.root.name}"]
    git(repo.root.parent, *base, "add", "-A")
    proc = git(repo.root.parent, *base, "commit", "-m", "change app")
    assert proc.returncode == 0, out(proc)
    assert "then verify them after this commit" in out(
        proc
    ) and "  app-prints  (agent-memory/entries/app-prints.md)" in out(proc)


def test_commit_all_and_amend_use_the_temporary_index(repo: Repo) -> None:
    stored(repo)
    (repo.root / BOGUS).write_text(entry_text("bogus", anchor=repo.head(), scope=["src/**"]), encoding="utf-8")
    repo.commit("valid entry")
    before = repo.head()
    stage_bogus(repo.root)  # changed in the working tree only: commit -a stages it in a temporary index
    proc = git(repo.root, "commit", "-a", "-m", "bogus")
    assert proc.returncode == 1 and repo.head() == before and f"{BOGUS}  {REFUSED}" in out(proc), out(proc)
    proc = git(repo.root, "commit", "-a", "--amend", "-m", "amended")
    assert proc.returncode == 1 and repo.head() == before and f"{BOGUS}  {REFUSED}" in out(proc), out(proc)


def test_rebase_runs_the_post_checkout_report_without_failing(repo: Repo) -> None:
    stored(repo)
    git(repo.root, "checkout", "-q", "-b", "topic")
    repo.write("notes.txt", "topic\n")
    git(repo.root, "add", "-A")
    assert git(repo.root, "commit", "-qm", "topic").returncode == 0
    git(repo.root, "checkout", "-q", "main")
    repo.write("src/app.py", "print('main')\n")
    assert git(repo.root, "commit", "-qam", "main moves").returncode == 0
    proc = git(repo.root, "rebase", "main", "topic")
    assert proc.returncode == 0 and "Traceback" not in out(proc) and "no memory store" not in out(proc), out(proc)


def test_linked_worktree_refuses_and_reports(repo: Repo, tmp_path: Path) -> None:
    stored(repo)
    linked = tmp_path / "linked"
    git(repo.root, "worktree", "add", "-q", str(linked), "-b", "side")
    stage_bogus(linked)
    git(linked, "add", "-A")
    proc = git(linked, "commit", "-m", "bogus")
    assert proc.returncode == 1 and f"{BOGUS}  {REFUSED}" in out(proc), out(proc)
    git(linked, "reset", "-q")
    (linked / BOGUS).unlink()
    (linked / "src/app.py").write_text("print('side')\n", encoding="utf-8")
    proc = git(linked, "commit", "-qam", "side moves")
    assert proc.returncode == 0 and "  app-prints  (agent-memory/entries/app-prints.md)" in out(proc), out(proc)


def test_husky_style_hooks_path_under_git_dir(repo: Repo) -> None:
    init(Layout(repo.root))
    repo.write("agent-memory/entries/app-prints.md", entry_text("app-prints", anchor=None, scope=["src/**"]))
    repo.commit("base")
    repo.git("config", "core.hooksPath", ".husky")
    git_hooks.install(repo.root)
    assert (repo.root / ".husky" / "pre-commit").is_file()
    stage_bogus(repo.root)
    base = [f"--git-dir={repo.root.name}/.git", f"--work-tree={repo.root.name}"]
    git(repo.root.parent, *base, "add", "-A")
    proc = git(repo.root.parent, *base, "commit", "-m", "bogus")
    assert proc.returncode == 1 and f"{BOGUS}  {REFUSED}" in out(proc), out(proc)


def test_no_store_says_so_in_one_line(repo: Repo) -> None:
    repo.commit("a", **{"a.txt": "a\n"})
    git_hooks.install(repo.root)
    proc = git(repo.root, "commit", "--allow-empty", "-m", "x")
    line = f"git-memzoi: pre-commit hook: no memory store in {repo.root.resolve()} (no memkeep store, no .memzoi/); "
    assert proc.returncode == 0 and proc.stderr == line + "nothing to check\n", out(proc)


def test_bare_repository_hooks_say_one_line(tmp_path: Path, repo: Repo) -> None:
    stored(repo)
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.root), str(bare)], check=True)
    for hook in ("pre-commit", "post-checkout", "post-merge"):
        (bare / "hooks" / hook).write_text(git_hooks.shim_text(hook), encoding="utf-8")
        (bare / "hooks" / hook).chmod(0o755)
    head = git(bare, "rev-parse", "HEAD").stdout.strip()
    for hook, args in (("pre-commit", []), ("post-checkout", ["--", head, head, "1"]), ("post-merge", ["--", "0"])):
        proc = git(bare, "hook", "run", hook, *args)
        assert proc.returncode == 0 and "Traceback" not in out(proc), out(proc)
        assert proc.stderr == f"git-memzoi: {hook} hook: nothing to check: {bare}/: {gitview_pygit2.BARE}\n"


def test_worktree_of_a_bare_repository_is_checked(tmp_path: Path, repo: Repo) -> None:
    stored(repo)
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.root), str(bare)], check=True)
    git_hooks.install(repo.root)
    for hook in ("pre-commit", "post-checkout", "post-merge"):
        (bare / "hooks" / hook).write_text(git_hooks.shim_text(hook), encoding="utf-8")
        (bare / "hooks" / hook).chmod(0o755)
    linked = tmp_path / "wt"
    assert git(bare, "worktree", "add", "-q", str(linked), "main").returncode == 0
    stage_bogus(linked)
    git(linked, "add", "-A")
    proc = git(linked, "commit", "-m", "bogus")
    assert proc.returncode == 1 and f"{BOGUS}  {REFUSED}" in out(proc), out(proc)


def test_checkout_and_merge_between_identical_trees_print_nothing(repo: Repo) -> None:
    stored(repo)
    git(repo.root, "commit", "-q", "--allow-empty", "-m", "same tree")
    git_hooks.refresh_index(repo.root)  # built once, so no hook below rebuilds it
    for args in (("checkout", "-q", "HEAD~1"), ("checkout", "-q", "main"), ("checkout", "-q", "-b", "side", "HEAD~1")):
        proc = git(repo.root, *args)
        assert proc.returncode == 0 and out(proc) == "", (args, out(proc))
    proc = git(repo.root, "merge", "-q", "--no-edit", "main")
    assert proc.returncode == 0 and out(proc) == "", out(proc)


def test_work_tree_rules_follow_git(tmp_path: Path) -> None:
    cwd, git_dir = tmp_path / "here", tmp_path / "repo" / ".git"
    rules = {"git_dir": git_dir, "core_worktree": None, "core_bare": False, "cwd": cwd}
    start = tmp_path / "start"
    assert gitenv.work_tree(start, {"GIT_DIR": ".git", "GIT_WORK_TREE": "."}, **rules) == cwd  # type: ignore[arg-type]
    assert gitenv.work_tree(start, {"GIT_DIR": ".git"}, **rules) == start  # type: ignore[arg-type]
    assert gitenv.work_tree(start, {"GIT_DIR": "x"}, **{**rules, "core_bare": True}) is None  # type: ignore[arg-type]
    top = gitenv.work_tree(start, {"GIT_DIR": "x"}, **{**rules, "core_worktree": "../../top"})  # type: ignore[arg-type]
    assert top == tmp_path / "top"
    assert gitenv.env_git_dir(cwd, {"GIT_DIR": "../repo/.git"}) == git_dir
    assert gitenv.env_git_dir(cwd, {}) is None


def test_core_worktree_without_environment(tmp_path: Path) -> None:
    from git_memzoi.core.gitroot import worktree_root

    (tmp_path / "top").mkdir()
    subprocess.run(["git", "init", "-q", str(tmp_path / "meta")], check=True)
    subprocess.run(
        ["git", "config", "-f", str(tmp_path / "meta/.git/config"), "core.worktree", "../../top"], check=True
    )
    assert worktree_root(tmp_path / "meta") == (tmp_path / "top").resolve()
