"""Capture for an agent over MCP (io; issue 15): the plan of one Markdown file as the agent may see it, and one
call that reviews and applies the decisions its user made.

The agent never holds the plan artifact: :func:`submit` plans again from the same source and requires the plan id
the agent saw, so a changed source or inventory is ``stale_capture_plan`` and nothing is written. A candidate
that is not repo-safe (local, session, unresolved, blocked) is shown without its text (:func:`agent_view`): its
id, type, destination, action and line span are enough to ask the user, who can read the source.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from git_memzoi.memzoi.workspace import Workspace

SUBMIT_SCHEMA = "memzoi/capture-submit-result-v1"
REDACTED = "[REDACTED:private]"


def plan(ws: Workspace, path: str, source_id: str) -> dict[str, Any]:
    """The markdown-deterministic plan of ``path`` as :func:`agent_view` shows it (reads only).

    Raises:
        CaptureError: every source and extractor rule of :func:`git_memzoi.memzoi.capture.plan.plan`.
    """
    from git_memzoi.memzoi.capture import plan as capture_plan

    return agent_view(capture_plan.plan(ws, path, source_id))


def agent_view(planned: Any) -> dict[str, Any]:
    """``planned`` with the memory text, tags, heading path and evidence text of every candidate whose
    sensitivity is not ``repo-safe`` replaced by :data:`REDACTED`, and so the id of every duplicate or conflict
    match that is a local or session runtime record; ``redacted_candidates`` lists the candidates (only present
    when there are any). A repo-safe plan without such matches comes back unchanged: it is what ``capture plan
    --json`` prints.
    """
    out: dict[str, Any] = copy.deepcopy(dict(planned))
    hidden = []
    for c in out.get("candidates", ()):
        for match in c["action"].get("matches", ()):
            if match["destination"] not in ("repo", "needs_review"):  # a runtime record's id is its title's slug
                match["id"] = REDACTED
        if c["classification"]["sensitivity"] == "repo-safe":
            continue
        hidden.append(c["candidate_id"])
        c["memory"].update({"title": REDACTED, "body": REDACTED, "tags": []})
        for evidence in c["evidence"]:
            evidence["text"] = REDACTED
            evidence["heading_path"] = [REDACTED for _ in evidence["heading_path"]]
    if hidden:
        out["redacted_candidates"] = hidden
    return out


def submit(ws: Workspace, path: str, source_id: str, plan_id: str, decisions: Any, reviewed_by: str) -> dict[str, Any]:
    """Review the live plan of ``path`` with ``decisions`` (one per candidate, the ``decisions`` list of a
    ``memzoi/capture-review-input-v1`` file) as ``reviewed_by`` now, then apply it: repo candidates become pending
    proposal packets for a maintainer, local and session ones private runtime records; the decisions are
    remembered (:mod:`~git_memzoi.memzoi.capture.decisions`).

    Returns:
        ``{schema, plan_id, review_id, data_class, decisions: [{candidate_id, outcome}], writes,
        decisions_remembered}``; never any memory text.

    Raises:
        CaptureError: ``stale_capture_plan`` (the plan id is not the live plan's), ``invalid_review`` and every
            other rule of :func:`~git_memzoi.memzoi.capture.review.review` and
            :func:`~git_memzoi.memzoi.capture.review.apply`; nothing is written.
    """
    from git_memzoi.memzoi.capture import plan as capture_plan
    from git_memzoi.memzoi.capture import review as capture_review
    from git_memzoi.memzoi.capture.profiles.markdown import CaptureError
    from git_memzoi.memzoi.records import okf

    live = capture_plan.plan(ws, path, source_id)
    if live["plan_id"] != plan_id:
        raise CaptureError(
            "stale capture plan: the source or memory inventory changed since it was planned; plan again",
            "stale_capture_plan",
        )
    review = capture_review.review(
        ws,
        live,
        {"schema": capture_review.REVIEW_INPUT_SCHEMA, "plan_id": plan_id, "decisions": decisions},
        reviewed_by=reviewed_by,
        reviewed_at=okf.format_timestamp(ws.clock.now()),
    )
    applied = capture_review.apply(ws, live, review, plan_id=plan_id, review_id=review["review_id"])
    return {
        "schema": SUBMIT_SCHEMA,
        "plan_id": plan_id,
        "review_id": review["review_id"],
        "data_class": review["data_class"],
        "decisions": [{"candidate_id": d["candidate_id"], "outcome": d["outcome"]} for d in review["decisions"]],
        "writes": applied["writes"],
        "decisions_remembered": applied["decisions_remembered"],
    }
