"""The narrow index reads of the session-start context (io, through :mod:`~git_memzoi.memzoi.recall.index.db`).

At 10,000 records, turning every row into a dict costs more than the whole query (about 45 ms), so each read
here returns only the rows it asks for: the counts, the newest rows of one type, the ids, the rows of given ids,
the governance rows whose ``applies_to`` binds one of a set of paths (matched in SQL by a function memoized per
stored value), and ``show``'s ids with their ``supersedes``. Each refreshes the index first (once per
:func:`~git_memzoi.memzoi.recall.index.db.read_session`) and answers current assertions only (but
:func:`supersedes`, which answers every row).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from typing import Any

from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.recall.index import db, query
from git_memzoi.memzoi.recall.index.row_json import instant_micros

_WHERE = f"r.destination = ? AND r.store = ? AND {query.CURRENT}"


def _params(destination: str, store: str, now: dt.datetime) -> list[Any]:
    return [destination, store, *query.at(instant_micros(now))]


def counts(layout: Layout, destination: str, *, now: dt.datetime) -> dict[str, int]:
    """How many current rows ``destination`` holds per store: ``{"record": n, "entry": m}`` (0 when none)."""
    db._ensure_fresh(layout)
    sql = (
        f"SELECT r.store AS store, count(*) AS n FROM records r WHERE r.destination = ? AND {query.CURRENT} GROUP BY 1"
    )
    rows = db._query(layout, sql, (destination, *query.at(instant_micros(now))))
    return {"record": 0, "entry": 0, **{row["store"]: int(row["n"]) for row in rows}}


def newest(
    layout: Layout,
    destination: str,
    *,
    now: dt.datetime,
    types: Sequence[str] = (),
    store: str = "record",
    limit: int = 1,
) -> list[dict[str, Any]]:
    """The newest ``limit`` current rows (of ``types`` when given): ``updated_at`` DESC, id."""
    db._ensure_fresh(layout)
    where, params = _WHERE, _params(destination, store, now)
    if types:
        where += f" AND r.type IN ({', '.join('?' * len(types))})"
        params += types
    sql = f"SELECT r.* FROM records r WHERE {where} ORDER BY {query.NEWEST_FIRST} LIMIT ?"
    return db._query(layout, sql, (*params, limit))


def bound(
    layout: Layout,
    binds: Callable[[Sequence[str]], bool],
    *,
    now: dt.datetime,
    types: Sequence[str],
    store: str = "record",
) -> list[dict[str, Any]]:
    """The current repo rows of ``types`` in ``store`` whose ``applies_to`` list ``binds`` accepts (asked once
    per distinct stored value), newest first."""
    db._ensure_fresh(layout)
    seen: dict[str, bool] = {}

    def match(stored: str) -> bool:
        if stored not in seen:
            seen[stored] = binds(json.loads(stored))
        return seen[stored]

    where = f"{_WHERE} AND r.applies_to != '[]' AND r.type IN ({', '.join('?' * len(types))})"
    sql = f"SELECT r.* FROM records r WHERE {where} AND memzoi_binds(r.applies_to) ORDER BY {query.NEWEST_FIRST}"
    return db._query(layout, sql, (*_params("repo", store, now), *types), {"memzoi_binds": match})


def ids(layout: Layout, destination: str, *, now: dt.datetime, store: str = "record") -> list[str]:
    """The ids of the current rows of ``destination`` in ``store``, sorted."""
    db._ensure_fresh(layout)
    sql = f"SELECT r.id FROM records r WHERE {_WHERE} ORDER BY r.id"
    return [row["id"] for row in db._query(layout, sql, _params(destination, store, now))]


def by_ids(
    layout: Layout,
    destination: str,
    wanted: Sequence[str],
    *,
    now: dt.datetime,
    store: str = "record",
    limit: int = -1,
) -> list[dict[str, Any]]:
    """The current rows of ``destination`` in ``store`` with an id in ``wanted``, newest first, at most ``limit``
    (-1: all)."""
    if not wanted or limit == 0:
        return []
    db._ensure_fresh(layout)
    where = f"{_WHERE} AND r.id IN (SELECT value FROM json_each(?))"
    sql = f"SELECT r.* FROM records r WHERE {where} ORDER BY {query.NEWEST_FIRST} LIMIT ?"
    return db._query(layout, sql, (*_params(destination, store, now), json.dumps(list(wanted)), limit))


def supersedes(layout: Layout, destination: str, store: str = "record") -> dict[str, str | None]:
    """Every row of ``destination`` in ``store``, whatever its status (superseded and tombstoned records too, unlike
    the reads above): ``{id: supersedes id or None}``. ``show`` resolves its target and walks the lineage with it
    instead of parsing every record file."""
    db._ensure_fresh(layout)
    sql = "SELECT r.id AS id, r.supersedes_id AS supersedes FROM records r WHERE r.destination = ? AND r.store = ?"
    return {row["id"]: row["supersedes"] for row in db._query(layout, sql, (destination, store))}


def enveloped(layout: Layout, *, now: dt.datetime) -> list[dict[str, Any]]:
    """The current repository records that carry a ``memkeep`` envelope (a watched claim), by id: the few rows
    the pre-commit hook judges, without turning every other row into a dict."""
    db._ensure_fresh(layout)
    sql = f"SELECT r.* FROM records r WHERE {_WHERE} AND r.memkeep IS NOT NULL AND r.memkeep != '' ORDER BY r.id"
    return db._query(layout, sql, _params("repo", "record", now))
