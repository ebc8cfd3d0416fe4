"""Prompt-ready context packs and agent handoffs (memzoi-spec.md §5), staleness-aware (io).

A pack gathers candidates per requested destination (repo, plus local and session only when asked): up to 50
full-text matches of the task and, with a path, up to 50 current records bound to that path. It scores them
(path binding, memory type, text match, lane, destination, confidence, bm25), drops duplicates, walks them in
rank order into the budget and renders the prompt. Memkeep entries are candidates too (store ``entry``: full-text
matches of their claim and body, and with a path those whose ``scope`` covers it), unless ``store`` is
``records``; ``entries`` packs only them.

Suspect memories (a record's memkeep envelope, an entry's memkeep report; :mod:`git_memzoi.memzoi.recall.suspect`)
are flagged, never dropped. The budget rule: a suspect candidate is spent on only after every trusted candidate,
so never before a trusted one of the same relevance (equal score) nor of any other; among themselves suspect
candidates keep the score order, and a budget that still has room after the trusted ones takes them. Without
suspects this is exactly the score order. Each shown suspect is named in ``warnings`` with its reasons and
carries a ``Suspect:`` line in the prompt. A candidate holding a credential (a hand-edited record file)
is never packed: it is listed first in ``omitted`` (reason ``prohibited_content_detected``, field and rule, no
title) and named in ``warnings``.

The budget is counted in ``approx_words`` (:mod:`git_memzoi.memzoi.recall.budget`) and never exceeded. When the
rendered prompt is larger (the first record is always taken, as upstream does, even when it alone is too big),
it is cut after a whole number of units and ends with the one-unit marker ``[truncated]``; a record whose
``- [id] (meta)`` head no longer fits is moved to ``omitted``; if none fits, the pack is empty. Differences from
upstream, all outside its corpus: budget 0 is an empty pack (upstream: the default 400), the truncated prompt
keeps its line breaks and the marker (upstream: the first words joined by spaces, no marker), and suspect
handling.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import InputError
from git_memzoi.memzoi.recall import budget as units
from git_memzoi.memzoi.recall.pathmatch import best_path, path_matches_request, scope_covers, scope_score
from git_memzoi.memzoi.recall.search import fresh_index, lexically_matched, semantic_warning, withheld_warning

if TYPE_CHECKING:
    from git_memzoi.memzoi.recall.modes import Resolved
    from git_memzoi.memzoi.recall.schema import (
        BudgetJson,
        ContextPackJson,
        IncludedJson,
        OmittedJson,
        SearchResultJson,
        SignalsJson,
        SuspectJson,
        WithheldJson,
    )
    from git_memzoi.memzoi.workspace import Workspace

DEFAULT_BUDGET = 400
CANDIDATE_LIMIT = 50
OMITTED_LIMIT = 10
HEADER = "# Memzoi Context"
MARKER = "[truncated]"
HEAD_UNITS = 3  # "-", "[id]", "(type/provenance=…)": a record shows in the prompt when its head does
TYPE_PRIORITY = {
    "risk": 9,
    "warning": 8,
    "failed_attempt": 7,
    "decision": 6,
    "procedure": 5,
    "preference": 4,
    "fact": 3,
    "episode": 2,
    "relationship": 2,
    "instruction_projection": 1,
}
LANE_PRIORITY = {"procedural": 3, "session": 3, "semantic": 2, "episodic": 1}
DESTINATION_PRIORITY = {"repo": 3, "local": 2, "session": 1}
RUNTIME_SOURCE = {"local": "local memory", "session": "session memory"}


@dataclass(frozen=True)
class ContextPack:
    """One context pack: the §5 JSON object (``prompt``, ``records``, ``citations``, ``budget``, ``included``,
    ``omitted``, ``warnings``, ``next_queries`` ...)."""

    payload: ContextPackJson

    @property
    def prompt(self) -> str:
        """The prompt text (``""`` for an empty pack)."""
        return str(self.payload["prompt"])

    @property
    def record_ids(self) -> list[str]:
        """Ids of the records in the prompt, in rank order."""
        return [r["record"]["id"] for r in self.payload["records"]]

    def to_json(self) -> ContextPackJson:
        """The ``context --json`` object."""
        return self.payload.copy()


@dataclass
class _Candidate:
    row: Mapping[str, Any]
    fts: bool
    result: SearchResultJson
    suspect: SuspectJson | None = None
    estimate: int = 0
    line: str = ""
    via: dict[str, Any] | None = None  # the relation that brought it (context --expand, recall/expand.py)


@fresh_index
def build(
    ws: Workspace,
    task: str,
    *,
    path: str | None = None,
    token_budget: int | None = None,
    include_local: bool = False,
    include_session: bool = False,
    log: bool = True,
    store: str = "all",
    expand: bool = False,
    mode: str | None = None,
) -> ContextPack:
    """``git memzoi context``: the context pack for ``task`` (and ``path``) within ``token_budget`` approx_words
    (default 400; 0 gives an empty pack), the task text matched in ``mode`` (``None``: the configured default,
    :func:`~git_memzoi.memzoi.recall.modes.resolve`). Appends a ``memory.context_pack_built`` event (ids and counts).
    With ``expand``, the records the candidates' relations reach come right after them, in the same budget
    (:mod:`~git_memzoi.memzoi.recall.expand`), each cited with its relation (``included[].relation``).

    Raises:
        InputError: a negative budget (``bad_budget``), neither a task nor a path (``bad_usage``), a path
            outside the repository (``path_outside_repo``, :func:`~git_memzoi.core.paths.request_path`), an
            unknown store (``invalid_store``); what :func:`~git_memzoi.memzoi.recall.modes.resolve` raises.
    """
    from git_memzoi.core.paths import request_path
    from git_memzoi.memzoi.recall import modes, suspect
    from git_memzoi.memzoi.recall.search import store_filter
    from git_memzoi.memzoi.recall.tree import path_notes
    from git_memzoi.memzoi.recall.unreadable import unreadable_notes
    from git_memzoi.memzoi.records import okf

    if token_budget is not None and token_budget < 0:
        raise InputError("--token-budget must be 0 or more", "bad_budget")
    path = request_path(path, ws.layout.root)
    if not task.strip() and path is None:
        raise InputError("a context pack needs a task or a path", "bad_usage")
    effective = DEFAULT_BUDGET if token_budget is None else token_budget
    requested = ["repo", *(["local"] if include_local else []), *(["session"] if include_session else [])]
    only = store_filter(store)
    how = modes.resolve(ws.layout, mode)
    candidates, withheld = _withhold(ws, _candidates(ws, task, path, requested, only, how))
    suspects = suspect.mark(ws, [c.row for c in candidates])
    for candidate in candidates:
        candidate.suspect = suspects.get(suspect.key(candidate.row))
        _score(candidate, path)
    ranked = _dedupe(sorted(candidates, key=_order))
    if expand:
        from git_memzoi.memzoi.recall import expand as expansion

        ranked = expansion.insert(ws, ranked, lambda row, via, mark: _related(row, via, mark, task, path))
    selected = _walk(ranked, effective)
    prompt, shown, partial = _render(selected, effective)
    shown_ids = {id(c) for c in shown}
    left_out = [c for c in ranked if id(c) not in shown_ids]
    now = ws.clock.now()
    payload: ContextPackJson = {
        "id": pack_id(now, "ctx_", [task, path, effective, requested, [c.row["id"] for c in shown]]),
        "task": task,
        "prompt": prompt,
        "records": [c.result for c in shown],
        "citations": [cite for c in shown for cite in c.result["citations"]],
        "token_budget": token_budget,
        "policy": {
            "include_local": include_local,
            "include_session": include_session,
            "requested_destinations": requested,
            "included_destinations": [d for d in requested if any(c.row["destination"] == d for c in shown)],
        },
        "budget": _budget(
            token_budget, effective, prompt, len(ranked), len(shown), partial is not None or len(shown) < len(selected)
        ),
        "included": [_included(c, c is partial) for c in shown],
        "omitted": [*withheld, *(_omitted(c) for c in left_out[:OMITTED_LIMIT])],
        "warnings": [
            *_warnings(shown, left_out, partial, effective, len(selected) > len(shown)),
            *(withheld_warning(w) for w in withheld),
            *([how.warning] if how.warning else []),
            *([w] if (w := semantic_warning(ws, how.mode)) else []),
        ],
        "next_queries": [c.row["title"] for c in left_out[:3]],
        "created_at": okf.format_timestamp(now),
        "store": store,
        "notes": [*path_notes(ws, path), *unreadable_notes(ws, requested)],
        "mode": how.mode,
    }
    if log:
        from git_memzoi.memzoi.recall.search import log_event

        log_event(
            ws,
            "memory.context_pack_built",
            {
                "context_id": payload["id"],
                "record_ids": [c.row["id"] for c in shown],
                "count": len(shown),
                "candidate_records": len(ranked),
                "omitted": len(left_out),
                "budget": effective,
                "estimated_used": payload["budget"]["estimated_used"],
                "destinations": requested,
                "suspect_ids": [c.row["id"] for c in shown if c.suspect],
                "withheld_ids": [w["record_id"] for w in withheld],
            },
        )
    return ContextPack(payload)


# ------------------------------------------------------------------------------------------------ candidates


def _candidates(
    ws: Workspace, task: str, path: str | None, destinations: Sequence[str], only: str | None, how: Resolved
) -> list[_Candidate]:
    """FTS candidates, then path candidates (score 0, "path match"), merged by ``store:id``: FTS wins. ``only``
    (``record`` / ``entry``) keeps one store; entries are repo memory."""
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.recall.search import result, search_rows
    from git_memzoi.memzoi.recall.suspect import key

    merged: dict[str, _Candidate] = {}
    filters = {} if only is None else {"store": only}
    for destination in destinations:
        matched = search_rows(
            ws, task, destination=destination, filters=filters, limit=CANDIDATE_LIMIT, mode=how.mode, rrf_k=how.rrf_k
        )
        for row in matched:
            merged.setdefault(key(row), _Candidate(row, True, result(row, task, path)))
    if path is not None:
        bound = [(d, "record", path_matches_request) for d in destinations if only != "entry"]
        if only != "record":
            bound.append(("repo", "entry", scope_covers))
        for destination, store, match in bound:
            rows = index_db.path_rows(
                ws.layout,
                destination,
                path,
                match,
                now=ws.recall_at(),
                limit=CANDIDATE_LIMIT,
                store=store,
                include_superseded=ws.include_superseded,
            )
            for row in rows:
                if key(row) not in merged:
                    found = result(row, task, path)
                    found.update({"score": 0.0, "rationale": "path match"})
                    merged[key(row)] = _Candidate(row, False, found)
    return list(merged.values())


def _withhold(ws: Workspace, candidates: list[_Candidate]) -> tuple[list[_Candidate], list[WithheldJson]]:
    """Leave out every candidate holding a credential (:func:`~git_memzoi.memzoi.recall.search.withhold`): a pack is a
    prompt and never carries one. Each is listed as an ``omitted`` entry with ``estimated_size`` 0."""
    from git_memzoi.memzoi.recall.search import withhold

    withheld = withhold(ws.layout, [c.row for c in candidates], sized=True)[1]
    left_out = {w["record_id"] for w in withheld}
    return [c for c in candidates if c.row["id"] not in left_out], withheld


def _score(c: _Candidate, path: str | None) -> None:
    """The §5 ranking score, signals and reasons; replaces the result's score and rationale."""
    row = c.row
    paths = json.loads(row["applies_to"])
    path_score = (scope_score if row.get("store") == "entry" else best_path)(paths, path)[0]
    fts_score = min(max(-float(row["rank"]), 0.0), 100.0) if c.fts else 0.0
    confidence = min(max(float(row["confidence"]), 0.0), 1.0)
    signals: SignalsJson = {
        "fts_match": c.fts,
        "fts_score": fts_score,
        "path_score": path_score,
        "type_priority": TYPE_PRIORITY.get(row["type"], 0),
        "lane_priority": LANE_PRIORITY.get(row["lane"], 0),
        "destination_priority": DESTINATION_PRIORITY.get(row["destination"], 0),
        "confidence": confidence,
    }
    score = (
        path_score * 10000
        + signals["type_priority"] * 1000
        + (500 if c.fts else 0)
        + signals["lane_priority"] * 100
        + signals["destination_priority"] * 10
        + confidence * 25
        + fts_score
    )
    reasons = (
        [("task text matched title/body" if lexically_matched(row) else "task text matched by meaning")]
        if c.fts
        else []
    )
    if path is not None:
        reasons.append("path matched requested path" if path_score else "no path match")
    reasons += [f"{row['type']} memory type priority", f"{row['destination']} destination"]
    if c.suspect:
        from git_memzoi.memzoi.recall.suspect import summary

        reasons.append(f"suspect, ranked below current records: {summary(c.suspect)}")
    c.result.update(
        {
            "score": score,
            "rationale": "; ".join(reasons),
            "suspect": None if c.suspect is None else c.suspect.copy(),
            "ranking": {"score": score, "signals": signals, "reasons": reasons},
        }
    )


def _related(
    row: Mapping[str, Any], via: dict[str, Any], mark: SuspectJson | None, task: str, path: str | None
) -> _Candidate:
    """A candidate a relation brought into the pack: scored as any other, its rationale naming the relation."""
    from git_memzoi.memzoi.recall.search import result

    c = _Candidate(row, False, result(row, task, path), mark, via=via)
    _score(c, path)
    c.result["rationale"] += f"; {_relation(via)}"
    return c


def _relation(via: Mapping[str, Any]) -> str:
    return f"related: {via['from']} {via['role']} {via['to']}"


def _order(c: _Candidate) -> tuple[Any, ...]:
    """Trusted memories first; then score, destination priority, newest, store (records first), id (memzoi-spec.md
    §5 step 6; the budget rule of the module docstring)."""
    return (
        c.suspect is not None,
        -c.result["score"],
        -DESTINATION_PRIORITY.get(c.row["destination"], 0),  # the ranking signal _score gave it
        -int(c.row["updated_us"]),
        c.row.get("store") == "entry",
        c.row["id"],
    )


def _dedupe(ranked: Sequence[_Candidate]) -> list[_Candidate]:
    """Keep the better-ranked of records with the same content hash or the same normalized title and body."""
    hashes: set[str] = set()
    texts: set[str] = set()
    out = []
    for c in ranked:
        text = re.sub(r"\s+", " ", f"{c.row['title']}\n{c.row['body']}").strip().lower()
        if c.row["content_hash"] in hashes or text in texts:
            continue
        hashes.add(c.row["content_hash"])
        texts.add(text)
        out.append(c)
    return out


# ------------------------------------------------------------------------------------------------ budget


def _line(c: _Candidate) -> str:
    """One record in the prompt (memzoi-spec.md §5 step 8), plus a ``Suspect:`` line for a suspect record."""
    row = c.row
    plane = "git" if row["destination"] == "repo" else "runtime"
    if row.get("store") == "entry":  # an entry's body starts with its claim; its source is its file and line
        line = (
            f"- [{row['id']}] ({row['type']}/provenance={plane}/destination={row['destination']}/"
            f"scope={row['scope_kind']}/store=entry) {row['body']}\n  Source: {row['path']}:{row['line']}"
        )
    else:
        source = _source(row)
        line = (
            f"- [{row['id']}] ({row['type']}/provenance={plane}/destination={row['destination']}/"
            f"scope={row['scope_kind']}) {row['title']}: {row['body']}" + (f"\n  Source: {source}" if source else "")
        )
    if c.via:
        line += f"\n  Related: {_relation(c.via).removeprefix('related: ')}"
    if c.suspect:
        reasons = ", ".join(r["reason"] for r in c.suspect["reasons"])
        line += f"\n  Suspect: {reasons}; re-verify before relying on it"
    return line


def _source(row: Mapping[str, Any]) -> str | None:
    """Where a record came from, for its ``Source:`` line: its evidence (``source_ref``), else the proposal that
    made it (``proposal prop_…``: ``git memzoi show <id>`` has the rest), else ``None`` (no line: "unknown" told a
    reader nothing, issue 20). Local and session records name their plane."""
    if row["destination"] != "repo":
        return RUNTIME_SOURCE[row["destination"]]
    if row["source_ref"]:
        return str(row["source_ref"])
    return f"proposal {row['proposal_id']}" if row.get("proposal_id") else None


def _walk(ranked: Sequence[_Candidate], budget: int) -> list[_Candidate]:
    """Select in rank order: the first record always, any later one whose estimate still fits; a miss does not
    stop the walk (memzoi-spec.md §5 step 7)."""
    selected: list[_Candidate] = []
    used = 0
    for c in ranked:
        c.line = _line(c)
        entry = c.row.get("store") == "entry"
        c.estimate = units.record_estimate("" if entry else c.row["title"], c.row["body"])
        if c.suspect:
            c.estimate += units.estimate(c.line.rpartition("\n")[2])
        if c.via:
            c.estimate += units.estimate(f"Related: {_relation(c.via).removeprefix('related: ')}")
        if not selected or used + c.estimate <= budget:
            selected.append(c)
            used += c.estimate
    return selected


def _render(selected: Sequence[_Candidate], budget: int) -> tuple[str, list[_Candidate], _Candidate | None]:
    """The prompt, the records it shows and the one it shows only in part (if any); never over ``budget``."""
    if not selected:
        return "", [], None
    prompt = "\n".join([HEADER, *(c.line for c in selected)])
    if units.estimate(prompt) <= budget:
        return prompt, list(selected), None
    keep = budget - units.estimate(MARKER)
    start, shown, partial, end = units.estimate(HEADER), [], None, 0
    for c in selected:
        size = units.estimate(c.line)
        if start + HEAD_UNITS > keep:
            break
        shown.append(c)
        end = min(start + size, keep)
        if start + size > keep:
            partial = c
            break
        start += size
    if not shown:
        return "", [], None
    return f"{units.cut(prompt, end)}\n{MARKER}", shown, partial


def _budget(
    requested: int | None, effective: int, prompt: str, candidates: int, selected: int, truncated: bool
) -> BudgetJson:
    used = units.estimate(prompt)
    return {
        "requested": requested,
        "effective": effective,
        "used": used,
        "unit": units.UNIT,
        "estimated_used": used,
        "estimate_unit": units.UNIT,
        "estimator": units.ESTIMATOR,
        "candidate_records": candidates,
        "selected_records": selected,
        "rendered_words": used,
        "truncated": truncated,
    }


def _included(c: _Candidate, partial: bool) -> IncludedJson:
    result, row = c.result, c.row
    paths = result["paths"]
    included: IncludedJson = {
        "record_id": row["id"],
        "title": row["title"],
        "type": row["type"],
        "lane": row["lane"],
        "scope_kind": row["scope_kind"],
        "path": paths[0]["path"] if paths else None,
        "citation": result["citations"][0],
        "provenance": result["citations"][0]["provenance"],
        "destination": row["destination"],
        "score": result["score"],
        "rationale": result["rationale"],
        "estimated_size": c.estimate,
        "truncated": partial,
        "suspect": result["suspect"],
        "store": result["store"],
    }
    if c.via is not None:
        included["relation"] = c.via
    return included


def _omitted(c: _Candidate) -> OmittedJson:
    row = c.row
    return {
        "record_id": row["id"],
        "title": row["title"],
        "type": row["type"],
        "lane": row["lane"],
        "destination": row["destination"],
        "estimated_size": c.estimate or units.record_estimate(row["title"], row["body"]),
        "reason": "budget_exceeded",
    }


def _warnings(
    shown: Sequence[_Candidate],
    left_out: Sequence[_Candidate],
    partial: _Candidate | None,
    budget: int,
    cut_whole: bool,
) -> list[str]:
    from git_memzoi.memzoi.recall.suspect import summary

    out = [
        f"suspect memory {c.row['id']} is ranked below current records: {summary(c.suspect)}"
        for c in shown
        if c.suspect
    ]
    if partial is not None:
        out.append(
            f"the prompt was cut to the budget of {budget} {units.UNIT}: {partial.row['id']} is only partly included"
        )
    elif cut_whole and not shown:
        out.append(f"the budget of {budget} {units.UNIT} is too small for any record: the pack is empty")
    if left_out:
        named = ", ".join(c.row["id"] for c in left_out[:NAMED_LIMIT])
        more = f" and {len(left_out) - NAMED_LIMIT} more" if len(left_out) > NAMED_LIMIT else ""
        out.append(
            f"{len(left_out)} relevant record(s) did not fit the budget of {budget} {units.UNIT}: {named}{more}"
            " (a larger --token-budget includes them; --json lists them under omitted)"
        )
    return out


NAMED_LIMIT = 5  # ids a note names of the records left out (text output; --json's omitted lists more)


def pack_id(now: Any, prefix: str, content: Any) -> str:
    """A UUIDv7-shaped id: the clock's milliseconds and the hash of what the pack holds (reproducible)."""
    from git_memzoi.memzoi.proposals.drafts import proposal_id

    data = json.dumps(content, ensure_ascii=False, sort_keys=True, default=str).encode("utf-8")
    return prefix + proposal_id(now, data).removeprefix("prop_")
