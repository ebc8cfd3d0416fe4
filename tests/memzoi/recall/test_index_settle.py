"""A write settles the derived index by listing again only the folders it wrote (``index_db.settle``), and every
refresh learns what the index holds from its stored snapshot (issue 17, "Per-call overhead").

The invariant: the stored snapshot says exactly what the ``files`` table holds, racy files voided in both, so a
refresh that diffs against the snapshot re-reads what it must; edits others made meanwhile wait for the next
read's full walk, never lost.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from git_memzoi.core import atomic
from git_memzoi.memzoi.recall.index import build
from git_memzoi.memzoi.recall.index import db as index_db
from git_memzoi.memzoi.recall.index.scan import Scan
from git_memzoi.memzoi.recall.index.sources import sources
from tests.memzoi.recall.test_memzoi_recall import ctx_of, record
from tests.support.repos import Repo, run

REPO_SAFE = ("--sensitivity", "repo-safe", "--apply", "--json")


def stored(root: Path) -> Scan:
    """The walk the index's stored snapshot describes."""
    ctx = ctx_of(Repo(root))
    conn = index_db._open(ctx.layout)
    assert conn is not None
    try:
        (snapshot,) = conn.execute("SELECT value FROM meta WHERE key = 'snapshot'").fetchone()
        table = {p: (s, m, i) for p, s, m, i in conn.execute("SELECT path, size, mtime_ns, ino FROM files")}
    finally:
        conn.close()
    scan = Scan.stored(snapshot, sources(ctx.layout))
    assert scan is not None and scan.signatures() == table  # the snapshot tells what the table holds
    return scan


def titles(repo: Repo, query: str) -> list[str]:
    result = run(repo, "search", query, "--json")
    assert result.exit_code == 0, result.stderr
    return [hit["record"]["title"] for hit in json.loads(result.stdout)["results"]]


@pytest.fixture
def built(repo: Repo) -> Repo:
    """Two records in a subfolder and one at the top of ``.memzoi/records/``, the index built."""
    ctx_of(repo)
    record(repo, "alpha", title="Alpha cache rule", body="The cache is keyed by commit.")
    record(repo, "team/beta", title="Beta token rule", body="Tokens expire after an hour.")
    index_db.rebuild(ctx_of(repo).layout)
    return repo


def test_a_write_lists_only_its_folders_and_leaves_other_edits_to_the_next_read(built: Repo) -> None:
    nested = built.root / ".memzoi" / "records" / "team" / "beta.md"
    edited = nested.read_text().replace("expire after an hour", "expire after a day")
    nested.write_text(edited)  # an edit by hand the write does not list
    result = run(built, "propose", "--title", "Gamma queue rule", "--body", "Queues drain nightly.", *REPO_SAFE)
    assert result.exit_code == 0, result.stderr
    after = stored(built.root)
    assert ".memzoi/records/gamma-queue-rule.md" in after.rels
    assert after.signatures()[".memzoi/records/team/beta.md"][0] != nested.stat().st_size  # not listed
    assert index_db.drift(ctx_of(built).layout) == "stale"
    assert titles(built, "day") == ["Beta token rule"]  # the next read walks and reads the edit
    assert index_db.drift(ctx_of(built).layout) == "current"
    assert titles(built, "queues") == ["Gamma queue rule"]


def test_a_folder_first_filled_by_the_write_falls_back_to_the_walk(built: Repo) -> None:
    assert run(built, "local", "add", "--type", "preference", "--title", "Terse", "--body", "Short.").exit_code == 0
    assert index_db.drift(ctx_of(built).layout) == "current"
    assert any(rel.endswith("/local/local-terse.md") for rel in stored(built.root).rels)


def test_the_snapshot_round_trips_and_garbage_is_no_walk() -> None:
    scan = Scan(["a.md", "b/c.md"], [1, 2, 3, 4, 5, 6], [])
    snapshot = scan.snapshot()
    assert snapshot is not None
    back = Scan.stored(snapshot, ())
    assert back is not None and (back.rels, back.ints) == (["a.md", "b/c.md"], [1, 2, 3, 4, 5, 6])
    empty = Scan([], [], []).snapshot()
    assert empty is not None and Scan.stored(empty, ()) == Scan([], [], [])
    assert Scan.stored(b"a.md", ()) is None  # no separator
    assert Scan.stored(b"a.md\0\0" + b"\1" * 23, ()) is None  # not three whole ints
    assert Scan.stored(b"a.md\0b.md\0\0" + b"\0" * 24, ()) is None  # two paths, one signature


def test_relisted_replaces_one_folders_run_or_declines(tmp_path: Path) -> None:
    folder = tmp_path / "records"
    (folder / "sub").mkdir(parents=True)
    for name in ("x.md", "sub/y.md"):
        (folder / name).write_text(name)
    rels: list[str] = []
    ints: list[int] = []
    from git_memzoi.memzoi.recall.index.scan import walk

    walk(str(folder), "r/", rels, ints, [], links=True)
    assert rels == ["r/x.md", "r/sub/y.md"]  # a folder's own files before its subfolders'
    scan = Scan(rels, ints, [])
    (folder / "z.md").write_text("z")
    (folder / "x.md").unlink()
    again = scan.relisted(str(folder), "r/")
    assert again is not None and again.scan.rels == ["r/z.md", "r/sub/y.md"]
    assert again.scan.ints[3:] == ints[3:]  # the other folder's file is not stat'ed again
    z = (folder / "z.md").stat()
    assert (again.changed, again.removed) == ([("r/z.md", (z.st_size, z.st_mtime_ns, z.st_ino))], ["r/x.md"])
    assert Scan(["r/x.md", "r/sub/y.md", "r/w.md"], [0] * 9, []).relisted(str(folder), "r/") is None  # split run
    (folder / "new").mkdir()
    empty = scan.relisted(str(folder / "new"), "r/new/")  # empty before and after
    assert empty is not None and (empty.scan, empty.changed, empty.removed) == (scan, [], [])
    (folder / "new" / "n.md").write_text("n")
    assert scan.relisted(str(folder / "new"), "r/new/") is None  # its place in the walk is unknown


def test_a_racy_file_is_voided_in_the_table_and_the_snapshot_alike(built: Repo) -> None:
    layout = ctx_of(built).layout
    index = index_db.index_path(layout)
    target = built.root / ".memzoi" / "records" / "alpha.md"
    future = index.stat().st_mtime_ns + 10**9
    os.utime(target, ns=(future, future))  # as new as the index write: racily clean
    index_db.refresh(layout)
    voided = stored(built.root)  # asserts the table agrees
    assert voided.signatures()[".memzoi/records/alpha.md"][0] == -1
    assert index_db.refresh(layout).read == (".memzoi/records/alpha.md",)  # read once more


def test_the_rebuild_voids_racy_files_in_its_snapshot(built: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    voided: list[tuple[str, int]] = []
    original = build.forget_racy

    def every_file_racy(conn: object, db: Path, read: list[tuple[str, int]], scan: Scan | None = None) -> None:
        voided.extend(read)
        original(conn, db, [(rel, 2**62) for rel, _ in read], scan)

    monkeypatch.setattr(build, "forget_racy", every_file_racy)
    index_db.rebuild(ctx_of(built).layout)
    assert {size for size, _, _ in stored(built.root).signatures().values()} == {-1}
    assert len(voided) == 2


def test_every_writer_names_the_folder_it_changed(tmp_path: Path) -> None:
    point = atomic.mark()
    atomic.write_bytes_atomic(tmp_path / "a" / "one.md", b"1", root=tmp_path, parents=True)
    atomic.write_new(tmp_path / "b" / "two.md", b"2", root=tmp_path, parents=True)
    atomic.move_new(tmp_path / "b" / "two.md", tmp_path / "c" / "two.md", source_root=tmp_path, root=tmp_path)
    atomic.remove_file(tmp_path / "a" / "one.md", root=tmp_path)
    atomic.remove_dir(tmp_path / "a", root=tmp_path)
    real = os.path.realpath(tmp_path)
    assert set(atomic.folders_since(point)) == {real, *(os.path.join(real, n) for n in "abc")}
    later = atomic.mark()
    atomic.write_many_atomic([(tmp_path / "c" / "three.md", b"3")], root=tmp_path)
    assert atomic.folders_since(later) == [os.path.join(real, "c")]  # changed before, and again since


def test_a_snapshot_that_is_not_utf_8_is_no_walk() -> None:
    assert Scan.stored(b"\xff\xfe.md\0\0" + b"\0" * 24, ()) is None  # a damaged index: the files table answers
