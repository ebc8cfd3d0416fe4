"""The capture eval's vocabulary (memzoi-spec.md §11.3–11.4): actors, assertions and the hard gate each counts
against, an isolated case project, and what the capture surface was observed to do in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from git_memzoi.memzoi.capture.schema import PlanJson
    from git_memzoi.memzoi.workspace import Workspace

REVIEWER = "capture-eval-reviewer"
ROUTER = "capture-eval-router"
MAINTAINER = "capture-eval-maintainer"
ASSERTIONS = (
    "actions",
    "apply_workflow",
    "candidate_set",
    "classification",
    "data_class",
    "deterministic",
    "diagnostics",
    "evidence_integrity",
    "forbidden_suppressed",
    "named_evidence_only",
    "plan_status",
    "planning_no_write",
    "policy_inputs_declared",
    "profile_identity",
    "prohibited_no_echo",
    "provenance_and_citations",
    "repo_candidates_proposal_only",
    "review_workflow",
    "stale_apply_rejected",
    "stale_no_write",
    "stale_review_rejected",
)
# assertion → the hard gate its failure counts against (§11.4)
GATES = {
    "deterministic": "determinism_violations",
    "planning_no_write": "planning_mutation_violations",
    "evidence_integrity": "invalid_evidence_items",
    "named_evidence_only": "unnamed_source_reads",
    "prohibited_no_echo": "prohibited_output_echoes",
    "review_workflow": "review_workflow_violations",
    "provenance_and_citations": "provenance_violations",
    "stale_review_rejected": "stale_review_acceptance_violations",
    "stale_apply_rejected": "stale_apply_acceptance_violations",
    "stale_no_write": "stale_write_violations",
    "repo_candidates_proposal_only": "direct_canonical_write_violations",
}
HARD_GATES = (*GATES.values(), "required_profile_skips")


@dataclass(frozen=True)
class Project:
    """One isolated case project: its context, the request (pinned ids mapped onto the built commits), the
    supplied source bytes and the substitutions applied to the case."""

    ws: Workspace
    case: dict[str, Any]
    request: dict[str, Any]
    supplied: dict[str, bytes]
    renames: Mapping[str, str]


@dataclass
class Observed:
    """What the capture surface did for one case: both plans, timings, the review and apply results (or the
    error codes they raised), and every text the surface emitted (for the no-echo check)."""

    plan: PlanJson
    deterministic: bool
    wrote_while_planning: bool
    latency_ms: float
    payload_bytes: int
    review: dict[str, Any] | None = None
    review_error: str | None = None
    applied: dict[str, Any] | None = None
    apply_error: str | None = None
    records: list[dict[str, Any]] | None = None
    records_before: dict[str, str] | None = None
    direct_write: bool = False
    emitted: str = ""
