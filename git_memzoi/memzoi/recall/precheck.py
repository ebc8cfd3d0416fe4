"""Precheck before risky work: the risks, warnings and failed attempts that apply (memzoi-spec.md §6; io).

Only current repo records of the governance types ``risk``, ``warning`` and ``failed_attempt`` are candidates;
a fact on the same path never appears. A candidate comes from its path binding (any ``applies_to`` path that
matches the planned path; its title and body need not mention it) or from a full-text match of the planned
action and command (with the path, if any, as a filter). Order: path score, lexical matches first, lexical
score, governance priority (risk > warning > failed_attempt), confidence, newest, id; at most 25. A record whose
memkeep envelope makes it suspect is cited as such (``suspect`` and a note in ``suggested_next_step``) and keeps
its place: a possibly outdated risk is still a risk to look at. So does a record holding a credential (a
hand-edited record file), withheld as ``context`` and ``search`` withhold it: its warning names the record, field
and rule instead of its text, and the result lists it in ``withheld``; the value is never printed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from git_memzoi.core.paths import request_path
from git_memzoi.errors import InputError
from git_memzoi.memzoi.recall.pathmatch import best_path, path_matches_request
from git_memzoi.memzoi.recall.search import fresh_index

if TYPE_CHECKING:
    from git_memzoi.memzoi.recall.schema import CitationJson, PrecheckJson, SuspectJson, WarningJson, WithheldJson
    from git_memzoi.memzoi.workspace import Workspace

GOVERNANCE = {"risk": 3, "warning": 2, "failed_attempt": 1}
MAX_WARNINGS = 25
LEXICAL_LIMIT = 100
SEVERITY = {"risk": "high", "warning": "warning", "failed_attempt": "warning"}
NEXT_STEP = {
    "risk": "Review the cited risk before editing and consider a targeted test.",
    "warning": "Review the cited warning before proceeding.",
    "failed_attempt": "Check the failed-attempt memory and avoid repeating the same approach.",
}
SUSPECT_STEP = " This memory is suspect ({reasons}): check whether it still holds before relying on it."
WITHHELD_STEP = "This memory still applies: once the credential is removed, run precheck again to read it."


@dataclass(frozen=True)
class PrecheckResult:
    """``git memzoi precheck``: warning objects, most relevant first (empty when nothing applies), and the records
    whose text was withheld (each also has its warning, by id only)."""

    warnings: tuple[WarningJson, ...]
    withheld: tuple[WithheldJson, ...] = ()

    def to_json(self) -> PrecheckJson:
        """The ``precheck --json`` object: ``{"warnings": [...]}``, plus ``withheld`` when a record was withheld."""
        out: PrecheckJson = {"warnings": list(self.warnings)}
        if self.withheld:
            out["withheld"] = [w.copy() for w in self.withheld]
        return out


@dataclass
class _Hit:
    row: Mapping[str, Any]
    path_score: int = 0
    path: str | None = None
    lexical: float | None = None


@fresh_index
def precheck(
    ws: Workspace,
    *,
    path: str | None = None,
    action: str | None = None,
    command: str | None = None,
    scope_kind: str | None = None,
    log: bool = True,
) -> PrecheckResult:
    """The governance memories that apply to a planned change at ``path`` and/or to ``action``/``command``.

    Each warning is ``{id: "warn_<record id>", record_id, message: "<title>: <body>", severity (risk high,
    others warning), citations: [citation], suggested_next_step, suspect}``. Appends ``memory.precheck_ran``
    (which inputs were given, warning and record ids; never the action or command text).

    Raises:
        InputError: none of path, action, command (``bad_usage``); an unknown scope kind; a path outside the
            repository (``path_outside_repo``).
    """
    from git_memzoi.memzoi.recall import suspect
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.recall.search import check_filters, log_event, search_rows, withhold

    path = request_path(path, ws.layout.root)
    query = " ".join(t.strip() for t in (action, command) if t and t.strip())
    if path is None and not query:
        raise InputError("precheck needs --path, --action or --command", "bad_usage")
    filters = check_filters(scope_kind=scope_kind)
    hits: dict[str, _Hit] = {}
    if path is not None:
        for row in index_db.path_rows(
            ws.layout,
            "repo",
            path,
            path_matches_request,
            now=ws.clock.now(),
            types=tuple(GOVERNANCE),
            scope_kind=scope_kind,
        ):
            score, best = best_path(json.loads(row["applies_to"]), path)
            hits[row["id"]] = _Hit(row, score, best)
    if query:
        for row in search_rows(ws, query, filters=filters, path=path, limit=LEXICAL_LIMIT):
            if row["type"] in GOVERNANCE:
                hit = hits.setdefault(row["id"], _Hit(row))
                hit.lexical = max(-float(row["rank"]), hit.lexical if hit.lexical is not None else float("-inf"))
    ordered = sorted(hits.values(), key=_order)[:MAX_WARNINGS]
    withheld = {w["record_id"]: w for w in withhold(ws.layout, [h.row for h in ordered])[1]}
    suspects = suspect.assess(ws, [h.row for h in ordered if h.row["id"] not in withheld])
    warnings = tuple(
        _withheld_warning(h.row, withheld[h.row["id"]])
        if h.row["id"] in withheld
        else _warning(h, path, suspects.get(h.row["id"]))
        for h in ordered
    )
    if log:
        log_event(
            ws,
            "memory.precheck_ran",
            {
                "inputs": [k for k, v in (("path", path), ("action", action), ("command", command)) if v and v.strip()],
                "scope_kind": scope_kind,
                "count": len(warnings),
                "warning_ids": [w["id"] for w in warnings],
                "record_ids": [w["record_id"] for w in warnings],
                "suspect_ids": [w["record_id"] for w in warnings if w["suspect"]],
            },
        )
    return PrecheckResult(warnings, tuple(withheld.values()))


def _order(h: _Hit) -> tuple[Any, ...]:
    row = h.row
    return (
        -h.path_score,
        h.lexical is None,
        -(h.lexical or 0.0),
        -GOVERNANCE[row["type"]],
        -float(row["confidence"]),
        -int(row["updated_us"]),
        row["id"],
    )


def _warning(h: _Hit, path: str | None, suspect: SuspectJson | None) -> WarningJson:
    from git_memzoi.memzoi.recall.index.db import record_json
    from git_memzoi.memzoi.recall.pathmatch import citation_path
    from git_memzoi.memzoi.recall.search import citation

    row = h.row
    cited = citation(record_json(row), h.path or citation_path(json.loads(row["applies_to"]), path))
    step = NEXT_STEP[row["type"]]
    if suspect is not None:
        step += SUSPECT_STEP.format(reasons=", ".join(r["reason"] for r in suspect["reasons"]))
    return {
        "id": f"warn_{row['id']}",
        "record_id": row["id"],
        "message": f"{row['title']}: {row['body']}",
        "severity": SEVERITY.get(row["type"], "info"),
        "citations": [cited],
        "suggested_next_step": step,
        "suspect": None if suspect is None else suspect.copy(),
    }


def _withheld_warning(row: Mapping[str, Any], entry: WithheldJson) -> WarningJson:
    """The warning of a record holding a credential: its place, id, type and severity, nothing of its text (its
    citation has no source_ref and no path, which the record could hold too)."""
    cited: CitationJson = {
        "record_id": row["id"],
        "memory_type": row["type"],
        "scope_kind": row["scope_kind"],
        "provenance": "git",
        "plane": "git",
        "destination": row["destination"],
        "visibility": row["visibility"],
        "source_kind": row["source_kind"],
        "source_ref": None,
        "path": None,
    }
    message = (
        f"[withheld] its {entry['field']} holds a credential ({entry['rule']}; not printed); remove it from "
        f"{entry['path']}"
    )
    return {
        "id": f"warn_{row['id']}",
        "record_id": row["id"],
        "message": message,
        "severity": SEVERITY.get(row["type"], "info"),
        "citations": [cited],
        "suggested_next_step": WITHHELD_STEP,
        "suspect": None,
    }
