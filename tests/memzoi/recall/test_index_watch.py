"""The index freshness watcher (memzoi/recall/index/watch.py, core/fswatch.py) on real files in tmp_path.

With a watcher, ``refresh`` skips its stat walk while nothing changed; every kind of change must still show in
the next search: external edits once the watcher delivered their event (waited for with a bounded poll, never
a sleep as a timing assertion), our own writes at once. Without a watcher, or when it cannot start, refresh
walks exactly as before.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest

from git_memzoi.core import fswatch
from git_memzoi.memzoi.proposals import lifecycle
from git_memzoi.memzoi.recall import search
from git_memzoi.memzoi.recall.index import db as index_db
from git_memzoi.memzoi.recall.index import watch as index_watch
from git_memzoi.memzoi.runtime import local as runtime
from git_memzoi.memzoi.workspace import Workspace
from tests.memzoi.recall.test_memzoi_recall import ctx_of, record
from tests.support.repos import Repo

pytest.importorskip("watchdog")
if not sys.platform.startswith("linux"):
    pytest.skip("the watcher is Linux-only (inotify)", allow_module_level=True)


def until(condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    """Poll ``condition`` until it holds (True) or ``timeout_s`` passed (False)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def titles(ctx: Workspace, query: str, destination: str = "repo") -> list[str]:
    return [r["record"]["title"] for r in search.search(ctx, query, destination=destination, log=False).results]


def walks_skipped(ctx: Workspace) -> bool:
    """Refresh, then report whether the next refresh would skip its walk (the folders' racy window passed)."""
    index_db.refresh(ctx.layout)
    ticket = index_watch.begin(ctx.layout)
    return ticket is not None and ticket.fresh


@pytest.fixture
def watched(repo: Repo) -> Iterator[Workspace]:
    ctx = ctx_of(repo)
    record(repo, "alpha", title="Alpha cache rule", body="The cache is keyed by commit.")
    record(repo, "beta", title="Beta token rule", body="Tokens expire after an hour.")
    assert index_watch.watch(ctx.layout)
    assert until(lambda: walks_skipped(ctx)), "the index never settled"
    yield ctx
    index_watch.unwatch(ctx.layout)


def generation(ctx: Workspace) -> int:
    return index_watch._STATES[str(ctx.layout.root)].watch.generation


def after_event(ctx: Workspace, change: Callable[[], object]) -> None:
    """Make ``change`` and wait (bounded) until the watcher counted an event for it."""
    before = generation(ctx)
    change()
    assert until(lambda: generation(ctx) > before), "the watcher delivered no event"


def test_unchanged_store_is_not_walked(watched: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_db._Scan, "of", lambda layout: pytest.fail("walked an unchanged store"))
    assert titles(watched, "cache") == ["Alpha cache rule"]
    assert index_db.refresh(watched.layout).scanned == 2


def test_external_in_place_edit(watched: Workspace) -> None:
    path = watched.layout.records / "alpha.md"
    inode = path.stat().st_ino
    data = path.read_bytes().replace(b"Alpha cache rule", b"Alpha store rule")

    def edit() -> None:
        with open(path, "r+b") as handle:  # same file, same folder entry: only the watcher can tell
            handle.write(data)
            handle.truncate()

    after_event(watched, edit)
    assert path.stat().st_ino == inode
    assert titles(watched, "store") == ["Alpha store rule"]


def test_external_new_file_delete_and_rename(watched: Workspace, repo: Repo) -> None:
    after_event(watched, lambda: record(repo, "gamma", title="Gamma cache note", body="Another cache fact."))
    assert "Gamma cache note" in titles(watched, "cache")
    after_event(watched, lambda: (watched.layout.records / "gamma.md").unlink())
    assert "Gamma cache note" not in titles(watched, "cache")
    record(repo, "delta", title="Delta cache note", body="Written aside, renamed in.")
    staged = watched.layout.records / "delta.md.tmp"
    os.rename(watched.layout.records / "delta.md", staged)
    assert until(lambda: walks_skipped(watched))
    after_event(watched, lambda: os.rename(staged, watched.layout.records / "delta.md"))
    assert "Delta cache note" in titles(watched, "cache")
    after_event(watched, lambda: os.rename(watched.layout.records / "alpha.md", watched.layout.records / "alpha.bak"))
    assert "Alpha cache rule" not in titles(watched, "cache")


def test_subfolder_created_later_is_watched(watched: Workspace, repo: Repo) -> None:
    after_event(watched, lambda: record(repo, "area/epsilon", title="Epsilon cache", body="In a new folder."))
    assert "Epsilon cache" in titles(watched, "cache")
    assert until(lambda: walks_skipped(watched))
    path = watched.layout.records / "area" / "epsilon.md"
    data = path.read_bytes().replace(b"Epsilon cache", b"Epsilon store")

    def edit() -> None:
        with open(path, "r+b") as handle:
            handle.write(data)
            handle.truncate()

    after_event(watched, edit)
    assert titles(watched, "store") == ["Epsilon store"]


def test_own_writes_are_seen_at_once(watched: Workspace) -> None:
    runtime.add_local(watched, memory_type="fact", title="Local cache hint", body="Only on this machine.")
    assert titles(watched, "hint", destination="local") == ["Local cache hint"]  # runtime/local appeared
    assert until(lambda: walks_skipped(watched))
    runtime.add_local(watched, memory_type="fact", title="Second cache hint", body="Also runtime.")
    assert sorted(titles(watched, "hint", destination="local")) == ["Local cache hint", "Second cache hint"]
    assert until(lambda: walks_skipped(watched))
    lifecycle.supersede(
        watched,
        "beta",
        title="Beta token rule v2",
        body="Tokens expire after a day.",
        actor="tester",
        sensitivity="repo-safe",
    )
    assert titles(watched, "token") == ["Beta token rule v2"]


def test_index_replaced_by_another_process_is_walked(watched: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    index_db.rebuild(watched.layout)  # a new file: the walk the next refresh does is the proof
    walked: list[int] = []
    scan = index_db._Scan.of
    monkeypatch.setattr(index_db._Scan, "of", lambda layout: walked.append(1) or scan(layout))
    index_db.refresh(watched.layout)
    assert walked


def test_stopped_watcher_walks_as_before(watched: Workspace) -> None:
    index_watch.unwatch(watched.layout)
    assert index_watch.begin(watched.layout) is None
    path = watched.layout.records / "alpha.md"
    path.write_bytes(path.read_bytes().replace(b"Alpha cache rule", b"Alpha index rule"))
    assert titles(watched, "index") == ["Alpha index rule"]  # no wait: the walk sees it


def test_dead_watcher_falls_back_to_walking(watched: Workspace) -> None:
    index_watch._STATES[str(watched.layout.root)].watch.stop()  # as if its thread died
    path = watched.layout.records / "alpha.md"
    with open(path, "r+b") as handle:
        data = handle.read().replace(b"Alpha cache rule", b"Alpha dying rule")
        handle.seek(0)
        handle.write(data)
        handle.truncate()
    assert titles(watched, "dying") == ["Alpha dying rule"]


def test_watcher_that_cannot_start_falls_back_silently(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    from watchdog.observers import inotify

    ctx = ctx_of(repo)
    record(repo, "alpha", title="Alpha cache rule", body="The cache is keyed by commit.")

    def refuse(self: object) -> None:
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(inotify.InotifyObserver, "on_thread_start", refuse)
    assert index_watch.watch(ctx.layout) is False
    assert index_watch.begin(ctx.layout) is None
    assert titles(ctx, "cache") == ["Alpha cache rule"]
    assert fswatch.start([str(repo.root / "missing")]) is None


def test_a_one_shot_cli_search_never_imports_watchdog(repo: Repo) -> None:
    ctx_of(repo)
    record(repo, "alpha", title="Alpha cache rule", body="The cache is keyed by commit.")
    code = (
        "import sys; from git_memzoi.cli.memzoi import cli\n"
        "try:\n    cli(['-C', sys.argv[1], 'search', 'cache', '--json'], prog_name='git-memzoi')\n"
        "except SystemExit:\n    pass\nsys.stderr.write(str('watchdog' in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(repo.root)], capture_output=True, text=True, check=True)
    assert "Alpha cache rule" in proc.stdout
    assert proc.stderr.endswith("False")
