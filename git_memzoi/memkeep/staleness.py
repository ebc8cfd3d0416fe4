"""The staleness fixpoint (pure): which entries are suspect, and why.

Implements memkeep README "How staleness works"::

    suspect(e) = scope(e) ∩ files_changed(anchor(e)..HEAD) ≠ ∅      scope_hit (e's own file excluded)
               ∨ today − verified_at(e) > ttl_days(e)               ttl_expired
               ∨ ∃ d ∈ explains(e): suspect(d) ∨ status(d) = stale   dependency_suspect
                                      ∨ d unreadable or missing
               ∨ anchor(e) absent, unresolvable or not an ancestor   anchor_unreachable
               ∨ referential_check ∧ a body path ref ∉ HEAD tree     ref_missing (opt-in)

Suspect is derived on every call, never stored. Tombstones never take part; entries already marked ``stale``
are reported as such and propagate to the entries that explain from them. A dependency that resolves to no
readable entry (its file cannot be read, or there is no such entry) propagates the same way: the dependent is
dependency_suspect with that dependency marked ``unreadable`` or ``missing``. An entry whose own fields keep it
from being watched (an invalid or missing scope, a malformed ``explains`` or ``ttl_days``) is listed as
*unchecked*: not suspect, but never reported as holding either. History is read once per distinct anchor
through the :class:`~git_memzoi.core.gitview.RepoView`; time comes only from the
:class:`~git_memzoi.core.clock.Clock`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from git_memzoi.core.clock import Clock
from git_memzoi.core.gitview import AnchorState, RepoView
from git_memzoi.core.globs import pattern_problem
from git_memzoi.core.scope_index import ScopeIndex
from git_memzoi.memkeep.entries import Entry

REASONS = ("scope_hit", "ttl_expired", "dependency_suspect", "anchor_unreachable", "ref_missing")

_ANCHOR_HINTS = {
    AnchorState.SHALLOW: "the clone is shallow; deepen it (git fetch --unshallow, or fetch-depth: 0 in CI)",
    AnchorState.NOT_ANCESTOR: "the commit is not in HEAD's history (rebased or squashed away?); re-verify",
    AnchorState.MISSING: "no such commit in this repository; re-verify to record a new anchor",
    AnchorState.AMBIGUOUS: "the abbreviated id names several objects; write the full commit id",
    AnchorState.NOT_COMMIT: "the id does not name a commit",
    AnchorState.NO_HEAD: "the repository has no commits yet",
}


@dataclass(frozen=True)
class Verdict:
    """One reason one entry is suspect (one object per entry × reason in ``status --json``).

    ``evidence`` holds the reason's facts: ``files`` for scope_hit, ``age_days``/``ttl_days`` for ttl_expired,
    ``dependencies`` for dependency_suspect, ``anchor``/``state`` for anchor_unreachable, ``refs`` for
    ref_missing.
    """

    id: str
    path: str
    reason: str
    message: str
    evidence: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Unchecked:
    """One field that keeps a live entry from being (fully) watched: ``scope``, ``explains`` or ``ttl_days``."""

    id: str
    path: str
    field: str
    message: str


@dataclass(frozen=True)
class StalenessReport:
    """The suspect set of a store at one HEAD on one day."""

    head: str | None
    shallow: bool
    today: dt.date
    entries: int
    verdicts: tuple[Verdict, ...]
    stale: tuple[str, ...]  # ids whose status is stale
    tombstones: int
    unchecked: tuple[Unchecked, ...] = ()  # sorted by id, then field

    @property
    def suspect_ids(self) -> tuple[str, ...]:
        """Sorted unique ids of suspect entries."""
        return tuple(sorted({v.id for v in self.verdicts}))


def compute(
    entries: Sequence[Entry],
    repo: RepoView,
    clock: Clock,
    *,
    referential_check: bool = False,
    path_refs: Callable[[str], Iterable[str]] | None = None,
    unreadable: Collection[str] = (),
) -> StalenessReport:
    """Compute the suspect set of ``entries`` against ``repo``'s HEAD and ``clock``'s today.

    Args:
        entries: the store's readable entries (unique ids; duplicates after the first are ignored here and
            reported by lint).
        repo: the repository view; called once per distinct anchor.
        clock: today's date, for ttl_expired.
        referential_check: enable ref_missing (``.memkeep.yml`` ``referential_check: true``).
        path_refs: body → referenced paths, required with ``referential_check``.
        unreadable: ids (file names without ``.md``) of entry files that could not be read; a dependency on one
            makes the dependent suspect, as does a dependency on an id no entry has.

    Returns:
        A :class:`StalenessReport`; verdicts sorted by entry id, then by reason in :data:`REASONS` order.
    """
    head, today = repo.head(), clock.today()
    by_id: dict[str, Entry] = {}
    for entry in entries:
        by_id.setdefault(entry.id, entry)
    live = [e for e in by_id.values() if e.is_live and e.status != "stale"]
    stale = tuple(sorted(i for i, e in by_id.items() if e.status == "stale"))
    verdicts: list[Verdict] = []
    history = _History.read(live, repo, head)
    scopes = _Scopes()
    refs = referential_check and path_refs is not None and head is not None
    not_watched: list[tuple[str, list[Unchecked]]] = []
    for entry in live:
        patterns, problems = scopes.of(entry.fields.get("scope"))
        verdicts.extend(_anchor_and_scope(entry, history, patterns))
        if entry.ttl_days is not None:
            verdicts.extend(_ttl(entry, today))
        if refs:
            verdicts.extend(_refs(entry, repo, head, path_refs))  # type: ignore[arg-type]
        if problems or "explains" in entry.fields or "ttl_days" in entry.fields:
            notes = _unchecked(entry, problems)
            if notes:
                not_watched.append((entry.id, notes))
    unresolved = {
        d: "unreadable" if d in unreadable else "missing" for e in live for d in e.explains if d not in by_id
    }
    verdicts.extend(_dependencies(live, {v.id for v in verdicts}, set(stale), unresolved))
    order = {reason: i for i, reason in enumerate(REASONS)}
    verdicts.sort(key=lambda v: (v.id, order[v.reason]))
    tombstones = sum(1 for e in by_id.values() if not e.is_live)
    unchecked = tuple(u for _, notes in sorted(not_watched, key=lambda n: n[0]) for u in notes)
    shallow = repo.is_shallow()
    return StalenessReport(head, shallow, today, len(by_id), tuple(verdicts), stale, tombstones, unchecked)


@dataclass(frozen=True)
class _History:
    """Each distinct anchor resolved once, each distinct ancestor diffed against HEAD once, one scope index."""

    states: Mapping[str, tuple[AnchorState, str | None]]
    changed: Mapping[str, frozenset[str]]
    index: ScopeIndex

    @classmethod
    def read(cls, live: Sequence[Entry], repo: RepoView, head: str | None) -> _History:
        revs = sorted({e.anchor for e in live if e.anchor})
        states = repo.anchor_states(revs)
        oids = sorted({oid for state, oid in states.values() if state is AnchorState.ANCESTOR and oid})
        changed = dict(repo.changed_since(oids, head)) if head and oids else {}
        return cls(states, changed, ScopeIndex(frozenset().union(*changed.values())))


class _Scopes:
    """Each distinct ``scope`` value, and each distinct pattern, checked once per run (entries share them)."""

    def __init__(self) -> None:
        self._seen: dict[object, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._problems: dict[str, str | None] = {}

    def of(self, raw: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``(valid patterns, problems)`` of a ``scope`` field value: the patterns a change is matched against,
        and the messages of the problems that keep the entry from being (fully) watched."""
        if type(raw) is list:
            key: object = tuple(raw)
        elif type(raw) is str or raw is None:
            key = raw
        else:
            return self._compute(raw)
        try:
            found = self._seen.get(key)
        except TypeError:  # a mapping or a list among the patterns: nothing to remember it by
            return self._compute(raw)
        if found is None:
            found = self._compute(raw)
            # only lists of strings are remembered: equality would not tell `1` from `True` (no string equals a
            # non-string, so a remembered key is never matched by another type)
            if type(raw) is not list or all(type(p) is str for p in raw):
                self._seen[key] = found
        return found

    def _compute(self, raw: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
        patterns = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else None
        if not patterns:
            what = "no scope" if raw is None or raw == [] else "scope is not a list of patterns"
            return (), (f"{what}: no change in the repository can flag this claim",)
        valid: list[str] = []
        notes: list[str] = []
        for pattern in patterns:
            problem = self._problem(pattern)
            if problem is None:
                valid.append(pattern)
            else:
                notes.append(f"scope pattern {pattern!r} is never matched ({problem})")
        if not notes and all(p.startswith("!") for p in valid):
            notes.append("scope has only negations, so it matches nothing")
        return tuple(valid), tuple(notes)

    def _problem(self, pattern: object) -> str | None:
        if type(pattern) is not str:
            return pattern_problem(pattern)
        if pattern not in self._problems:
            self._problems[pattern] = pattern_problem(pattern)
        return self._problems[pattern]


def _anchor_and_scope(entry: Entry, history: _History, patterns: tuple[str, ...]) -> list[Verdict]:
    anchor = entry.anchor
    if anchor is None:
        raw = entry.fields.get("anchor")
        if raw is not None:  # e.g. an all-digit id that YAML read as a number
            message = f"anchor {raw!r} is not a commit id string: quote it"
            evidence = {"anchor": str(raw), "state": AnchorState.NOT_COMMIT.value, "hint": "quote the anchor"}
            return [Verdict(entry.id, entry.path, "anchor_unreachable", message, evidence)]
        message = "no anchor recorded: the claim was never tied to a commit"
        return [Verdict(entry.id, entry.path, "anchor_unreachable", message, {"anchor": None, "state": "absent"})]
    state, oid = history.states[anchor]
    if state is not AnchorState.ANCESTOR or oid is None:
        hint = _ANCHOR_HINTS[state]
        message = f"anchor {anchor[:12]} is unavailable ({state.value}): {hint}"
        evidence = {"anchor": anchor, "state": state.value, "hint": hint}
        return [Verdict(entry.id, entry.path, "anchor_unreachable", message, evidence)]
    if not patterns:
        return []
    found = history.index.select(patterns) & history.changed[oid]
    if not found:
        return []
    hits = sorted(found)
    if entry.path in found:
        hits.remove(entry.path)
        if not hits:
            return []
    shown = ", ".join(hits[:3]) + (f" and {len(hits) - 3} more" if len(hits) > 3 else "")
    message = f"{shown} changed since {oid[:12]}"
    return [Verdict(entry.id, entry.path, "scope_hit", message, {"anchor": oid, "files": hits})]


def _ttl(entry: Entry, today: dt.date) -> list[Verdict]:
    ttl, verified = entry.ttl_days, entry.verified_at
    if ttl is None or verified is None:
        return []
    age = (today - verified).days
    if age <= ttl:
        return []
    message = f"verified {verified.isoformat()}, {age} days ago; ttl_days is {ttl}"
    evidence = {"verified_at": verified.isoformat(), "age_days": age, "ttl_days": ttl}
    return [Verdict(entry.id, entry.path, "ttl_expired", message, evidence)]


def _refs(entry: Entry, repo: RepoView, head: str, path_refs: Callable[[str], Iterable[str]]) -> list[Verdict]:
    missing = [ref for ref in path_refs(entry.body) if not repo.path_exists(head, ref)]
    if not missing:
        return []
    message = "referenced path(s) missing at HEAD: " + ", ".join(missing)
    return [Verdict(entry.id, entry.path, "ref_missing", message, {"refs": missing})]


def _dependencies(
    live: Sequence[Entry], direct: set[str], stale: set[str], unresolved: Mapping[str, str]
) -> list[Verdict]:
    """dependency_suspect as a least fixpoint: every live entry that explains from a suspect one, transitively,
    cycles included; found by walking the reverse ``explains`` edges once from the suspect and seed ids.

    ``stale`` ids and ``unresolved`` ids (→ ``unreadable`` or ``missing``) seed it without being suspect.
    """
    suspect = set(direct)
    seeds = stale | set(unresolved)
    dependents: dict[str, list[str]] = {}
    for entry in live:
        for d in entry.explains:
            dependents.setdefault(d, []).append(entry.id)
    todo = [*suspect, *seeds]
    while todo:
        for dependent in dependents.get(todo.pop(), ()):
            if dependent not in suspect:
                suspect.add(dependent)
                todo.append(dependent)
    verdicts = []
    for entry in live:
        if not entry.explains:
            continue
        deps = sorted({d for d in entry.explains if d != entry.id and (d in suspect or d in seeds)})
        if not deps:
            continue
        states = {d: "stale" if d in stale else unresolved.get(d, "suspect") for d in deps}
        message = "depends on " + ", ".join(f"{d} ({states[d]})" for d in deps)
        evidence: dict[str, Any] = {"dependencies": deps}
        if any(d in unresolved for d in deps):
            evidence["unresolved"] = {d: unresolved[d] for d in deps if d in unresolved}
        verdicts.append(Verdict(entry.id, entry.path, "dependency_suspect", message, evidence))
    return verdicts


def _unchecked(entry: Entry, scope_problems: tuple[str, ...]) -> list[Unchecked]:
    """The fields that keep ``entry`` from being watched, each with why (lint names the same problems)."""
    out = [Unchecked(entry.id, entry.path, "scope", message) for message in scope_problems]
    fields = entry.fields
    explains = fields.get("explains")
    if explains is not None and not isinstance(explains, str) and \
            not (isinstance(explains, list) and all(isinstance(x, str) for x in explains)):  # fmt: skip
        out.append(Unchecked(entry.id, entry.path, "explains",
                             "explains is not a list of entry ids: its dependencies are not all followed"))  # fmt: skip
    ttl = fields.get("ttl_days")
    if ttl is None:
        return out
    if entry.ttl_days is None:
        out.append(Unchecked(entry.id, entry.path, "ttl_days",
                             f"ttl_days {ttl!r} is not a positive whole number: the claim never expires"))  # fmt: skip
    elif entry.verified_at is None:
        out.append(Unchecked(entry.id, entry.path, "ttl_days",
                             "no valid verified_at or written_at date, so ttl_days cannot expire the claim"))  # fmt: skip
    return out
