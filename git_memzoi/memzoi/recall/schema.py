"""The ``--json`` shapes of recall (memzoi-spec.md §4 search, §5 context and handoff, §6 precheck), as named types.

Both stores (DESIGN.md "One memory"): a result, a precheck warning and a pack's included item name their
``store`` (``record`` or ``entry``: a memkeep entry under ``agent-memory/entries/``) and ``claim``; a citation
built from the index names its ``store``, ``file`` and ``line``. These fields were added in wave 2; every
older field keeps its name, type and place.

Each is a :class:`~typing.TypedDict`: the builders in :mod:`~git_memzoi.memzoi.recall.search`,
:mod:`~git_memzoi.memzoi.recall.precheck`, :mod:`~git_memzoi.memzoi.recall.pack` and
:mod:`~git_memzoi.memzoi.recall.suspect` return these, and the CLI and the MCP server print them as built. The key
order of an object is its builder's, never the order here. Pure: names only, nothing is built or read.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class RecordJson(TypedDict):
    """The record JSON of §4, from an index row (``capture`` only for captured memory)."""

    id: str
    memory_type: str
    lane: str
    destination: str
    scope_kind: str
    scope_id: str | None
    visibility: str
    title: str
    body: str
    status: str
    confidence: float
    source_kind: str | None
    source_ref: str | None
    proposal_id: str | None
    capture: NotRequired[dict[str, Any]]
    content_hash: str
    created_at: str
    updated_at: str
    supersedes_id: str | None
    retention: dict[str, Any]
    origin: dict[str, Any]
    lineage: dict[str, Any] | None
    valid_from: NotRequired[str]  # records/validity.py; present only when set
    valid_to: NotRequired[str]
    locked: NotRequired[bool]  # records/lock.py; present (true) only on a locked record


class CitationJson(TypedDict):
    """Where a recalled memory comes from: ``provenance`` (and ``plane``) ``git`` for repo records, ``runtime``
    for local and session ones; ``path`` is the cited ``applies_to`` path (``None`` without one)."""

    record_id: str
    memory_type: str
    scope_kind: str
    provenance: str
    plane: str
    destination: str
    visibility: str
    source_kind: str | None
    source_ref: str | None
    path: str | None
    capture: NotRequired[dict[str, Any]]
    store: NotRequired[str]
    file: NotRequired[str]
    line: NotRequired[int | None]


class NoteJson(TypedDict):
    """A note about the request itself, not a memory: ``path_not_in_tree`` (a ``--path`` neither tracked nor
    present in the working tree), ``semantic_unavailable`` (precheck: a configured semantic mode without a
    model; ``path`` null), ``semantic_partial`` (precheck: records left out unembedded by the read's embedding
    budget; ``path`` null)."""

    code: str
    path: str | None
    message: str


class VerdictJson(TypedDict):
    """One reason a record is suspect: a memkeep verdict (``scope_hit``, ``ttl_expired``, ``dependency_suspect``,
    ``anchor_unreachable``...), its message and its evidence keys."""

    reason: str
    message: str
    evidence: dict[str, Any]


class SuspectJson(TypedDict):
    """A suspect record's mark: its verdicts, in the staleness core's order."""

    reasons: list[VerdictJson]


class PathJson(TypedDict):
    """One ``applies_to`` path of a result (symbol and lines are never known: ``None``)."""

    path: str
    symbol: str | None
    line_start: int | None
    line_end: int | None


class SignalsJson(TypedDict):
    """The ranking signals of a context-pack candidate (§5)."""

    fts_match: bool
    fts_score: float
    path_score: int
    type_priority: int
    lane_priority: int
    destination_priority: int
    confidence: float


class RankingJson(TypedDict):
    """A context-pack candidate's score, the signals it is made of, and the reasons in words."""

    score: float
    signals: SignalsJson
    reasons: list[str]


class ScoresJson(TypedDict):
    """How a result ranked (issue 18): its mode, bm25 rank (1-based) and score (``-bm25``), semantic rank and
    cosine similarity, and the RRF score of hybrid mode; a method that did not find it is ``None``."""

    mode: str
    bm25: dict[str, float] | None
    semantic: dict[str, float] | None
    rrf: float | None


class SearchResultJson(TypedDict):
    """One search result (§4), also a context pack's ``records`` item (``ranking`` set only there); ``scores``
    is ``None`` for a context pack's path-only match."""

    record: RecordJson
    score: float
    snippet: str
    rationale: str
    ranking: RankingJson | None
    paths: list[PathJson]
    citations: list[CitationJson]
    suspect: SuspectJson | None
    store: str
    claim: str
    scores: ScoresJson | None


class WithheldJson(TypedDict):
    """A recalled record left out because it holds a credential: where and which rule, never its text (in a
    context pack's ``omitted``, with ``estimated_size`` 0)."""

    record_id: str
    title: str
    type: str
    lane: str
    destination: str
    estimated_size: NotRequired[int]
    reason: str
    rule: str
    field: str
    path: str


class SearchJson(TypedDict):
    """``search --json``."""

    query: str
    destination: str
    limit: int
    filters: dict[str, str]
    path: str | None
    results: list[SearchResultJson]
    withheld: list[WithheldJson]
    warnings: list[str]
    store: str
    notes: list[NoteJson]
    mode: str


class WarningJson(TypedDict):
    """One precheck warning (§6): ``severity`` is ``high`` for a risk, else ``warning``."""

    id: str
    record_id: str
    message: str
    severity: str
    citations: list[CitationJson]
    suggested_next_step: str
    suspect: SuspectJson | None
    store: str
    claim: str
    superseded: bool  # a replaced record brought back by --include-superseded: history, not current guidance


class PrecheckJson(TypedDict):
    """``precheck --json`` (``withheld`` only when a record was withheld, ``notes`` only when there is one:
    ``path_not_in_tree``)."""

    warnings: list[WarningJson]
    withheld: NotRequired[list[WithheldJson]]
    notes: NotRequired[list[NoteJson]]


class PolicyJson(TypedDict):
    """The destinations a context pack was asked for and those its records came from."""

    include_local: bool
    include_session: bool
    requested_destinations: list[str]
    included_destinations: list[str]


class BudgetJson(TypedDict):
    """A context pack's budget, counted in ``approx_words``."""

    requested: int | None
    effective: int
    used: int
    unit: str
    estimated_used: int
    estimate_unit: str
    estimator: str
    candidate_records: int
    selected_records: int
    rendered_words: int
    truncated: bool


class IncludedJson(TypedDict):
    """A record a context pack's prompt shows (``truncated`` when only in part)."""

    record_id: str
    title: str
    type: str
    lane: str
    scope_kind: str
    path: str | None
    citation: CitationJson
    provenance: str
    destination: str
    score: float
    rationale: str
    estimated_size: int
    truncated: bool
    suspect: SuspectJson | None
    store: str
    relation: NotRequired[dict[str, Any]]  # context --expand: the relation that brought it (recall/expand.py)


class OmittedJson(TypedDict):
    """A relevant record a context pack left out for its budget."""

    record_id: str
    title: str
    type: str
    lane: str
    destination: str
    estimated_size: int
    reason: str


class ContextPackJson(TypedDict):
    """``context --json`` (§5): the prompt, its records and citations, the budget, what was left out and why."""

    id: str
    task: str
    prompt: str
    records: list[SearchResultJson]
    citations: list[CitationJson]
    token_budget: int | None
    policy: PolicyJson
    budget: BudgetJson
    included: list[IncludedJson]
    omitted: list[WithheldJson | OmittedJson]
    warnings: list[str]
    next_queries: list[str]
    created_at: str
    store: str
    notes: list[NoteJson]
    mode: str  # the recall mode the task was matched in (issue 18), as search's


class InboxCountsJson(TypedDict):
    """The open review inbox of a handoff (``source`` is ``review``: inbox proposals and file packets alike, as
    ``git memzoi review`` lists them; ``by_source`` splits ``open_total`` by proposal/session-end/capture/...)."""

    source: str
    open_total: int
    pending: int
    validated: int
    approved: int
    by_source: dict[str, int]


class HandoffJson(TypedDict):
    """``handoff --json`` (§5 "Handoff"): the context pack for the next agent and the open inbox counts."""

    id: str
    task: str
    path_prefix: str | None
    token_budget: int | None
    include_local: bool
    include_session: bool
    proposal_inbox: InboxCountsJson
    context: ContextPackJson
    created_at: str
