"""A cold load of a large store (memkeep/store.py, issue 17 "Cold status"): a forked child parses most entry
files while this process opens the repository; the entries, the unreadable files and the parse cache written
are exactly the serial load's, and no child outlives the load, whatever happens beside it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from git_memzoi.core.parse_cache import ParseCache
from git_memzoi.memkeep import store as store_mod
from tests.support.repos import Repo, entry_text, memkeep

LATER = 10**9 * 3600  # an hour: the files are old enough for the cache to trust their signatures


@pytest.fixture
def store(tmp_path: Path) -> store_mod.Store:
    root = tmp_path / "repo"
    entries = root / "agent-memory" / "entries"
    (entries / "nested").mkdir(parents=True)
    for n in range(24):
        folder = entries / "nested" if n % 5 == 0 else entries
        name = f"claim-{n:02d}"
        extra = "when: 2026-01-02T03:04:05Z" if n % 3 else ""
        (folder / f"{name}.md").write_text(entry_text(name, anchor="abc1234", scope=["src/**"], extra=extra), "utf-8")
    (entries / "broken.md").write_text("---\nid: [unclosed\n---\nbody\n", "utf-8")
    (entries / "plain.md").write_text("no frontmatter here\n", "utf-8")
    (entries / "binary.md").write_text(entry_text("binary", anchor="abc1234", extra="blob: !!binary aGk="), "utf-8")
    (entries / "outside.md").symlink_to(root / "nowhere.md")
    return store_mod.Store(root.resolve(), (root / "agent-memory").resolve(), store_mod.StoreConfig())


def _load(store: store_mod.Store, cache: Path, *, parallel: bool, monkeypatch: pytest.MonkeyPatch) -> tuple:
    forks: list[int] = []
    with monkeypatch.context() as patch:
        patch.setattr(store_mod, "PARALLEL_ENTRIES", 2 if parallel else 10**9)
        patch.setattr(os, "cpu_count", lambda: 2)
        fork = os.fork
        patch.setattr(os, "fork", lambda: forks.append(1) or fork())
        loaded = store_mod.load(store, ParseCache(cache, now_ns=_later()))
    assert forks == ([1] if parallel else [])
    return loaded.entries, loaded.unreadable, cache.read_bytes()


def _later() -> int:
    import time

    return time.time_ns() + LATER


def test_a_forked_load_reads_and_caches_what_a_serial_load_does(
    store: store_mod.Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial = _load(store, tmp_path / "serial.marshal", parallel=False, monkeypatch=monkeypatch)
    forked = _load(store, tmp_path / "forked.marshal", parallel=True, monkeypatch=monkeypatch)
    assert forked == serial
    entries, unreadable, _ = serial
    assert len(entries) == 25 and [e.path for e in entries][:2] == [
        "agent-memory/entries/binary.md",
        "agent-memory/entries/claim-01.md",
    ]
    assert [(u.path, u.code) for u in unreadable] == [
        ("agent-memory/entries/broken.md", "bad_frontmatter"),
        ("agent-memory/entries/outside.md", "symlink"),
        ("agent-memory/entries/plain.md", "no_frontmatter"),
    ]


def test_a_renamed_file_is_served_by_its_content_hash_in_the_child_too(
    store: store_mod.Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache.marshal"
    _load(store, cache, parallel=False, monkeypatch=monkeypatch)
    entries = store.entries_dir
    (entries / "claim-01.md").rename(entries / "claim-99.md")  # a new name: found by the hash of its bytes
    serial = _load(store, tmp_path / "copy.marshal", parallel=False, monkeypatch=monkeypatch)
    cache.with_name("again.marshal").write_bytes(cache.read_bytes())
    forked = _load(store, cache.with_name("again.marshal"), parallel=True, monkeypatch=monkeypatch)
    assert forked[:2] == serial[:2]
    assert [e.path for e in forked[0]][-1] == "agent-memory/entries/nested/claim-20.md"


@pytest.mark.parametrize("files", ["all", "none"])
def test_alongside_runs_once_whether_or_not_anything_is_parsed(
    store: store_mod.Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: str
) -> None:
    if files == "none":
        for path in sorted(store.entries_dir.rglob("*.md")):
            path.unlink()
    calls: list[int] = []
    monkeypatch.setattr(store_mod, "PARALLEL_ENTRIES", 2)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    loaded = store_mod.load(store, ParseCache(None), alongside=lambda: calls.append(os.getpid()))
    assert calls == [os.getpid()]
    assert len(loaded.entries) == (25 if files == "all" else 0)


def test_a_failure_beside_the_child_leaves_no_child_behind(
    store: store_mod.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_mod, "PARALLEL_ENTRIES", 2)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)

    def fail() -> None:
        raise RuntimeError("the repository cannot be opened")

    with pytest.raises(RuntimeError, match="cannot be opened"):
        store_mod.load(store, ParseCache(None), alongside=fail)
    with pytest.raises(ChildProcessError):  # reaped: nothing is left to wait for
        os.waitpid(-1, os.WNOHANG)


def test_status_forked_and_serial_answer_alike(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    head = repo.commit("code", **{"src/app.py": "x = 1\n"})
    files = {
        f"agent-memory/entries/claim-{n:02d}.md": entry_text(
            f"claim-{n:02d}", anchor=head, scope=["src/**"] if n % 2 else ["docs/**"]
        )
        for n in range(12)
    }
    repo.commit("entries", **files)
    repo.commit("change", **{"src/app.py": "x = 2\n"})
    answers = []
    for threshold in (10**9, 2):
        monkeypatch.setattr(store_mod, "PARALLEL_ENTRIES", threshold)
        monkeypatch.setattr(os, "cpu_count", lambda: 2)
        for path in (repo.root / ".git" / "memzoi" / "cache").glob("*"):
            path.unlink()
        done = memkeep("-C", str(repo.root), "status", "--json")
        assert done.exit_code == 1, done.output
        answers.append(json.loads(done.output))
    assert answers[0] == answers[1]
    assert (answers[0]["summary"]["entries"], answers[0]["summary"]["suspect"]) == (12, 6)


def test_a_load_with_few_files_to_parse_never_imports_the_forked_reader(store: store_mod.Store) -> None:
    """The hooks' usual load (a warm cache, a few changed files) pays neither a fork nor pickle's import."""
    import subprocess
    import sys

    script = (
        "import sys; from pathlib import Path; from git_memzoi.memkeep import store as s; "
        f"root = Path({str(store.root)!r}); loaded = s.load(s.locate(root, root)); "
        "print(len(loaded.entries), 'git_memzoi.core.parallel' in sys.modules, 'pickle' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["25", "False", "False"]
