"""``gitenv.git_dirs``: the git dir and the common git dir, read from the file system as ``git rev-parse
--git-dir`` and ``--git-common-dir`` name them (issue 15: private memory lives in the common one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memzoi.core import gitenv
from tests.support import repos


def rev_parse(root: Path, flag: str) -> Path:
    out = repos.Repo(root).git("rev-parse", "--path-format=absolute", flag)
    return Path(out)


def test_a_main_checkout_and_a_linked_worktree_match_git(tmp_path: Path) -> None:
    main = repos.new_repo(tmp_path / "main")
    main.commit("start", **{"README.md": "x\n"})
    linked = tmp_path / "agent"
    main.git("worktree", "add", "-q", "-b", "agent", str(linked))
    assert gitenv.git_dirs(main.root, {}) == (main.root / ".git", main.root / ".git")
    git_dir, common = gitenv.git_dirs(linked, {}) or (None, None)
    assert (git_dir, common) == (rev_parse(linked, "--git-dir"), rev_parse(linked, "--git-common-dir"))
    assert common == (main.root / ".git").resolve()


def test_git_environment_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    main = repos.new_repo(tmp_path / "main")
    elsewhere = tmp_path / "common"
    elsewhere.mkdir()
    monkeypatch.chdir(tmp_path)  # git reads its environment's relative paths from the current directory
    env = {"GIT_DIR": "main/.git", "GIT_COMMON_DIR": "common"}
    assert gitenv.git_dirs(main.root, env) == (main.root / ".git", elsewhere)


def test_outside_git_there_is_none(tmp_path: Path) -> None:
    assert gitenv.git_dirs(tmp_path, {}) is None
