"""Record lifecycle transitions and the one guarded, journaled write path every lifecycle change uses (io).

``supersede`` and ``tombstone`` (seed "CLI commands") change an active, non-private repo record directly;
``proposal_files`` applies packets through the same pieces: :func:`check_target`, :func:`status_step`,
:func:`record_step` and :func:`run_steps`.

Crash safety (DESIGN.md principle 3). Every write holds the lifecycle lock (:func:`guarded`). A multi-file change
is a list of :class:`Step` run by :func:`run_steps`, which first saves the old bytes of every file it will touch
and a content-free journal (operation name, its worktree, repository-relative paths, whether each file existed)
under ``<git common dir>/memzoi/local/journals/<txid>/`` (:attr:`Layout.journals`, shared by every worktree: the
operation may write the private memory they share, and whichever worktree comes next rolls it back; an older
version's ``<git dir>/memzoi/worktree/transactions/`` is repaired too), then writes each file
atomically. A reported failure restores the old bytes, byte for byte, and removes new files. A process killed between steps leaves the journal behind:
:func:`pending_transactions` lists such leftovers (for ``doctor``; no paths or content) and :func:`repair` rolls
them back. :func:`guarded` runs the repair itself before any new write, so the next command heals the tree, and
removes the temporary files a killed writer left (:mod:`git_memzoi.core.scratch`).

A command made of several such writes (``propose --apply``: the packet, the inbox state, the approval, the apply;
``import apply``: many packets and runtime records) runs as one :func:`operation`: a journal of the same shape,
opened before the first write, to which every file written through :func:`write_step` adds its old bytes just
before it changes. The command either finishes (the journal goes) or is rolled back as a whole - by its own
failure, or by the next guarded command after a kill - so it happens exactly once or not at all (issue 13).
The saved bytes live only in the git-ignored private plane and are deleted when the operation ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.core import atomic, safe_read, scratch
from git_memzoi.core.atomic import lifecycle_lock, write_bytes_atomic, write_many_atomic
from git_memzoi.core.confine import confined, real_root
from git_memzoi.errors import InputError, MemzoiError, ToolError
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.proposals.packets import REPO_SAFE, SensitivityBlocked
from git_memzoi.memzoi.proposals.steps import Step as Step  # re-exported: the steps' old home
from git_memzoi.memzoi.proposals.steps import TargetError as TargetError
from git_memzoi.memzoi.proposals.steps import check_target as check_target
from git_memzoi.memzoi.proposals.steps import record_step as record_step
from git_memzoi.memzoi.proposals.steps import status_step as status_step
from git_memzoi.memzoi.records import events, okf, vocab
from git_memzoi.memzoi.records import store as record_store
from git_memzoi.memzoi.records.ids import free_record_id as free_record_id  # re-exported: its old home
from git_memzoi.memzoi.records.ids import new_record_id, without_id_suffix
from git_memzoi.memzoi.records.okf import Record, format_timestamp

if TYPE_CHECKING:
    from git_memzoi.memzoi.records.envelope import Sealed, WatchRequest
    from git_memzoi.memzoi.records.relations import Relation
    from git_memzoi.memzoi.workspace import Workspace

JOURNAL = "journal.json"


class RollbackError(ToolError):
    """A failed operation whose rollback failed too; the journal is kept for :func:`repair` (exit 2)."""

    default_code = "rollback_failed"


@dataclass(frozen=True)
class Transaction:
    """An interrupted guarded operation left on disk (content-free: id, operation name, file count); ``kind`` is
    ``steps`` (one :func:`run_steps`) or ``operation`` (a whole command, :func:`operation`)."""

    txid: str
    operation: str
    files: int
    committed: bool
    kind: str = "steps"


@dataclass(frozen=True)
class SupersedeResult:
    """``supersede``: the new active record, the record it superseded, and the files written."""

    record_id: str
    target_id: str
    written: tuple[str, ...]
    watch: Sealed | None = None  # the replacement's envelope and whether anything watches it


@dataclass(frozen=True)
class TombstoneResult:
    """``tombstone``: the tombstoned record and the files written."""

    record_id: str
    written: tuple[str, ...]


# ------------------------------------------------------------------------------------------------ the write path


@contextlib.contextmanager
def guarded(layout: Layout, timeout_s: float = 30.0) -> Iterator[tuple[Transaction, ...]]:
    """Hold the lifecycle lock for the block, after rolling back any interrupted operation (yielded) and removing
    the temporary files killed writers left.

    Re-entrant: a nested ``guarded`` (``propose --apply`` approves and applies inside its own hold) only joins the
    outer hold, which did the repairs (a repair there would roll back the live :func:`operation`).

    Raises:
        ToolError: the lock cannot be taken (``lock_timeout``). RollbackError: a leftover cannot be repaired.
        FileRefused: the event log every write ends with is no regular file (``not_a_regular_file``), checked
            before anything is written.
    """
    nested = atomic.holds(layout.lock)
    with lifecycle_lock(layout.lock, timeout_s, root=layout.private_root):
        if nested:
            yield ()
            return
        events.check_log(layout)
        repaired = _repair_locked(layout)
        scratch.sweep(real_root(layout.root), layout.temp_folders())
        yield repaired


@dataclass
class _Active:
    """The :func:`operation` this thread runs on one repository: its journal folder and journal."""

    txdir: Path
    journal: dict[str, Any]
    seen: set[str]


_ACTIVE: dict[tuple[str, int], _Active] = {}


@contextlib.contextmanager
def operation(layout: Layout, name: str) -> Iterator[tuple[Transaction, ...]]:
    """Run the block as one all-or-nothing operation ``name`` under :func:`guarded` (whose repairs it yields).

    The journal is on disk before the block runs; each :func:`write_step` inside adds its file's old bytes first.
    On success the journal is removed; on an exception every file is restored and the exception re-raised; a
    kill leaves the journal, and the next guarded command rolls the whole operation back. An operation started
    inside another one joins it.

    Raises:
        RollbackError: the block failed and a file could not be restored (the journal stays for repair).
    """
    key = (str(layout.root), threading.get_ident())
    with guarded(layout) as repaired:
        if key in _ACTIVE:
            yield repaired
            return
        txdir = _new_txdir(layout)
        journal: dict[str, Any] = {
            "version": 1,
            "kind": "operation",
            "operation": name,
            "root": str(layout.root),
            "entries": [],
        }
        _save_journal(layout, txdir, journal)
        _ACTIVE[key] = _Active(txdir, journal, set())
        try:
            yield repaired
        except BaseException as exc:
            del _ACTIVE[key]
            problems = _rollback(layout, txdir, journal["entries"])
            if problems:
                raise RollbackError(
                    f"{name} failed and could not be rolled back ({problems[0]}); the next guarded command repairs it"
                ) from exc
            _remove_tx(layout, txdir)
            raise
        del _ACTIVE[key]
        _remove_tx(layout, txdir)


def write_step(layout: Layout, step: Step) -> None:
    """Perform one file change (write, or delete when ``step.data`` is ``None``) confined to the repository; inside
    an :func:`operation`, its old bytes are journaled first. The caller holds the lifecycle lock."""
    active = _ACTIVE.get((str(layout.root), threading.get_ident()))
    if active is not None and _note(layout, active, step.path):
        _save_journal(layout, active.txdir, active.journal)
    _perform(layout, step)


def write_steps(layout: Layout, steps: Sequence[Step]) -> None:
    """Perform many file changes inside the running :func:`operation`: the old bytes of every file are journaled
    first, with one journal save for the batch (a save per file made a bulk apply quadratic), then each file is
    written atomically in order. A failure or a kill part-way rolls the whole operation back, as for
    :func:`write_step`.

    Raises:
        ToolError: no operation is running on this thread (``no_operation``; nothing written). The error of the
            failing step (the operation rolls back).
    """
    active = _ACTIVE.get((str(layout.root), threading.get_ident()))
    if active is None:
        raise ToolError("write_steps runs inside lifecycle.operation only", "no_operation")
    if any([_note(layout, active, step.path) for step in steps]):  # a list: note every path before the save
        _save_journal(layout, active.txdir, active.journal)
    # runs of writes under one root go to the batch writer (each folder checked, opened and fsynced once, not
    # per file); a removal, or a write under another root, ends a run, so every change keeps its place
    run: list[tuple[Path, bytes]] = []
    run_root = layout.root
    for step in steps:
        root = layout.root_for(step.path)
        if run and (step.data is None or root != run_root):
            write_many_atomic(run, root=run_root, parents=True)
            run = []
        if step.data is None:
            _perform(layout, step)
        else:
            run.append((step.path, step.data))
            run_root = root
    if run:
        write_many_atomic(run, root=run_root, parents=True)


def _perform(layout: Layout, step: Step) -> None:
    root = layout.root_for(step.path)
    if step.data is None:
        atomic.remove_file(step.path, root=root)
    else:
        write_bytes_atomic(step.path, step.data, root=root, parents=True)


def _note(layout: Layout, active: _Active, path: Path) -> bool:
    """Journal ``path``'s old bytes (the journal itself is saved by the caller); False when already journaled."""
    rel = layout.label(path)  # layout.root / rel is the path again, in the private folder too
    if rel in active.seen:
        return False
    old = _old_bytes(layout, path)
    entries = active.journal["entries"]
    if old is not None:
        atomic.write_bytes_atomic(active.txdir / f"{len(entries)}.bak", old, root=layout.root_for(active.txdir))
    entries.append({"path": rel, "existed": old is not None})
    active.seen.add(rel)
    return True


def _old_bytes(layout: Layout, path: Path) -> bytes | None:
    """The bytes a step will replace (``None``: no file), read only at the confined path (never through a link)."""
    if not os.path.lexists(path):  # most steps of a bulk apply create files; the write itself is confined
        return None
    real = confined(path, layout.root_for(path))
    try:
        return safe_read.read_bytes(real, None)  # a FIFO, a folder or a device is refused before any write
    except FileNotFoundError:
        return None


def run_steps(layout: Layout, operation: str, steps: Sequence[Step]) -> tuple[str, ...]:
    """Apply ``steps`` in order as one journaled operation; the caller holds the lifecycle lock.

    Returns:
        The repository-relative POSIX paths changed, in step order.

    Raises:
        The error of the failing step, after every changed file is restored; RollbackError when the
        restore fails as well (the journal stays for :func:`repair`). UnsafePath: a step's path goes through a
        symlink (before anything is written).
    """
    txdir = _new_txdir(layout)
    entries: list[dict[str, Any]] = []
    journal = {"version": 1, "operation": operation, "root": str(layout.root), "committed": False, "entries": entries}
    try:
        for n, step in enumerate(steps):
            old = _old_bytes(layout, step.path)
            if old is not None:
                atomic.write_bytes_atomic(txdir / f"{n}.bak", old, root=layout.root_for(txdir))
            entries.append({"path": layout.label(step.path), "existed": old is not None})
        _save_journal(layout, txdir, journal)
    except BaseException:
        _remove_tx(layout, txdir)  # nothing was changed yet
        raise
    for n, step in enumerate(steps):
        try:
            write_step(layout, step)
        except BaseException as exc:
            problems = _rollback(layout, txdir, entries[: n + 1])
            if problems:
                raise RollbackError(
                    f"{operation} failed and could not be rolled back ({problems[0]}); "
                    "the next guarded command repairs it"
                ) from exc
            _remove_tx(layout, txdir)
            raise
    _save_journal(layout, txdir, {**journal, "committed": True})
    _remove_tx(layout, txdir)
    return tuple(e["path"] for e in entries)


def pending_transactions(layout: Layout, folder: Path | None = None) -> tuple[Transaction, ...]:
    """Interrupted operations left in :attr:`Layout.journals` (every worktree's) and this worktree's
    :attr:`Layout.transactions` (an older version's), or in ``folder`` (read-only; for ``doctor``), the step
    journals first (a killed operation's own steps are rolled back before the operation)."""
    return tuple(_transaction(txdir, journal) for txdir, journal in _journaled(layout, folder))


def _journaled(layout: Layout, folder: Path | None) -> list[tuple[Path, dict[str, Any] | None]]:
    found = []
    for root in (folder,) if folder else (layout.journals, layout.transactions):
        listed = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()) if root.is_dir() else []
        found += [(txdir, _read_journal(txdir)) for txdir in listed]
    return sorted(found, key=lambda item: item[1] is not None and item[1].get("kind") == "operation")


def _transaction(txdir: Path, journal: Mapping[str, Any] | None) -> Transaction:
    if journal is None:
        return Transaction(txdir.name, "unknown", 0, False)
    return Transaction(
        txdir.name,
        str(journal.get("operation")),
        len(journal.get("entries", [])),
        bool(journal.get("committed")),
        "operation" if journal.get("kind") == "operation" else "steps",
    )


def repair(layout: Layout) -> tuple[Transaction, ...]:
    """Roll back every interrupted operation (committed ones are only cleaned up), holding the lock.

    Returns:
        The operations found and repaired.

    Raises:
        RollbackError: a saved file is missing or cannot be restored (the journal is kept).
    """
    with guarded(layout) as repaired:
        return repaired


def heal(layout: Layout) -> tuple[Transaction, ...]:
    """What every command does first, read-only ones included: roll back the operations a killed process left (and
    remove its temporary files), so no command shows a half-done one. Costs one listing when nothing was left;
    does nothing while another process holds the lock (a live writer, which repaired before it began).

    Returns:
        The operations repaired.

    Raises:
        RollbackError: a leftover cannot be rolled back.
    """
    if not layout.interrupted():
        return ()
    try:
        with guarded(layout, timeout_s=0) as repaired:
            return repaired
    except ToolError as exc:
        if exc.code != "lock_timeout":
            raise
        return ()


def repair_folder(layout: Layout, folder: Path) -> tuple[Transaction, ...]:
    """Roll back the interrupted operations journaled in ``folder`` - an older version's
    ``.memzoi/local/transactions/``, repaired before its migration (their paths name ``.memzoi/local/`` files) -
    and remove their journals; the caller holds the lifecycle lock.

    Raises:
        RollbackError: as :func:`repair`.
    """
    return _repair_locked(layout, folder)


def _repair_locked(layout: Layout, folder: Path | None = None) -> tuple[Transaction, ...]:
    journaled = _journaled(layout, folder)
    for txdir, journal in journaled:
        if journal is not None and not journal.get("committed"):
            problems = _rollback(_owner(layout, journal), txdir, list(journal.get("entries", [])), layout)
            if problems:
                raise RollbackError(f"interrupted operation {txdir.name} could not be rolled back: {problems[0]}")
        _remove_tx(layout, txdir)
    return tuple(_transaction(txdir, journal) for txdir, journal in journaled)


def _owner(layout: Layout, journal: Mapping[str, Any]) -> Layout | None:
    """The worktree whose operation ``journal`` is: its paths are relative to that worktree's top (those in the
    private folder every worktree shares are absolute there); ``None`` when that worktree is gone, or the journal
    names a folder that is no worktree of this repository (a planted journal restores nothing outside it)."""
    root = journal.get("root")
    if not isinstance(root, str) or Path(root) == layout.root:
        return layout
    if not Path(root).is_absolute() or not Path(root).is_dir():
        return None
    other = Layout(Path(root))
    return other if other.private == layout.private else None


def _rollback(
    owner: Layout | None, txdir: Path, entries: Sequence[Mapping[str, Any]], layout: Layout | None = None
) -> list[str]:
    """Restore each journaled file of ``owner``'s worktree, last first. A removed worktree's files are gone with
    it; those of the private folder (absolute paths) are restored from ``layout``, the repairing worktree."""
    problems: list[str] = []
    for n in reversed(range(len(entries))):
        rel = str(entries[n]["path"])
        base = owner or layout
        if base is None or (owner is None and not Path(rel).is_relative_to(base.private)):
            continue
        path = base.root / rel
        try:
            if entries[n]["existed"]:
                old = (txdir / f"{n}.bak").read_bytes()
                if _old_bytes(base, path) != old:
                    write_bytes_atomic(path, old, root=base.root_for(path), parents=True)
            else:
                atomic.remove_file(path, root=base.root_for(path))
        except (OSError, MemzoiError) as exc:
            problems.append(f"{entries[n]['path']}: {exc}")
    return problems


def _tx_root(layout: Layout) -> Path:
    return layout.journals


def _new_txdir(layout: Layout) -> Path:
    # 16 hex digits, as uuid4().hex[:16] (without importing uuid)
    txdir = _tx_root(layout) / os.urandom(8).hex()
    atomic.make_dirs(txdir, root=layout.root_for(txdir))
    return txdir


def _save_journal(layout: Layout, txdir: Path, journal: Mapping[str, Any]) -> None:
    atomic.write_bytes_atomic(txdir / JOURNAL, json.dumps(journal).encode("utf-8"), root=layout.root_for(txdir))


def _read_journal(txdir: Path) -> dict[str, Any] | None:
    try:
        data = safe_read.load_json(safe_read.read_text(txdir / JOURNAL, None))
    except (OSError, ValueError, safe_read.FileRefused):  # a FIFO there is refused, never opened
        return None
    return data if isinstance(data, dict) else None


def _remove_tx(layout: Layout, txdir: Path) -> None:
    # the journal first: a kill part-way leaves saved bytes without a journal, which repair only removes
    root = layout.root_for(txdir)
    atomic.remove_file(txdir / JOURNAL, root=root)
    for item in txdir.iterdir():
        atomic.remove_file(item, root=root)
    atomic.remove_dir(txdir, root=root)


# ------------------------------------------------------------------------------------------------ direct commands
# (the steps and checks they build on live in proposals/steps.py)


def supersede(
    ws: Workspace,
    target_id: str,
    *,
    title: str,
    body: str,
    actor: str,
    record_type: str | None = None,
    scope_kind: str | None = None,
    visibility: str | None = None,
    sensitivity: str = "unknown",
    source_kind: str | None = None,
    source_ref: str | None = None,
    watch: WatchRequest | None = None,
    valid_from: str | None = None,
    valid_to: str | None = None,
    relations: Sequence[Relation] | None = None,
) -> SupersedeResult:
    """``git memzoi supersede``: replace an active, non-private record with a same-scope repo-safe record.

    The target keeps every byte but its ``status`` (``superseded``); the replacement (id = concept slug of the
    title plus a content suffix, :func:`new_record_id`) is active, has ``supersedes: <target>`` and inherits
    lane, scope id, tags, applies_to and retention facts. Both files change in one guarded operation. The replacement is a new claim:
    its earned envelope (``watch``) is anchored at HEAD (or ``watch.anchor``) and verified today; scope, ttl and
    check default to the target's envelope, the scope then to ``applies_to`` (records/envelope.py);
    ``relations`` (``None``: the target's) are the replacement's ``relations:`` list (records/relations.py).
    ``valid_from`` / ``valid_to`` give the replacement its business validity (records/validity.py); it never
    inherits the target's.

    Raises:
        RecordLocked: the target's stored file says ``locked: true`` (``record_locked``; checked before anything).
        SensitivityBlocked: ``sensitivity`` is not ``repo-safe`` (checked next; nothing echoed).
        ValidityError: bad ``valid_from`` / ``valid_to`` (``invalid_validity``).
        TargetError: the target is missing, inactive, private or of another scope. InputError: bad options,
            ``--anchor`` naming no commit (``unknown_rev``), or
            a credential in ``--title``, ``--body`` or ``--source-ref`` (``prohibited_content_detected``; the field
            and its line are named, never the value; nothing written).
    """
    from git_memzoi.memzoi.records import lock
    from git_memzoi.memzoi.records.envelope import WatchRequest as Request
    from git_memzoi.memzoi.records.envelope import seal
    from git_memzoi.memzoi.records.relations import items
    from git_memzoi.memzoi.records.secrets import require_clean_fields
    from git_memzoi.memzoi.records.validity import options

    lock.require_unlocked(ws.layout, target_id, "supersede")
    _check_choice("--sensitivity", sensitivity, vocab.SENSITIVITIES)
    if sensitivity != REPO_SAFE:
        raise SensitivityBlocked("supersede", sensitivity)
    for name, value in (("--title", title), ("--body", body)):
        if not value or not value.strip():
            raise InputError(f"{name} must not be empty", "missing_option")
    require_clean_fields({"--title": title, "--body": body, "--source-ref": source_ref}, "the replacement")
    bounds = options(valid_from, valid_to)
    _check_choice("--type", record_type, vocab.TYPES)
    _check_choice("--scope-kind", scope_kind, vocab.SCOPE_KINDS)
    _check_choice("--visibility", visibility, vocab.VISIBILITIES)
    if visibility == "private":
        raise InputError("a repo record cannot be private; keep private memory local", "private_visibility")
    layout = ws.layout
    with guarded(layout):
        target = _direct_target(layout, target_id, scope_kind, "supersede")
        sealed = seal(layout.root, watch or Request(), target.applies_to, ws.clock.today(), inherit=target.memkeep)
        now = format_timestamp(ws.clock.now())
        identity = ("supersede", target.id, title.strip(), body, now, record_type or target.type, actor)
        new_id = new_record_id(layout, okf.concept_slug(title) or without_id_suffix(target.id), identity)
        fields = {
            "id": new_id,
            "kind": "memory",
            "profile": "memzoi",
            "type": record_type or target.type,
            "lane": target.lane,
            "title": title.strip(),
            "scope": target.scope,
            "scope_id": target.scope_id,
            "visibility": visibility or target.visibility,
            "content_class": "general_repo_knowledge",
            "status": "active",
            "confidence": 1.0,
            "timestamp": now,
            "updated": now,
            "source": source_kind,
            "source_ref": source_ref,
            "supersedes": target.id,
            "applies_to": list(target.applies_to),
            "tags": list(target.tags),
            "retention": dict(target.retention),
            "origin": {"origin_key": f"owner-command:supersede:{target.id}", "route": "owner_command"},
            "memkeep": dict(sealed.envelope) if sealed.envelope is not None else None,
            **bounds,
            "relations": items(target.relations if relations is None else relations),
        }
        rel = record_store.record_path(layout, new_id).relative_to(layout.root).as_posix()
        record = okf.record_from_fields(new_id, rel, {k: v for k, v in fields.items() if v is not None}, body)
        steps = [status_step(layout, target.id, "superseded"), record_step(layout, record)]
        written = run_steps(layout, "supersede", steps)
        events.append(layout, "record_superseded", actor, ws.clock.now(), {"target_id": target.id}, record_id=new_id)
    return SupersedeResult(new_id, target.id, written, sealed)


def tombstone(ws: Workspace, target_id: str, *, reason: str, actor: str) -> TombstoneResult:
    """``git memzoi tombstone``: mark an active, non-private record ``tombstoned``, keeping all its evidence.

    Raises:
        RecordLocked: the target's stored file says ``locked: true`` (``record_locked``; checked first).
        TargetError: the target is missing, inactive or private. InputError: an empty reason.
    """
    from git_memzoi.memzoi.records import lock

    lock.require_unlocked(ws.layout, target_id, "tombstone")
    if not reason or not reason.strip():
        raise InputError("--reason must not be empty", "missing_reason")
    layout = ws.layout
    with guarded(layout):
        target = _direct_target(layout, target_id, None, "tombstone")
        written = run_steps(layout, "tombstone", [status_step(layout, target.id, "tombstoned")])
        events.append(
            layout, "record_tombstoned", actor, ws.clock.now(), {"reason": reason.strip()}, record_id=target.id
        )
    return TombstoneResult(target.id, written)


def _direct_target(layout: Layout, target_id: str, scope_kind: str | None, command: str) -> Record:
    """The record ``command`` (``supersede``, ``tombstone``) changes; its refusals begin with the command's name."""
    target = check_target(layout, target_id, scope_kind=None, scope_id=None, not_after=None, where=command)
    if target.visibility == "private":
        raise TargetError(
            f"{command}: record {target_id!r} is private; private memory is not changed here", "target_private"
        )
    if scope_kind is not None and scope_kind != target.scope:
        raise TargetError(
            f"{command}: record {target_id!r} has scope {target.scope}, not {scope_kind}; a replacement "
            "keeps its target's scope",
            "target_cross_scope",
        )
    return target


def _check_choice(option: str, value: str | None, allowed: Sequence[str]) -> None:
    if value is not None and value not in allowed:
        raise InputError(f"{option} must be one of {', '.join(allowed)}", "bad_option")
