"""The derived SQLite full-text index over every record file (io; the only memzoi module that imports sqlite3).

:attr:`Layout.index` (``<git dir>/memzoi/worktree/index.sqlite``, one per worktree) is a disposable cache
(DESIGN.md principle 1; aesthetics habit 13). It indexes canonical records (``.memzoi/records/``: plane ``git``, destination ``repo``) and private runtime records
(:meth:`Layout.runtime`, shared by every worktree: plane ``runtime``). Deleting it loses nothing: the next command
rebuilds it in a temporary file and renames it into place. A foreign ``PRAGMA user_version`` or a corrupt file
is rebuilt the same way, never migrated. :func:`refresh` re-reads only files whose (size, mtime_ns, inode)
changed. The tables and the weighted FTS5 columns (title, body, tags, type, paths) are in
:mod:`~git_memzoi.memzoi.recall.index.schema`.
Reads go through one kept connection per thread and file (:func:`_reader`); a search filters and sorts the best
bm25 matches first and runs the full query only when that could change the answer (:func:`_top_is_exact`).
How a record file becomes a row lives in :mod:`~git_memzoi.memzoi.recall.index.rows`; the vectors of semantic
recall (table ``vectors``) in :mod:`~git_memzoi.memzoi.recall.index.vectors`, through :func:`write_derived`.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import os
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.core.atomic import lifecycle_lock
from git_memzoi.errors import InputError, ToolError
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.recall.index import changes
from git_memzoi.memzoi.recall.index import links as _links
from git_memzoi.memzoi.recall.index import schema as _schema
from git_memzoi.memzoi.recall.index.query import (
    FILTERS,
    NEWEST_FIRST,
    at,
    current,
    fts_query,
    search_sql,
    search_where,
)
from git_memzoi.memzoi.recall.index.results import JSON_VERSION as JSON_VERSION  # re-exported
from git_memzoi.memzoi.recall.index.results import RebuildResult as RebuildResult
from git_memzoi.memzoi.recall.index.results import RefreshResult as RefreshResult
from git_memzoi.memzoi.recall.index.row_json import applies_to_matcher, instant_micros, record_json
from git_memzoi.memzoi.recall.index.scan import Scan as _Scan
from git_memzoi.memzoi.recall.index.scan import walk
from git_memzoi.memzoi.recall.index.schema import SCHEMA_VERSION
from git_memzoi.memzoi.recall.index.sources import RUNTIME_DESTINATIONS, SOURCES, Signature, Source
from git_memzoi.memzoi.records.problem import Problem

__all__ = [
    "FILTERS",
    "RUNTIME_DESTINATIONS",
    "SCHEMA_VERSION",
    "SOURCES",
    "Source",
    "fts_query",
    "parse_record",
    "read_file",
    "record_json",
    "record_row",
]

if TYPE_CHECKING:  # at run time through __getattr__
    from git_memzoi.memzoi.recall.index.rows import parse_record, read_file, record_row

_PARSING = ("parse_record", "read_file", "record_row")  # re-exported from rows, which imports the record parser


def __getattr__(name: str) -> Any:
    """The names of :data:`_PARSING`, imported on first use: a read that finds no file changed parses nothing."""
    if name in _PARSING:
        from git_memzoi.memzoi.recall.index import rows

        return getattr(rows, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SQLITE_VERSION = sqlite3.sqlite_version  # of the library this module (the only one importing sqlite3) links


def index_path(layout: Layout) -> Path:
    """This worktree's derived index, :attr:`Layout.index`."""
    return layout.index


def runtime_dir(layout: Layout, destination: str) -> Path:
    """The private runtime record files of ``destination`` (``local``, ``session``): :meth:`Layout.runtime`."""
    if destination not in RUNTIME_DESTINATIONS:
        raise ValueError(destination)
    return layout.runtime(destination)


# ------------------------------------------------------------------------------------------------ refresh


def refresh(layout: Layout) -> RefreshResult:
    """Bring the index up to date; a missing, foreign or corrupt index is rebuilt from the files.

    One directory walk stats every record file; when the walk equals the stored snapshot of the last one,
    nothing else happens (no lock, no write). Otherwise only files whose (size, mtime_ns, inode) changed are
    read, and rows of deleted files are removed, under the lifecycle lock. In a process that keeps a watcher
    (:mod:`~git_memzoi.memzoi.recall.index.watch`), the walk is skipped while the watcher saw no change since the last.

    Raises:
        ToolError: the index stays locked by another process (``index_busy``) or cannot be written.
    """
    watcher = sys.modules.get(f"{__package__}.watch")  # imported only where a process watches: lazy
    ticket = None if watcher is None else watcher.begin(layout)
    if ticket is not None and ticket.fresh and (reader := _reader(layout)) is not None:
        with contextlib.suppress(sqlite3.DatabaseError):  # unreadable: the full path below decides
            return RefreshResult(ticket.scanned, (), (), _problems(reader), False)
        _drop_reader(index_path(layout))
    conn = _open(layout)
    if conn is not None:
        try:
            scan = _Scan.of(layout)
            stored = conn.execute("SELECT value FROM meta WHERE key = 'snapshot'").fetchone()
            done: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
            if stored is None or stored[0] != scan.snapshot():
                with lifecycle_lock(
                    layout.lock, root=layout.private_root, counted=False
                ):  # a file changed after the walk: next time
                    done = changes.apply(conn, layout, scan, index_path(layout))
            if watcher is not None:
                watcher.settle(layout, ticket, len(scan.rels), scan.dirs)
            return RefreshResult(len(scan.rels), *done, _problems(conn), False)
        except sqlite3.DatabaseError as exc:
            _raise_if_busy(exc)
        finally:
            conn.close()
    with lifecycle_lock(layout.lock, root=layout.private_root, counted=False):
        result = _rebuild(layout)
    return RefreshResult(sum(result.records.values()) + len(result.unreadable), (), (), result.unreadable, True)


def refresh_if_built(layout: Layout, folders: Sequence[str] | None = None) -> bool:
    """:func:`refresh` when the index exists, after a command wrote memory files: the write leaves no drift for
    ``doctor`` to warn about (issue 20). With ``folders`` (the real paths of every folder the command changed,
    :func:`git_memzoi.core.atomic.folders_since`) only those are listed again (:func:`settle`), unless that
    cannot tell. A missing index stays missing (the first read builds it). Never raises: what this cannot
    refresh, the next read does. Returns whether a refresh ran."""
    try:
        if not checked_index(layout).is_file():
            return False
        if folders is None or not settle(layout, folders):
            refresh(layout)
    except (InputError, ToolError, OSError, sqlite3.Error):
        return False
    return True


def settle(layout: Layout, folders: Sequence[str]) -> bool:
    """Bring the index up to date with this process's own writes: list again only the record folders among
    ``folders`` (real paths) and take every other file as the index last saw it (its stored snapshot).

    Edits made meanwhile by others stay for the next read, which walks everything as always; the index then
    holds exactly what it held plus these folders, so it is never wrong, at worst behind. About 35 ms of a write
    at 10,000 records was the walk this skips (issue 17, "Per-call overhead").

    Returns:
        False when only a full walk can tell: no index or no stored snapshot, a folder whose files are not one
        run of it, or one that held no file before and holds some now (:meth:`Scan.relisted`).

    Raises:
        ToolError: the index stays locked by another process (``index_busy``) or cannot be written.
    """
    from git_memzoi.memzoi.recall.index.sources import sources

    walked = sources(layout)
    touched = changes.record_folders(layout, walked, folders)
    if not touched:
        return True
    conn = _open(layout)
    if conn is None:
        return False
    try:
        with lifecycle_lock(layout.lock, root=layout.private_root, counted=False):
            stored = conn.execute("SELECT value FROM meta WHERE key = 'snapshot'").fetchone()
            scan = _Scan.stored(stored[0], walked) if stored is not None and stored[0] else None
            changed: list[tuple[str, Signature]] = []
            removed: list[str] = []
            for folder, prefix in touched:
                relisting = None if scan is None else scan.relisted(folder, prefix)
                if relisting is None:
                    return False
                scan = relisting.scan
                changed += relisting.changed
                removed += relisting.removed
            if scan is not None and (changed or removed):
                changes.apply(conn, layout, scan, index_path(layout), (changed, removed))
            return scan is not None
    except sqlite3.DatabaseError as exc:
        _raise_if_busy(exc)
        return False
    finally:
        conn.close()


def rebuild(layout: Layout) -> RebuildResult:
    """Build the index from scratch into a temporary file and rename it into place (atomic), under the lock.

    The old index is never read, so a corrupt one cannot block the rebuild, and runtime memory (files) is
    never touched.
    """
    with lifecycle_lock(layout.lock, root=layout.private_root, counted=False):
        return _rebuild(layout)


def _rebuild(layout: Layout) -> RebuildResult:
    from git_memzoi.core.atomic import make_dirs

    make_dirs(index_path(layout).parent, root=layout.root_for(index_path(layout)))
    target = checked_index(layout)
    # named as every temporary file beside its target (git_memzoi.core.scratch): a killed rebuild's is swept
    tmp = str(target.parent / f".{target.name}.{os.getpid()}-{os.urandom(6).hex()}.tmp")
    try:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600))
    except OSError as exc:
        raise ToolError(f"cannot write the memory index in {target.parent}: {exc.strerror}", "write_failed") from exc
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode = OFF")
            conn.execute("PRAGMA synchronous = OFF")
            conn.executescript(_schema.DDL + _links.DDL)
            from git_memzoi.memzoi.recall.index import build

            build.fill(conn, layout, _Scan.of(layout), Path(tmp))
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            counts = dict(
                conn.execute(
                    "SELECT destination, count(*) FROM records WHERE store = 'record' GROUP BY destination"
                ).fetchall()
            )
            problems = _problems(conn)
        finally:
            conn.close()
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        _drop_reader(target)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    # A journal left by a crashed writer of the old file would be "rolled back" into the new one.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(str(target) + "-journal")
    records = {d: int(counts.get(d, 0)) for d in ("repo", *RUNTIME_DESTINATIONS)}
    rel = layout.label(target)
    return RebuildResult(rel, records, problems, _count_pending(layout))


def checked_index(layout: Layout) -> Path:
    """The real path of the index; it and sqlite's files beside it (``-journal``, ``-wal``) must be no symlinks,
    which sqlite would follow out of the repository (issue 13). Raises UnsafePath (a symlink there or on the way)
    and NotAFile (the index is a folder)."""
    from git_memzoi.core.atomic import NotAFile
    from git_memzoi.core.confine import confined

    path = index_path(layout)
    for sidecar in ("-journal", "-wal", "-shm"):
        confined(path.with_name(path.name + sidecar), layout.root_for(path))
    real = confined(path, layout.root_for(path))
    if os.path.lexists(real) and not real.is_file():
        raise NotAFile(f"{real} is not a regular file; remove it and run `git memzoi rebuild`")
    return real


def _open(layout: Layout) -> sqlite3.Connection | None:
    """The index if it exists and carries this schema version; ``None`` when it must be rebuilt."""
    path = checked_index(layout)
    if not path.is_file():
        return None
    conn = sqlite3.connect(path, timeout=10.0, isolation_level=None)
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return conn
    except sqlite3.DatabaseError as exc:
        conn.close()
        _raise_if_busy(exc)
        return None
    conn.close()
    return None


def _raise_if_busy(exc: sqlite3.DatabaseError) -> None:
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        raise ToolError("the memory index is busy in another process; try again", "index_busy") from exc


def _problems(conn: sqlite3.Connection) -> tuple[Problem, ...]:
    rows = conn.execute(
        "SELECT path, problem_reason, problem_code FROM files WHERE problem_code IS NOT NULL ORDER BY path"
    )
    return tuple(Problem(*row) for row in rows)


def _count_pending(layout: Layout) -> int:
    rels: list[str] = []
    walk(str(layout.pending), "", rels, [], [])
    return len(rels)


# ------------------------------------------------------------------------------------------------ queries


_FRESH: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("memzoi_fresh", default=frozenset())


@contextlib.contextmanager
def read_session(layout: Layout) -> Iterator[None]:
    """Refresh the index once for everything read inside the block (one command, one MCP tool call).

    Reads in the block skip their own refresh, so a context pack that runs several searches walks the files
    once; nested sessions are free. Outside any session every read refreshes first.
    """
    root = str(layout.root)
    seen = _FRESH.get()
    if root in seen:
        yield
        return
    refresh(layout)
    token = _FRESH.set(seen | {root})
    try:
        yield
    finally:
        _FRESH.reset(token)


def _ensure_fresh(layout: Layout) -> None:
    if str(layout.root) not in _FRESH.get():
        refresh(layout)


def search_rows(
    layout: Layout,
    query: str,
    *,
    now: dt.datetime,
    destinations: Sequence[str] = ("repo",),
    filters: Mapping[str, str] | None = None,
    path: str | None = None,
    path_match: Callable[[str, str], bool] | None = None,
    limit: int = 10,
    entry_match: Callable[[str, str], bool] | None = None,
    meta_query: str | None = None,
    include_superseded: bool = False,
) -> list[dict[str, Any]]:
    """Current-assertion records of ``destinations`` matching the FTS5 ``query`` (see :func:`fts_query`) in their
    title, body, tags, type or paths; with ``meta_query``, only those matching ``query`` in their title or body,
    ``meta_query`` matched in their tags, type and paths adding to the rank
    (:func:`~git_memzoi.memzoi.recall.index.query.hits_sql`).

    ``filters`` (exact values of :data:`FILTERS`) and ``path`` (kept when ``path_match(stored, path)`` holds for
    one of the record's ``applies_to``; for an entry, ``entry_match``, default ``path_match``, on its scope
    globs) apply inside the candidate set, before ``limit`` (memzoi-spec.md §4), as do the instant ``now`` (the
    as-of instant: retention and business validity) and ``include_superseded`` (superseded rows too).
    Rows come best first: rank (the weighted bm25 of both FTS5 tables), ``updated_at`` newest first, id. Each
    row is a dict of the records columns plus ``rank`` (lower is better). Refreshes the index first (once per :func:`read_session`).

    Fast path, exact: the filters and the sort run on the best :func:`_top_size` matches by bm25 alone, and that
    answer is kept only when it cannot differ from the full query's (see :func:`_top_is_exact`); else the full
    query runs. Raises ``ToolError`` (``index_unavailable``, ``index_corrupt``, ``index_busy``).
    """
    _ensure_fresh(layout)
    now_us = instant_micros(now)
    where, params, functions = search_where(
        destinations, now_us, filters or {}, path, path_match, entry_match, include_superseded
    )
    matches = (query, query if meta_query is None else meta_query)
    if 0 < limit <= MAX_FAST_LIMIT:
        top = _top_size(limit)
        sql = search_sql(where, meta_query is None, fast=True)
        rows = _query(layout, sql, (*matches, top, *params, limit), functions)
        if _top_is_exact(rows, limit, top):
            return rows
    return _query(layout, search_sql(where, meta_query is None, fast=False), (*matches, *params, limit), functions)


MAX_FAST_LIMIT = 200


def _top_size(limit: int) -> int:
    return 2 * limit + 100  # the best bm25 matches the fast path takes for ``limit`` rows: room for filtered ones


def _top_is_exact(rows: list[dict[str, Any]], limit: int, top: int) -> bool:
    """Whether the fast path's ``rows`` (the best ``top`` matches, filtered and sorted; their two extra columns
    popped here) equal the full query's: the ``top`` were all matches, or ``limit`` rows came and the last ranks
    strictly better than the worst of the ``top`` (ties at the cut may be missing). No rows: not exact."""
    if not rows:
        return False
    count, edge = rows[0]["memzoi_top_count"], rows[0]["memzoi_top_edge"]
    for row in rows:
        del row["memzoi_top_count"], row["memzoi_top_edge"]
    return count < top or (len(rows) == limit and rows[-1]["rank"] < edge)


def list_rows(
    layout: Layout, destination: str, *, now: dt.datetime, store: str = "record", include_superseded: bool = False
) -> list[dict[str, Any]]:
    """Current-assertion rows of one destination and store (``record`` or ``entry``) at ``now``, newest first
    (:data:`~git_memzoi.memzoi.recall.index.query.NEWEST_FIRST`); superseded ones too with ``include_superseded``.
    Refreshes first."""
    _ensure_fresh(layout)
    sql = (
        f"SELECT r.* FROM records r WHERE r.destination = ? AND r.store = ? AND {current(include_superseded)}"
        f" ORDER BY {NEWEST_FIRST}"
    )
    return _query(layout, sql, (destination, store, *at(instant_micros(now))))


def path_rows(
    layout: Layout,
    destination: str,
    path: str,
    path_match: Callable[[str, str], bool],
    *,
    now: dt.datetime,
    types: Sequence[str] = (),
    scope_kind: str | None = None,
    limit: int = -1,
    store: str = "record",
    include_superseded: bool = False,
) -> list[dict[str, Any]]:
    """Current-assertion records of one destination and ``store`` at ``now`` with an ``applies_to`` path
    ``path_match(stored, path)`` accepts (an entry's ``applies_to`` holds its scope globs), only of
    ``types``/``scope_kind`` when given, superseded ones too with ``include_superseded``; newest first
    (``updated_at`` DESC, id), at most ``limit`` (-1: all). Refreshes first."""
    _ensure_fresh(layout)
    where = ["r.destination = ?", "r.store = ?", current(include_superseded), "r.applies_to != '[]'"]
    where.append("memzoi_path_match(r.applies_to, ?)")
    params: list[Any] = [destination, store, *at(instant_micros(now)), path]
    if types:
        where.append(f"r.type IN ({', '.join('?' * len(types))})")
        params += types
    if scope_kind is not None:
        where.append("r.scope_kind = ?")
        params.append(scope_kind)
    match = {"memzoi_path_match": applies_to_matcher(path_match)}
    sql = f"SELECT r.* FROM records r WHERE {' AND '.join(where)} ORDER BY {NEWEST_FIRST} LIMIT ?"
    return _query(layout, sql, (*params, limit), match)


def select(layout: Layout, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
    """The rows (dicts) of a read-only ``sql`` over the index, e.g. its link tables
    (:mod:`~git_memzoi.memzoi.recall.index.links`); refreshes first (once per :func:`read_session`)."""
    _ensure_fresh(layout)
    return _query(layout, sql, params)


def _query(
    layout: Layout, sql: str, params: Sequence[Any], functions: Mapping[str, Callable[..., Any]] | None = None
) -> list[dict[str, Any]]:
    return [dict(row) for row in _run(layout, sql, params, functions)]


def scalars(
    layout: Layout, sql: str, params: Sequence[Any], functions: Mapping[str, Callable[..., Any]] | None = None
) -> list[Any]:
    """The first column of every row of a read, no dicts made (a vector search reads 10,000 rowids)."""
    return [row[0] for row in _run(layout, sql, params, functions, plain=True)]


def _run(
    layout: Layout,
    sql: str,
    params: Sequence[Any],
    functions: Mapping[str, Callable[..., Any]] | None,
    plain: bool = False,
) -> list[Any]:
    conn = _reader(layout)
    if conn is None:
        raise ToolError("the memory index could not be opened; run `git memzoi rebuild`", "index_unavailable")
    try:
        for name, function in (functions or {}).items():
            conn.create_function(name, -1, function, deterministic=True)
        cursor = conn.execute(sql, params)
        if plain:
            cursor.row_factory = None  # tuples: no sqlite3.Row per row
        return cursor.fetchall()
    except sqlite3.DatabaseError as exc:
        _drop_reader(index_path(layout))
        _raise_if_busy(exc)
        raise ToolError(f"the memory index is unreadable ({exc}); run `git memzoi rebuild`", "index_corrupt") from exc


_READERS = threading.local()  # per thread: {index path: ((pid, device, inode, mtime_ns), connection)}
_KEEP_READERS = 4


def _reader(layout: Layout) -> sqlite3.Connection | None:
    """This thread's read connection to the index (rows as ``sqlite3.Row``, memory-mapped), kept open between
    reads; ``None`` without a usable index. Re-opened when the file's (device, inode, mtime) changed (a rebuild
    renames a new file into place) or in a forked child; at most four index files per thread stay open."""
    path = index_path(layout)
    try:
        st = os.stat(path)
    except OSError:
        return None
    held: dict[str, tuple[tuple[int, ...], sqlite3.Connection]] = _READERS.__dict__.setdefault("held", {})
    key, stamp = str(path), (os.getpid(), st.st_dev, st.st_ino, st.st_mtime_ns)
    kept = held.pop(key, None)
    if kept is not None and kept[0] == stamp:
        held[key] = kept  # the most recently used last
        return kept[1]
    if kept is not None:
        kept[1].close()
    conn = _open(layout)
    if conn is None:
        return None
    conn.execute("PRAGMA mmap_size = 268435456").fetchall()
    conn.row_factory = sqlite3.Row
    held[key] = (stamp, conn)
    while len(held) > _KEEP_READERS:
        held.pop(next(iter(held)))[1].close()
    return conn


def _drop_reader(path: Path) -> None:
    """Close this thread's kept connection to ``path`` (before a rebuild replaces it, or after an error)."""
    kept = _READERS.__dict__.get("held", {}).pop(str(path), None)
    if kept is not None:
        kept[1].close()


def screened(layout: Layout, keys: Sequence[str]) -> dict[str, tuple[str, str] | None]:
    """The remembered screening outcomes of ``keys`` (:func:`~git_memzoi.memzoi.records.secrets.screening_key`): per known
    key, ``(field, rule)`` of the first credential or ``None`` (clean); unknown keys are absent. Never raises."""
    try:
        conn = _reader(layout) if keys else None
        sql = f"SELECT key, field, rule FROM screened WHERE key IN ({', '.join('?' * len(keys))})"
        rows = [] if conn is None else conn.execute(sql, list(keys)).fetchall()
    except (sqlite3.DatabaseError, ToolError):
        return {}
    return {key: None if rule is None else (field, rule) for key, field, rule in rows}


def remember_screened(layout: Layout, rows: Sequence[tuple[str, str | None, str | None]]) -> None:
    """Remember ``(key, field, rule)`` screening outcomes (field and rule ``None``: clean) under the lock, best-effort:
    nothing when busy or unwritable, nor in a process whose watcher would take the write for another's and walk."""
    watcher = sys.modules.get(f"{__package__}.watch")
    if not rows or (watcher is not None and watcher.watching(layout)):  # the MCP server: its in-process cache serves
        return
    write_derived(layout, [("INSERT OR IGNORE INTO screened VALUES (?, ?, ?)", rows)], wait=0)


def drift(layout: Layout) -> str:
    """Read-only: ``missing`` (no usable index), ``current`` (matches the files) or ``stale`` (files changed
    since the last refresh; the next read refreshes it). For ``doctor``; never writes or locks."""
    stored = peek(layout, ["SELECT value FROM meta WHERE key = 'snapshot'"])
    if stored is None:
        return "missing"
    snapshot = _Scan.of(layout).snapshot()
    return "current" if stored[0] is not None and snapshot is not None and stored[0] == snapshot else "stale"


def peek(layout: Layout, queries: Sequence[str]) -> list[Any] | None:
    """Read-only, for ``doctor``: each query's first value (``None``: no row); ``None`` without a usable index
    (missing, of another schema, of the wrong kind or behind a symlink: doctor's ``local`` check names those)."""
    try:
        conn = _open(layout)
        if conn is None:
            return None
        with contextlib.closing(conn):
            return [(conn.execute(sql).fetchone() or (None,))[0] for sql in queries]
    except (InputError, sqlite3.DatabaseError):
        return None


# ------------------------------------------------------------------------------------------------ caches


def write_derived(layout: Layout, steps: Sequence[tuple[str, Sequence[Sequence[Any]]]], wait: float = 2.0) -> bool:
    """Run ``(sql, rows)`` steps (each ``executemany``) in one transaction on the index, under the lock (waiting
    at most ``wait`` seconds), best-effort: ``False`` (nothing written) when busy or unwritable, or the index now
    has another schema. For caches a later read can recompute (screening outcomes, vectors)."""
    uri = f"{checked_index(layout).as_uri()}?mode=rw"  # never creates a missing index
    with (
        contextlib.suppress(OSError, sqlite3.Error, ToolError),
        lifecycle_lock(layout.lock, wait, root=layout.private_root, counted=False),
        contextlib.closing(sqlite3.connect(uri, uri=True, timeout=max(wait, 0.05), isolation_level=None)) as conn,
    ):
        if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            return False
        conn.execute("BEGIN IMMEDIATE")  # closing rolls back a failure: all steps or none
        for sql, rows in steps:
            conn.executemany(sql, rows)
        conn.execute("COMMIT")
        return True
    return False
