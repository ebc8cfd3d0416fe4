"""The categorized statements of a record, read from the derived index (io; vault-memory F04).

A record's statements (:mod:`~git_memzoi.memzoi.records.statements`) come from
:mod:`~git_memzoi.memzoi.recall.index.links` with their file lines and the hash of the file they were read
from. ``state`` says whether they can be trusted: ``indexed`` (the file still has those bytes), ``stale`` (the
file changed since: no old statement is returned until the index catches up, which the next refresh does) or
``unindexed`` (the index has no marker for the file). A record without statements is ``indexed`` with none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout

STATES = ("indexed", "stale", "unindexed")


def of_file(layout: Layout, rel: str) -> dict[str, Any]:
    """``{"state", "source_hash", "statements": [{"category", "text", "lines": [start, end]}, ...]}`` of the
    record file ``rel`` (repository-relative), statements in file order; none unless ``state`` is ``indexed``."""
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.recall.linked import source_fresh

    marker = index_db.select(layout, "SELECT source_hash FROM link_sources WHERE path = ?", [rel])
    if not marker:
        return {"state": "unindexed", "source_hash": None, "statements": []}
    source_hash = str(marker[0]["source_hash"])
    if not source_fresh(layout, rel, source_hash):
        return {"state": "stale", "source_hash": source_hash, "statements": []}
    sql = "SELECT category, text, line_start, line_end FROM statements WHERE path = ? ORDER BY ordinal"
    items = [
        {"category": row["category"], "text": row["text"], "lines": [row["line_start"], row["line_end"]]}
        for row in index_db.select(layout, sql, [rel])
    ]
    return {"state": "indexed", "source_hash": source_hash, "statements": items}
