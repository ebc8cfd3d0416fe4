"""The vectors of semantic recall, kept in the derived index and searched exactly (io, through
:mod:`~git_memzoi.memzoi.recall.index.db`).

Table ``vectors(key, vector)`` of the index holds one float32 vector (a plain BLOB, ``dimensions × 4`` bytes)
per embedded text, keyed by the BLAKE3 hash of that text (:func:`embedded_text`: title, tags, body), and
``meta.embedding_model`` names the model (:attr:`Embedder.identity`) every stored vector was made with. A read
under another model deletes them all in the same transaction that stores the first new one: vectors of two
models never mix.

Embedding is incremental and safe to interrupt: a read embeds only the texts whose hash has no vector yet (a
new or changed record or entry), in chunks of :data:`CHUNK`, each chunk committed alone; a process killed
mid-way keeps the finished chunks, and the next read embeds the rest. One read embeds for at most about
:data:`EMBED_BUDGET_S`: one chunk at least, and another only while the last one's time still fits in what is left
(the bundled transformer takes 5 to 11 ms a record by machine, a chunk 0.3 to 0.7 s), so a first hybrid search
of 10,000 records would otherwise wait one to two minutes. Rows still without a vector are left out of
that read's semantic list, and the read says so (:func:`partial_warning`, ``semantic_partial``). Writes are
best-effort (a busy index leaves the vectors in memory only). The process keeps the aligned matrix of the last index it saw
(:class:`VectorSet`), so a server (``git memzoi mcp serve``) reads and stacks vectors only after the index
changed; the search itself is one matrix-vector product over every row, then the rows the filters allowed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from git_memzoi.core.hashing import content_hash
from git_memzoi.memzoi.recall.embedding import numpy
from git_memzoi.memzoi.recall.index import db

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout
    from git_memzoi.memzoi.recall.embedding import Embedder

CHUNK = 64  # texts embedded and committed together: 0.3 to 0.7 s, so a read's budget holds several
EMBED_BUDGET_S = 2.0  # seconds of embedding one read may spend; later reads embed the rest
_MAX_ALLOWED = 32
_TEXTS = "SELECT rowid, title, body, tags FROM records"
_MODEL = "SELECT value FROM meta WHERE key = 'embedding_model'"
_OWNED = "(SELECT value FROM meta WHERE key = 'embedding_model')"
# one statement, one snapshot: the vectors are read only while the model that made them is the asked one
_STORED = f"SELECT key, vector FROM vectors WHERE key IN (SELECT value FROM json_each(?)) AND {_OWNED} = ?"
# every write claims the table in its own transaction: another model's vectors go first, so a process racing
# one of another model never leaves two models' vectors behind
_CLAIM = (
    f"DELETE FROM vectors WHERE coalesce({_OWNED}, '') != ?",
    "INSERT OR REPLACE INTO meta VALUES ('embedding_model', ?)",
)


@dataclass(frozen=True)
class VectorSet:
    """Every index row's vector under one model: ``rowids`` (sorted, int64), ``matrix`` (rows aligned,
    float32, normalised), ``by_key`` (text hash → vector, reused after a change), and the index ``stamp`` and
    model ``identity`` they are valid for; ``total``: every row of the index, those the embedding budget left
    without a vector (:attr:`missing`) included, though not in ``rowids``."""

    identity: str
    stamp: tuple[int, ...] | None
    rowids: Any
    matrix: Any
    by_key: Mapping[str, Any]
    total: int = 0

    @property
    def missing(self) -> int:
        """Rows left without a vector by the embedding budget."""
        return self.total - len(self.rowids)


_CACHE: dict[str, VectorSet] = {}


def index_stamp(layout: Layout) -> tuple[int, ...] | None:
    """The index file's (device, inode, mtime_ns, size): equal stamps, equal contents (``None``: no index)."""
    try:
        st = os.stat(layout.index)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def embedded_text(title: str, body: str, tags: str) -> str:
    """The text embedded for one index row: its title (an entry's claim), its tags, then its body."""
    return f"{title}\n{' '.join(json.loads(tags))}\n{body}"


def current(layout: Layout, embedder: Embedder, budget_s: float | None = None) -> VectorSet:
    """The vectors of every row of the (already refreshed) index under ``embedder``, embedding and storing the
    missing ones first for up to ``budget_s`` seconds (default :data:`EMBED_BUDGET_S`; ``math.inf``: all of
    them) (module rule)."""
    np = numpy()

    stamp = index_stamp(layout)
    cached = _CACHE.get(str(layout.index))
    if cached is not None and cached.stamp == stamp and cached.identity == embedder.identity and not cached.missing:
        return cached
    rows = [(row[0], embedded_text(row[1], row[2], row[3])) for row in db._run(layout, _TEXTS, (), None)]
    keys = [content_hash(text.encode("utf-8")) for _, text in rows]
    known: dict[str, Any] = dict(cached.by_key) if cached is not None and cached.identity == embedder.identity else {}
    wanted = sorted({key for key in keys if key not in known})
    if wanted:
        known.update(_stored(layout, embedder.identity, wanted))
    texts = {key: text for key, (_, text) in zip(keys, rows, strict=True) if key not in known}
    _embed_missing(layout, embedder, texts, known, set(keys), EMBED_BUDGET_S if budget_s is None else budget_s)
    order = sorted((n for n in range(len(rows)) if keys[n] in known), key=lambda n: rows[n][0])
    rowids = np.array([rows[n][0] for n in order], dtype=np.int64)
    matrix = np.zeros((len(order), embedder.dimensions), dtype=np.float32)
    for position, n in enumerate(order):
        matrix[position] = known[keys[n]]
    by_key = {k: known[k] for k in keys if k in known}
    vectors = VectorSet(embedder.identity, index_stamp(layout), rowids, matrix, by_key, len(rows))
    _CACHE.clear()  # one index per process is the common case; a second one costs a re-read
    _CACHE[str(layout.index)] = vectors
    return vectors


def stored(layout: Layout) -> tuple[str | None, int, int] | None:
    """Read-only, for ``doctor``: the index's ``(model identity or None, vectors stored, rows)``; ``None``
    without a usable index. Never builds, writes or locks."""
    found = db.peek(layout, (_MODEL, "SELECT count(*) FROM vectors", "SELECT count(*) FROM records"))
    if found is None:
        return None
    model, count, rows = found
    return (model, int(count or 0), int(rows or 0))


def partial_warning(layout: Layout) -> str | None:
    """The warning of a read whose semantic list left rows out for want of time to embed them (module rule):
    ``None`` when this process's last vectors of that index covered every row."""
    vectors = _CACHE.get(str(layout.index))
    if vectors is None or not vectors.missing:
        return None
    return (
        f"semantic recall covered {vectors.total - vectors.missing} of {vectors.total} records: the others are"
        " not embedded yet, and the next searches embed them (semantic_partial)"
    )


def _stored(layout: Layout, identity: str, keys: Sequence[str]) -> dict[str, Any]:
    """The stored vectors of ``keys`` when the index's model is ``identity`` (else none: never mixed)."""
    np = numpy()

    rows = db._run(layout, _STORED, (json.dumps(list(keys)), identity), None)
    return {key: np.frombuffer(blob, dtype=np.float32) for key, blob in rows}


def _embed_missing(
    layout: Layout, embedder: Embedder, texts: Mapping[str, str], known: dict[str, Any], live: set[str], budget_s: float
) -> None:
    """Embed ``texts`` (hash → text) chunk by chunk into ``known``, storing each chunk as it is done, until
    the next chunk, taking as long as the last one, would end after ``budget_s`` seconds (one chunk at least)."""
    import time

    np = numpy()

    pending = sorted(texts)
    deadline, last = time.monotonic() + budget_s, 0.0
    for start in range(0, len(pending), CHUNK):
        began = time.monotonic()
        if start and began + last > deadline:
            return
        chunk = pending[start : start + CHUNK]
        vectors = np.asarray(embedder.embed([texts[key] for key in chunk]), dtype=np.float32)
        last = time.monotonic() - began
        fresh = [(key, vectors[n].tobytes()) for n, key in enumerate(chunk)]
        known.update((key, vectors[n]) for n, key in enumerate(chunk))
        steps: list[tuple[str, Sequence[Sequence[Any]]]] = [(sql, [(embedder.identity,)]) for sql in _CLAIM]
        if start == 0:  # and drop the vectors no row uses any more
            prune = "DELETE FROM vectors WHERE key NOT IN (SELECT value FROM json_each(?))"
            steps.append((prune, [(json.dumps(sorted(live)),)]))
        steps.append(("INSERT OR REPLACE INTO vectors VALUES (?, ?)", fresh))
        db.write_derived(layout, steps)


_ALLOWED: dict[tuple[Any, ...], tuple[Any, Any]] = {}


def allowed(layout: Layout, where: tuple[Sequence[str], Sequence[Any], Mapping[str, Any]], now_us: int) -> Any:
    """The rowids (int64 array) of the rows ``where`` keeps (conditions, parameters and SQL functions of
    :func:`~git_memzoi.memzoi.recall.index.query.search_where`, built ``timeless``) recalled at ``now_us``: retention
    not ended and inside their business validity ``[valid_from, valid_to)`` (the rule of
    :data:`~git_memzoi.memzoi.recall.index.query.CURRENT`). Per index state and filters, the rows are read once
    and kept, so a server's next query with the same filters only compares their instants with the clock."""
    np = numpy()
    conditions, params, functions = where
    key = (index_stamp(layout), str(layout.index), tuple(conditions), tuple(params))
    kept = _ALLOWED.get(key)  # one lookup: another thread may clear the dict meanwhile
    if kept is None:
        sql = (
            "SELECT r.rowid, coalesce(r.retention_boundary_us, 9223372036854775807),"
            " coalesce(r.valid_from_us, -9223372036854775808), coalesce(r.valid_to_us, 9223372036854775807)"
            f" FROM records r WHERE {' AND '.join(conditions)}"
        )
        rows = np.array(db._run(layout, sql, params, functions, plain=True), dtype=np.int64).reshape(-1, 4)
        rows = rows[np.argsort(rows[:, 0], kind="stable")]  # by rowid, as VectorSet.rowids
        kept = (rows[:, 0].copy(), rows[:, 1:].copy())
        if len(_ALLOWED) >= _MAX_ALLOWED or any(k[0] != key[0] for k in list(_ALLOWED)):
            _ALLOWED.clear()
        _ALLOWED[key] = kept
    rowids, instants = kept
    return rowids[(instants[:, 0] > now_us) & (instants[:, 1] <= now_us) & (instants[:, 2] > now_us)]


def nearest(
    layout: Layout,
    embedder: Embedder,
    query: str,
    rows: Any,
    n: int,
) -> list[tuple[int, float]]:
    """The ``n`` rows of ``rows`` (rowids passing every filter: :func:`allowed`) most similar to ``query``:
    ``(rowid, cosine similarity)``, best first, ties by rowid. Nothing when the query embeds to the zero vector."""
    np = numpy()

    embed_query = getattr(embedder, "embed_query", embedder.embed)  # a model with a query prefix has its own
    q = np.array(embed_query([query])[0], dtype=np.float32)  # a fresh contiguous vector
    if n <= 0 or len(rows) == 0 or not q.any():
        return []
    vectors = current(layout, embedder)
    sims = vectors.matrix @ q
    wanted = np.asarray(rows, dtype=np.int64)
    if len(wanted) != len(vectors.rowids) or not np.array_equal(wanted, vectors.rowids):  # filtered: gather
        positions = np.minimum(np.searchsorted(vectors.rowids, wanted), max(len(vectors.rowids) - 1, 0))
        present = vectors.rowids[positions] == wanted if len(vectors.rowids) else np.zeros(len(wanted), dtype=bool)
        positions, wanted = positions[present], wanted[present]
        sims = sims[positions]
    take = min(n, len(sims))
    if take < len(sims):
        cut = np.argpartition(-sims, take - 1)[:take]
        sims, wanted = sims[cut], wanted[cut]
    order = np.lexsort((wanted, -sims))
    return [(int(wanted[i]), float(sims[i])) for i in order]
