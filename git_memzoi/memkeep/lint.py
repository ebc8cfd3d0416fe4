"""Lint: the reserved envelope, the taxonomies, the explains graph, size caps and INDEX consistency (pure).

memkeep README "Commands" (lint) and docs/memkeep.md "Lint rules". Unknown fields are the agent's own and
are ignored, except that a missing reserved field whose name an unknown field nearly matches says so ("unknown
field 'stauts' — did you mean status?"). Each :class:`Violation` names the entry, the field and the rule.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from typing import Any

from git_memzoi.core.globs import pattern_problem
from git_memzoi.core.patterns import lazy
from git_memzoi.memkeep import index
from git_memzoi.memkeep.entries import RESERVED, STATUSES, TYPES, Entry, as_date, check_problem
from git_memzoi.memkeep.store import Unreadable

CLAIM_MAX_CHARS = 140
ENTRY_MAX_BYTES = 8 * 1024
EVIDENCE_MAX_CHARS = 2000
TTL_CAP_DAYS = {"verified": 365, "observed": 180, "inferred": 30}
NEEDS_EVIDENCE = ("verified", "observed")
NEEDS_ANCHOR = ("verified", "observed")
_ANCHOR = lazy(r"^[0-9a-f]{7,64}$")
_ID = lazy(r"^[^\s|/\\]+$")
_ISO_DAY = lazy(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# git's opening and closing conflict markers (diff3's ||||||| too); a lone ======= may be a Markdown heading's rule
_CONFLICT = lazy(r"^(?:<{7}|>{7}|\|{7})(?: |$)")


@dataclass(frozen=True)
class Violation:
    """One broken rule: ``path`` and ``id`` of the entry, the ``field`` and the ``rule`` code."""

    path: str
    id: str
    field: str
    rule: str
    message: str
    line: int | None = None


def lint(
    entries: Sequence[Entry],
    unreadable: Sequence[Unreadable],
    index_text: str | None,
    today: dt.date,
    sizes: dict[str, int] | None = None,
    index_path: str = "INDEX.md",
    tracked: Collection[str] | None = None,
) -> list[Violation]:
    """Check a store. ``index_text`` is INDEX.md's content (``None`` when missing); ``sizes`` maps path → bytes;
    ``tracked`` holds the repository's tracked paths (git's index), for ``scope_unmatched``: a live entry whose
    valid scope selects none of them (its files renamed or deleted) can never be flagged again. ``None`` or an
    empty collection (nothing tracked yet) skips that rule.

    Returns the violations sorted by path, then field, then rule.
    """
    found = [  # a file a merge left unresolved cannot be parsed: named by the rule its markers break
        Violation(
            u.path, "", "frontmatter", "conflict_marker" if u.code == "merge_conflict" else "parse", u.reason, u.line
        )
        for u in unreadable
    ]
    ids: dict[str, Entry] = {}
    for entry in entries:
        if entry.id in ids:
            found.append(_v(entry, "id", "id_duplicate", f"id also used by {ids[entry.id].path}"))
        ids.setdefault(entry.id, entry)
    targets = _Targets(ids, {_stem(u.path): u.path for u in unreadable}, entries)
    for entry in entries:
        own = _entry_rules(entry, today, (sizes or {}).get(entry.path)) + _explains_rules(entry, targets)
        found.extend(_with_spelling_hints(entry, own))
    if tracked:
        found.extend(_unmatched(entries, found, tracked))
    found.extend(_cycles(ids))
    found.extend(_index_rules(entries, index_text, index_path))
    return sorted(found, key=lambda v: (v.path, v.field, v.rule, v.message))


def _v(entry: Entry, field: str, rule: str, message: str) -> Violation:
    return Violation(entry.path, entry.id, field, rule, message)


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


@dataclass(frozen=True)
class _Targets:
    """What an ``explains`` or ``superseded_by`` id can resolve to: a readable entry, an unreadable file, or
    nothing (then perhaps an entry whose ``id`` field, not its file name, says that id)."""

    readable: dict[str, Entry]
    unreadable: dict[str, str]
    entries: Sequence[Entry]

    def problem(self, target: str) -> tuple[str, str] | None:
        """``(rule suffix, message)`` when ``target`` does not name a readable entry, else ``None``."""
        if target in self.readable:
            return None
        if target in self.unreadable:
            path = self.unreadable[target]
            return "unreadable", f"{target!r} is {path}, which cannot be read (see its parse violation)"
        declared = [e.path for e in self.entries if e.declared_id == target]
        hint = f" ({declared[0]} says id: {target}, but an entry's id is its file name)" if declared else ""
        return "target", f"no entry with id {target!r}{hint}"


def _with_spelling_hints(entry: Entry, violations: list[Violation]) -> list[Violation]:
    """Add "unknown field 'stauts' — did you mean status?" to the violations of an absent reserved field."""
    absent = [name for name in RESERVED if entry.fields.get(name) is None]
    hints: dict[str, list[str]] = {}
    for key in entry.fields:
        if isinstance(key, str) and key not in RESERVED:
            for match in difflib.get_close_matches(key.lower(), absent, n=1, cutoff=0.7):
                hints.setdefault(match, []).append(key)
    if not hints:
        return violations
    out = []
    for v in violations:
        keys = hints.get(v.field)
        if keys:
            said = ", ".join(repr(k) for k in keys)
            v = Violation(
                v.path, v.id, v.field, v.rule, f"{v.message}; unknown field {said} — did you mean {v.field}?", v.line
            )
        out.append(v)
    return out


def _required(entry: Entry, name: str, allowed: Sequence[str]) -> list[Violation]:
    """``<name>_missing`` when the field is absent (or empty), ``<name>_invalid`` when outside ``allowed``."""
    value = entry.fields.get(name)
    if value is None:
        return [_v(entry, name, f"{name}_missing", f"{name} is missing; it is one of {', '.join(allowed)}")]
    if value not in allowed:
        return [_v(entry, name, f"{name}_invalid", f"{name} {value!r} is not one of {', '.join(allowed)}")]
    return []


def _entry_rules(entry: Entry, today: dt.date, size: int | None) -> list[Violation]:
    f = entry.fields
    out: list[Violation] = []
    if f.get("schema_version") is None:
        out.append(_v(entry, "schema_version", "schema_version_missing", "schema_version is missing; it must be 1"))
    elif f.get("schema_version") != 1:
        out.append(_v(entry, "schema_version", "schema_version", "schema_version must be 1"))
    out.extend(_id_rules(entry))
    out.extend(_required(entry, "type", TYPES))
    out.extend(_required(entry, "status", STATUSES))
    out.extend(_date_rules(entry, today))
    out.extend(_anchor_rules(entry))
    out.extend(_scope_rules(entry))
    out.extend(_evidence_rules(entry))
    out.extend(_ttl_rules(entry))
    out.extend(_check_rules(entry))
    out.extend(_status_rules(entry))
    out.extend(_claim_rules(entry, size))
    out.extend(_validity_rules(entry))
    out.extend(_conflict_rules(entry))
    return out


def _conflict_rules(entry: Entry) -> list[Violation]:
    """A conflict marker left by a merge, in the body or a text field: committed, it would become the claim (a
    fresh user's walk committed ``<<<<<<< HEAD`` as one). Lines inside a fenced code block of the body are an
    example an entry may show (how to resolve one), not a conflict."""
    out = []
    fence: str | None = None
    for offset, line in enumerate(entry.body.splitlines()):
        opened = line.lstrip()[:3]
        if opened in ("```", "~~~") and (fence is None or opened == fence):
            fence = opened if fence is None else None
            continue
        if fence is None and _CONFLICT.search(line):
            where = f"line {entry.body_line + offset}"
            message = f"a merge conflict marker at {where} ({line.split(' ', 1)[0]}); resolve the conflict"
            out.append(Violation(entry.path, entry.id, "body", "conflict_marker", message, entry.body_line + offset))
            return out
    for name, value in entry.fields.items():
        if isinstance(value, str) and any(_CONFLICT.search(line) for line in value.splitlines()):
            out.append(
                _v(entry, name, "conflict_marker", f"{name} holds a merge conflict marker; resolve the conflict")
            )
            return out
    return out


def _validity_rules(entry: Entry) -> list[Violation]:
    """``invalid_validity``: a ``valid_from`` / ``valid_to`` recall cannot read (the entry is left out of recall
    until it is fixed; git_memzoi/memzoi/records/validity.py)."""
    from git_memzoi.memzoi.records import validity

    try:
        validity.interval(entry.fields)
    except validity.ValidityError as exc:
        field = "valid_to" if exc.message.startswith("valid_to") else "valid_from"
        return [_v(entry, field, "invalid_validity", f"{exc.message}; recall leaves the entry out")]
    return []


def _id_rules(entry: Entry) -> list[Violation]:
    value = entry.fields.get("id")
    if not isinstance(value, str) or not value:
        return [_v(entry, "id", "id_missing", "id is required and must equal the file name")]
    if not _ID.match(value):
        return [_v(entry, "id", "id_format", "id must not contain spaces, '|' or slashes")]
    if value != entry.stem:
        return [
            _v(
                entry,
                "id",
                "id_mismatch",
                f"id {value!r} differs from the file name {entry.stem + '.md'!r}; "
                f"status, verify and explains know this entry as {entry.stem!r}",
            )
        ]
    return []


def _date_rules(entry: Entry, today: dt.date) -> list[Violation]:
    out = []
    dates: dict[str, dt.date] = {}
    for name in ("written_at", "verified_at"):
        value = entry.fields.get(name)
        if value is None:
            if name == "written_at":
                out.append(_v(entry, name, "date_missing", "written_at is required (YYYY-MM-DD)"))
            continue
        parsed = as_date(value) if not isinstance(value, dt.datetime) else None
        if parsed is None:
            # written YYYY-MM-DD but no day of the calendar (2025-02-30): said so, not "write it YYYY-MM-DD"
            shaped = isinstance(value, str) and _ISO_DAY.fullmatch(value) is not None
            message = f"{name} {value} is no calendar date" if shaped else f"{name} must be a date written YYYY-MM-DD"
            out.append(_v(entry, name, "date_invalid", message))
        elif parsed > today:
            out.append(_v(entry, name, "date_future", f"{name} {parsed.isoformat()} is after today"))
        else:
            dates[name] = parsed
    if "written_at" in dates and "verified_at" in dates and dates["verified_at"] < dates["written_at"]:
        out.append(_v(entry, "verified_at", "date_order", "verified_at is before written_at"))
    return out


def _anchor_rules(entry: Entry) -> list[Violation]:
    value = entry.fields.get("anchor")
    if value is None:
        if entry.status in NEEDS_ANCHOR:
            return [_v(entry, "anchor", "anchor_required", f"a {entry.status} entry needs the commit it holds at")]
        return []
    if not isinstance(value, str) or not _ANCHOR.match(value):
        return [
            _v(
                entry,
                "anchor",
                "anchor_format",
                "anchor must be a commit id: 7 to 64 lowercase hex digits, quoted when it is all digits",
            )
        ]
    return []


def _scope_rules(entry: Entry) -> list[Violation]:
    value = entry.fields.get("scope")
    if value is None or value == []:
        if entry.is_live:
            return [
                _v(
                    entry,
                    "scope",
                    "scope_required",
                    "scope lists what would have to change for the claim to become wrong; it must not be empty",
                )
            ]
        return []
    if not isinstance(value, list):
        return [_v(entry, "scope", "scope_type", "scope must be a list of glob patterns")]
    out = []
    for pattern in value:
        problem = pattern_problem(pattern)
        if problem:
            out.append(_v(entry, "scope", "scope_glob", f"{pattern!r}: {problem}"))
    if value and all(isinstance(p, str) and p.startswith("!") for p in value):
        out.append(_v(entry, "scope", "scope_glob", "scope has only negations, so it matches nothing"))
    return out


def _unmatched(entries: Sequence[Entry], found: Sequence[Violation], tracked: Collection[str]) -> list[Violation]:
    """``scope_unmatched`` for each live entry whose scope (valid, else it is already reported) selects no tracked
    path but its own file: after a rename a heal only moves the anchor, and the claim silently stops being
    watched (the scope still names the old path)."""
    from git_memzoi.core.scope_index import ScopeIndex

    reported = {v.path for v in found if v.field == "scope"}
    index = ScopeIndex(tracked)
    out = []
    for entry in entries:
        if not entry.is_live or entry.path in reported or not entry.scope:
            continue
        if not index.select(entry.scope) - {entry.path}:
            out.append(
                _v(
                    entry,
                    "scope",
                    "scope_unmatched",
                    "scope matches no tracked file (renamed or deleted?), "
                    "so no change can flag this claim; point it at the files the claim is about",
                )
            )
    return out


def _evidence_rules(entry: Entry) -> list[Violation]:
    value = entry.fields.get("evidence")
    if value is not None and not isinstance(value, str):
        return [_v(entry, "evidence", "evidence_type", "evidence must be text")]
    if entry.status in NEEDS_EVIDENCE and not (value or "").strip():
        return [_v(entry, "evidence", "evidence_required", f"a {entry.status} entry must say what earned it")]
    if value and len(value) > EVIDENCE_MAX_CHARS:
        return [_v(entry, "evidence", "evidence_size", f"evidence is over {EVIDENCE_MAX_CHARS} characters")]
    return []


def _ttl_rules(entry: Entry) -> list[Violation]:
    value = entry.fields.get("ttl_days")
    cap = TTL_CAP_DAYS.get(entry.status or "")
    if value is None and "ttl_days" not in entry.fields:
        if entry.status == "inferred":
            return [_v(entry, "ttl_days", "ttl_required", f"an inferred entry needs ttl_days (at most {cap})")]
        return []
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        return [_v(entry, "ttl_days", "ttl_type", "ttl_days must be a positive whole number of days")]
    if cap is not None and value > cap:
        return [_v(entry, "ttl_days", "ttl_cap", f"ttl_days {value} is over the {entry.status} cap of {cap}")]
    return []


def _check_rules(entry: Entry) -> list[Violation]:
    out = []
    if entry.type == "model":
        if "check" in entry.fields:
            out.append(_v(entry, "check", "model_check", "a model is re-tested through its predictions' checks"))
        predictions = entry.fields.get("predictions")
        if not isinstance(predictions, list) or not predictions:
            out.append(_v(entry, "predictions", "model_predictions", "a model needs a non-empty predictions list"))
        else:
            for i, item in enumerate(predictions, 1):
                if not isinstance(item, dict) or not isinstance(item.get("claim"), str):
                    out.append(_v(entry, "predictions", "model_predictions", f"prediction {i} needs a claim"))
                    continue
                out.extend(_one_check(entry, item.get("check"), f"predictions[{i}].check", required=True))
    elif "predictions" in entry.fields:
        out.append(_v(entry, "predictions", "model_predictions", "only a model entry has predictions"))
    if "check" in entry.fields and entry.type != "model":
        out.extend(_one_check(entry, entry.fields["check"], "check", required=False))
    env = entry.fields.get("environment")
    if env is not None and (not isinstance(env, dict) or not all(isinstance(v, (str, int)) for v in env.values())):
        out.append(_v(entry, "environment", "environment_format", "environment maps variable names to values"))
    return out


def _one_check(entry: Entry, value: Any, field: str, *, required: bool) -> list[Violation]:
    problem = check_problem(value, required=required)
    return [_v(entry, field, "check_format", problem)] if problem else []


def _status_rules(entry: Entry) -> list[Violation]:
    if entry.status != "tombstone":
        return []
    reason, successor = entry.fields.get("tombstone_reason"), entry.fields.get("superseded_by")
    if not (isinstance(reason, str) and reason.strip()) and not (isinstance(successor, str) and successor):
        return [
            _v(entry, "tombstone_reason", "tombstone_reason", "a tombstone says why: tombstone_reason or superseded_by")
        ]
    return []


def _claim_rules(entry: Entry, size: int | None) -> list[Violation]:
    out = []
    claim = entry.claim
    if not claim:
        out.append(_v(entry, "body", "claim_missing", "the body's first non-empty line must state the claim"))
    elif len(claim) > CLAIM_MAX_CHARS:
        out.append(
            _v(entry, "body", "claim_length", f"the claim is {len(claim)} characters; at most {CLAIM_MAX_CHARS}")
        )
    if size is not None and size > ENTRY_MAX_BYTES:
        out.append(_v(entry, "file", "size_cap", f"the entry is {size} bytes; at most {ENTRY_MAX_BYTES}"))
    return out


def _explains_rules(entry: Entry, targets: _Targets) -> list[Violation]:
    out = []
    successor = entry.fields.get("superseded_by")
    if isinstance(successor, str) and successor and (problem := targets.problem(successor)):
        out.append(_v(entry, "superseded_by", "superseded_by_target", problem[1]))
    value = entry.fields.get("explains")
    if value is None:
        return out
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        return [*out, _v(entry, "explains", "explains_type", "explains must be a list of entry ids")]
    for target in value:
        if target == entry.id:
            out.append(_v(entry, "explains", "explains_self", "an entry cannot depend on itself"))
        elif problem := targets.problem(target):
            out.append(_v(entry, "explains", f"explains_{problem[0]}", problem[1]))
        elif not targets.readable[target].is_live and entry.is_live:
            out.append(_v(entry, "explains", "explains_tombstone", f"{target!r} is a tombstone"))
    return out


def _cycles(ids: dict[str, Entry]) -> list[Violation]:
    """Every dependency cycle once, named by its members (graphlib finds one at a time)."""
    graph = {i: {d for d in sorted(e.explains) if d in ids and d != i} for i, e in sorted(ids.items())}
    out: list[Violation] = []
    while True:
        try:
            TopologicalSorter(graph).prepare()
            return out
        except CycleError as exc:
            cycle = exc.args[1][:-1]
            first = min(cycle)
            out.append(_v(ids[first], "explains", "explains_cycle", "dependency cycle: " + " -> ".join(exc.args[1])))
            for node in cycle:
                graph[node] = {d for d in graph[node] if d not in cycle}


def _index_rules(entries: Sequence[Entry], index_text: str | None, path: str) -> list[Violation]:
    if index_text is None:
        return [Violation(path, "", "index", "index_missing", "INDEX.md is missing; run git memkeep index")]
    differs = index.drift(entries, index_text)
    if differs:
        message = f"INDEX.md does not match what `git memkeep index` writes ({differs}); run git memkeep lint --fix"
        return [Violation(path, "", "index", "index_drift", message)]
    return []
