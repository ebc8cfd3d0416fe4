"""Reads shared by the relation features (io): current record rows by id, a record's status, and whether a file
still has the bytes it was indexed with (:mod:`~git_memzoi.memzoi.recall.index.links`).

Split out so :mod:`~git_memzoi.memzoi.recall.related`, :mod:`~git_memzoi.memzoi.recall.depends` and
:mod:`~git_memzoi.memzoi.recall.statements` share them without importing each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout
    from git_memzoi.memzoi.workspace import Workspace


def current_rows(ws: Workspace, ids: Iterable[str]) -> dict[str, Mapping[str, Any]]:
    """The current repository record rows of ``ids`` at the workspace clock's now, by id (ids without one are
    absent). Refreshes the index first (once per read session)."""
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.recall.index.query import CURRENT, at
    from git_memzoi.memzoi.recall.index.row_json import instant_micros

    wanted = sorted(set(ids))
    if not wanted:
        return {}
    sql = (
        "SELECT r.* FROM records r WHERE r.destination = 'repo' AND r.store = 'record' AND"
        f" r.id IN ({', '.join('?' * len(wanted))}) AND {CURRENT}"
    )
    now = instant_micros(ws.recall_at())  # the as-of instant of the read (default now)
    return {row["id"]: row for row in index_db.select(ws.layout, sql, [*wanted, *at(now)])}


def record_status(layout: Layout, record_id: str) -> str | None:
    """The status of the repository record ``record_id`` in the index (``active`` for one whose retention ended),
    or ``None`` when no record has that id: a broken relation."""
    from git_memzoi.memzoi.recall.index import db as index_db

    sql = "SELECT status FROM records WHERE destination = 'repo' AND store = 'record' AND id = ?"
    rows = index_db.select(layout, sql, [record_id])
    return None if not rows else str(rows[0]["status"])


def source_fresh(layout: Layout, rel: str, indexed_hash: str) -> bool:
    """Whether the file ``rel`` (repository-relative) still has the bytes it was indexed with (BLAKE3 of the
    whole file); an unreadable or vanished file is not."""
    from git_memzoi.core import safe_read
    from git_memzoi.core.hashing import content_hash
    from git_memzoi.memzoi.records.store import MAX_RECORD_BYTES

    try:
        data = safe_read.read_bytes(layout.root / rel, MAX_RECORD_BYTES)
    except (OSError, safe_read.FileRefused):
        return False
    return content_hash(data) == indexed_hash
