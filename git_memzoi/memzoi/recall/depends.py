"""Staleness follows relations: a record that ``depends_on`` a suspect record is ``dependency_suspect`` (io).

memkeep README "How staleness works" (``∃ d ∈ explains(e): suspect(d) ∨ status(d) = stale``), with the
``depends_on`` roles of the records' ``relations:`` lists (:mod:`~git_memzoi.memzoi.records.relations`) as the
edges: a current repository record is ``dependency_suspect`` when a record it depends on is suspect (any reason,
including ``dependency_suspect`` itself: transitive, and cycle-safe as a least fixpoint), failed its check
(``stale``), is no longer current (superseded, tombstoned, its retention ended) or does not exist (a broken
relation, which ``doctor`` reports too). Unlike the envelope reasons, this one needs no envelope on the dependent:
the relation itself is what is watched. It clears as soon as the dependency does (suspect is derived on every
call, never stored). The edges come from the derived index, read once per call; no edge, no cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from git_memzoi.memzoi.recall.schema import SuspectJson, VerdictJson
    from git_memzoi.memzoi.workspace import Workspace

ROLE = "depends_on"
REASON = "dependency_suspect"


@dataclass(frozen=True)
class Graph:
    """The ``depends_on`` edges of the current repository records (``source id -> target ids``, in file order),
    and the state of each target that is not current: its index status, or ``missing``."""

    edges: Mapping[str, tuple[str, ...]]
    unresolved: Mapping[str, str]


def graph(ws: Workspace, ids: Iterable[str]) -> Graph | None:
    """The dependency graph when one of ``ids`` declares a ``depends_on`` role, else ``None`` (nothing to do).

    The relations table alone is read first (it is small, and empty in most stores: one indexed lookup, no scan of
    the records); the declaring records are then kept only when current repository records."""
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.recall.linked import current_rows, record_status

    sql = "SELECT source_id, target FROM relations WHERE role = ? AND target_kind = 'record' ORDER BY path, ordinal"
    declared = index_db.select(ws.layout, sql, [ROLE])
    if not declared or not set(ids) & {row["source_id"] for row in declared}:
        return None
    current = current_rows(ws, {row["source_id"] for row in declared} | {row["target"] for row in declared})
    edges: dict[str, list[str]] = {}
    for row in declared:
        if row["source_id"] in current:
            edges.setdefault(row["source_id"], []).append(row["target"])
    targets = {t for deps in edges.values() for t in deps}
    unresolved = {t: record_status(ws.layout, t) or "missing" for t in sorted(targets - current.keys())}
    return Graph({s: tuple(dict.fromkeys(d)) for s, d in edges.items()}, unresolved)


def apply(marks: dict[str, SuspectJson], found: Graph, base: Mapping[str, str], ids: Iterable[str]) -> None:
    """Add ``dependency_suspect`` to ``marks`` (``{record id: {"reasons": [...]}}``) for each of ``ids`` that
    depends on a suspect record, transitively.

    Args:
        base: the ids already suspect by their own envelope (``suspect``) or a failed check (``stale``), over
            every current enveloped record.
        ids: the records being judged (the others only carry the fixpoint).
    """
    bad = dict(base)
    dependents: dict[str, list[str]] = {}
    for source, deps in found.edges.items():
        for dep in deps:
            dependents.setdefault(dep, []).append(source)
    todo = [*bad, *found.unresolved]
    while todo:  # the least fixpoint: each record enters once, so a cycle ends
        for dependent in dependents.get(todo.pop(), ()):
            if dependent not in bad:
                bad[dependent] = "suspect"
                todo.append(dependent)
    for record_id in ids:
        hit = [d for d in found.edges.get(record_id, ()) if d != record_id and (d in bad or d in found.unresolved)]
        if hit:
            _add(marks, record_id, sorted(set(hit)), {**bad, **found.unresolved})


def _add(marks: dict[str, SuspectJson], record_id: str, deps: list[str], states: Mapping[str, str]) -> None:
    mark = marks.setdefault(record_id, {"reasons": []})
    existing = next((r for r in mark["reasons"] if r["reason"] == REASON), None)
    if existing is not None:  # memkeep's own, through the envelope's explains: one reason naming both
        known = list(existing["evidence"].get("dependencies", []))
        deps = sorted(set(known) | set(deps))
        mark["reasons"].remove(existing)
    message = "depends on " + ", ".join(f"{d} ({states.get(d, 'suspect')})" for d in deps)
    evidence: dict[str, Any] = {"dependencies": deps, "role": ROLE}
    unresolved = {d: states[d] for d in deps if states.get(d) not in ("suspect", "stale", None)}
    if unresolved:
        evidence["unresolved"] = unresolved
    reason: VerdictJson = {"reason": REASON, "message": message, "evidence": evidence}
    mark["reasons"].append(reason)
    mark["reasons"].sort(key=lambda r: _RANK.get(r["reason"], len(_RANK)))


_RANK = {name: n for n, name in enumerate(("stale", "scope_hit", "ttl_expired", REASON, "anchor_unreachable"))}
