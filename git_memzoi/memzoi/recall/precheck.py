"""Precheck before risky work: the risks, warnings and failed attempts that apply (memzoi-spec.md §6; io).

Only current repo records of the governance types ``risk``, ``warning`` and ``failed_attempt`` are candidates;
a fact on the same path never appears. A candidate comes from its path binding (any ``applies_to`` path that
matches the planned path; its title and body need not mention it) or from a full-text match of the planned
action and command (with the path, if any, as a filter). Order: path score, lexical matches first, lexical
score, governance priority (risk > warning > failed_attempt), confidence, newest, id; at most 25. With a path,
memkeep entries whose ``scope`` covers it (git's glob rules; any entry type) are candidates too
(``store: entry``), unless ``store`` is ``records``; ``entries`` keeps only them. A memory that is suspect (a
record's memkeep envelope, an entry's memkeep report) is cited as such (``suspect`` and a note in
``suggested_next_step``) and ranked first, for review: a possibly outdated risk is still a risk to look at,
and the one most likely to mislead. A path neither tracked nor present adds a ``path_not_in_tree`` note (most often a
typo), unless a memory names that very path (a record's ``applies_to``, an entry's literal scope: a file still to be
written); a glob that only covers it (``src/**``) keeps the note.
So does a record holding a credential (a
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
from git_memzoi.memzoi.recall.pathmatch import EXACT, best_path, path_matches_request, scope_covers, scope_score
from git_memzoi.memzoi.recall.search import fresh_index, semantic_warning

if TYPE_CHECKING:
    from git_memzoi.memzoi.recall.schema import (
        CitationJson,
        NoteJson,
        PrecheckJson,
        SuspectJson,
        WarningJson,
        WithheldJson,
    )
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
ENTRY_STEP = "Read the cited memkeep entry before editing; it covers this path."
SUSPECT_STEP = " This memory is suspect ({reasons}): check whether it still holds before relying on it."
WITHHELD_STEP = "This memory still applies: once the credential is removed, run precheck again to read it."


@dataclass(frozen=True)
class PrecheckResult:
    """``git memzoi precheck``: warning objects, most relevant first (empty when nothing applies), and the records
    whose text was withheld (each also has its warning, by id only)."""

    warnings: tuple[WarningJson, ...]
    withheld: tuple[WithheldJson, ...] = ()
    notes: tuple[NoteJson, ...] = ()

    def to_json(self) -> PrecheckJson:
        """The ``precheck --json`` object: ``{"warnings": [...]}``, plus ``withheld`` when a record was withheld and
        ``notes`` when the path is not in the tree or a record file cannot be read (``unreadable_records``)."""
        out: PrecheckJson = {"warnings": list(self.warnings)}
        if self.withheld:
            out["withheld"] = [w.copy() for w in self.withheld]
        if self.notes:
            out["notes"] = [n.copy() for n in self.notes]
        return out


@dataclass
class _Hit:
    row: Mapping[str, Any]
    path_score: int = 0
    path: str | None = None
    lexical: float | None = None
    suspect: SuspectJson | None = None


@fresh_index
def precheck(
    ws: Workspace,
    *,
    path: str | None = None,
    action: str | None = None,
    command: str | None = None,
    scope_kind: str | None = None,
    log: bool = True,
    store: str = "all",
    mode: str | None = None,
) -> PrecheckResult:
    """The governance memories that apply to a planned change at ``path`` and/or to ``action``/``command``.

    Each warning is ``{id: "warn_<record id>", record_id, message: "<title>: <body>", severity (risk high,
    others warning; an entry of another type ``info``), citations: [citation], suggested_next_step, suspect, store,
    claim}``; ``action``/``command`` text is matched in ``mode`` (``None``: the configured default; a path alone
    loads no model). Appends ``memory.precheck_ran``
    (which inputs were given, warning and record ids; never the action or command text).

    Raises:
        InputError: none of path, action, command (``bad_usage``); an unknown scope kind; a path outside the
            repository (``path_outside_repo``); an unknown store (``invalid_store``).
    """
    from git_memzoi.memzoi.recall import modes, suspect
    from git_memzoi.memzoi.recall.search import check_filters, log_event, search_rows, store_filter, withhold
    from git_memzoi.memzoi.recall.tree import path_notes
    from git_memzoi.memzoi.recall.unreadable import unreadable_notes

    path = request_path(path, ws.layout.root)
    query = " ".join(t.strip() for t in (action, command) if t and t.strip())
    if path is None and not query:
        raise InputError("precheck needs a path, an action or a command (--path, --action, --command)", "bad_usage")
    filters = check_filters(scope_kind=scope_kind)
    if mode is not None:
        modes.check_mode(mode)
    only = store_filter(store)
    hits = _path_hits(ws, path, scope_kind, only) if path is not None else {}
    # a memory naming the very path names a file still to be written, not a typo: no path_not_in_tree note (issue
    # 20); a glob that merely covers it (src/**) names nothing, so a typo under it is still reported
    notes = [] if any(h.path_score == EXACT for h in hits.values()) else list(path_notes(ws, path))
    if query and only != "entry":
        how = modes.resolve(ws.layout, mode)
        if how.warning:  # a configured mode without a model: said, never silently
            message = how.warning.removesuffix(" (semantic_unavailable)")
            notes.append({"code": "semantic_unavailable", "path": None, "message": message})
        matched = search_rows(
            ws,
            query,
            filters={**filters, "store": "record"},
            path=path,
            limit=LEXICAL_LIMIT,
            mode=how.mode,
            rrf_k=how.rrf_k,
        )
        partial = semantic_warning(ws, how.mode)
        if partial:
            notes.append(
                {"code": "semantic_partial", "path": None, "message": partial.removesuffix(" (semantic_partial)")}
            )
        for row in matched:
            if row["type"] in GOVERNANCE:
                hit = hits.setdefault(suspect.key(row), _Hit(row))
                hit.lexical = max(-float(row["rank"]), hit.lexical if hit.lexical is not None else float("-inf"))
    kept, found = withhold(ws.layout, [h.row for h in hits.values()])
    safe = {id(row) for row in kept}
    withheld = {w["record_id"]: w for w in found}
    suspects = suspect.mark(ws, kept)
    for name, hit in hits.items():
        hit.suspect = suspects.get(name)
    ordered = sorted(hits.values(), key=_order)[:MAX_WARNINGS]
    warnings = tuple(
        _warning(h, path, h.suspect) if id(h.row) in safe else _withheld_warning(h.row, withheld[h.row["id"]])
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
    if only != "entry":  # a risk whose file cannot be read applies unseen: say it is left out, as search does
        notes.extend(unreadable_notes(ws, ["repo"]))
    return PrecheckResult(warnings, tuple(withheld.values()), tuple(notes))


def _path_hits(ws: Workspace, path: str, scope_kind: str | None, only: str | None) -> dict[str, _Hit]:
    """The governance records bound to ``path`` and the entries whose scope covers it, by ``store:id``."""
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.recall.suspect import key

    hits: dict[str, _Hit] = {}
    now, history = ws.recall_at(), ws.include_superseded  # the as-of view (workspace.py)
    if only != "entry":
        for row in index_db.path_rows(
            ws.layout,
            "repo",
            path,
            path_matches_request,
            now=now,
            types=tuple(GOVERNANCE),
            scope_kind=scope_kind,
            include_superseded=history,
        ):
            score, best = best_path(json.loads(row["applies_to"]), path)
            hits[key(row)] = _Hit(row, score, best)
    if only != "record" and scope_kind in (None, "repo"):
        for row in index_db.path_rows(
            ws.layout, "repo", path, scope_covers, now=now, store="entry", include_superseded=history
        ):
            score, best = scope_score(json.loads(row["applies_to"]), path)
            if score:
                hits[key(row)] = _Hit(row, score, best)
    return hits


def _order(h: _Hit) -> tuple[Any, ...]:
    """Suspect first (for review), then path score, lexical matches, lexical score, governance priority,
    confidence, newest, store (records first), id."""
    row = h.row
    return (
        h.suspect is None,
        -h.path_score,
        h.lexical is None,
        -(h.lexical or 0.0),
        -GOVERNANCE.get(row["type"], 0),
        -float(row["confidence"]),
        -int(row["updated_us"]),
        row.get("store") == "entry",
        row["id"],
    )


def _warning(h: _Hit, path: str | None, suspect: SuspectJson | None) -> WarningJson:
    from git_memzoi.memzoi.recall.index.db import record_json
    from git_memzoi.memzoi.recall.pathmatch import citation_path
    from git_memzoi.memzoi.recall.search import citation

    row = h.row
    cited = citation(record_json(row), h.path or citation_path(json.loads(row["applies_to"]), path), row)
    entry = row.get("store") == "entry"
    step = ENTRY_STEP if entry else NEXT_STEP[row["type"]]
    if suspect is not None:
        step += SUSPECT_STEP.format(reasons=", ".join(r["reason"] for r in suspect["reasons"]))
    return {
        "id": f"warn_{row['id']}",
        "record_id": row["id"],
        "message": row["body"] if entry else f"{row['title']}: {row['body']}",
        "severity": SEVERITY.get(row["type"], "info"),
        "citations": [cited],
        "suggested_next_step": step,
        "suspect": None if suspect is None else suspect.copy(),
        "store": "entry" if entry else "record",
        "claim": row["title"],
        "superseded": row["status"] == "superseded",
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
        "store": row.get("store") or "record",
        "claim": "[withheld]",
        "superseded": row["status"] == "superseded",
    }
