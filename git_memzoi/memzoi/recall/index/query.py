"""The SQL of a full-text read of the derived index (pure: SQL text and parameters; db.py runs it).

Split from :mod:`git_memzoi.memzoi.recall.index.db`: how free text becomes an FTS5 query, which rows are current
assertions, and how the matches of the two FTS5 tables (:mod:`~git_memzoi.memzoi.recall.index.schema`) are
combined into one rank.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from git_memzoi.memzoi.recall.index.schema import FTS_COLUMNS, META_COLUMNS, WEIGHTS

# A row is recalled at instant t (three parameters, each t in microseconds: :func:`at`) iff it is active, its
# retention boundary is after t (expiry is inclusive: at the boundary it is out) and t lies in its business
# validity [valid_from, valid_to) - one rule, both ends "the first instant it is out" (records/validity.py).
_IN_TIME = (
    "(r.retention_boundary_us IS NULL OR r.retention_boundary_us > ?)"
    " AND (r.valid_from_us IS NULL OR r.valid_from_us <= ?) AND (r.valid_to_us IS NULL OR r.valid_to_us > ?)"
)
_STATUS = {False: "r.status = 'active'", True: "r.status IN ('active', 'superseded')"}
CURRENT = f"{_STATUS[False]} AND {_IN_TIME}"
HISTORY = f"{_STATUS[True]} AND {_IN_TIME}"  # --include-superseded: replaced claims too
# newest first: two rows stamped in one instant (a fixed clock, or one second: checkpoints are stamped to the
# second) in the order their files were written, not by id (a fresh user's walk resumed the older checkpoint)
NEWEST_FIRST = "r.updated_us DESC, (SELECT f.mtime_ns FROM files f WHERE f.path = r.path) DESC, r.id"


def current(include_superseded: bool = False) -> str:
    """The current-assertion condition (alias ``r``): :data:`CURRENT`, or :data:`HISTORY` with
    ``include_superseded`` (tombstoned, expired, rejected ... rows stay out either way)."""
    return HISTORY if include_superseded else CURRENT


def at(at_us: int) -> list[int]:
    """The parameters of :func:`current` for the instant ``at_us`` (microseconds since 1970)."""
    return [at_us, at_us, at_us]


FILTERS = ("scope_kind", "scope_id", "type", "lane", "store")  # store: record or entry (absent: both)


def fts_query(text: str) -> str | None:
    """The FTS5 query for free text (memzoi-spec.md §4): every run of letters, digits and ``_`` as a quoted
    term, joined with ``OR``, stop words left out unless there is no other term
    (:func:`~git_memzoi.memzoi.recall.stopwords.without_stop_words`); ``None`` when there is no term (the caller
    returns no results)."""
    from git_memzoi.memzoi.recall.stopwords import without_stop_words

    return " OR ".join(f'"{term}"' for term in without_stop_words(re.findall(r"\w+", text))) or None


def _bm25(table: str, columns: Sequence[str], weights: Mapping[str, float]) -> str:
    return f"bm25({table}, {', '.join(format(float(weights[c]), 'g') for c in columns)})"


def hits_sql(meta_candidates: bool = True) -> str:
    """The SQL of the matching rows and their rank: ``SELECT rowid, rank ...`` taking two parameters, the FTS5
    query of ``records_fts`` (title, body), then that of ``records_meta`` (tags, type, paths). A row matched in
    ``records_meta`` alone is one only with ``meta_candidates``; without, that table only adds to the rank of
    the rows ``records_fts`` matched (the all-terms tier: every term in the title or body).

    The ``records_meta`` matches (the fewer: a row's tags, type and paths are short) are scored once into a
    small table that each ``records_fts`` match looks its score up in (SQLite indexes it on the fly), rather
    than both lists being grouped by rowid: the same ranks, and a tenth less of a search's SQL time.
    """
    meta = (
        f"SELECT rowid, {_bm25('records_meta', META_COLUMNS, WEIGHTS)} AS score"
        " FROM records_meta WHERE records_meta MATCH ?2"
    )
    main = (
        f"SELECT f.rowid, {_bm25('records_fts', FTS_COLUMNS, WEIGHTS)}"
        " + coalesce((SELECT m.score FROM m WHERE m.rowid = f.rowid), 0) AS rank"
        " FROM records_fts f WHERE records_fts MATCH ?1"
    )
    alone = (
        " UNION ALL SELECT m.rowid, m.score FROM m WHERE m.rowid NOT IN"
        " (SELECT rowid FROM records_fts WHERE records_fts MATCH ?1)"
        if meta_candidates
        else ""
    )
    return f"WITH m(rowid, score) AS MATERIALIZED ({meta}) {main}{alone}"


def search_where(
    destinations: Sequence[str],
    now_us: int,
    filters: Mapping[str, str],
    path: str | None,
    path_match: Callable[[str, str], bool] | None,
    entry_match: Callable[[str, str], bool] | None,
    include_superseded: bool = False,
    timeless: bool = False,
) -> tuple[list[str], list[Any], dict[str, Callable[..., Any]]]:
    """The WHERE conditions of a search over current rows of ``destinations`` (alias ``r``), their parameters
    and the SQL functions they call (``now_us``: the as-of instant; ``include_superseded``: :data:`HISTORY`;
    ``timeless``: the lifecycle status only, for a caller applying retention and validity itself, as the
    semantic search's cached row sets do, :func:`~git_memzoi.memzoi.recall.index.vectors.allowed`):
    exact ``filters`` of :data:`FILTERS`, and ``path`` kept where
    ``path_match(stored, path)`` (an entry: ``entry_match``, default ``path_match``) holds for one stored path.

    Raises:
        ValueError: an unknown filter, or a ``path`` without ``path_match``.
    """
    status = _STATUS[include_superseded]
    where = [
        f"r.destination IN ({', '.join('?' * len(destinations))})",
        status if timeless else current(include_superseded),
    ]
    params: list[Any] = [*destinations, *([] if timeless else at(now_us))]
    for key, value in filters.items():
        if key not in FILTERS:
            raise ValueError(f"unknown search filter {key!r}")
        where.append(f"r.{key} = ?")
        params.append(value)
    functions: dict[str, Callable[..., Any]] = {}
    if path is not None:
        if path_match is None:
            raise ValueError("a path filter needs path_match")
        matchers = {"record": path_match, "entry": entry_match or path_match}
        functions["memzoi_path_match"] = lambda stored, store, requested: any(
            matchers[store](item, requested) for item in json.loads(stored)
        )
        where.append("memzoi_path_match(r.applies_to, r.store, ?)")
        params.append(path)
    return where, params, functions


def search_sql(where: Sequence[str], meta_candidates: bool, fast: bool) -> str:
    """The search query: parameters ``(fts query, meta query[, top], *where params, limit)`` (:func:`hits_sql`). ``fast``: filter
    and sort only the ``top`` best matches by rank, and add their count and worst rank to every row
    (``memzoi_top_count``, ``memzoi_top_edge``) for the exactness check; else every match."""
    hits = f"WITH hits(rowid, rank) AS ({hits_sql(meta_candidates)})"
    if fast:
        return (
            f"{hits}, top(rowid, rank) AS MATERIALIZED (SELECT rowid, rank FROM hits ORDER BY 2 LIMIT ?)"
            " SELECT r.*, top.rank AS rank, (SELECT count(*) FROM top) AS memzoi_top_count,"
            " (SELECT max(rank) FROM top) AS memzoi_top_edge"
            f" FROM top JOIN records r ON r.rowid = top.rowid WHERE {' AND '.join(where)}"
            " ORDER BY top.rank, r.updated_us DESC, r.id LIMIT ?"
        )
    return (
        f"{hits} SELECT r.*, hits.rank AS rank FROM hits JOIN records r ON r.rowid = hits.rowid "
        f"WHERE {' AND '.join(where)} ORDER BY rank, r.updated_us DESC, r.id LIMIT ?"
    )
