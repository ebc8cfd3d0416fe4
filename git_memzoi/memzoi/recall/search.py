"""Full-text recall over current records (memzoi-spec.md §4): the query rule, filters and the result JSON (io).

Only current assertions (status ``active``, retention ``current`` at the clock's now) of one destination are
searched; ``git memzoi search`` is repo-only, so local and session records never leak into it. The SQL lives in
:mod:`git_memzoi.memzoi.recall.index.db`; this module turns free text into an FTS5 query that cannot fail.

The query rule (upstream's, with two refinements from field report BR-01):

- The text is cut into *terms*: maximal runs of letters, digits and ``_``. Runs joined by ``-``, ``.``, ``'``,
  the right single quote, ``/``, ``:`` or ``@`` form one compound term (``pre-edit``, ``node.js``, ``gpt-4o``,
  ``src/app.py``), searched as one phrase: ``pre-edit`` finds "pre-edit", not every record with "edit".
  Every other character (quotes, ``*``, parentheses, emoji, ...) only separates terms, and each term is quoted,
  so words like ``AND``, ``OR``, ``NOT`` and ``NEAR`` are plain words. Text without a term finds nothing.
  A term ending in a character of an unspaced script (Han, kana, Thai, ...) is a prefix query, since the
  tokenizer keeps such a run as one long token.
- Stop words (Lucene's English list, :mod:`~git_memzoi.memzoi.recall.stopwords`) are left out as whole terms,
  unless the text holds nothing else, so "the" alone never makes a record match (issue 20).
- Terms are OR-ed and ranked by bm25 (lower is better), then ``updated_at`` newest first, then id, as upstream.
  The bm25 weighs a hit by the column it is in: title, tags and paths above the body
  (:data:`~git_memzoi.memzoi.recall.index.schema.WEIGHTS`).
  Refinement: with several terms, records holding *every* term come first (each tier in that order). So
  ``database migration`` returns the records about both first, and records holding only one of the words
  after them, never an empty result because the words are not adjacent. For a single term, and for upstream's
  recall-v2 corpus, the order is exactly upstream's.
- Filters (scope kind, scope id, type, lane, path) apply inside the candidate set, before the limit.

Modes (issue 18; :mod:`~git_memzoi.memzoi.recall.modes`): the rule above is ``lexical``; ``semantic`` ranks the
same filtered rows by the similarity of their vectors to the query's, and ``hybrid`` fuses both lists by
Reciprocal Rank Fusion (:mod:`~git_memzoi.memzoi.recall.hybrid`). Every result carries its ``scores``.

Both stores (DESIGN.md "One memory"): memkeep entries (``agent-memory/entries/*.md``) are indexed beside the
records and searched with them (title = the entry's claim), unless ``store`` narrows the search to ``records`` or
``entries``. Every result names its ``store`` (``record`` / ``entry``), its ``claim`` and, in its citation, the
``file`` and ``line`` it comes from. Suspect results (a record's envelope, an entry's memkeep report) are flagged,
never dropped; among results of *equal* bm25 rank (equal text relevance) the trusted ones come first, otherwise
the order above stands.

A returned record holding a credential (a hand-edited record file) is withheld, as ``context`` does: it is left
out of ``results`` and listed in ``withheld`` by id, field and rule, never its text (:func:`withhold`). Whether a
record holds one is remembered in the index by its content, so a later process skips detect-secrets for it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from git_memzoi.core.paths import request_path
from git_memzoi.core.patterns import lazy
from git_memzoi.errors import InputError
from git_memzoi.memzoi.recall.budget import UNSPACED
from git_memzoi.memzoi.recall.fusion import CANDIDATES_PER_RESULT, DEFAULT_K
from git_memzoi.memzoi.recall.index import db as index_db
from git_memzoi.memzoi.recall.pathmatch import citation_path, path_matches_request, scope_covers
from git_memzoi.memzoi.recall.stopwords import without_stop_words
from git_memzoi.memzoi.records import vocab

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout
    from git_memzoi.memzoi.recall.schema import (
        CitationJson,
        NoteJson,
        RecordJson,
        SearchJson,
        SearchResultJson,
        SuspectJson,
        WithheldJson,
    )
    from git_memzoi.memzoi.workspace import Workspace

DEFAULT_LIMIT, MAX_LIMIT = 10, 100
MAX_TERMS = 64
RATIONALE = "fts5 title/body match"
SEMANTIC_RATIONALE = "semantic match"  # found by meaning alone: no bm25 rank in its scores


def lexically_matched(row: Mapping[str, Any]) -> bool:
    """Whether a result row was found by its words (a bm25 rank), not by meaning alone (issue 18)."""
    scores = row.get("scores")
    return not isinstance(scores, dict) or scores.get("mode") == "lexical" or scores.get("bm25") is not None


_TERM = lazy("\\w+(?:[-.'\u2019/:@]+\\w+)*")
_WORD = lazy(r"[^\W_]+")
_UNSPACED_END = lazy(f"[{UNSPACED}]$")


@dataclass(frozen=True)
class SearchResponse:
    """``git memzoi search``: the query, destination, effective limit, filters and results (best first).

    Each result is the §4 result object: ``{record, score, snippet, rationale, ranking, paths, citations,
    suspect}`` where ``suspect`` is ``{"reasons": [...]}`` or ``None``.
    """

    query: str
    destination: str
    limit: int
    filters: Mapping[str, str]
    path: str | None
    results: tuple[SearchResultJson, ...]
    withheld: tuple[WithheldJson, ...] = ()
    store: str = "all"
    notes: tuple[NoteJson, ...] = ()
    mode: str = "lexical"
    mode_warning: str | None = None

    @property
    def warnings(self) -> list[str]:
        """One line per withheld record (its id, field and rule, never the value), then a mode fallback's."""
        return [withheld_warning(w) for w in self.withheld] + ([self.mode_warning] if self.mode_warning else [])

    def to_json(self) -> SearchJson:
        """The ``search --json`` object."""
        return {
            "query": self.query,
            "destination": self.destination,
            "limit": self.limit,
            "filters": dict(self.filters),
            "path": self.path,
            "results": list(self.results),
            "withheld": [w.copy() for w in self.withheld],
            "warnings": self.warnings,
            "store": self.store,
            "notes": [n.copy() for n in self.notes],
            "mode": self.mode,
        }


def terms(text: str) -> list[str]:
    """The search terms of free text, each as the words of one phrase joined by a space (deduplicated,
    case-insensitively, first spelling kept; at most 64). ``"pre-edit (draft)"`` → ``["pre edit", "draft"]``."""
    seen: dict[str, str] = {}
    for match in _TERM.finditer(text):
        phrase = " ".join(_WORD.findall(match.group()))
        if phrase and phrase.casefold() not in seen:
            seen[phrase.casefold()] = phrase
    return list(seen.values())[:MAX_TERMS]


def fts_expression(phrases: Sequence[str], operator: str = "OR") -> str | None:
    """The FTS5 expression joining quoted ``phrases`` with ``operator`` (``OR`` or ``AND``); ``None`` if empty.

    A phrase never contains ``"`` (terms hold only word characters), so quoting is always safe.
    """
    if not phrases:
        return None
    # an ASCII phrase cannot end in an unspaced script: the CJK class is built only for text that may
    quoted = (f'"{p}"*' if not p.isascii() and _UNSPACED_END.search(p) else f'"{p}"' for p in phrases)
    return f" {operator} ".join(quoted)


def check_filters(
    *,
    scope_kind: str | None = None,
    memory_type: str | None = None,
    lane: str | None = None,
    scope_id: str | None = None,
) -> dict[str, str]:
    """The index filters of the given values.

    Raises:
        InputError: a value outside its vocabulary (``invalid_scope_kind``, ``invalid_type``, ``invalid_lane``)
            or an empty scope id (``invalid_scope_id``).
    """
    filters: dict[str, str] = {}
    for key, value, allowed in (
        ("scope_kind", scope_kind, vocab.SCOPE_KINDS),
        ("type", memory_type, vocab.TYPES),
        ("lane", lane, vocab.LANES),
    ):
        if value is not None:
            if value not in allowed:
                code = "invalid_type" if key == "type" else f"invalid_{key}"
                raise InputError(f"{key} must be one of {', '.join(allowed)}", code)
            filters[key] = value
    if scope_id is not None:
        if not scope_id.strip():
            raise InputError("scope_id must not be empty", "invalid_scope_id")
        filters["scope_id"] = scope_id
    return filters


STORE_CHOICES = {"records": "record", "entries": "entry", "all": None}


def store_filter(store: str) -> str | None:
    """The index ``store`` value of a ``--store`` choice: ``records`` → ``record``, ``entries`` → ``entry``,
    ``all`` → ``None`` (both).

    Raises:
        InputError: any other value (``invalid_store``).
    """
    if store not in STORE_CHOICES:
        raise InputError("store must be one of records, entries, all", "invalid_store")
    return STORE_CHOICES[store]


def trusted_first(rows: list[T], suspect: Callable[[T], bool], rank: Callable[[T], Any]) -> list[T]:
    """``rows`` with each run of equal ``rank`` (adjacent, as the query sorted them) reordered trusted first,
    suspect after, each side keeping its order; rows of different ranks never move past each other."""
    out: list[T] = []
    n = 0
    while n < len(rows):
        end = n + 1
        while end < len(rows) and rank(rows[end]) == rank(rows[n]):
            end += 1
        run = rows[n:end]
        out += [r for r in run if not suspect(r)] + [r for r in run if suspect(r)]
        n = end
    return out


def relevance(scores: Sequence[float]) -> list[float]:
    """Each score (``-bm25``, higher is better) as a share of the best one: 1.0 for the best match, 0.5 for one
    half as relevant. What text output prints: a raw bm25 magnitude says nothing on its own, since it shrinks
    with the index (FTS5 floors a word's idf at 1e-6 when half the records or more hold it, so on a one-record
    index an exact match scores 0.000003). ``[]`` for no scores; all 1.0 when the best is not above 0.
    """
    best = max(scores, default=0.0)
    if best <= 0:
        return [1.0 for _ in scores]
    return [max(score, 0.0) / best for score in scores]


def effective_limit(limit: int) -> int:
    """``limit`` as applied: 0 means 10, at most 100.

    Raises:
        InputError: a negative limit (``bad_limit``).
    """
    if limit < 0:
        raise InputError("--limit must be 0 or more", "bad_limit")
    return min(limit or DEFAULT_LIMIT, MAX_LIMIT)


def search_rows(
    ws: Workspace,
    query: str,
    *,
    destination: str = "repo",
    filters: Mapping[str, str] | None = None,
    path: str | None = None,
    limit: int = DEFAULT_LIMIT,
    mode: str = "lexical",
    rrf_k: int = DEFAULT_K,
) -> list[dict[str, Any]]:
    """Index rows of current records of ``destination`` matching ``query``, best first, in ``mode`` (see the
    module rule; ``rrf_k``: hybrid's RRF constant).

    Each row carries ``rank`` (lower is better: bm25, ``-similarity`` or ``-rrf``) and ``scores``. ``limit`` is
    taken as given (callers apply :func:`effective_limit`). Raises what :func:`embedder.load` raises.
    """
    from git_memzoi.memzoi.recall import hybrid

    phrases = without_stop_words(terms(query))
    if not phrases or limit <= 0:
        return []
    path = path.strip() if path else None
    if mode == "lexical":
        return hybrid.lexical_scores(_lexical_rows(ws, phrases, destination, filters, path, limit))
    from git_memzoi.memzoi.recall import embedder, modes
    from git_memzoi.memzoi.recall.index.query import search_where
    from git_memzoi.memzoi.recall.index.row_json import instant_micros

    model = embedder.load(ws.layout, modes.settings(ws.layout).model_dir)
    fetch = CANDIDATES_PER_RESULT * limit if mode == "hybrid" else limit
    index_db._ensure_fresh(ws.layout)
    now_us = instant_micros(ws.recall_at())  # the as-of instant (workspace.py)
    timeless = search_where(
        (destination,),
        now_us,
        filters or {},
        path,
        path_matches_request,
        scope_covers,
        include_superseded=ws.include_superseded,
        timeless=True,
    )
    semantic = hybrid.semantic_rows(ws, model, query, where=timeless, now_us=now_us, limit=fetch)
    if mode == "semantic":
        return semantic
    lexical = _lexical_rows(ws, phrases, destination, filters, path, fetch)
    return hybrid.fuse(lexical, semantic, k=rrf_k, limit=limit)


def _lexical_rows(
    ws: Workspace,
    phrases: Sequence[str],
    destination: str,
    filters: Mapping[str, str] | None,
    path: str | None,
    limit: int,
) -> list[dict[str, Any]]:
    """The lexical rule's rows: every-term tier first, then any-term (module rule)."""
    kwargs: dict[str, Any] = {"now": ws.recall_at(), "destinations": (destination,), "filters": filters or {}}
    kwargs["include_superseded"] = ws.include_superseded  # the workspace's as-of view (workspace.py)
    if path:
        kwargs.update(path=path, path_match=path_matches_request, entry_match=scope_covers)
    first: list[dict[str, Any]] = []
    any_term = fts_expression(phrases) or ""
    if len(phrases) > 1:  # every term in the title or body; a tags/type/paths hit adds to the rank
        every = fts_expression(phrases, "AND") or ""
        first = index_db.search_rows(ws.layout, every, limit=limit, meta_query=any_term, **kwargs)
        if len(first) >= limit:
            return first
    rest = index_db.search_rows(ws.layout, any_term, limit=limit + len(first), **kwargs)
    taken = {row["rowid"] for row in first}
    return (first + [row for row in rest if row["rowid"] not in taken])[:limit]


def result(
    row: Mapping[str, Any], query: str, requested_path: str | None, suspect: SuspectJson | None = None
) -> SearchResultJson:
    """The §4 result object of one index row: record JSON, ``score = -bm25`` (0 without a rank), snippet,
    rationale, ``ranking: None``, paths, one citation, ``suspect`` (``None`` when not suspect), then ``store``
    (``record`` or ``entry``) and ``claim`` (a record's title, an entry's first body line). An entry's record JSON
    is built from its index row: ``memory_type`` is the entry's type, ``source_kind`` ``memkeep``."""
    from git_memzoi.memzoi.recall.index import db as index_db

    record = index_db.record_json(row)
    paths = sorted(json.loads(row["applies_to"]))
    if row.get("store") == "entry" and requested_path:
        from git_memzoi.memzoi.recall.pathmatch import scope_score

        covering = scope_score(paths, requested_path)[1]
        paths = sorted(paths, key=lambda p: p != covering)  # the covering glob is the one cited
    lowered = query.strip().lower()
    snippet = record["title"] if lowered and lowered in record["title"].lower() else record["body"][:240]
    rank = row.get("rank")
    return {
        "record": record,
        "score": 0.0 if rank is None else -float(rank),
        "snippet": snippet,
        "rationale": RATIONALE if lexically_matched(row) else SEMANTIC_RATIONALE,
        "ranking": None,
        "paths": [{"path": p, "symbol": None, "line_start": None, "line_end": None} for p in paths],
        "citations": [citation(record, _cited_path(row, paths, requested_path), row)],
        "suspect": None if suspect is None else suspect.copy(),
        "store": row.get("store") or "record",
        "claim": row["title"],
        "scores": row.get("scores"),
    }


def _cited_path(row: Mapping[str, Any], paths: Sequence[str], requested: str | None) -> str | None:
    """An entry cites the scope glob listed first (the covering one); a record its matching ``applies_to`` path."""
    if row.get("store") == "entry":
        return paths[0] if paths else None
    return citation_path(paths, requested)


def citation(record: RecordJson, path: str | None, row: Mapping[str, Any] | None = None) -> CitationJson:
    """The §4 citation of a record JSON: ``provenance`` (and ``plane``) is ``git`` for repo records, ``runtime``
    for local and session ones; with the index ``row``, also its ``store``, ``file`` (the record or entry file,
    repository-relative) and ``line`` (a record's body start, an entry's claim line)."""
    plane = "git" if record["destination"] == "repo" else "runtime"
    out: CitationJson = {
        "record_id": record["id"],
        "memory_type": record["memory_type"],
        "scope_kind": record["scope_kind"],
        "provenance": plane,
        "plane": plane,
        "destination": record["destination"],
        "visibility": record["visibility"],
        "source_kind": record["source_kind"],
        "source_ref": record["source_ref"],
        "path": path,
    }
    if "capture" in record:
        out["capture"] = record["capture"]
    if row is not None:
        out["store"] = row.get("store") or "record"
        out["file"] = row["path"]
        out["line"] = row.get("line")
    return out


def withhold(
    layout: Layout, rows: Sequence[Mapping[str, Any]], *, sized: bool = False
) -> tuple[list[Mapping[str, Any]], list[WithheldJson]]:
    """Split index rows into those safe to show and those holding a credential (a hand-edited record file, one
    pulled from a commit made with ``--no-verify``): ``search``, ``precheck`` and ``context`` withhold alike.

    Rows screened before, by any process, are answered from the index's screening cache
    (:func:`index_db.screened`, keyed by :func:`~git_memzoi.memzoi.records.secrets.screening_key`); the others get one
    detect-secrets pass, and their outcome is remembered.

    Returns:
        ``(kept, withheld)``: ``kept`` in the given order; ``withheld`` as ``{record_id, title: "[withheld]", type,
        lane, destination, reason: "prohibited_content_detected", rule, field, path}`` (``path`` is the record
        file; with ``sized``, ``estimated_size: 0`` after ``destination``, as in a context pack's ``omitted``),
        sorted by destination and id. Never the matched text, nor the record's title.
    """
    from git_memzoi.memzoi.records import secrets

    fields = [_scanned(row) for row in rows]
    keys = [secrets.screening_key(f) for f in fields]
    known = index_db.screened(layout, [key for key in keys if key is not None])
    missing = [n for n, key in enumerate(keys) if key is None or key not in known]
    hits = [known.get(key) if key is not None else None for key in keys]
    if missing:
        found = secrets.first_credentials([fields[n] for n in missing])
        for n, hit in zip(missing, found, strict=True):
            hits[n] = None if hit is None else (hit[0], hit[1].rule)
        index_db.remember_screened(
            layout, [(key, *(hits[n] or (None, None))) for n in missing if (key := keys[n]) is not None]
        )
    kept = [row for row, hit in zip(rows, hits, strict=True) if hit is None]
    size: _Sized = {"estimated_size": 0} if sized else {}
    withheld: list[WithheldJson] = [
        {
            "record_id": row["id"],
            "title": "[withheld]",
            "type": row["type"],
            "lane": row["lane"],
            "destination": row["destination"],
            **size,
            "reason": "prohibited_content_detected",
            "rule": hit[1],
            "field": hit[0],
            "path": row["path"],
        }
        for row, hit in zip(rows, hits, strict=True)
        if hit is not None
    ]
    return kept, sorted(withheld, key=lambda w: (w["destination"], w["record_id"]))


class _Sized(TypedDict, total=False):
    estimated_size: int


def _scanned(row: Mapping[str, Any]) -> dict[str, object]:
    """The fields of a row that recall can print (the record JSON's text), in the order their finding is named."""
    fields: dict[str, object] = {key: row[key] for key in ("title", "body", "description", "source_ref", "scope_id")}
    fields["applies_to"] = json.loads(row["applies_to"])
    for key in ("capture", "origin", "lineage"):
        fields[key] = None if row[key] is None else json.loads(row[key])
    fields.update(source_kind=row["source_kind"], proposal_id=row["proposal_id"], supersedes_id=row["supersedes_id"])
    return fields


def withheld_warning(entry: Mapping[str, Any]) -> str:
    """The warning naming a withheld record (the wording of ``context``'s)."""
    return (
        f"memory {entry['record_id']} was left out: its {entry['field']} holds a credential ({entry['rule']}; "
        f"not printed); remove it from {entry['path']}"
    )


T = TypeVar("T")


def fresh_index(func: Callable[..., T]) -> Callable[..., T]:
    """Run a recall entry point (``fn(ws, ...)``) inside one :func:`index_db.read_session`: one refresh."""

    @functools.wraps(func)
    def wrapper(ws: Workspace, *args: Any, **kwargs: Any) -> T:
        with index_db.read_session(ws.layout):
            return func(ws, *args, **kwargs)

    return wrapper


@fresh_index
def search(
    ws: Workspace,
    query: str,
    *,
    scope_kind: str | None = None,
    scope_id: str | None = None,
    memory_type: str | None = None,
    lane: str | None = None,
    path: str | None = None,
    limit: int = DEFAULT_LIMIT,
    destination: str = "repo",
    log: bool = True,
    store: str = "all",
    mode: str | None = None,
) -> SearchResponse:
    """``git memzoi search``: current records of ``destination`` (repo unless a caller opts in) matching
    ``query``, best first, each marked ``suspect`` when its memkeep envelope is stale; memkeep entries too
    (``store``: ``records``, ``entries`` or ``all``, the default), judged by memkeep's report. ``mode``:
    ``lexical``, ``semantic``, ``hybrid``, or ``None`` for the configured default
    (:func:`~git_memzoi.memzoi.recall.modes.resolve`).

    Appends a ``memory.searched`` event (destination, result ids and count; never the query text) when ``log``.

    Raises:
        InputError: an invalid filter value or a negative limit; a path outside the repository
            (``path_outside_repo``); an unknown store (``invalid_store``); an unknown mode (``invalid_mode``), a
            semantic mode without a model (``semantic_model_missing``) or a refused model directory.
    """
    from git_memzoi.memzoi.recall import modes, suspect
    from git_memzoi.memzoi.recall.tree import path_notes
    from git_memzoi.memzoi.recall.unreadable import unreadable_notes

    if destination not in ("repo", "local", "session"):
        raise InputError("destination must be repo, local or session", "invalid_destination")
    filters = check_filters(scope_kind=scope_kind, memory_type=memory_type, lane=lane, scope_id=scope_id)
    only = store_filter(store)
    if only is not None:
        filters["store"] = only
    limit = effective_limit(limit)
    path = request_path(path, ws.layout.root)
    how = modes.resolve(ws.layout, mode)
    found = search_rows(
        ws, query, destination=destination, filters=filters, path=path, limit=limit, mode=how.mode, rrf_k=how.rrf_k
    )
    rows, withheld = withhold(ws.layout, found)
    suspects = suspect.mark(ws, rows)
    rows = trusted_first(list(rows), lambda r: suspect.key(r) in suspects, lambda r: r.get("rank"))
    results = tuple(result(row, query, path, suspects.get(suspect.key(row))) for row in rows)
    if log:
        log_event(
            ws,
            "memory.searched",
            {"destination": destination, "count": len(results), "result_ids": [r["record"]["id"] for r in results]},
        )
    notes = (*path_notes(ws, path), *unreadable_notes(ws, [destination]))
    warning = how.warning or semantic_warning(ws, how.mode)
    return SearchResponse(
        query, destination, limit, filters, path, results, tuple(withheld), store, notes, how.mode, warning
    )


def semantic_warning(ws: Workspace, mode: str) -> str | None:
    """``semantic_partial`` when a semantic or hybrid read left records out unembedded, else ``None``."""
    if mode == "lexical":
        return None
    from git_memzoi.memzoi.recall.index import vectors

    return vectors.partial_warning(ws.layout)


def log_event(ws: Workspace, event_type: str, payload: Mapping[str, Any]) -> None:
    """Append one read audit event (ids and counts only) under the lifecycle lock, without an fsync (a read's
    reply does not wait on the disk; :func:`git_memzoi.memzoi.records.events.append`)."""
    from git_memzoi.core.atomic import lifecycle_lock
    from git_memzoi.memzoi.records import events

    with lifecycle_lock(
        ws.layout.lock, root=ws.layout.private_root, counted=False
    ):  # the event log is no record: the index stays fresh
        events.append(ws.layout, event_type, ws.actor, ws.clock.now(), payload, durable=False)
