"""The incremental walk of the derived index (io): which record files changed since the index last saw them, by
(size, mtime_ns, inode) signature, and applying exactly those changes to its tables.

Git's "racily clean" rule applies: a file written within the timestamp tick of the walk is read again next time.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISDIR, S_ISLNK, S_ISREG

from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.recall.index.rows import (  # re-exported
    COLUMNS,
    SOURCES,
    Signature,
    read_file,
)
from git_memzoi.memzoi.records.store import Problem

_IGNORED = ("index.md", "log.md")


_INSERT = f"INSERT INTO records ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"


@dataclass(frozen=True)
class Scan:
    """One walk of every source: repository-relative paths and, flat, (size, mtime_ns, inode) per path; and the
    subfolders walked as (absolute path, mtime_ns, inode), each stat taken before it was listed."""

    rels: list[str]
    ints: list[int]
    dirs: list[tuple[str, int, int]]

    @classmethod
    def of(cls, layout: Layout) -> Scan:
        scan = cls([], [], [])
        for source in SOURCES:
            walk(f"{layout.root}/{source.prefix}", source.prefix, scan.rels, scan.ints, scan.dirs, links=True)
        return scan

    def signature(self, n: int) -> Signature:
        return self.ints[3 * n], self.ints[3 * n + 1], self.ints[3 * n + 2]

    def snapshot(self) -> bytes | None:
        """The walk as bytes: equal bytes mean no file was added, removed, renamed or changed."""
        from array import array

        try:
            return "\0".join(self.rels).encode("utf-8") + b"\0\0" + array("q", self.ints).tobytes()
        except OverflowError:  # a pre-1970 mtime: no snapshot, so every refresh compares file by file
            return None


def walk(
    directory: str,
    prefix: str,
    rels: list[str],
    ints: list[int],
    dirs: list[tuple[str, int, int]],
    *,
    links: bool = False,
) -> None:
    """Add the record files below ``directory``: hidden names skipped, only ``*.md``, no index.md/log.md. With
    ``links`` a symlinked file is added with its own (lstat) signature, never followed (``read_file`` reports it
    unreadable); without, symlinks are skipped. One stat per entry, through the directory's descriptor (the
    refresh's main cost)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return
    try:
        for name in os.listdir(fd):
            if name[0] == ".":
                continue
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:  # removed since the listing, or a name the file system cannot stat
                continue
            if S_ISREG(st.st_mode) or (links and S_ISLNK(st.st_mode)):
                if name.endswith(".md") and name not in _IGNORED and name.isprintable():
                    rels.append(prefix + name)
                    ints += (st.st_size, st.st_mtime_ns, st.st_ino)
            elif S_ISDIR(st.st_mode):
                dirs.append((f"{directory}/{name}", st.st_mtime_ns, st.st_ino))
                walk(f"{directory}/{name}", f"{prefix}{name}/", rels, ints, dirs, links=links)
    finally:
        os.close(fd)


def apply_changes(
    conn: sqlite3.Connection, layout: Layout, scan: Scan, db: Path
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Re-read the changed files of ``scan``, forget the vanished ones, and store the walk's snapshot."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        rows = conn.execute("SELECT path, size, mtime_ns, ino FROM files")
        known: dict[str, Signature] = {path: (size, mtime, ino) for path, size, mtime, ino in rows}
        changed = [(rel, sig) for n, rel in enumerate(scan.rels) if known.pop(rel, None) != (sig := scan.signature(n))]
        removed = sorted(known)
        consistent, mtimes = True, []
        for path in removed:
            _forget(conn, path)
        for rel, walked in changed:
            _forget(conn, rel)
            source = next(s for s in SOURCES if rel.startswith(s.prefix))
            signature, outcome = read_file(source, rel, f"{layout.root}/{rel}")
            consistent = consistent and signature == walked
            mtimes.append((rel, signature[1]))
            problem = (outcome.code, outcome.reason) if isinstance(outcome, Problem) else (None, None)
            conn.execute("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?)", (rel, *signature, *problem))
            if not isinstance(outcome, Problem):
                rowid = conn.execute(_INSERT, outcome).lastrowid
                conn.execute(
                    "INSERT INTO records_fts (rowid, title, body) VALUES (?, ?, ?)", (rowid, outcome[6], outcome[7])
                )
        snapshot = scan.snapshot() if consistent else None
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('snapshot', ?)", (snapshot,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    _forget_racy(conn, db, mtimes)
    return tuple(rel for rel, _ in changed), tuple(removed)


def _forget_racy(conn: sqlite3.Connection, db: Path, read: list[tuple[str, int]]) -> None:
    """Git's "racily clean" rule: a file whose mtime is not older than the index write may change again within
    the same timestamp tick, unseen; its signature is voided so the next refresh reads it once more."""
    if not read:
        return
    written = db.stat().st_mtime_ns
    racy = [(rel,) for rel, mtime in read if mtime >= written]
    if racy:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("UPDATE files SET size = -1 WHERE path = ?", racy)
        conn.execute("DELETE FROM meta WHERE key = 'snapshot'")
        conn.execute("COMMIT")


def _forget(conn: sqlite3.Connection, path: str) -> None:
    row = conn.execute("SELECT rowid FROM records WHERE path = ?", (path,)).fetchone()
    if row is not None:
        conn.execute("DELETE FROM records_fts WHERE rowid = ?", row)
        conn.execute("DELETE FROM records WHERE rowid = ?", row)
    conn.execute("DELETE FROM files WHERE path = ?", (path,))


def problems(conn: sqlite3.Connection) -> tuple[Problem, ...]:
    """The files the index holds as unreadable (path, reason, code), sorted by path."""
    rows = conn.execute(
        "SELECT path, problem_reason, problem_code FROM files WHERE problem_code IS NOT NULL ORDER BY path"
    )
    return tuple(Problem(*row) for row in rows)


def count_pending(layout: Layout) -> int:
    """How many packet files ``.memzoi/proposals/pending/`` holds (by the same walk: no symlinks, ``*.md``)."""
    rels: list[str] = []
    walk(str(layout.pending), "", rels, [], [])
    return len(rels)
