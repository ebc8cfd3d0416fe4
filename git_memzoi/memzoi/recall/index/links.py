"""The derived index's relation and statement tables (no sqlite3 import: db.py runs this SQL on its connection).

A record's ``relations:`` (:mod:`~git_memzoi.memzoi.records.relations`) and its body's categorized statements
(:mod:`~git_memzoi.memzoi.records.statements`, vault-memory F04) are indexed with the file lines they come from,
and every indexed record file has a marker in ``link_sources`` holding the BLAKE3 hash of the whole file as it
was read (also for files without a relation or a statement). A reader compares that hash with the file on disk:
a source changed since it was indexed is ``stale`` and yields no old statement and no old relation
(vault-memory "Categorized statements": a change not yet indexed returns no old statements; "Domain relation
roles": a changed declaring source returns ``stale_relation``). Markdown stays authoritative; deleting the
index loses nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

DDL = """
CREATE TABLE link_sources (path TEXT PRIMARY KEY, record_id TEXT NOT NULL, source_hash TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE relations (
    path TEXT NOT NULL, ordinal INTEGER NOT NULL, source_id TEXT NOT NULL, role TEXT NOT NULL, target TEXT NOT NULL,
    target_kind TEXT NOT NULL, line INTEGER NOT NULL, PRIMARY KEY (path, ordinal)
) WITHOUT ROWID;
CREATE INDEX relations_by_target ON relations(target);
CREATE INDEX relations_by_source ON relations(source_id);
CREATE INDEX relations_by_role ON relations(role);
CREATE TABLE statements (
    path TEXT NOT NULL, ordinal INTEGER NOT NULL, record_id TEXT NOT NULL, category TEXT NOT NULL, text TEXT NOT NULL,
    line_start INTEGER NOT NULL, line_end INTEGER NOT NULL, PRIMARY KEY (path, ordinal)
) WITHOUT ROWID;
CREATE INDEX statements_by_record ON statements(record_id);
"""


@dataclass(frozen=True)
class Links:
    """What one record file adds to these tables: its id, the hash of its bytes, its relations as ``(role,
    target, target_kind, line)`` and its statements as ``(category, text, line_start, line_end)``."""

    record_id: str
    source_hash: str
    relations: tuple[tuple[str, str, str, int], ...]
    statements: tuple[tuple[str, str, int, int], ...]


class Row(tuple):  # type: ignore[type-arg]
    """A records-table row (values in :data:`~.schema.COLUMNS` order) carrying the :class:`Links` of its file."""

    links: Links | None = None


def with_links(values: tuple[Any, ...], links: Links) -> Row:
    """``values`` as a :class:`Row` carrying ``links``."""
    row = Row(values)
    row.links = links
    return row


def extract(record: Any, data: bytes, parts: Any) -> Links:
    """The :class:`Links` of a valid record (an :class:`~git_memzoi.memzoi.records.okf.Record`) read from
    ``data`` (the file's bytes, cut into ``parts`` by :func:`~git_memzoi.core.frontmatter.split`): relation
    lines from its frontmatter, statement lines from its body."""
    from git_memzoi.core.hashing import content_hash
    from git_memzoi.memzoi.records import relations, statements

    rels: tuple[tuple[str, str, str, int], ...] = ()
    if record.relations:
        first_yaml_line = 1 + parts.opening.count("\n")
        lines = relations.item_lines(parts.yaml_text, len(record.relations), first_yaml_line)
        rels = tuple(
            (r.role, r.target, "path" if r.targets_path else "record", line)
            for r, line in zip(record.relations, lines, strict=True)
        )
    found = statements.parse(parts.body, parts.body_start_line) if "[" in parts.body else ()
    stmts = tuple((s.category, s.text, s.line_start, s.line_end) for s in found)
    return Links(record.id, content_hash(data), rels, stmts)


INSERTS = (
    "INSERT INTO link_sources VALUES (?, ?, ?)",
    "INSERT INTO relations VALUES (?, ?, ?, ?, ?, ?, ?)",
    "INSERT INTO statements VALUES (?, ?, ?, ?, ?, ?, ?)",
)


def rows_of(path: str, row: Sequence[Any]) -> tuple[list[tuple[Any, ...]], ...]:
    """The rows of the three link tables (:data:`INSERTS` order) for the file ``path`` whose records row is
    ``row``: nothing for a row without links (a memkeep entry)."""
    links = getattr(row, "links", None)
    if links is None:
        return ([], [], [])
    return (
        [(path, links.record_id, links.source_hash)],
        [(path, n, links.record_id, *rel) for n, rel in enumerate(links.relations)],
        [(path, n, links.record_id, *stmt) for n, stmt in enumerate(links.statements)],
    )


def insert(conn: Any, path: str, row: Sequence[Any]) -> None:
    """Index the links a :class:`Row` carries (nothing for a row without: a memkeep entry)."""
    for sql, rows in zip(INSERTS, rows_of(path, row), strict=True):
        if rows:  # most records have no relation or statement: no statement to run
            conn.executemany(sql, rows)


def forget(conn: Any, path: str) -> None:
    """Remove the rows of the file ``path`` (changed, removed or unreadable now)."""
    if conn.execute("DELETE FROM link_sources WHERE path = ?", (path,)).rowcount:  # only an indexed record has rows
        conn.execute("DELETE FROM relations WHERE path = ?", (path,))
        conn.execute("DELETE FROM statements WHERE path = ?", (path,))
