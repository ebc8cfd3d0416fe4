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
from dataclasses import dataclass
from typing import Any

from git_memzoi.core.clock import Clock
from git_memzoi.core.gitview import HISTORY_HINT, AnchorState, RepoView
from git_memzoi.core.globs import pattern_problem
from git_memzoi.core.scope_index import ScopeIndex, combine
from git_memzoi.memkeep.entries import Entry
from git_memzoi.memkeep.report import StalenessReport as StalenessReport
from git_memzoi.memkeep.report import Unchecked as Unchecked
from git_memzoi.memkeep.report import Verdict as Verdict

_ANCESTOR = AnchorState.ANCESTOR
REASONS = ("scope_hit", "ttl_expired", "dependency_suspect", "anchor_unreachable", "ref_missing")

_ANCHOR_HINTS = {
    AnchorState.SHALLOW: "the clone is shallow; deepen it (git fetch --unshallow, or fetch-depth: 0 in CI)",
    AnchorState.NOT_ANCESTOR: "the commit is not in HEAD's history (rebased or squashed away?); re-verify",
    AnchorState.MISSING: "no such commit in this repository; re-verify to record a new anchor",
    AnchorState.AMBIGUOUS: "the abbreviated id names several objects; write the full commit id",
    AnchorState.NOT_COMMIT: "the id does not name a commit",
    AnchorState.NO_HEAD: "the repository has no commits yet",
    AnchorState.HISTORY_UNAVAILABLE: HISTORY_HINT,
}


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
    live: list[tuple[Entry, str | None]] = []  # each live entry with its anchor when that is a string
    stale_ids: list[tuple[str, str]] = []
    for entry_id, entry in by_id.items():
        fields = entry.fields  # read directly: the Entry accessors cost a call each, per entry
        status = fields.get("status")
        if status == "stale":
            stale_ids.append((entry_id, entry.path))
        elif status != "tombstone":
            anchor = fields.get("anchor")
            live.append((entry, anchor if type(anchor) is str and anchor else None))
    stale_ids.sort()
    stale = tuple(i for i, _ in stale_ids)
    history = _History.read({anchor for _, anchor in live if anchor}, repo, head)
    scopes = _Scopes(history.index)
    # the head and the path finder of the ref_missing check, when it runs
    refs = (head, path_refs) if referential_check and path_refs is not None and head is not None else None
    # (id, rank of the reason, verdict): sorting these tuples orders by id, then reason, with no key function
    # (ids are unique and each reason appears once per entry, so the verdicts themselves are never compared)
    ranked: list[tuple[str, int, Verdict]] = []
    explaining: list[Entry] = []  # the entries with an `explains` field: only they can depend on another
    not_watched: list[tuple[str, list[Unchecked]]] = []
    ttl_rank, ref_rank = _RANK["ttl_expired"], _RANK["ref_missing"]
    for entry, anchor in live:
        fields = entry.fields
        problems, selected = scopes.of(fields.get("scope"))
        verdict = _anchor_and_scope(entry, anchor, history, selected)
        if verdict is not None:
            ranked.append((verdict.id, _RANK[verdict.reason], verdict))
        if "ttl_days" in fields:
            verdict = _ttl(entry, today)
            if verdict is not None:
                ranked.append((verdict.id, ttl_rank, verdict))
        if refs is not None:
            verdict = _refs(entry, repo, *refs)
            if verdict is not None:
                ranked.append((verdict.id, ref_rank, verdict))
        if "explains" in fields:
            explaining.append(entry)
        if problems or "explains" in fields or "ttl_days" in fields:
            notes = _unchecked(entry, problems)
            if notes:
                not_watched.append((entry.id, notes))
    unresolved = {
        d: "unreadable" if d in unreadable else "missing" for e in explaining for d in e.explains if d not in by_id
    }
    rank = _RANK["dependency_suspect"]
    direct = {item[0] for item in ranked}
    ranked += [(v.id, rank, v) for v in _dependencies(explaining, direct, set(stale), unresolved)]
    ranked.sort()
    verdicts = tuple(item[2] for item in ranked)
    tombstones = len(by_id) - len(live) - len(stale)
    unchecked = tuple(u for _, notes in sorted(not_watched, key=lambda n: n[0]) for u in notes)
    shallow = repo.is_shallow()
    stale_paths = tuple(p for _, p in stale_ids)
    return StalenessReport(head, shallow, today, len(by_id), verdicts, stale, tombstones, unchecked, stale_paths)


_RANK = {reason: i for i, reason in enumerate(REASONS)}


@dataclass(frozen=True)
class _History:
    """Each distinct anchor resolved once, each distinct ancestor diffed against HEAD once, one scope index."""

    states: Mapping[str, tuple[AnchorState, str | None]]
    changed: Mapping[str, frozenset[str]]
    index: ScopeIndex

    @classmethod
    def read(cls, revs: Collection[str], repo: RepoView, head: str | None) -> _History:
        """Resolve the anchors ``revs`` and read what changed since each ancestor among them."""
        states = repo.anchor_states(sorted(revs))
        oids = sorted({oid for state, oid in states.values() if state is AnchorState.ANCESTOR and oid})
        changed = dict(repo.changed_since(oids, head)) if head and oids else {}
        if len(changed) < len(oids):  # a treeless clone: the anchors whose history is unknown say so, one each
            lost = set(oids) - changed.keys()
            states = {r: (AnchorState.HISTORY_UNAVAILABLE, s[1]) if s[1] in lost else s for r, s in states.items()}
        return cls(states, changed, ScopeIndex(frozenset().union(*changed.values())))


class _Scopes:
    """Each distinct ``scope`` value, and each distinct pattern, checked once per run (entries share them)."""

    def __init__(self, index: ScopeIndex) -> None:
        self._index = index
        self._seen: dict[object, tuple[tuple[str, ...], frozenset[str]]] = {}
        # pattern → (its problem, None) or (None, what it matches: ScopeIndex.matching)
        self._patterns: dict[str, tuple[str | None, tuple[bool, frozenset[str]] | None]] = {}

    def of(self, raw: object) -> tuple[tuple[str, ...], frozenset[str]]:
        """``(problems, selected)`` of a ``scope`` field value: the messages of the problems that keep the entry
        from being (fully) watched, and the paths of the history's universe its valid patterns select."""
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
            # non-string, so a remembered key is never matched by another type); without problems, every pattern
            # was a valid one, so a string
            if type(raw) is not list or not found[0] or all(type(p) is str for p in raw):
                self._seen[key] = found
        return found

    def _compute(self, raw: object) -> tuple[tuple[str, ...], frozenset[str]]:
        patterns = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else None
        if not patterns:
            what = "no scope" if raw is None or raw == [] else "scope is not a list of patterns"
            return (f"{what}: no change in the repository can flag this claim",), frozenset()
        parts: list[tuple[bool, frozenset[str]]] = []
        notes: list[str] = []
        positive = False
        for pattern in patterns:
            known = self._patterns.get(pattern) if type(pattern) is str else None
            if known is None:
                plain = self._index.plain(pattern) if type(pattern) is str else None
                if plain is not None:  # the commonest shapes, valid by construction: no validation pass
                    known = (None, plain)
                else:
                    problem = pattern_problem(pattern)
                    known = (problem, self._index.matching(pattern) if problem is None else None)
                if type(pattern) is str:
                    self._patterns[pattern] = known
            part = known[1]
            if part is None:
                notes.append(f"scope pattern {pattern!r} is never matched ({known[0]})")
            else:
                parts.append(part)
                positive = positive or not part[0]
        if not notes and not positive:
            notes.append("scope has only negations, so it matches nothing")
        return tuple(notes), combine(parts) if parts else frozenset()


def _anchor_and_scope(
    entry: Entry,
    anchor: str | None,
    history: _History,
    selected: frozenset[str],
) -> Verdict | None:
    """The anchor_unreachable or scope_hit verdict of ``entry`` (they exclude each other), else ``None``;
    ``anchor`` is its anchor field when that is a non-empty string."""
    if anchor is None:
        raw = entry.fields.get("anchor")
        if raw is not None:  # e.g. an all-digit id that YAML read as a number
            message = f"anchor {raw!r} is not a commit id string: quote it"
            evidence = {"anchor": str(raw), "state": AnchorState.NOT_COMMIT.value, "hint": "quote the anchor"}
            return Verdict(entry.id, entry.path, "anchor_unreachable", message, evidence)
        message = "no anchor recorded: the claim was never tied to a commit"
        return Verdict(entry.id, entry.path, "anchor_unreachable", message, {"anchor": None, "state": "absent"})
    state, oid = history.states[anchor]
    if state is not _ANCESTOR or oid is None:
        hint = _ANCHOR_HINTS[state]
        message = f"anchor {anchor[:12]} is unavailable ({state.value}): {hint}"
        evidence = {"anchor": anchor, "state": state.value, "hint": hint}
        return Verdict(entry.id, entry.path, "anchor_unreachable", message, evidence)
    if not selected:
        return None
    found = selected & history.changed[oid]
    if not found:
        return None
    path = entry.path
    if path in found:
        if len(found) == 1:
            return None
        hits = sorted(found - {path})
    else:
        hits = sorted(found)
    shown = ", ".join(hits[:3]) + (f" and {len(hits) - 3} more" if len(hits) > 3 else "")
    message = f"{shown} changed since {oid[:12]}"
    return Verdict(entry.id, path, "scope_hit", message, {"anchor": oid, "files": hits})


def _ttl(entry: Entry, today: dt.date) -> Verdict | None:
    ttl = entry.ttl_days
    if ttl is None:
        return None
    dated = entry.dated_by
    if dated is None:
        return None
    field, date = dated
    age = (today - date).days
    if age <= ttl:
        return None
    # aged from written_at, it says so: "verified <written_at>" would name a verification that never happened
    when = f"verified {date.isoformat()}" if field == "verified_at" else f"written {date.isoformat()}, never verified"
    if field == "written_at" and entry.fields.get("verified_at") is not None:
        when = f"written {date.isoformat()} (verified_at is no valid date)"
    message = f"{when}, {age} days ago; ttl_days is {ttl}"
    evidence = {field: date.isoformat(), "age_days": age, "ttl_days": ttl}
    return Verdict(entry.id, entry.path, "ttl_expired", message, evidence)


def _refs(entry: Entry, repo: RepoView, head: str, path_refs: Callable[[str], Iterable[str]]) -> Verdict | None:
    missing = [ref for ref in path_refs(entry.body) if not repo.path_exists(head, ref)]
    if not missing:
        return None
    message = "referenced path(s) missing at HEAD: " + ", ".join(missing)
    return Verdict(entry.id, entry.path, "ref_missing", message, {"refs": missing})


def _dependencies(
    explaining: Sequence[Entry], direct: set[str], stale: set[str], unresolved: Mapping[str, str]
) -> list[Verdict]:
    """dependency_suspect as a least fixpoint: every live entry that explains from a suspect one, transitively,
    cycles included; found by walking the reverse ``explains`` edges once from the suspect and seed ids.

    ``explaining`` holds the live entries that have an ``explains`` field (no other entry depends on one);
    ``stale`` ids and ``unresolved`` ids (→ ``unreadable`` or ``missing``) seed it without being suspect.
    """
    suspect = set(direct)
    seeds = stale | set(unresolved)
    dependents: dict[str, list[str]] = {}
    for entry in explaining:
        for d in entry.explains:
            dependents.setdefault(d, []).append(entry.id)
    todo = [*suspect, *seeds]
    while todo:
        for dependent in dependents.get(todo.pop(), ()):
            if dependent not in suspect:
                suspect.add(dependent)
                todo.append(dependent)
    verdicts = []
    for entry in explaining:
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
    if (
        explains is not None
        and not isinstance(explains, str)
        and not (isinstance(explains, list) and all(isinstance(x, str) for x in explains))
    ):
        out.append(
            Unchecked(
                entry.id,
                entry.path,
                "explains",
                "explains is not a list of entry ids: its dependencies are not all followed",
            )
        )
    if "ttl_days" not in fields:  # written with no value, it is null: as unchecked as any other non-number
        return out
    ttl = fields["ttl_days"]
    if entry.ttl_days is None:
        shown = "has no value" if ttl is None else f"{ttl!r} is not a positive whole number"
        out.append(Unchecked(entry.id, entry.path, "ttl_days", f"ttl_days {shown}: the claim never expires"))
    elif entry.verified_at is None:
        out.append(
            Unchecked(
                entry.id,
                entry.path,
                "ttl_days",
                "no valid verified_at or written_at date, so ttl_days cannot expire the claim",
            )
        )
    return out
