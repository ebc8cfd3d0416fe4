"""post-merge / post-checkout: the memkeep entries that are suspect at the new HEAD and were not at the old one,
and those the move brought in marked ``stale`` (a teammate's failed ``verify``: the claim no longer holds).

The store is evaluated twice with the same pure staleness core: at the new HEAD (the working tree's entries, as
``git memkeep status`` does) and at the old HEAD, with each entry as it was in the old commit's tree (an entry
the move added did not exist there; one it changed is read from the old blob) and anchors placed against the old
commit. Entries suspect in both states are left out; ``dependency_suspect`` dependents of a newly suspect entry
are in. Ancestry at the old commit comes from the commits that lie between the two HEADs, which is cheap for a
branch switch or a merge; when that range is too large, or there is no old HEAD (after a clone), the report
falls back to the entries suspect now and says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from git_memzoi.errors import MemzoiError
from git_memzoi.integrations.hook_events import PostCheckout, PostMerge

if TYPE_CHECKING:
    from git_memzoi.core.clock import Clock
    from git_memzoi.core.gitview import AnchorState
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView
    from git_memzoi.memkeep.api import Entry, Session, StalenessReport, Store

RANGE_LIMIT = 20_000  # commits between the two HEADs beyond which the old state is not computed
FOOTER = "Re-check with `git memkeep verify <id>` (or --all-safe), or edit the claim."


@dataclass(frozen=True)
class MoveReport:
    """post-merge / post-checkout: the commits compared and the verdicts of the entries that became suspect."""

    hook: str
    lines: tuple[str, ...]
    old: str | None = None  # the pinned commits compared (both set only for a real branch move)
    new: str | None = None


def after_move(start: Path, event: PostMerge | PostCheckout) -> MoveReport:
    """The report of a HEAD move; file checkouts and a squash merge report nothing new.

    The old and new commits are pinned from the hook's arguments (post-checkout) or ``ORIG_HEAD`` and HEAD
    (post-merge), never re-read later.
    """
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    if isinstance(event, PostCheckout) and not event.branch_checkout:
        return MoveReport(event.hook, ())
    if isinstance(event, PostMerge) and event.squash:
        note = "memkeep: squash merge staged, not committed; run `git memkeep status` after you commit"
        return MoveReport(event.hook, (note,))
    view = Pygit2RepoView(start)
    if isinstance(event, PostCheckout):
        old = None if event.after_clone else view.resolve_commit(event.previous)
        new = view.resolve_commit(event.new)
    else:
        old, new = view.resolve_commit("ORIG_HEAD"), view.head()
    if new is None or old == new:
        return MoveReport(event.hook, ())
    return MoveReport(event.hook, tuple(report_lines(view, old, new, event.hook)), old, new)


def report_lines(view: Pygit2RepoView, old: str | None, new: str, hook: str) -> list[str]:
    """The hook's lines: for the root's store, then each store in a subfolder (``svc/agent-memory/``, found as
    ``git memkeep`` started in its folder finds it), the verdicts of the newly suspect entries (or of all suspect
    ones, labelled so, when the old state cannot be computed); nothing for a store with nothing to report, and
    nothing when there is no store."""
    lines: list[str] = []
    for store, label in _stores(view):
        lines += _store_lines(view, old, new, hook, store, label)
    return lines


def _stores(view: Pygit2RepoView) -> list[tuple[Store | None, str]]:
    """``(store, label)`` of the root's store (``None``: located from the root, as ``git memkeep status`` does;
    label ``""``) and of each store below it holding a tracked entry file (label ``" (svc/agent-memory)"``)."""
    from git_memzoi.integrations.guard import stores_below
    from git_memzoi.memkeep import api

    try:
        primary: Store | None = api.locate_store(view.root, view.root)
    except (MemzoiError, OSError):
        primary = None
    return [(None, ""), *((store, f" ({store.rel})") for store in stores_below(view, primary))]


def _store_lines(
    view: Pygit2RepoView, old: str | None, new: str, hook: str, store: Store | None, label: str
) -> list[str]:
    """:func:`report_lines` for one store (``None``: the root's)."""
    from git_memzoi.core.clock import SystemClock
    from git_memzoi.memkeep import api

    options = api.Options(start=view.root) if store is None else api.Options(start=view.root, store=str(store.path))
    try:
        with api.no_cyclic_gc():
            session = api.open_session(options)
            clock = SystemClock()
            now = api.report(session, clock)
            before, stale_before = None, None
            if old is not None and (now.verdicts or now.stale):
                entries = _entries_at(view, session.store, session.loaded.entries, old, new)
                stale_before = {e.id for e in entries if e.fields.get("status") == "stale"}
                wanted = _with_dependencies({v.id for v in now.verdicts}, entries)
                before = _compute_at([e for e in entries if e.id in wanted], view, old, new, clock, session)
    except MemzoiError:
        return []  # no store here (or it cannot be read): nothing to report
    span = f"{old[:12]}..{new[:12]}" if old else new[:12]
    if before is None or stale_before is None:
        verdicts, stale = list(now.verdicts), list(now.stale)
        title = f"memkeep{label}: after {hook} ({span}) these entries are suspect now:"
    else:
        earlier = {v.id for v in before.verdicts}
        verdicts = [v for v in now.verdicts if v.id not in earlier]
        stale = [entry_id for entry_id in now.stale if entry_id not in stale_before]  # a teammate's failed verify
        title = f"memkeep{label}: after {hook} ({span}) these entries became suspect:"
    if not verdicts and not stale:
        return []
    lines = [f"  stale      {entry_id}  {api.STALE_NOTE}" for entry_id in stale]
    return [title, *lines, *(f"  suspect    {v.id}  {v.reason}: {v.message}" for v in verdicts), FOOTER]


def _with_dependencies(ids: set[str], entries: Sequence[Entry]) -> set[str]:
    """``ids`` and every id they rest on through ``explains``, transitively: the only entries whose state at the
    old HEAD can decide whether a suspect-now entry was suspect then (the others need not be evaluated)."""
    explains = {e.id: e.explains for e in entries}
    wanted, todo = set(ids), list(ids)
    while todo:
        for dep in explains.get(todo.pop(), ()):
            if dep not in wanted:
                wanted.add(dep)
                todo.append(dep)
    return wanted


def _compute_at(
    entries: Sequence[Entry], view: Pygit2RepoView, old: str, new: str, clock: Clock, session: Session
) -> StalenessReport | None:
    between = _between(view, old, new)
    if between is None:
        return None
    from git_memzoi.memkeep import api

    return api.report(session, clock, entries=entries, repo=AtCommit(view, old, new, *between))


def _entries_at(view: Pygit2RepoView, store: Store, current: Sequence[Entry], old: str, new: str) -> list[Entry]:
    """The store's entries as they were in ``old``'s tree: the current ones whose file the move did not change,
    and the old blob of the changed ones (an entry file the move added is left out)."""
    from git_memzoi.core import frontmatter
    from git_memzoi.memkeep.api import Entry

    prefix = "" if store.rel == "." else f"{store.rel}/"
    entries_prefix = f"{prefix}entries/"
    changed = {p for p in view.changed_files(old, new) if p.startswith(entries_prefix) and p.endswith(".md")}
    kept = [e for e in current if e.path not in changed]  # entry paths are repository-relative
    for path in sorted(changed):
        data = view.tree_blob(old, path)
        if data is None:
            continue  # the move added it (or it was no regular file then): it was not an entry before
        try:
            doc = frontmatter.parse(data)
        except frontmatter.FrontmatterError:
            continue  # unreadable then: not suspect then either, so it counts as new if suspect now
        if doc.split.has_frontmatter:
            kept.append(Entry(path, doc.fields, doc.body, doc.split.body_start_line, path.rsplit("/", 1)[-1][:-3]))
    return kept


def _between(view: Pygit2RepoView, old: str, new: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """(commits in ``new``'s history but not ``old``'s, commits in ``old``'s but not ``new``'s), or ``None``
    when either side exceeds :data:`RANGE_LIMIT`."""
    new_only = view.commits_between(new, old, RANGE_LIMIT)
    old_only = view.commits_between(old, new, RANGE_LIMIT) if new_only is not None else None
    return None if new_only is None or old_only is None else (new_only, old_only)


class AtCommit:
    """A :class:`~git_memzoi.core.gitview.RepoView` that answers as if HEAD were ``old``.

    An anchor is in ``old``'s history when it is in ``new``'s but not among the commits only ``new`` has, or
    among the commits only ``old`` has; everything else is asked of the real view.
    """

    def __init__(
        self, view: Pygit2RepoView, old: str, new: str, new_only: frozenset[str], old_only: frozenset[str]
    ) -> None:
        self._view, self._old, self._new = view, old, new
        self._new_only, self._old_only = new_only, old_only

    def head(self) -> str:
        return self._old

    def is_shallow(self) -> bool:
        return bool(self._view.is_shallow())

    def anchor_states(self, revs: Iterable[str]) -> Mapping[str, tuple[AnchorState, str | None]]:
        from git_memzoi.core.gitview import AnchorState

        out: dict[str, tuple[AnchorState, str | None]] = {}
        for rev, (state, full) in self._view.anchor_states(revs).items():
            if state in (AnchorState.ANCESTOR, AnchorState.NOT_ANCESTOR) and full is not None:
                in_new = state is AnchorState.ANCESTOR
                in_old = (in_new and full not in self._new_only) or full in self._old_only
                state = AnchorState.ANCESTOR if in_old else AnchorState.NOT_ANCESTOR
            out[rev] = (state, full)
        return out

    def changed_files(self, base: str, head: str) -> Sequence[str]:
        return self._view.changed_files(base, head)

    def changed_since(self, bases: Iterable[str], head: str) -> Mapping[str, frozenset[str]]:
        return self._view.changed_since(bases, head)

    def path_exists(self, commit: str, path: str) -> bool:
        return bool(self._view.path_exists(commit, path))


__all__ = ["AtCommit", "after_move", "report_lines"]
