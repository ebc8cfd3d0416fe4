"""The categorized statements of a record, read from the derived index (io; vault-memory F04).

A record's statements (:mod:`~git_memzoi.memzoi.records.statements`) come from
:mod:`~git_memzoi.memzoi.recall.index.links` with their file lines and the hash of the file they were read
from. ``state`` says whether they can be trusted: ``indexed`` (the file still has those bytes), ``stale`` (the
file changed since: no old statement is returned until the index catches up, which the next refresh does) or
``unindexed`` (the index has no marker for the file). A record without statements is ``indexed`` with none.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout

STATES = ("indexed", "stale", "unindexed")


def of_file(layout: Layout, rel: str) -> dict[str, Any]:
    """``{"state", "source_hash", "statements": [{"id", "category", "text", "lines": [start, end]}, ...]}`` of the
    record file ``rel`` (repository-relative), statements in file order; none unless ``state`` is ``indexed``."""
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.recall.linked import source_fresh

    marker = index_db.select(layout, "SELECT source_hash FROM link_sources WHERE path = ?", [rel])
    if not marker:
        return {"state": "unindexed", "source_hash": None, "statements": []}
    source_hash = str(marker[0]["source_hash"])
    if not source_fresh(layout, rel, source_hash):
        return {"state": "stale", "source_hash": source_hash, "statements": []}
    sql = "SELECT record_id, category, text, line_start, line_end FROM statements WHERE path = ? ORDER BY ordinal"
    items, seen = [], Counter[tuple[str, str]]()
    for row in index_db.select(layout, sql, [rel]):
        seen[row["category"], row["text"]] += 1
        items.append(
            {
                "id": statement_id(row["record_id"], row["category"], row["text"], seen[row["category"], row["text"]]),
                "category": row["category"],
                "text": row["text"],
                "lines": [row["line_start"], row["line_end"]],
            }
        )
    return {"state": "indexed", "source_hash": source_hash, "statements": items}


def statement_id(record_id: str, category: str, text: str, occurrence: int) -> str:
    """``<record id>#<12 hex>``: BLAKE3 of the category, the text and which occurrence of that pair it is, so an
    identical snapshot keeps its ids (vault-memory F04), and moving a statement to another line keeps its own."""
    from git_memzoi.core.hashing import short_hash

    data = "\0".join((category, text, str(occurrence))).encode("utf-8")
    return f"{record_id}#{short_hash(data, 12)}"
