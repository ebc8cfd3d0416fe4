"""The pre-commit hook's fast paths (evals/bench/hooks.py): libgit2's index-to-HEAD diff for the staged set (checked
against git's own `diff-index --cached`), the memkeep parse cache for the store, and detect-secrets only when a
memory file is staged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from git_memzoi.core.gitview_pygit2 import Pygit2RepoView
from git_memzoi.memzoi.layout import Layout, init
from tests.support.repos import Repo, entry_text, write_record

PROBE = """
import json, sys
from pathlib import Path
from git_memzoi.integrations import guard
result = guard.pre_commit(Path(sys.argv[1]))
WATCHED = ("pygit2", "detect_secrets", "ruamel.yaml", "git_memzoi.core.secret_scan", "git_memzoi.core.frontmatter")
print(json.dumps({"exit": result.exit_code, "modules": sorted(m for m in WATCHED if m in sys.modules)}))
"""


def probe(root: Path, env: dict[str, str] | None = None) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(root)], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout)


@pytest.fixture
def store_repo(repo: Repo) -> Repo:
    init(Layout(repo.root))
    repo.write("src/app.py", "print('v1')\n")
    repo.write("agent-memory/entries/app-prints.md", entry_text("app-prints", anchor=None, scope=["src/**"]))
    repo.commit("base")
    return repo


def test_source_only_commit_loads_neither_yaml_nor_the_secret_scanner(store_repo: Repo) -> None:
    store_repo.write("src/app.py", "print('v2')\n")
    store_repo.git("add", "-A")
    probe(store_repo.root)  # the first run fills memkeep's parse cache
    assert probe(store_repo.root) == {"exit": 0, "modules": ["pygit2"]}


def test_source_only_commit_reads_the_records_index_without_the_record_parser(store_repo: Repo) -> None:
    # 5,000 records cost the hook one stat walk, not a parse: the parser's modules (about 15 ms of imports,
    # index/rows.py) load only when a record file changed since the last refresh
    write_record(store_repo, "app-note", "App prints", "The app prints its version.", applies_to=["src/app.py"])
    store_repo.commit("a record")
    store_repo.write("src/app.py", "print('v3')\n")
    store_repo.git("add", "-A")
    assert "git_memzoi.core.frontmatter" in probe(store_repo.root)["modules"]  # the first run builds the index
    assert probe(store_repo.root) == {"exit": 0, "modules": ["pygit2"]}


def test_staged_memory_file_is_scanned(store_repo: Repo) -> None:
    store_repo.write(".memzoi/records/note.md", "---\nid: note\n---\nno fields\n")
    store_repo.git("add", "-A")
    result = probe(store_repo.root)
    assert result["exit"] == 1 and "detect_secrets" in result["modules"]


def _git_staged(root: Path) -> list[tuple[str, str]]:
    """git's answer: additions and modifications of the index against HEAD (the empty tree with no commits)."""
    env = dict(os.environ)
    has_head = (
        subprocess.run(
            ["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=root, env=env, capture_output=True, check=False
        ).returncode
        == 0
    )
    base = "HEAD" if has_head else "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    raw = subprocess.run(
        ["git", "diff-index", "--cached", "-z", "--no-renames", "--diff-filter=d", base],
        cwd=root,
        env=env,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    return sorted(
        (path.decode(), meta.split()[3].decode()) for meta, path in zip(raw[0::2], raw[1::2], strict=False) if meta
    )


def _both(root: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    return sorted(Pygit2RepoView(root).staged_blobs()), _git_staged(root)


def test_staged_set_matches_pygit2(repo: Repo) -> None:
    repo.write("a.txt", "a\n")
    repo.write("caf\u00e9/n\u00f6te.md", "x\n")
    repo.git("add", "-A")
    fast, slow = _both(repo.root)  # no commits yet: everything staged is new
    assert fast == slow and len(fast) == 2
    repo.commit("first")
    assert _both(repo.root) == ([], [])
    repo.write("a.txt", "a2\n")
    repo.write("b.txt", "b\n")
    os.chmod(repo.root / "b.txt", 0o755)
    repo.git("add", "-A")
    repo.git("rm", "-q", "--cached", "caf\u00e9/n\u00f6te.md")  # a deletion is not listed
    fast, slow = _both(repo.root)
    assert fast == slow and [p for p, _ in fast] == ["a.txt", "b.txt"]
    assert Pygit2RepoView(repo.root).blob_bytes(dict(fast)["a.txt"]) == b"a2\n"


def test_staged_set_honours_git_index_file(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("a.txt", "a\n")
    repo.commit("first")
    repo.write("a.txt", "changed\n")
    temp_index = repo.root / ".git" / "temp-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(temp_index)}
    subprocess.run(["git", "read-tree", "HEAD"], cwd=repo.root, env=env, check=True)
    subprocess.run(["git", "add", "a.txt"], cwd=repo.root, env=env, check=True)
    monkeypatch.setenv("GIT_INDEX_FILE", str(temp_index))
    fast, slow = _both(repo.root)
    assert fast == slow and [p for p, _ in fast] == ["a.txt"]
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert _both(repo.root) == ([], [])  # the repository's own index has nothing staged
