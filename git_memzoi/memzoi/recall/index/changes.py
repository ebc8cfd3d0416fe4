"""Applying a walk's changes to an open derived index (io, on a connection
:mod:`~git_memzoi.memzoi.recall.index.db` opened; split from it for size): re-read the changed files, forget
the vanished ones, store the walk's snapshot; and which written folders a walk lists.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.memzoi.recall.index import links, schema
from git_memzoi.memzoi.recall.index.scan import Scan, signed
from git_memzoi.memzoi.recall.index.sources import Signature, Source
from git_memzoi.memzoi.records.problem import Problem

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout


def apply(
    conn: Any,
    layout: Layout,
    scan: Scan,
    db: Path,
    diff: tuple[list[tuple[str, Signature]], list[str]] | None = None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Re-read the changed files of ``scan``, forget the vanished ones, and store the walk's snapshot.

    ``diff`` is (changed files with their walked signature, vanished files) when the caller knows it
    (:func:`settle`); else it is ``scan`` against what the index holds, read from its stored snapshot: the same
    account as the ``files`` table, in a tenth of the time at 10,000 files (the table when there is none)."""
    from git_memzoi.memzoi.recall.index import build
    from git_memzoi.memzoi.recall.index.rows import read_file

    conn.execute("BEGIN IMMEDIATE")
    try:
        if diff is None:
            known = _known(conn, scan)
            pairs = signed(scan.rels, scan.ints)
            diff = [(rel, sig) for rel, sig in pairs if known.pop(rel, None) != sig], sorted(known)
        changed, removed = diff
        consistent, mtimes = True, []
        for path in removed:
            _forget(conn, path)
        for rel, walked in changed:
            _forget(conn, rel)
            source = next(s for s in scan.sources if rel.startswith(s.prefix))
            signature, outcome = read_file(source, rel, os.path.join(layout.root, rel))
            consistent = consistent and signature == walked
            mtimes.append((rel, signature[1]))
            problem = (outcome.code, outcome.reason) if isinstance(outcome, Problem) else (None, None)
            conn.execute("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?)", (rel, *signature, *problem))
            if not isinstance(outcome, Problem):
                rowid = conn.execute(schema.INSERT_RECORD, outcome).lastrowid
                conn.execute(schema.INSERT_FTS, (rowid, *schema.fts_values(outcome)))
                conn.execute(schema.INSERT_META, (rowid, *schema.meta_values(outcome)))
                links.insert(conn, rel, outcome)
        snapshot = scan.snapshot() if consistent else None
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('snapshot', ?)", (snapshot,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    build.forget_racy(conn, db, mtimes, scan if snapshot is not None else None)
    return tuple(rel for rel, _ in changed), tuple(removed)


def _known(conn: Any, scan: Scan) -> dict[str, Signature]:
    """Every file the index holds, with its signature: from its stored snapshot, else from the ``files`` table
    (inside the caller's transaction)."""
    stored = conn.execute("SELECT value FROM meta WHERE key = 'snapshot'").fetchone()
    before = Scan.stored(stored[0], scan.sources) if stored is not None and stored[0] else None
    if before is not None:
        return before.signatures()
    rows = conn.execute("SELECT path, size, mtime_ns, ino FROM files")
    return {path: (size, mtime, ino) for path, size, mtime, ino in rows}


def _forget(conn: Any, path: str) -> None:
    row = conn.execute("SELECT rowid FROM records WHERE path = ?", (path,)).fetchone()
    if row is not None:
        conn.execute("DELETE FROM records_fts WHERE rowid = ?", row)
        conn.execute("DELETE FROM records_meta WHERE rowid = ?", row)
        conn.execute("DELETE FROM records WHERE rowid = ?", row)
    conn.execute("DELETE FROM files WHERE path = ?", (path,))
    links.forget(conn, path)


def record_folders(layout: Layout, walked: Sequence[Source], folders: Sequence[str]) -> list[tuple[str, str]]:
    """The folders of ``folders`` that the walk of ``walked`` lists, as (path as the walk opens it, prefix)."""
    found = []
    for source in walked:
        top = os.path.join(layout.root, source.prefix)
        real = os.path.realpath(top)
        for folder in folders:
            if folder != real and not folder.startswith(real + os.sep):
                continue
            below = os.path.relpath(folder, real).replace(os.sep, "/")
            parts = [] if below == "." else below.split("/")
            if not any(part.startswith(".") for part in parts):  # the walk never enters a hidden folder
                found.append((os.path.join(top, *parts), source.prefix + "".join(f"{part}/" for part in parts)))
    return found
