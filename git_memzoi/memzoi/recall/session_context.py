"""The session-start context: what an agent resuming work in this repository should see first (issue 15; io).

Built from the repository's state, never from a task text: the latest session checkpoint (``Resuming: …``), the
risks, warnings and failed attempts (memkeep ``gotcha`` entries too) bound to a file this branch changed
(against its merge base with the default branch) or the working tree changed
(:mod:`~git_memzoi.core.gitview_branch`), the suspect and stale claims of both stores with their reasons (records
by their memkeep envelope, entries by memkeep's own report: :mod:`~git_memzoi.memzoi.recall.suspect`), the newest
decisions, and the open review count. Items come in that rank order, each memory once (by ``store:id``; a bound
risk that is also suspect says so on its own line), each cited ``[id, file:line]``, and the rendered text never
exceeds its byte budget (UTF-8): at most :data:`LIMITS` items of a kind, the budget spent on the first three
of every kind before the others, an item that does not fit left out whole while the walk goes on, and a last
line counting what was left out. A memory holding a credential is named by id, never shown. A repository without
memory gets one line saying how to start (:data:`START_LINE`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import InputError
from git_memzoi.memzoi.recall.search import fresh_index

if TYPE_CHECKING:
    from git_memzoi.core.gitview_branch import BranchState
    from git_memzoi.memzoi.layout import Layout
    from git_memzoi.memzoi.recall.schema import SuspectJson
    from git_memzoi.memzoi.workspace import Workspace

DEFAULT_BUDGET_BYTES = 4000
MIN_BUDGET_BYTES = 0
MAX_BUDGET_BYTES = 4000  # Claude Code shows a preview instead of context above ~10 KB; envelopes cut at 4,000
LIMITS = {"bound": 10, "suspect": 10, "decision": 5}  # per kind, in rank order
RENDERED_SUSPECTS = LIMITS["suspect"] + LIMITS["bound"]  # room for those a bound item already shows
FIRST_TIER = 3  # the budget goes to the first three of every kind before the fourth of any
ITEM_CHARS = 160  # one memory's text in a line: the rest is a `git memzoi show` away
RESUME_LINES = 12
GOVERNANCE = {"risk": 3, "warning": 2, "failed_attempt": 1, "gotcha": 2}  # gotcha: memkeep's warning
HEADER = "# Memzoi session context"
START_LINE = (
    "Memzoi: this repository has no project memory yet. Start with `git memzoi init`, then propose what an agent "
    'should know with `git memzoi propose --type decision --sensitivity repo-safe --title "..." --body "..."`; '
    "`git memzoi quickstart` shows every step."
)
REVIEW_LINE = "Review: {count} item(s) wait for review: `git memzoi review`"
TAIL_LINE = "… {count} more not shown (budget {budget} bytes): `git memkeep status`, `git memzoi search <words>`"


@dataclass(frozen=True)
class Item:
    """One line (or a few) of the context: ``kind`` (``resume``, ``bound``, ``suspect``, ``decision``,
    ``review``), the memory's ``store:id`` (``""`` for the review count), ``text`` as rendered and the citation
    (``file:line``, ``None`` for the review count)."""

    kind: str
    key: str
    text: str
    cited: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{kind, key, cited, bytes}``."""
        return {"kind": self.kind, "key": self.key, "cited": self.cited, "bytes": len(self.text.encode("utf-8"))}


@dataclass(frozen=True)
class SessionContext:
    """The rendered context (``text``, at most ``budget_bytes`` UTF-8 bytes), the items it shows and those left
    out for the budget; ``empty`` when the repository holds no memory (``text`` is then :data:`START_LINE`)."""

    text: str
    shown: tuple[Item, ...]
    omitted: tuple[Item, ...]
    budget_bytes: int
    empty: bool = False

    def to_json(self) -> dict[str, Any]:
        """``{text, bytes, budget_bytes, empty, shown: [item], omitted: [item]}``."""
        return {
            "text": self.text,
            "bytes": len(self.text.encode("utf-8")),
            "budget_bytes": self.budget_bytes,
            "empty": self.empty,
            "shown": [i.to_json() for i in self.shown],
            "omitted": [i.to_json() for i in self.omitted],
        }


def check_budget(budget_bytes: int) -> int:
    """``budget_bytes`` when it is within ``[MIN_BUDGET_BYTES, MAX_BUDGET_BYTES]``.

    Raises:
        InputError: otherwise (``bad_budget``).
    """
    if not MIN_BUDGET_BYTES <= budget_bytes <= MAX_BUDGET_BYTES:
        raise InputError(
            f"the session context budget must be {MIN_BUDGET_BYTES} to {MAX_BUDGET_BYTES} bytes, not {budget_bytes}",
            "bad_budget",
        )
    return budget_bytes


def has_memkeep_store(root: Path) -> bool:
    """Whether ``root`` holds a memkeep store (``agent-memory/`` or a ``.memkeep.yml``) that memkeep's own
    SessionStart hook reports."""
    return (root / "agent-memory").is_dir() or (root / ".memkeep.yml").is_file()


def start_context(budget_bytes: int = DEFAULT_BUDGET_BYTES) -> SessionContext:
    """The context of a repository without memory: :data:`START_LINE`, cut to the budget."""
    return SessionContext(fit(START_LINE, budget_bytes), (), (), budget_bytes, True)


@fresh_index
def build(ws: Workspace, *, budget_bytes: int = DEFAULT_BUDGET_BYTES) -> SessionContext:
    """The session-start context of ``ws`` within ``budget_bytes`` (UTF-8 bytes of the text; see the module).

    Raises:
        InputError: a budget out of range (``bad_budget``); ToolError: the index cannot be read.
    """
    from git_memzoi.memzoi.recall.index import select

    check_budget(budget_bytes)
    layout, now = ws.layout, ws.clock.now()
    stored = select.counts(layout, "repo", now=now)
    records, entries = stored["record"], stored["entry"]
    checkpoint = next(iter(select.newest(layout, "session", now=now)), None)
    reviews = open_review_count(layout)
    if not records and not entries and checkpoint is None and not reviews:
        return start_context(budget_bytes)
    state = _branch(ws)
    suspects, suspect_rows = _suspects(ws, bool(entries))
    bound, bound_rows, more = _bound(ws, state.changed if state is not None else (), suspects)
    decisions = select.newest(layout, "repo", now=now, types=("decision",), limit=LIMITS["decision"])
    items = _dedupe(
        [
            *([_resume(checkpoint)] if checkpoint is not None else []),
            *bound,
            *_suspect_items(suspect_rows, suspects),
            *(_memory_item("decision", row, "decision") for row in decisions),
        ]
    )
    items, left = _limit(items)
    if reviews:
        items.append(Item("review", "", REVIEW_LINE.format(count=reviews)))
    items = _withhold(ws, items, [*bound_rows, *suspect_rows, *decisions])
    lines = [HEADER, _summary(state, records, entries)]
    if len(items) == (1 if reviews else 0):
        lines.append("Nothing suspect, nothing bound to your changes, no decisions yet.")
    return _fit_items(lines, items, [*left, *more], budget_bytes)


def open_review_count(layout: Layout) -> int:
    """How many items wait in the review inbox: :func:`git_memzoi.memzoi.proposals.review.pending_count`, the
    number handoff, doctor and MCP report; never raises (an unreadable inbox counts as empty here)."""
    from git_memzoi.memzoi.proposals import review

    try:
        return review.pending_count(layout)
    except (OSError, InputError):
        return 0


# ------------------------------------------------------------------------------------------------ gathering


def _branch(ws: Workspace) -> BranchState | None:
    from git_memzoi.core.gitview_branch import branch_state

    try:
        return branch_state(ws.layout.root, recent=0)
    except InputError:  # a folder git does not know: no branch, no changes
        return None


def _suspects(ws: Workspace, with_entries: bool) -> tuple[dict[str, SuspectJson], list[Mapping[str, Any]]]:
    """Every suspect memory of both stores by ``store:id``, and the rows of those that may be shown: records by
    their envelope (:func:`suspect.assess_all`, remembered while nothing changed), entries by memkeep's report
    (remembered likewise)."""
    from git_memzoi.memzoi.recall import suspect
    from git_memzoi.memzoi.recall.index import select

    layout, now = ws.layout, ws.clock.now()
    marks: dict[str, SuspectJson] = {f"record:{rid}": mark for rid, mark in suspect.assess_all(ws).items()}
    if with_entries:
        found = suspect.assess_entries(ws, select.ids(layout, "repo", now=now, store="entry"))
        marks.update({f"entry:{eid}": mark for eid, mark in found.items()})
    rows: list[Mapping[str, Any]] = []
    for store in ("record", "entry"):  # stale ones first, then newest: only as many rows as can be rendered
        ids = [k.partition(":")[2] for k in sorted(marks) if k.startswith(store + ":")]
        stale = [i for i in ids if marks[f"{store}:{i}"]["reasons"][0]["reason"] == "stale"]
        rest = [i for i in ids if marks[f"{store}:{i}"]["reasons"][0]["reason"] != "stale"]
        for chosen in (stale, rest):
            rows += select.by_ids(layout, "repo", chosen, now=now, store=store, limit=RENDERED_SUSPECTS)
    return marks, rows


def _bound(
    ws: Workspace, changed: Sequence[str], suspects: Mapping[str, SuspectJson]
) -> tuple[list[Item], list[Mapping[str, Any]], list[Item]]:
    """Governance memories bound to a changed file, ranked: risk first, then warning (and gotcha), failed
    attempt; suspect ones first, the closer binding, newest. Returns the first ``LIMITS["bound"]`` as items,
    their rows, and the others as unrendered items (counted as left out)."""
    from git_memzoi.core.globs import pattern_problem
    from git_memzoi.core.scope_index import ScopeIndex
    from git_memzoi.memzoi.recall.index import select
    from git_memzoi.memzoi.recall.suspect import key

    if not changed:
        return [], [], []
    now, paths, scopes = ws.clock.now(), _Changed(changed), ScopeIndex(changed)

    def covered(patterns: Sequence[str]) -> frozenset[str]:
        valid = [p for p in patterns if pattern_problem(p) is None]
        return scopes.select(valid) if valid else frozenset()

    hits: list[tuple[tuple[Any, ...], Mapping[str, Any], tuple[int, str]]] = []
    types = tuple(GOVERNANCE)
    for row in select.bound(ws.layout, lambda p: paths.binding(p) is not None, now=now, types=types):
        found = paths.binding(json.loads(row["applies_to"]))
        assert found is not None  # the SQL function said so
        hits.append((_bound_order(row, found[0], suspects), row, found))
    for row in select.bound(ws.layout, lambda p: bool(covered(p)), now=now, types=types, store="entry"):
        found = (4, min(covered(json.loads(row["applies_to"]))))
        hits.append((_bound_order(row, found[0], suspects), row, found))
    hits.sort(key=lambda h: h[0])
    shown = hits[: LIMITS["bound"]]
    items = [
        _memory_item("bound", row, f"{row['type']} on {found[1]}", suspects.get(key(row))) for _, row, found in shown
    ]
    rest = [Item("bound", key(row), "") for _, row, _ in hits[LIMITS["bound"] :]]
    return items, [row for _, row, _ in shown], rest


def _bound_order(row: Mapping[str, Any], score: int, suspects: Mapping[str, SuspectJson]) -> tuple[Any, ...]:
    from git_memzoi.memzoi.recall.suspect import key

    return (-GOVERNANCE[row["type"]], key(row) not in suspects, -score, -int(row["updated_us"]), row["id"])


class _Changed:
    """The changed files, for :func:`pathmatch.path_score` against many ``applies_to`` paths at once: a stored
    path binds a file when it is that file (5), a ``/**`` folder holding it (4) or a folder above it (3); a file
    has nothing below it, an untracked folder (``new/``) everything (2). Each stored path costs a few dict
    lookups."""

    def __init__(self, changed: Sequence[str]) -> None:
        self.files = {p for p in changed if not p.endswith("/")}
        self.untracked = {p.rstrip("/"): p for p in changed if p.endswith("/")}  # new folders, as git lists them
        self.folders: dict[str, str] = {}
        for path in sorted(changed):
            parts = path.rstrip("/").split("/")
            for n in range(1, len(parts) + (path in self.untracked.values())):
                self.folders.setdefault("/".join(parts[:n]), path)

    def binding(self, stored_paths: Iterable[str]) -> tuple[int, str] | None:
        """The best ``(score, changed file)`` of a record's ``applies_to``; ``None`` when none binds."""
        from git_memzoi.memzoi.recall.pathmatch import ANCESTOR, EXACT, GLOB, GLOB_CONTAINS

        best: tuple[int, str] | None = None
        for stored in stored_paths:
            clean = stored.strip().rstrip("/")
            if clean.endswith(GLOB):
                base = clean[: -len(GLOB)]
                found = (GLOB_CONTAINS, base) if base in self.files else None
                found = found or ((GLOB_CONTAINS, self.folders[base]) if base in self.folders else None)
            elif clean in self.files:
                found = (EXACT, clean)
            else:
                found = (ANCESTOR, self.folders[clean]) if clean in self.folders else None
            found = found or self._inside_new_folder(clean.removesuffix(GLOB))
            if found is not None and (best is None or found[0] > best[0]):
                best = found
        return best

    def _inside_new_folder(self, stored: str) -> tuple[int, str] | None:
        """A stored path inside an untracked folder binds it as a descendant (2)."""
        from git_memzoi.memzoi.recall.pathmatch import DESCENDANT

        if self.untracked:
            parts = stored.split("/")
            for n in range(1, len(parts) + 1):
                folder = self.untracked.get("/".join(parts[:n]))
                if folder is not None:
                    return DESCENDANT, folder
        return None


def _suspect_items(rows: Sequence[Mapping[str, Any]], suspects: Mapping[str, SuspectJson]) -> list[Item]:
    """The suspect memories, stale ones (a failed check) first, then records before entries, newest first; those
    past :data:`RENDERED_SUSPECTS` (or without a row read) only counted."""
    from git_memzoi.memzoi.recall.suspect import key

    ordered = sorted(
        rows,
        key=lambda r: (
            suspects[key(r)]["reasons"][0]["reason"] != "stale",
            r["store"] == "entry",
            -int(r["updated_us"]),
            r["id"],
        ),
    )[:RENDERED_SUSPECTS]
    items = [_memory_item("suspect", row, "suspect", suspects[key(row)]) for row in ordered]
    rendered = {item.key for item in items}
    return items + [Item("suspect", name, "") for name in sorted(suspects) if name not in rendered]


# ------------------------------------------------------------------------------------------------ rendering


def _memory_item(kind: str, row: Mapping[str, Any], label: str, mark: SuspectJson | None = None) -> Item:
    """``- <label>: <title>: <body> [id, file:line]`` and, for a suspect memory, a ``Suspect:`` line."""
    entry = row.get("store") == "entry"
    text = row["body"] if entry else f"{row['title']}: {row['body']}"
    cited = f"{row['path']}:{row['line'] or 1}"
    line = f"- {label}: {_short(text, ITEM_CHARS)} [{row['id']}, {cited}]"
    if mark is not None:
        reasons = "; ".join(f"{r['reason']} ({r['message']})" for r in mark["reasons"])
        line += f"\n  Suspect: {_short(reasons, ITEM_CHARS)}; re-verify before relying on it"
    key = f"{row.get('store') or 'record'}:{row['id']}"
    return Item(kind, key, line, cited)


def _resume(row: Mapping[str, Any]) -> Item:
    """``Resuming: <task> [id, file]`` and the first lines of the checkpoint's note."""
    cited = f"{row['path']}:{row['line'] or 1}"
    body = [f"  {_short(line, ITEM_CHARS)}" for line in str(row["body"]).splitlines() if line.strip()]
    more = ["  …"] if len(body) > RESUME_LINES else []
    head = f"Resuming: {_short(row['title'], ITEM_CHARS)} [{row['id']}, {cited}]"
    return Item("resume", f"session:{row['id']}", "\n".join([head, *body[:RESUME_LINES], *more]), cited)


def _summary(state: BranchState | None, records: int, entries: int) -> str:
    memory = f"{records} record(s), {entries} entr{'y' if entries == 1 else 'ies'}"
    if state is None:
        return f"Memory: {memory}; not a git working tree."
    where = f"branch {state.branch}" if state.branch else "detached HEAD" if state.head else "no commit yet"
    parts = [f"{len(state.branch_files)} file(s) changed since {state.base}"] if state.base else []
    parts.append(f"{len(state.working)} changed in the working tree")
    return f"Memory: {memory}; {where}: {', '.join(parts)}."


def _short(text: str, limit: int) -> str:
    flat = re.sub(r"\s+", " ", str(text)).strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _dedupe(items: Iterable[Item]) -> list[Item]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item.key and item.key in seen:
            continue
        seen.add(item.key)
        out.append(item)
    return out


def _limit(items: list[Item]) -> tuple[list[Item], list[Item]]:
    """At most :data:`LIMITS` items of a kind, so one crowded kind (a thousand risks bound to a folder the branch
    touched) leaves room for the others: ``(kept, left out)``."""
    kept: list[Item] = []
    left: list[Item] = []
    counts: dict[str, int] = {}
    for item in items:
        counts[item.kind] = counts.get(item.kind, 0) + 1
        over = counts[item.kind] > LIMITS.get(item.kind, len(items))
        (left if over or not item.text else kept).append(item)  # an unrendered item is only counted
    return kept, left


def _withhold(ws: Workspace, items: list[Item], rows: Sequence[Mapping[str, Any]]) -> list[Item]:
    """Replace the item of a memory holding a credential by one naming its id, field and rule (never the text)."""
    from git_memzoi.memzoi.recall.search import withhold
    from git_memzoi.memzoi.recall.suspect import key

    by_key = {key(row): row for row in rows}
    shown = [by_key[i.key] for i in items if i.key in by_key]
    if not shown:
        return items
    withheld = {w["record_id"]: w for w in withhold(ws.layout, shown)[1]}
    out = []
    for item in items:
        row = by_key.get(item.key)
        found = None if row is None else withheld.get(row["id"])
        if found is not None:
            why = f"its {found['field']} holds a credential ({found['rule']}; not printed); fix {found['path']}"
            item = Item(item.kind, item.key, f"- [withheld] {found['record_id']}: {why}", item.cited)
        out.append(item)
    return out


def _fit_items(head: list[str], items: Sequence[Item], left: Sequence[Item], budget: int) -> SessionContext:
    """Walk ``items`` in rank order into ``budget`` bytes after ``head``: an item that does not fit is left out
    whole and the walk goes on; when any was left out (here or by :func:`_limit`), a tail line counts them
    (room is made for it)."""
    shown, omitted, text = _walk(head, items, budget)
    if omitted or left:
        tail = TAIL_LINE.format(count=len(items) + len(left), budget=budget)  # the widest the count can be
        shown, omitted, text = _walk(head, items, budget - len(tail.encode("utf-8")) - 1)
        tail = TAIL_LINE.format(count=len(omitted) + len(left), budget=budget)
        if len((text + "\n" + tail).encode("utf-8")) <= budget:
            text = text + "\n" + tail
    return SessionContext(fit(text, budget), tuple(shown), (*omitted, *left), budget)


def _walk(head: list[str], items: Sequence[Item], budget: int) -> tuple[list[Item], list[Item], str]:
    """Spend ``budget`` on the first :data:`FIRST_TIER` items of each kind, then on the others, in rank order;
    the text shows the chosen items in rank order (each kind together)."""
    used = len("\n".join(head).encode("utf-8"))
    seen: dict[str, int] = {}
    tiers: tuple[list[int], list[int]] = ([], [])
    for n, item in enumerate(items):
        seen[item.kind] = seen.get(item.kind, 0) + 1
        tiers[seen[item.kind] > FIRST_TIER].append(n)
    chosen: set[int] = set()
    for n in (*tiers[0], *tiers[1]):
        size = len(items[n].text.encode("utf-8")) + 1
        if used + size <= budget:
            used += size
            chosen.add(n)
    shown = [item for n, item in enumerate(items) if n in chosen]
    omitted = [item for n, item in enumerate(items) if n not in chosen]
    return shown, omitted, "\n".join([*head, *(item.text for item in shown)])


def fit(text: str, budget: int) -> str:
    """``text`` cut to at most ``budget`` UTF-8 bytes at a character boundary (whole when it fits)."""
    data = text.encode("utf-8")
    if len(data) <= budget:
        return text
    return data[:budget].decode("utf-8", "ignore")
