"""The from-scratch rebuild (issue 17, "Bulk paths"): the files read on two cores give exactly the rows a serial
read gives, in walk order (the forked reader itself: tests/core/test_parallel.py)."""

from __future__ import annotations

import os
import sqlite3

import pytest

from git_memzoi.core import parallel
from git_memzoi.memzoi.recall.index import db as index_db
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import Repo, ok_json, write_record


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


def test_a_rebuild_holds_off_the_cyclic_collector_and_restores_it(
    repo: Repo, ctx: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from git_memzoi.memzoi.recall.index import build

    write_record(repo, "area/note", "Note", "Body.")
    seen, fill = [], build._fill
    monkeypatch.setattr(build, "_fill", lambda *args: seen.append(gc.isenabled()) or fill(*args))
    assert gc.isenabled()
    index_db.rebuild(ctx.layout)
    assert (seen, gc.isenabled()) == ([False], True)

    def broken(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(build, "_fill", broken)
    with pytest.raises(Exception):
        index_db.rebuild(ctx.layout)
    assert gc.isenabled()  # restored on the way out of a failed rebuild too
    gc.disable()
    try:
        monkeypatch.setattr(build, "_fill", fill)
        index_db.rebuild(ctx.layout)
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()
