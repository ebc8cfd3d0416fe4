"""The pre-commit framework manifest (issue 12): the hooks of ``.pre-commit-hooks.yaml``, run by the real
``pre-commit`` with every field as published (only ``language`` becomes ``system``, so no environment is built).

The scope warning is seen on a passing commit, ``memkeep-status`` prints the suspect report in the manual stage,
and in CI modes (``run --all-files``, ``--from-ref A --to-ref B``) the guard checks the memory files pre-commit
names: what reached the branch with ``--no-verify`` fails there.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from git_memzoi.integrations import git_hooks, merge_config
from git_memzoi.memzoi.layout import Layout, init
from tests.support.repos import PROJECT, Repo, entry_text

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pre_commit") is None,
    reason="pre-commit is not installed for this interpreter (the [test] extra brings it: pip install -e '.[test]')",
)

BIN = Path(sys.executable).parent
TIMEOUT = 120
SCOPE_WARNING = "memkeep: this change touches the scope of these entries; check their claims, then verify them after this commit (verify anchors at HEAD):"


def local_config() -> str:
    """``.pre-commit-config.yaml`` holding the manifest's hooks as ``repo: local`` ones, fields unchanged."""
    hooks = YAML(typ="safe", pure=True).load((PROJECT / ".pre-commit-hooks.yaml").read_text("utf-8"))
    lines = ["repos:", "  - repo: local", "    hooks:"]
    for hook in hooks:
        fields = {k: v for k, v in hook.items() if k != "minimum_pre_commit_version"}
        lines.append(f"      - {json.dumps({**fields, 'language': 'system'})}")  # JSON is YAML: fields as published
    return "\n".join(lines) + "\n"


def aws_key() -> str:
    """An AWS-access-key-shaped string built at test time (never a literal secret in the repository)."""
    rng = random.Random(4242)
    return "AKIA" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(16))


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    path = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {**os.environ, "PATH": path, "PRE_COMMIT_HOME": str(Path(os.environ["HOME"]) / "pre-commit-home")}
    return subprocess.run(list(args), cwd=root, env=env, capture_output=True, text=True, check=False, timeout=TIMEOUT)


def pre_commit(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run(root, str(BIN / "pre-commit"), *args)


def output(proc: subprocess.CompletedProcess[str]) -> str:
    return proc.stdout + proc.stderr


@pytest.fixture
def project(repo: Repo) -> Repo:
    """Both stores, the manifest's hooks configured and installed for all three stages, one clean commit."""
    init(Layout(repo.root))
    repo.write(".pre-commit-config.yaml", local_config())
    repo.write("src/app.py", "print('v1')\n")
    base = repo.commit("code")
    repo.write("agent-memory/entries/app-prints.md", entry_text("app-prints", anchor=base, scope=["src/**"]))
    assert run(repo.root, str(BIN / "git-memkeep"), "index").returncode == 0
    repo.commit("memory")
    for stage in ("pre-commit", "post-merge", "post-checkout"):
        assert pre_commit(repo.root, "install", "--hook-type", stage).returncode == 0
    return repo


def commit_unchecked(repo: Repo, path: str, text: str, *, force: bool = False) -> str:
    """Commit ``path`` with ``--no-verify``, as a user bypassing the hooks would; returns the new commit."""
    repo.write(path, text)
    repo.git("add", *(["-f"] if force else []), path)
    repo.git("commit", "-q", "--no-verify", "-m", f"add {path}")
    return repo.head()


def test_manifest_validates_and_its_config_copy_too(project: Repo) -> None:
    assert pre_commit(PROJECT, "validate-manifest", ".pre-commit-hooks.yaml").returncode == 0
    assert pre_commit(project.root, "validate-config").returncode == 0


def test_scope_warning_shows_on_a_passing_commit_without_verbose_flag(project: Repo) -> None:
    project.write("src/app.py", "print('v2')\n")
    project.git("add", "-A")
    proc = run(project.root, "git", "commit", "-m", "change code")
    assert proc.returncode == 0, output(proc)
    assert SCOPE_WARNING in output(proc) and "  app-prints  (agent-memory/entries/app-prints.md)" in output(proc)


def test_a_repository_without_a_memkeep_store_commits_with_every_published_hook(repo: Repo) -> None:
    """``.memzoi/`` alone (or no memory yet): memkeep-lint refused every commit with ``no memkeep store found`` (a
    fresh user's walk); it passes and says why, while a store that breaks a rule still fails it."""
    init(Layout(repo.root))
    repo.write(".pre-commit-config.yaml", local_config())
    repo.commit("init")
    assert pre_commit(repo.root, "install").returncode == 0
    repo.write("notes.md", "# Notes\n")
    repo.git("add", "-A")
    proc = run(repo.root, "git", "commit", "-m", "notes")
    assert proc.returncode == 0, output(proc)
    lint = pre_commit(repo.root, "run", "memkeep-lint", "--verbose")
    assert lint.returncode == 0 and "memkeep: no memkeep store in this repository; nothing to lint" in lint.stdout
    repo.write("agent-memory/entries/broken.md", "---\nid: [unclosed\n---\n")
    assert pre_commit(repo.root, "run", "memkeep-lint").returncode == 1  # a store, and a broken entry in it


def test_memkeep_status_manual_stage_prints_the_suspect_report(project: Repo) -> None:
    project.write("src/app.py", "print('v2')\n")
    project.git("commit", "-q", "--no-verify", "-am", "code moves")
    proc = pre_commit(project.root, "run", "memkeep-status", "--hook-stage", "manual")
    assert proc.returncode == 0, output(proc)  # a report; it never fails
    assert "1 suspect" in proc.stdout and "suspect    app-prints" in proc.stdout, output(proc)


def test_memkeep_status_manual_stage_clean_store_says_so(project: Repo) -> None:
    proc = pre_commit(project.root, "run", "memkeep-status", "--hook-stage", "manual")
    assert proc.returncode == 0 and "All claims hold as far as git can tell." in proc.stdout, output(proc)


def test_all_files_catches_a_secret_committed_with_no_verify(project: Repo) -> None:
    key = aws_key()
    text = entry_text("creds", anchor=project.head(), scope=["src/**"], claim=f"Deploy with {key}.")
    commit_unchecked(project, "agent-memory/entries/creds.md", text)
    proc = pre_commit(project.root, "run", "memzoi-guard", "--all-files")
    assert proc.returncode == 1, output(proc)
    assert "agent-memory/entries/creds.md:" in proc.stdout and "[secret: AWS Access Key]" in proc.stdout
    assert key not in output(proc)


def test_all_files_catches_a_force_added_private_file(project: Repo) -> None:
    commit_unchecked(project, ".memzoi/local/notes.md", "private\n", force=True)
    proc = pre_commit(project.root, "run", "memzoi-guard", "--all-files")
    assert proc.returncode == 1 and ".memzoi/local/notes.md  [private_local]" in proc.stdout, output(proc)


def test_all_files_catches_a_committed_symlink_record(project: Repo) -> None:
    (project.root / ".memzoi/records").mkdir(parents=True, exist_ok=True)
    (project.root / ".memzoi/records/linked.md").symlink_to("../../src/app.py")
    project.git("add", ".memzoi/records/linked.md")
    project.git("commit", "-q", "--no-verify", "-m", "link")
    proc = pre_commit(project.root, "run", "memzoi-guard", "--all-files")
    assert proc.returncode == 1 and ".memzoi/records/linked.md  [symlink]" in proc.stdout, output(proc)


def test_all_files_on_a_clean_repository_passes(project: Repo) -> None:
    proc = pre_commit(project.root, "run", "--all-files")
    assert proc.returncode == 0, output(proc)
    assert "memzoi guard" in proc.stdout and "Failed" not in proc.stdout


def test_ref_range_checks_only_the_files_changed_between_the_refs(project: Repo) -> None:
    before = project.head()
    key = aws_key()
    leak = commit_unchecked(project, ".memzoi/records/leak.md", f"Use {key}.\n")
    clean = commit_unchecked(project, "notes.md", "nothing secret\n")
    caught = pre_commit(project.root, "run", "memzoi-guard", "--from-ref", before, "--to-ref", leak)
    assert caught.returncode == 1 and ".memzoi/records/leak.md:1  [secret: AWS Access Key]" in caught.stdout
    assert key not in output(caught)
    later = pre_commit(project.root, "run", "memzoi-guard", "--from-ref", leak, "--to-ref", clean)
    assert later.returncode == 0, output(later)


def _hooks(text: str) -> dict[str, dict[str, object]]:
    config = YAML(typ="safe", pure=True).load(text)
    return {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}


@pytest.mark.parametrize("where", ["docs/integrations.md", ".pre-commit-config.yaml"])
def test_local_examples_keep_the_manifest_fields_of_the_guard(where: str) -> None:
    """The ``repo: local`` forms a user copies (the docs' example, this repository's own config) behave as the
    published hook: same entry, file filter, types, verbosity and stages."""
    text = (PROJECT / where).read_text("utf-8")
    if where.endswith(".md"):
        text = next(b for b in text.split("```yaml\n")[1:] if "repo: local" in b).split("```")[0]
    published = {h["id"]: h for h in YAML(typ="safe", pure=True).load((PROJECT / ".pre-commit-hooks.yaml").read_text())}
    local = _hooks(text)["memzoi-guard"]
    keys = ("entry", "files", "types", "types_or", "verbose", "stages", "always_run")
    assert {k: local.get(k) for k in keys} == {k: published["memzoi-guard"].get(k) for k in keys}


def test_status_counts_the_manifest_hooks_as_installed(project: Repo) -> None:
    """The framework runs memzoi from the config: status says so, exit 0, and install adds no second guard."""
    report = git_hooks.status(project.root)
    assert [(h.hook, h.state, h.owner, h.detail) for h in report.hooks] == [
        (hook, "installed", "pre-commit", "the pre-commit framework runs memzoi from .pre-commit-config.yaml")
        for hook in ("pre-commit", "post-merge", "post-checkout")
    ]
    assert (report.exit_code, report.recommendation) == (0, "")
    installed = git_hooks.install(project.root)
    hooks = project.root / ".git" / "hooks"
    assert installed.actions == tuple(
        f"left {hooks / hook} as it is: pre-commit runs memzoi from .pre-commit-config.yaml"
        for hook in ("pre-commit", "post-merge", "post-checkout")
    )
    assert not any(git_hooks.is_ours(p) for p in hooks.iterdir())
    project.write("src/app.py", "print('v2')\n")
    project.git("add", "-A")
    assert output(run(project.root, "git", "commit", "-m", "change")).count(SCOPE_WARNING) == 1


def test_after_pre_commit_uninstall_status_says_to_install_the_framework_again(project: Repo) -> None:
    """The config still runs memzoi; only the framework's scripts are gone: the advice to add the hooks to the
    config, which already holds them, was wrong (a fresh user's walk)."""
    stages = ("--hook-type", "pre-commit", "--hook-type", "post-merge", "--hook-type", "post-checkout")
    assert pre_commit(project.root, "uninstall", *stages).returncode == 0
    assert git_hooks.status(project.root).recommendation == git_hooks.FRAMEWORK_INSTALL_HINT
    assert pre_commit(project.root, "install", *stages).returncode == 0
    assert git_hooks.status(project.root).recommendation == ""


def test_shims_left_under_the_manifest_hooks_are_named(repo: Repo) -> None:
    """Shims first, then the framework with the manifest's hooks: the guard would run twice; status says which."""
    init(Layout(repo.root))
    repo.commit("code", **{"src/app.py": "x\n"})
    git_hooks.install(repo.root)
    repo.write(".pre-commit-config.yaml", local_config())
    for stage in ("pre-commit", "post-merge", "post-checkout"):
        assert pre_commit(repo.root, "install", "--hook-type", stage).returncode == 0
    report = git_hooks.status(repo.root)
    assert report.recommendation == git_hooks.FRAMEWORK_DONE_HINT
    assert report.hooks[0].detail == (
        "the pre-commit framework runs memzoi from .pre-commit-config.yaml; the shim it chains as "
        "pre-commit.legacy runs it again (uninstall the shims)"
    )
    git_hooks.uninstall(repo.root)
    assert git_hooks.status(repo.root).recommendation == merge_config.unregistered_hint(repo.root) != ""
    git_hooks.install(repo.root)  # the driver again; the framework runs memzoi, so no shim
    assert git_hooks.status(repo.root).recommendation == ""
    assert not any(git_hooks.is_ours(p) for p in (repo.root / ".git" / "hooks").iterdir())


def test_ci_mode_says_the_files_are_on_the_branch(project: Repo) -> None:
    commit_unchecked(project, ".memzoi/local/notes.md", "private\n", force=True)
    proc = pre_commit(project.root, "run", "memzoi-guard", "--all-files")
    assert "git-memzoi: memory files on the branch break the guard's rules:" in proc.stdout
    assert "Fix them in a new commit." in proc.stdout and "Fix or unstage these files" not in proc.stdout


def test_a_merge_leaving_index_md_behind_passes_and_names_it_without_changing_files(project: Repo) -> None:
    """Under the framework a hook that changes a file "Failed" (files were modified by this hook), whatever its
    exit code: the post-merge stage names the out-of-step INDEX.md instead of rewriting it (a fresh user's walk
    saw "Failed" on a merge that succeeded). The plain git hook still rewrites it (test_team_merge.py)."""
    base = project.head()
    assert run(project.root, "git", "checkout", "-q", "-b", "side").returncode == 0
    entry = entry_text("side-note", anchor=base, scope=["src/**"])
    commit_unchecked(project, "agent-memory/entries/side-note.md", entry)  # INDEX.md not regenerated
    assert run(project.root, "git", "checkout", "-q", "main").returncode == 0
    commit_unchecked(project, "docs/x.md", "x\n")
    merged = run(project.root, "git", "merge", "-q", "--no-edit", "side")
    assert merged.returncode == 0, output(merged)
    assert "Failed" not in output(merged) and "files were modified" not in output(merged)
    said = "memkeep: agent-memory/INDEX.md does not match the merged entries; run `git memkeep index` and commit it"
    assert said in output(merged)
    assert project.git("status", "--porcelain") == ""
