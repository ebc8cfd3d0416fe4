"""The from-scratch rebuild (issue 17, "Bulk paths"): the files read on two cores give exactly the rows a serial
read gives, in walk order, and a child that fails leaves the rebuild to this process (never a crash, never a
missing row)."""

from __future__ import annotations

import os
import sqlite3

import pytest

from git_memzoi.memzoi.recall.index import db as index_db
from git_memzoi.memzoi.recall.index import parallel
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import Repo, ok_json, write_record


def test_read_all_keeps_the_order_and_the_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "MIN_FILES", 2)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    items = list(range(101))
    assert list(parallel.read_all(items, lambda n: (n, n * n))) == [(n, n * n) for n in items]


def test_a_failing_child_leaves_its_half_to_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "MIN_FILES", 2)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    parent = os.getpid()

    def read(n: int) -> int:
        if os.getpid() != parent:
            raise RuntimeError("the child breaks")  # it exits non-zero; the parent reads the half again
        return n + 1

    assert list(parallel.read_all(list(range(10)), read)) == list(range(1, 11))


def _rows(path: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        records = conn.execute("SELECT * FROM records ORDER BY rowid").fetchall()
        fts = conn.execute("SELECT rowid, title, body FROM records_fts ORDER BY rowid").fetchall()
        meta = conn.execute("SELECT rowid, tags, type, paths FROM records_meta ORDER BY rowid").fetchall()
        files = conn.execute("SELECT path, problem_code FROM files ORDER BY path").fetchall()
        return [*records, *fts, *meta, *files]
    finally:
        conn.close()


def test_a_parallel_rebuild_writes_the_serial_rebuild_rows(
    repo: Repo, ctx: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(40):
        write_record(repo, f"area/note-{n:02d}", f"Note {n}", f"Body of note {n} about quartz.")
    (repo.root / ".memzoi/records/area/broken.md").write_text("---\nid: broken\n---\nno record\n", "utf-8")
    serial = index_db.rebuild(ctx.layout)
    expected = _rows(str(ctx.layout.index))
    monkeypatch.setattr(parallel, "MIN_FILES", 2)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    forks, fork = [], os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or fork())
    forked = index_db.rebuild(ctx.layout)
    assert forks == [1]
    assert _rows(str(ctx.layout.index)) == expected
    assert (forked.records, [p.path for p in forked.unreadable]) == (
        serial.records,
        [p.path for p in serial.unreadable],
    )
    assert serial.records["repo"] == 40 and [p.path for p in serial.unreadable] == [".memzoi/records/area/broken.md"]
    found = ok_json(repo, "search", "quartz", "--limit", "50")["results"]
    assert len(found) == 40
