"""Conflicting claims that merged branches left in the records (pure over a scan; issue 16).

Records merge like code: each new record is its own file with a merge-safe id (:mod:`~git_memzoi.memzoi.records.ids`),
so git merges two branches' records without a text conflict. What git cannot see is that two of them disagree;
this module finds those states in the merged tree, so ``doctor``, the CI check and the review inbox list them as
review items instead of a human meeting a conflict in YAML:

- ``double_supersede``: two or more active records supersede the same record (both branches replaced it).
- ``supersede_of_inactive``: an active record supersedes one that is still active (the merge lost the status
  change) or tombstoned (one branch tombstoned what the other replaced).
- ``contradictory_types``: active records with the same title in the same scope but different types (one
  branch's ``decision`` is the other's ``rejected`` option, say).
- ``diverging_claims``: active records with the same title, scope and type whose bodies differ (two branches
  recorded the same decision differently).

Identical claims (same title, scope, type and body) are duplicates, not conflicts, and are not reported. A
conflict goes away once a reviewer keeps one claim: tombstone or supersede the others.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from git_memzoi.memzoi.records.okf import Record
    from git_memzoi.memzoi.workspace import Workspace

KINDS = ("double_supersede", "supersede_of_inactive", "contradictory_types", "diverging_claims")


@dataclass(frozen=True)
class Conflict:
    """One review item: ``kind`` (one of :data:`KINDS`), the record ids involved (sorted; for the supersede kinds
    ``target`` is the superseded record and is not in ``records``), and a one-line ``message`` naming them and
    what a reviewer does."""

    kind: str
    records: tuple[str, ...]
    target: str | None
    message: str

    @property
    def paths(self) -> tuple[str, ...]:
        """The repository-relative files of ``records`` (where an annotation points)."""
        return tuple(f".memzoi/records/{record}.md" for record in self.records)

    def as_json(self) -> dict[str, object]:
        """Plain data for ``--json`` and the inbox."""
        return {"kind": self.kind, "records": list(self.records), "target": self.target, "message": self.message}


def find_conflicts(ws: Workspace) -> list[Conflict]:
    """The conflicting claims among the records of ``ws`` (``.memzoi/records/`` in its working tree), sorted by
    kind order then record ids; empty when there are none, when the repository has no records folder (a fresh
    clone) or when it is not initialised. Unreadable record files are skipped (``doctor`` reports them).

    Args:
        ws: the workspace; only ``ws.layout`` is read.
    Returns:
        A list of :class:`Conflict` (kinds in :data:`KINDS`).
    """
    from git_memzoi.memzoi.records import store as record_store

    return conflicts_among(record_store.scan(ws.layout).records)


def conflicts_among(records: Iterable[Record]) -> list[Conflict]:
    """:func:`find_conflicts` over already-read records (pure)."""
    by_id = {r.id: r for r in records}
    active = [r for r in by_id.values() if r.status == "active"]
    found = _supersedes(active, by_id) + _same_titles(active)
    order = {kind: n for n, kind in enumerate(KINDS)}
    return sorted(found, key=lambda c: (order[c.kind], c.records, c.target or ""))


def _supersedes(active: list[Record], by_id: dict[str, Record]) -> list[Conflict]:
    replacing: dict[str, list[str]] = {}
    for record in active:
        if record.supersedes:
            replacing.setdefault(record.supersedes, []).append(record.id)
    found = []
    for target, ids in replacing.items():
        ids.sort()
        if len(ids) > 1:
            shown = " and ".join(ids)
            found.append(
                Conflict(
                    "double_supersede",
                    tuple(ids),
                    target,
                    f"{shown} all supersede {target} (merged branches replaced it twice): keep one, tombstone or "
                    "supersede the others",
                )
            )
        old = by_id.get(target)
        if old is not None and old.status in ("active", "tombstoned"):
            state = "is still active" if old.status == "active" else "was tombstoned"
            found.append(
                Conflict(
                    "supersede_of_inactive",
                    tuple(ids),
                    target,
                    f"{', '.join(ids)} supersede {target}, which {state} (the branches disagree about it): "
                    f"tombstone {target} or the replacement",
                )
            )
    return found


def _same_titles(active: list[Record]) -> list[Conflict]:
    from git_memzoi.memzoi.records.okf import concept_slug

    groups: dict[tuple[str, str, str], list[Record]] = {}
    for record in active:
        key = (record.scope, record.scope_id or "", concept_slug(record.title) or record.title)
        groups.setdefault(key, []).append(record)
    found = []
    for (scope, scope_id, _title), group in groups.items():
        claims = {(r.type, r.body.strip()) for r in group}
        if len(claims) < 2:
            continue  # one record, or identical duplicates
        ids = tuple(sorted(r.id for r in group))
        where = f"{scope}/{scope_id}" if scope_id else scope
        types = sorted({r.type for r in group})
        if len(types) > 1:
            kind, what = "contradictory_types", f"as {' and '.join(types)}"
        else:
            kind, what = "diverging_claims", "with different bodies"
        found.append(
            Conflict(
                kind,
                ids,
                None,
                f"{', '.join(ids)} record {group[0].title!r} in scope {where} {what}: keep one claim, tombstone or "
                "supersede the others",
            )
        )
    return found
