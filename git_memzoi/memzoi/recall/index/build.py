"""Filling a new derived index from scratch (a rebuild) and git's racily-clean rule (io, on a connection
:mod:`~git_memzoi.memzoi.recall.index.db` opened; split from it for size, and it owns sqlite3).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.core.gcpause import no_cyclic_gc
from git_memzoi.memzoi.recall.index import links, schema
from git_memzoi.memzoi.recall.index.rows import read_file
from git_memzoi.memzoi.recall.index.sources import Signature
from git_memzoi.memzoi.records.store import Problem

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout
    from git_memzoi.memzoi.recall.index.scan import Scan


def fill(conn: Any, layout: Layout, scan: Scan, db: Path) -> None:
    """Fill a new, empty index (``conn``, a ``sqlite3.Connection``) with every file of ``scan`` (a rebuild):
    :func:`git_memzoi.memzoi.recall.index.db._apply` without its lookups -
    nothing to forget, rowids numbered here - the files read on two cores where that is safe
    (:mod:`~git_memzoi.core.parallel`) and the rows inserted in batches (``executemany``), in one
    transaction."""
    with no_cyclic_gc():  # a heap growing by every row, no cycles: the collector's passes cost ~0.5 s at 50k
        _fill(conn, layout, scan, db)


def _fill(conn: Any, layout: Layout, scan: Scan, db: Path) -> None:
    from git_memzoi.core.parallel import read_all

    def read(rel: str) -> tuple[Signature, _Prepared | Problem]:
        # everything a row needs short of SQL, as plain tuples: it is made in either process (the forked reader
        # makes two thirds of it), and plain values unpickle in a third of the time a Row with its Links takes
        source = next(s for s in scan.sources if rel.startswith(s.prefix))
        signature, outcome = read_file(source, rel, os.path.join(layout.root, rel))
        if isinstance(outcome, Problem):
            return signature, outcome
        return signature, (
            tuple(outcome),
            schema.fts_values(outcome),
            schema.meta_values(outcome),
            links.rows_of(rel, outcome),
        )

    conn.execute("BEGIN")
    batch: _Batch = ([], [], [], [], [], [], [])
    consistent, mtimes = True, []
    # a row's rowid is its file's place in the walk, plus one: the same whatever order the results come in
    for n, (signature, outcome) in read_all(scan.rels, read):
        rel, rowid = scan.rels[n], n + 1
        consistent = consistent and signature == scan.signature(n)
        mtimes.append((rel, signature[1]))
        problem = (outcome.code, outcome.reason) if isinstance(outcome, Problem) else (None, None)
        batch[0].append((rel, *signature, *problem))
        if not isinstance(outcome, Problem):
            values, fts, meta, link_rows = outcome
            batch[1].append((rowid, *values))
            batch[2].append((rowid, *fts))
            batch[3].append((rowid, *meta))
            for rows, more in zip(batch[4:], link_rows, strict=True):
                rows.extend(more)  # keyed by path, not rowid: batched like the rest
        if len(batch[0]) >= _BATCH_ROWS:
            _insert(conn, batch)
    _insert(conn, batch)
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('snapshot', ?)", (scan.snapshot() if consistent else None,))
    conn.execute("COMMIT")
    forget_racy(conn, db, mtimes, scan if consistent else None)


_Batch = tuple[list[tuple[Any, ...]], ...]  # files, records, records_fts, records_meta, then the three link tables
# a readable file's rows: its records row, its records_fts and records_meta values, its three link tables' rows
_Prepared = tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...], tuple[list[tuple[Any, ...]], ...]]
_BATCH_ROWS = 2000  # rows held before an executemany: bounded memory, few calls


def _insert(conn: Any, batch: _Batch) -> None:
    for sql, rows in zip(
        (
            "INSERT INTO files VALUES (?, ?, ?, ?, ?, ?)",
            schema.INSERT_RECORD_AT,
            schema.INSERT_FTS,
            schema.INSERT_META,
            *links.INSERTS,
        ),
        batch,
        strict=True,
    ):
        conn.executemany(sql, rows)
        rows.clear()


def forget_racy(conn: Any, db: Path, read: list[tuple[str, int]], scan: Scan | None = None) -> None:
    """Git's "racily clean" rule: a file whose mtime is not older than the index write may change again within
    the same timestamp tick, unseen; its signature is voided so the next refresh reads it once more. The stored
    snapshot of ``scan`` is voided alike (:meth:`Scan.voided`), so that it still tells what the index holds; with
    no ``scan`` (the index stored none) there is none."""
    if not read:
        return
    written = db.stat().st_mtime_ns
    racy = [(rel,) for rel, mtime in read if mtime >= written]
    if racy:
        snapshot = None if scan is None else scan.voided({rel for (rel,) in racy}).snapshot()
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("UPDATE files SET size = -1 WHERE path = ?", racy)
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('snapshot', ?)", (snapshot,))
        conn.execute("COMMIT")
