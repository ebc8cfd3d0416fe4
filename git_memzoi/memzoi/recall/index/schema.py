"""The tables of the derived index and how its full-text columns are weighted (pure: SQL text and values, no I/O).

Split from :mod:`git_memzoi.memzoi.recall.index.db`, which runs this SQL (and alone imports sqlite3).

Two FTS5 tables share each record's (or memkeep entry's) rowid: ``records_fts`` holds ``title`` (an entry's
claim) and ``body``, exactly as memzoi-spec.md §4 and upstream do; ``records_meta`` holds ``tags``
(space-separated), ``type`` and ``paths`` (a record's ``applies_to``, an entry's scope globs; the tokenizer
splits ``src/auth/salt.py`` into ``src auth salt py``, so a path query, a phrase, matches it). vault-memory's
lesson is that fields left out of the index make exact queries miss, so all five columns match; they sit in
two tables because bm25 normalises by the length of the whole row: in one table a record's long path would
push it below a record of the same title and body, and the upstream corpus's order would change.

A row's rank is the sum of its two bm25 scores (lower is better; a table the query does not match adds 0),
each with the column weights of :data:`WEIGHTS` (a hit in a column counts ``weight`` times). They were chosen
on a tuning corpus (``evals/bench/recall_quality.py --tune``) that shares no vocabulary or query with the
benchmark corpus the numbers are reported on; see docs/memzoi.md "How ranking works".

``vectors`` holds semantic recall's float32 vectors by text hash (:mod:`~git_memzoi.memzoi.recall.index.vectors`,
whose ``meta.embedding_model`` names their model); ``records_filtered`` covers the filter columns, so a semantic
search lists the rows its filters allow without reading their text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

# The records table, in order: one record file (or memkeep entry) a row (rows.py fills them).
COLUMNS = (
    "path",
    "id",
    "plane",
    "destination",
    "type",
    "lane",
    "title",
    "body",
    "description",
    "scope_kind",
    "scope_id",
    "visibility",
    "content_class",
    "status",
    "confidence",
    "applies_to",
    "tags",
    "source_kind",
    "source_ref",
    "proposal_id",
    "supersedes_id",
    "created_at",
    "updated_at",
    "updated_us",
    "retention",
    "retention_boundary_us",
    "retention_reason",
    "origin",
    "lineage",
    "capture",
    "memkeep",
    "content_hash",
    "store",
    "line",
    "valid_from",  # business validity, records/validity.py: as written, and in microseconds for the filter
    "valid_to",
    "valid_from_us",
    "valid_to_us",
    "locked",  # 1 when the file says locked: true (records/lock.py)
)

SCHEMA_VERSION = (
    7  # the file's PRAGMA user_version; another is rebuilt, never migrated (5: validity, locks; 6: links; 7: vectors)
)
FTS_COLUMNS = ("title", "body")  # records_fts
META_COLUMNS = ("tags", "type", "paths")  # records_meta
WEIGHTS: dict[str, float] = {"title": 4.0, "body": 1.0, "tags": 4.0, "type": 0.25, "paths": 1.0}
DDL = """
CREATE TABLE files (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ino INTEGER NOT NULL,
    problem_code TEXT, problem_reason TEXT
) WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB);
CREATE TABLE records (
    rowid INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, id TEXT NOT NULL, plane TEXT NOT NULL,
    destination TEXT NOT NULL, type TEXT NOT NULL, lane TEXT NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL,
    description TEXT, scope_kind TEXT NOT NULL, scope_id TEXT, visibility TEXT NOT NULL,
    content_class TEXT NOT NULL, status TEXT NOT NULL, confidence REAL NOT NULL, applies_to TEXT NOT NULL,
    tags TEXT NOT NULL, source_kind TEXT, source_ref TEXT, proposal_id TEXT, supersedes_id TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, updated_us INTEGER NOT NULL, retention TEXT NOT NULL,
    retention_boundary_us INTEGER, retention_reason TEXT NOT NULL, origin TEXT NOT NULL, lineage TEXT,
    capture TEXT, memkeep TEXT, content_hash TEXT NOT NULL, store TEXT NOT NULL, line INTEGER,
    valid_from TEXT, valid_to TEXT, valid_from_us INTEGER, valid_to_us INTEGER, locked INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX files_with_problems ON files(path) WHERE problem_code IS NOT NULL;
CREATE INDEX records_by_id ON records(id);
CREATE INDEX records_by_destination ON records(destination, status);
CREATE INDEX records_filtered ON records(
    destination, status, store, type, lane, scope_kind, scope_id, retention_boundary_us
);
CREATE VIRTUAL TABLE records_fts USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE records_meta USING fts5(tags, type, paths, tokenize = 'unicode61 remove_diacritics 2');
CREATE TABLE screened (key TEXT PRIMARY KEY, field TEXT, rule TEXT) WITHOUT ROWID;
CREATE TABLE vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID;
"""
INSERT_RECORD = f"INSERT INTO records ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
INSERT_RECORD_AT = f"INSERT INTO records (rowid, {', '.join(COLUMNS)}) VALUES (?, {', '.join('?' * len(COLUMNS))})"
INSERT_FTS = "INSERT INTO records_fts (rowid, title, body) VALUES (?, ?, ?)"
INSERT_META = "INSERT INTO records_meta (rowid, tags, type, paths) VALUES (?, ?, ?, ?)"
_AT = {name: COLUMNS.index(name) for name in ("title", "body", "tags", "type", "applies_to")}


def fts_values(values: Sequence[Any]) -> tuple[str, str]:
    """The ``records_fts`` values (title, body) of one records-table row (``values`` in :data:`COLUMNS`
    order)."""
    return values[_AT["title"]], values[_AT["body"]]


def meta_values(values: Sequence[Any]) -> tuple[str, str, str]:
    """The ``records_meta`` values of one records-table row: the tags and the ``applies_to`` paths, each joined
    by a space, and the type."""
    return (
        " ".join(json.loads(values[_AT["tags"]])),
        values[_AT["type"]],
        " ".join(json.loads(values[_AT["applies_to"]])),
    )
