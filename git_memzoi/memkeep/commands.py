"""The memkeep composition root (io): wires the git view, the store and the clock to the pure cores.

Each function serves one command and returns a typed result; nothing here prints. The edges reach it through
:mod:`git_memzoi.memkeep.api`, memkeep's public face.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from git_memzoi.core.clock import Clock, SystemClock
from git_memzoi.core.gcpause import no_cyclic_gc as no_cyclic_gc  # re-exported: memkeep's face names it
from git_memzoi.errors import InputError
from git_memzoi.memkeep import store as store_mod
from git_memzoi.memkeep.store import LoadedStore, Store, Unreadable

if TYPE_CHECKING:  # verify's and lint's modules load only when those commands run
    from git_memzoi.core.gitview import RepoView
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView
    from git_memzoi.memkeep.checks import Runner
    from git_memzoi.memkeep.entries import Entry
    from git_memzoi.memkeep.lint import Violation
    from git_memzoi.memkeep.report import StalenessReport
    from git_memzoi.memkeep.verify import VerifyItem, VerifyResult


@dataclass(frozen=True)
class Options:
    """Where a command runs and which store it uses (memkeep README "Global flags")."""

    start: Path
    store: str | None = None
    store_dir: str | None = None
    clock: Clock = field(default_factory=SystemClock)


@dataclass(frozen=True)
class Session:
    """An opened repository and its loaded store."""

    view: Pygit2RepoView  # imported for type checking only: this module does not load pygit2 until a session opens
    loaded: LoadedStore

    @property
    def store(self) -> Store:
        """The located store."""
        return self.loaded.store


def open_session(options: Options) -> Session:
    """Open the repository around ``options.start`` and load its store.

    Raises:
        InputError: ``start`` missing, not a repository, store not found or outside the repository.
    """
    from git_memzoi.core import gitroot

    if not options.start.is_dir():
        raise InputError(f"cannot run in {options.start}: no such directory", "bad_directory")
    root = gitroot.worktree_root(options.start)  # read from the file system: pygit2 loads beside the parsing
    located = store_mod.locate(options.start, root, store=options.store, store_dir=options.store_dir)
    views: list[Pygit2RepoView] = []
    loaded = store_mod.load(
        located, store_mod.cache_for(gitroot.git_dir(root), located), alongside=lambda: views.append(_view(options))
    )
    view = views[0]
    if view.root != root:  # never seen: the file system and pygit2 disagree on the working tree; pygit2 wins
        located = store_mod.locate(options.start, view.root, store=options.store, store_dir=options.store_dir)
        loaded = store_mod.load(located, store_mod.cache_for(view.git_dir, located))
    return Session(view, loaded)


def _view(options: Options) -> Pygit2RepoView:
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    return Pygit2RepoView(options.start)


@dataclass(frozen=True)
class StatusResult:
    """``git memkeep status``: the staleness report plus the files that could not be read."""

    store: Store
    report: StalenessReport
    unreadable: tuple[Unreadable, ...]

    @property
    def exit_code(self) -> int:
        """1 when any entry is suspect, unreadable or unchecked (not watched), else 0."""
        report = self.report
        return 1 if report.verdicts or report.unchecked or self.unreadable else 0


def status(options: Options) -> StatusResult:
    """Compute the suspect set of the store (memkeep README "How staleness works"), or serve the last run's when
    none of its inputs changed (:mod:`git_memzoi.memkeep.status_cache`)."""
    from git_memzoi.memkeep import status_cache

    found = status_cache.key(options)
    cached = status_cache.load(found) if found is not None else None
    if cached is not None:
        return cached
    with no_cyclic_gc():
        session = open_session(options)
        result = StatusResult(session.store, report(session, options.clock), session.loaded.unreadable)
    if found is not None:
        status_cache.save(found, result, result.report.head, session.view.root, session.view.git_dir)
    return result


def report(
    session: Session, clock: Clock, *, entries: Sequence[Entry] | None = None, repo: RepoView | None = None
) -> StalenessReport:
    """The suspect set of ``session``'s store (memkeep README "How staleness works"), or of other ``entries``
    (default: the loaded ones) against another repository view ``repo`` (default: the session's), e.g. the store
    as it was at an earlier HEAD; unreadable files and the store's settings are the session's."""
    from git_memzoi.memkeep import staleness
    from git_memzoi.memkeep.refs import path_refs

    return staleness.compute(
        session.loaded.entries if entries is None else entries,
        session.view if repo is None else repo,
        clock,
        referential_check=session.store.config.referential_check,
        path_refs=path_refs,
        unreadable=[_stem(u.path) for u in session.loaded.unreadable],
    )


def _stem(path: str) -> str:
    """The id an entry file would have: its file name without ``.md``."""
    return Path(path).name.removesuffix(".md")


@dataclass(frozen=True)
class IndexResult:
    """``git memkeep index``: where INDEX.md is, whether it changed, how many entries it lists."""

    path: Path
    changed: bool
    entries: int
    unreadable: tuple[Unreadable, ...]


def index(options: Options) -> IndexResult:
    """Regenerate INDEX.md from the readable entries (unreadable ones are left out and reported)."""
    session = open_session(options)
    changed = _write_index(session)
    loaded = session.loaded
    return IndexResult(session.store.index_path, changed, len(loaded.entries), loaded.unreadable)


def _write_index(session: Session) -> bool:
    from git_memzoi.core import safe_read
    from git_memzoi.core.atomic import lifecycle_lock, write_bytes_atomic
    from git_memzoi.memkeep.index import render
    from git_memzoi.memkeep.store import sweep_leftovers

    path = session.store.index_path
    try:  # a folder or FIFO named INDEX.md is refused before the lock (the rename failed on it: exit 3)
        safe_read.require_regular_or_absent(path)
    except safe_read.FileRefused as exc:
        raise exc.renamed(_relative(session.store.root, path)) from None
    text = render(session.loaded.entries).encode("utf-8")
    lock = _lock_path(session)
    with lifecycle_lock(lock, root=lock.parent):
        sweep_leftovers(session.store)
        if _index_text(path) == text.decode("utf-8"):
            return False
        write_bytes_atomic(path, text, root=session.store.root)
    return True


def _index_text(path: Path) -> str | None:
    """INDEX.md's text; ``None`` when it is missing or no regular file (never opened: a FIFO would block),
    ``""`` (drift) when it is over ``MAX_INDEX_BYTES``, so ``lint --fix`` rewrites it."""
    from git_memzoi.core import safe_read

    try:
        return safe_read.read_text(path, store_mod.MAX_INDEX_BYTES, errors="replace")
    except safe_read.FileRefused as exc:
        return "" if exc.code == safe_read.TOO_LARGE else None
    except OSError:
        return None


def _relative(root: Path, path: Path) -> str:
    """``path`` as the repository-relative POSIX path a message names (as given when outside ``root``)."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _lock_path(session: Session) -> Path:
    return session.view.git_dir / "memzoi" / "lifecycle.lock"


@dataclass(frozen=True)
class LintResult:
    """``git memkeep lint``: the violations left, and whether ``--fix`` rewrote INDEX.md."""

    store: Store
    entries: int
    violations: tuple[Violation, ...]
    fixed_index: bool

    @property
    def exit_code(self) -> int:
        """1 when any violation remains, else 0."""
        return 1 if self.violations else 0


def lint(options: Options, *, fix: bool = False) -> LintResult:
    """Validate the store; with ``fix``, regenerate INDEX.md when it drifted."""
    session = open_session(options)
    loaded, store = session.loaded, session.store
    fixed = False
    tracked = session.view.tracked_paths()
    violations = _lint(loaded, options.clock, tracked)
    if fix and any(v.rule in ("index_drift", "index_missing") for v in violations):
        fixed = _write_index(session)
        violations = _lint(loaded, options.clock, tracked)
    return LintResult(store, len(loaded.entries), tuple(violations), fixed)


def _lint(loaded: LoadedStore, clock: Clock, tracked: list[str]) -> list[Violation]:
    from git_memzoi.memkeep.lint import lint as run_lint

    store = loaded.store
    index_text = _index_text(store.index_path)
    sizes = {e.path: store_mod.entry_file(store, e.path).stat().st_size for e in loaded.entries}
    index_rel = f"{store.rel}/INDEX.md" if store.rel != "." else "INDEX.md"
    return run_lint(loaded.entries, loaded.unreadable, index_text, clock.today(), sizes, index_rel, tracked)


def verify(
    options: Options,
    entry_id: str | None,
    *,
    all_safe: bool = False,
    dry_run: bool = False,
    manual: bool = False,
    runner: Runner | None = None,
) -> VerifyResult:
    """Re-test one entry, or every suspect entry with a safe check (memkeep README "Commands": verify).

    Raises:
        InputError: unknown id, a tombstone, no check (without ``manual``), bad flag combinations, no commits.
    """
    from git_memzoi.memkeep import verify as verify_mod
    from git_memzoi.memkeep.index import lines_out_of_step

    check_verify_flags(entry_id, all_safe=all_safe, dry_run=dry_run, manual=manual)
    session = open_session(options)
    head = session.view.head()
    if head is None:
        raise InputError("the repository has no commits yet; commit before verifying", "no_commits")
    reasons = _reasons_by_id(report(session, options.clock))
    targets = [_find(session.loaded, entry_id)] if entry_id else [e for e in session.loaded.entries if e.id in reasons]
    plan = verify_mod.Plan(head, options.clock.today(), all_safe, dry_run, manual)
    writer = verify_mod.EntryWriter(session.store, _lock_path(session))
    items = [verify_mod.verify_entry(e, reasons.get(e.id, ()), plan, runner or _shell(), writer) for e in targets]
    index_updated = False
    if any(i.action in ("healed", "marked_stale") for i in items):
        git_dir = session.view.git_dir
        after = Session(session.view, store_mod.load(session.store, store_mod.cache_for(git_dir, session.store)))
        # INDEX.md lists each status and claim: keep the verified entries' lines in step, also a claim edited before
        # the heal (a fresh user's walk committed the old claim's line); other entries' drift is not verify's
        verified = {e.id for e, i in zip(targets, items, strict=True) if i.action in ("healed", "marked_stale")}
        path = session.store.index_path
        if path.is_file() and lines_out_of_step(after.loaded.entries, _index_text(path) or "", verified):
            index_updated = _write_index(after)
        items = _still_suspect(items, options, after)
        items = against_uncommitted(items, targets, session.view)
    return verify_mod.VerifyResult(head, dry_run, tuple(items), index_updated, len(session.loaded.unreadable))


def against_uncommitted(items: list[VerifyItem], targets: list[Entry], view: Pygit2RepoView) -> list[VerifyItem]:
    """A healed entry whose scope holds uncommitted changes was re-tested against them, yet is anchored at HEAD
    (memkeep README: anchor := HEAD): it turns suspect when they are committed, and holds at HEAD only if they
    are. Said as a ``still_suspect`` message (exit 1), never silently healed (a fresh user's walk: verify before
    a commit, suspect right after it; or a heal of a claim false at HEAD)."""
    from dataclasses import replace

    if not any(i.action == "healed" for i in items):
        return items
    changed = view.uncommitted_paths()
    out = []
    for entry, item in zip(targets, items, strict=True):
        hits = entry.scope_hits(changed) if item.action == "healed" else []
        if hits:
            named = ", ".join(hits[:3]) + (f" and {len(hits) - 3} more" if len(hits) > 3 else "")
            message = (
                f"re-tested against uncommitted changes to {named}, but anchored at HEAD: it turns suspect "
                "when they are committed; commit them, then verify again"
            )
            item = replace(item, still_suspect=(*item.still_suspect, message))
        out.append(item)
    return out


def check_verify_flags(entry_id: str | None, *, all_safe: bool, dry_run: bool, manual: bool) -> None:
    """Refuse a combination of verify's flags that says two things (``bad_usage``); ``git memzoi verify`` keeps the
    same contract.

    Raises:
        InputError: an id and ``--all-safe``, neither, ``--manual`` with ``--all-safe`` or ``--dry-run``.
    """
    if entry_id and all_safe:
        raise InputError("name one entry id or pass --all-safe, not both", "bad_usage")
    if not entry_id and not all_safe:
        raise InputError("name one entry id, or pass --all-safe", "bad_usage")
    if manual and all_safe:
        raise InputError(
            "--manual records one entry's out-of-band re-test; it takes an id, not --all-safe", "bad_usage"
        )
    if manual and dry_run:
        raise InputError(
            "--manual writes the re-test you did; there is nothing to preview (leave out --dry-run)", "bad_usage"
        )


def _still_suspect(items: list[VerifyItem], options: Options, after: Session) -> list[VerifyItem]:
    """An entry healed can stay suspect (a stale dependency, a missing ref): ``after`` is the store re-read."""
    from dataclasses import replace

    if not any(i.action == "healed" for i in items):
        return items
    left: dict[str, list[str]] = {}
    for verdict in report(after, options.clock).verdicts:
        left.setdefault(verdict.id, []).append(verdict.message)
    return [replace(i, still_suspect=tuple(left[i.id])) if i.action == "healed" and i.id in left else i for i in items]


def _shell() -> Runner:
    from git_memzoi.memkeep.checks import ShellRunner

    return ShellRunner()


def _reasons_by_id(report: StalenessReport) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for verdict in report.verdicts:
        out[verdict.id] = (*out.get(verdict.id, ()), verdict.reason)
    return out


def _find(loaded: LoadedStore, entry_id: str) -> Entry:
    for entry in loaded.entries:
        if entry.id == entry_id:
            if not entry.is_live:
                raise InputError(f"{entry_id} is a tombstone; there is nothing to verify", "tombstone")
            return entry
    broken = [u for u in loaded.unreadable if _stem(u.path) == entry_id]
    if broken:  # the reason lint gives for the file (a bounded, one-line parser message or a file refusal)
        where = f"{broken[0].path}:{broken[0].line}" if broken[0].line else broken[0].path
        raise InputError(f"{where}: cannot be read, so it cannot be verified: {broken[0].reason}", "unreadable_entry")
    declared = [e for e in loaded.entries if e.declared_id == entry_id]
    if declared:
        raise InputError(
            f"no entry with id {entry_id!r}: {declared[0].path} says id: {entry_id}, but an entry's "
            f"id is its file name ({declared[0].id})",
            "unknown_id",
        )
    raise InputError(f"no entry with id {entry_id!r}", "unknown_id")
