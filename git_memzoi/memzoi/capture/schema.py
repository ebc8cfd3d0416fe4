"""The shapes of capture (memzoi-spec.md §9): what a profile extracts and the ``memzoi/capture-plan-v1`` plan, as
named types.

Each is a :class:`~typing.TypedDict`: the profiles (:mod:`~git_memzoi.memzoi.capture.profiles`) return
:class:`ExtractedJson` candidates and :class:`DiagnosticJson` diagnostics, and :mod:`~git_memzoi.memzoi.capture.plan`
classifies them into the :class:`CandidateJson` items of a :class:`PlanJson`. The key order of an object is its
builder's, never the order here (a plan's id hashes its bytes). Pure: names only, nothing is built or read.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class ScopeJson(TypedDict):
    """Where a captured memory applies: the scope kind and id, and its paths."""

    kind: str
    id: str | None
    paths: list[str]


class MemoryJson(TypedDict):
    """The memory a candidate proposes (its ``claim_id`` hashes it)."""

    type: str
    lane: str
    title: str
    body: str
    scope: ScopeJson
    tags: list[str]


class SpanJson(TypedDict):
    """The bytes and lines of the source an evidence item quotes (lines 1-based, inclusive)."""

    byte_start: int
    byte_end: int
    line_start: int
    line_end: int


class EvidenceJson(TypedDict):
    """One quoted piece of a source: where it is, its hashes and text, the headings above it (§9.7)."""

    source_id: str
    locator: dict[str, Any]
    source_content_hash: str
    span: SpanJson
    evidence_content_hash: str
    text: str
    heading_path: list[str]
    section_kind: str
    semantic_location: NotRequired[dict[str, Any]]


class ExtractedJson(TypedDict):
    """A profile's candidate before the plan classifies it: the memory, its evidence, and the routing hints the
    plan consumes (``routed_destination`` and the optional ones are never part of the plan's candidate)."""

    claim_id: str
    candidate_id: str
    memory: MemoryJson
    evidence: list[EvidenceJson]
    extraction: dict[str, str]
    confidence: str
    routed_destination: str | None
    suggested_destination: NotRequired[str | None]
    reason_code: NotRequired[str]
    destination_reason: NotRequired[str | None]
    content_class: NotRequired[str]
    prohibited: NotRequired[ProhibitedJson]


class ProhibitedJson(TypedDict):
    """Why a candidate is blocked (a credential on a fenced line of its section): the rules and the first line."""

    detectors: list[str]
    line_start: int


class DiagnosticJson(TypedDict):
    """Something a profile could not capture, or why a plan is blocked: a code, the source and line, and for
    prohibited content the detectors and classes found (never the text)."""

    code: str
    source_id: str
    line_start: int
    path: NotRequired[str]
    reason: NotRequired[str]
    detectors: NotRequired[list[str]]
    classes: NotRequired[list[str]]
    candidate_id: NotRequired[str]


class MatchJson(TypedDict):
    """An inventory item (or an earlier candidate) a candidate duplicates or conflicts with."""

    kind: str
    id: str
    destination: str
    content_hash: str
    status: str
    updated_at: str | None


class ActionJson(TypedDict):
    """What applying the candidate would do, by ``kind``: ``duplicate`` and ``conflict`` name their matches,
    ``create_proposal`` the reserved proposal id, ``create_runtime`` its route, ``no_write`` its reason code,
    ``previously_rejected`` the review that rejected the same content, ``blocked`` the line and rules found."""

    kind: str
    matches: NotRequired[list[MatchJson]]
    match_count: NotRequired[int]
    proposal_id: NotRequired[str]
    route: NotRequired[str]
    reason_code: NotRequired[str]
    review_id: NotRequired[str]
    reviewed_at: NotRequired[str]
    line_start: NotRequired[int]
    detectors: NotRequired[list[str]]


class ClassificationJson(TypedDict):
    """Where a candidate would go and why, and its sensitivity and content class."""

    destination: str
    destination_reason: str
    sensitivity: str
    sensitivity_reason: str
    content_class: str | None
    policy: dict[str, str | None]


class CandidateJson(TypedDict):
    """One candidate of a plan: the extracted memory and evidence, classified (§9.6)."""

    claim_id: str
    candidate_id: str
    memory: MemoryJson
    evidence: list[EvidenceJson]
    extraction: dict[str, str]
    confidence: str
    classification: ClassificationJson
    action: ActionJson


class PlanSummaryJson(TypedDict):
    """A plan's counts (``needs_review``: the no-write candidates and the conflicts)."""

    sources: int
    candidates: int
    create_proposals: int
    runtime_writes: int
    duplicates: int
    conflicts: int
    needs_review: int
    blocked: int
    previously_rejected: int


class PreconditionsJson(TypedDict):
    """What apply re-checks before writing: the source's and the inventory's hashes."""

    source_content_hash: str
    inventory_hash: str


class PlanBodyJson(TypedDict):
    """A plan without its id: what the id (``capture_`` + the hash of these bytes) is computed from. A blocked
    plan has no ``sources``, ``safeguards`` or ``preconditions`` (and ``extractor`` only when known)."""

    schema: str
    status: str
    data_class: str
    request: dict[str, Any]
    sources: NotRequired[list[dict[str, Any]]]
    safeguards: NotRequired[dict[str, str]]
    preconditions: NotRequired[PreconditionsJson]
    extractor: NotRequired[dict[str, Any]]
    candidates: list[CandidateJson]
    summary: PlanSummaryJson
    diagnostics: list[DiagnosticJson]


class PlanJson(PlanBodyJson):
    """``capture plan --json``: the ``memzoi/capture-plan-v1`` artifact, ``plan_id`` first."""

    plan_id: str
