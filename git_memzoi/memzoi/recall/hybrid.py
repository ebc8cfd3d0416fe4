"""Semantic and hybrid candidate rows for :func:`~git_memzoi.memzoi.recall.search.search_rows` (issue 18).

- ``semantic``: the current rows passing every filter (destination, lifecycle and expiry, scope, type, lane,
  store, path: the lexical search's own WHERE, :func:`~git_memzoi.memzoi.recall.index.query.search_where`),
  ranked by cosine similarity to the query's vector (:func:`~git_memzoi.memzoi.recall.index.vectors.nearest`);
  a row below :data:`MIN_SIMILARITY`, or below :data:`RELATIVE_FLOOR` times the best row's similarity, is no
  match, so an unrelated query finds nothing, as lexically.
- ``hybrid``: the lexical and the semantic lists, each of ``3 × limit`` rows (filters applied before that
  limit in both), fused by Reciprocal Rank Fusion (:mod:`~git_memzoi.memzoi.recall.fusion`), cut to ``limit``.

Text without a search term (only punctuation, only stop words) finds nothing in every mode.
Every row carries ``scores``, the breakdown ``search --json`` shows: ``{mode, bm25: {rank, score} | None,
semantic: {rank, similarity} | None, rrf}`` (``rrf`` ``None`` outside hybrid), and ``rank``, lower is better as
bm25's: ``-similarity`` in semantic mode, ``-rrf`` in hybrid mode.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from git_memzoi.memzoi.recall import fusion

if TYPE_CHECKING:
    from git_memzoi.memzoi.recall.embedding import Embedder
    from git_memzoi.memzoi.workspace import Workspace

# A semantic candidate is no match below MIN_SIMILARITY (unrelated short texts sit around 0.1 to 0.2 under the
# bundled model), nor below RELATIVE_FLOOR x the best candidate's similarity: a query with one strong match does
# not drag loosely related rows in after it (the own corpus's "pre-edit" case: "never edit the lockfile" at 0.28
# beside the target's 0.51). Measured on evals/recall/paraphrase, both cost it nothing (evals/bench/README.md).
MIN_SIMILARITY = 0.2
RELATIVE_FLOOR = 0.6


def lexical_scores(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` (bm25, best first) with their ``scores`` breakdown."""
    ranked = fusion.ranks([(n, -float(row["rank"])) for n, row in enumerate(rows)])
    for (_, position), row in zip(ranked, rows, strict=True):
        row["scores"] = _scores("lexical", (position, row["rank"]), None, None)
    return rows


def semantic_rows(
    ws: Workspace,
    embedder: Embedder,
    query: str,
    *,
    where: tuple[list[str], list[Any], dict[str, Callable[..., Any]]],
    now_us: int,
    limit: int,
) -> list[dict[str, Any]]:
    """The ``limit`` rows most similar to ``query`` among those ``where`` (conditions, parameters, SQL
    functions on alias ``r``, built with no expiry: :func:`vectors.allowed`) allows and still current at
    ``now_us``, best first, each with ``similarity`` and ``rank`` = ``-similarity``."""
    from git_memzoi.memzoi.recall.index import db, vectors

    allowed = vectors.allowed(ws.layout, where, now_us)
    near = vectors.nearest(ws.layout, embedder, query, allowed, limit)
    floor = max(MIN_SIMILARITY, RELATIVE_FLOOR * near[0][1]) if near else 0.0
    near = [(rowid, sim) for rowid, sim in near if sim >= floor]
    if not near:
        return []
    sql = "SELECT r.*, r.rowid AS rowid FROM records r WHERE r.rowid IN (SELECT value FROM json_each(?))"
    by_rowid = {row["rowid"]: row for row in db._query(ws.layout, sql, (json.dumps([r for r, _ in near]),))}
    ordered = sorted(near, key=lambda n: (-n[1], by_rowid[n[0]]["id"]))
    rows = []
    for (rowid, position), (_, sim) in zip(fusion.ranks(ordered), ordered, strict=True):
        row = by_rowid[rowid]
        row.update(similarity=sim, rank=-sim, scores=_scores("semantic", None, (position, sim), None))
        rows.append(row)
    return rows


def fuse(
    lexical: Sequence[Mapping[str, Any]], semantic: Sequence[Mapping[str, Any]], *, k: int, limit: int
) -> list[dict[str, Any]]:
    """The RRF fusion of two best-first row lists (keyed by rowid), best first, at most ``limit``; each row's
    ``rank`` becomes ``-rrf`` and its ``scores`` the full breakdown."""
    rows: dict[int, dict[str, Any]] = {}
    for row in (*lexical, *semantic):
        rows.setdefault(row["rowid"], dict(row))
    bm25 = {row["rowid"]: -float(row["rank"]) for row in lexical}  # dicts keep the lists' order
    sims = {row["rowid"]: float(row["similarity"]) for row in semantic}
    ids = {rowid: str(row["id"]) for rowid, row in rows.items()}
    fused = fusion.rrf(list(bm25.items()), list(sims.items()), k=k, sort_key=ids)
    out = []
    for hit in fused[:limit]:
        row = rows[hit.key]
        lex = None if hit.lexical_rank is None else (hit.lexical_rank, -bm25[hit.key])
        sem = None if hit.semantic_rank is None else (hit.semantic_rank, sims[hit.key])
        row.update(rank=-hit.rrf, scores=_scores("hybrid", lex, sem, hit.rrf))
        out.append(row)
    return out


def _scores(
    mode: str, bm25: tuple[int, float] | None, semantic: tuple[int, float] | None, rrf: float | None
) -> dict[str, Any]:
    return {
        "mode": mode,
        "bm25": None if bm25 is None else {"rank": bm25[0], "score": -float(bm25[1])},
        # unrounded, as the result's score: a semantic hit's score is its similarity, a hybrid hit's its rrf
        "semantic": None if semantic is None else {"rank": semantic[0], "similarity": float(semantic[1])},
        "rrf": rrf,
    }
