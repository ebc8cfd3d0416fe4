"""The plugins' token shapes and the rule pack's data are kept in a derived file
(``.git/memzoi/cache/secret-shapes.json``), so a write or a commit whose text has no token shape never imports
detect-secrets (~150 ms) nor parses the TOML pack, while one that does gets the same refusal as ever. The key is
built at test time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from git_memzoi.core import secret_rules
from git_memzoi.core import secret_scan as scan
from tests.cli.test_memzoi_screening_cache import PROBE
from tests.cli.test_memzoi_write_gate_secrets import _key
from tests.support.repos import NOW_TEXT as NOW
from tests.support.repos import Repo, run

SHAPES = ".git/memzoi/cache/secret-shapes.json"


def propose(repo: Repo, body: str) -> tuple[int, dict[str, Any], bool]:
    """``git memzoi propose --apply`` in a new process: exit code, JSON, whether it imported detect-secrets."""
    args = ["propose", "--apply", "--sensitivity", "repo-safe", "--type", "fact", "--title", body[:20], "--body", body]
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "-C", str(repo.root), *args, "--json"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "MEMZOI_NOW": NOW},
    )
    return proc.returncode, json.loads(proc.stdout), proc.stderr.splitlines()[-1] == "True"


def test_a_clean_write_after_the_first_never_imports_detect_secrets(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    code, _, loaded = propose(repo, "The first write takes the shapes from the plugins.")
    assert (code, loaded) == (0, True)
    shapes = json.loads((repo.root / SHAPES).read_text("utf-8"))
    scan.remember_shapes_in(None)  # this process: the shapes straight from the plugins
    assert shapes["shapes"] == [[s.pattern, s.flags] for s in scan._token_shapes()]
    assert shapes["pack"] == secret_rules.pack_data()
    code, _, loaded = propose(repo, "A later clean write needs no detect-secrets at all.")
    assert (code, loaded) == (0, False)
    key = _key()
    code, data, loaded = propose(repo, f"aws_access_key_id = {key}")
    assert (code, data["error"]["code"], loaded) == (2, "prohibited_content_detected", True)
    assert data["error"]["message"].startswith("the proposal: body line 1 holds a credential (AWS Access Key")


def test_a_damaged_shapes_file_is_taken_from_the_plugins_again(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    path = repo.root / SHAPES
    path.parent.mkdir(parents=True)
    path.write_text('{"identity": "x", "shapes": [["(unclosed", 0]]}', "utf-8")
    code, data, loaded = propose(repo, f"token {_key()}")
    assert (code, data["error"]["code"], loaded) == (2, "prohibited_content_detected", True)
    assert json.loads(path.read_text("utf-8"))["identity"] == scan.identity()


def test_the_git_dir_is_found_without_pygit2_for_a_linked_worktree_too(repo: Repo, tmp_path: Path) -> None:
    from git_memzoi.core.gitroot import git_dir
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    repo.commit_paths("base", {"a.txt": "a\n"})
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", str(linked))
    assert git_dir(repo.root) == Pygit2RepoView(repo.root).git_dir == (repo.root / ".git").resolve()
    assert git_dir(linked) == Pygit2RepoView(linked).git_dir == (repo.root / ".git/worktrees/linked").resolve()
