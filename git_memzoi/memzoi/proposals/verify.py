"""``git memzoi verify``: re-test a record's earned envelope, then heal it or mark it stale (io).

The contract of ``git memkeep verify`` (memkeep README "Commands": verify), on records: one staleness core
(:func:`git_memzoi.memkeep.staleness.compute` over the records' envelopes, as recall judges them in
:mod:`~git_memzoi.memzoi.recall.suspect`) and one check runner and decision
(:func:`git_memzoi.memkeep.verify.verify_entry`): exit 0 of every check heals (``memkeep.anchor := HEAD``,
``memkeep.verified_at := today``, a ``stale`` mark lifted), exit 1 marks the record ``memkeep.status: stale``,
anything else leaves it untouched. A write goes through the governed lifecycle: the lifecycle lock, a journaled
atomic write (:func:`~git_memzoi.memzoi.proposals.lifecycle.run_steps`), one event row
(``record_verified`` / ``record_marked_stale``), and the item returned is the receipt. Only the envelope lines
that change are rewritten; every other byte of the record is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from git_memzoi.core.patterns import lazy
from git_memzoi.errors import InputError, ToolError
from git_memzoi.memzoi.proposals import lifecycle
from git_memzoi.memzoi.records import events, okf
from git_memzoi.memzoi.records import store as record_store

if TYPE_CHECKING:
    from pathlib import Path

    from git_memzoi.memkeep.checks import Runner
    from git_memzoi.memkeep.entries import Entry
    from git_memzoi.memkeep.verify import VerifyItem, VerifyResult
    from git_memzoi.memzoi.workspace import Workspace

GUARDED = ("anchor", "status", "verified_at")  # read before the check ran; changed meanwhile means run again
_KEY_LINE = lazy(r"^  ([A-Za-z_][A-Za-z0-9_]*):(.*)$")


def verify(
    ws: Workspace,
    record_id: str | None,
    *,
    all_safe: bool = False,
    dry_run: bool = False,
    manual: bool = False,
    runner: Runner | None = None,
) -> VerifyResult:
    """Re-test one record (``record_id``), or every suspect record whose check is marked safe (``all_safe``).

    Returns:
        memkeep's :class:`~git_memzoi.memkeep.verify.VerifyResult` (one item per record considered; its
        ``exit_code``: 2 a tool error, 1 a failed check, a record still suspect after a heal or a suspect record
        in a dry run, else 0).

    Raises:
        RecordLocked: the named record's stored file says ``locked: true`` (``record_locked``, checked first;
            ``all_safe`` skips a locked record instead).
        InputError: bad flag combinations (``bad_usage``), no commits (``no_commits``), an unknown record
            (``unknown_record``), one that is not current (``not_current``) or has no envelope (``not_watched``),
            no check without ``manual`` (``no_check``).
    """
    from git_memzoi.memkeep import staleness
    from git_memzoi.memkeep import verify as verify_mod
    from git_memzoi.memkeep.checks import ShellRunner
    from git_memzoi.memkeep.commands import against_uncommitted, check_verify_flags
    from git_memzoi.memzoi.recall import suspect
    from git_memzoi.memzoi.records import lock

    if record_id:  # a locked record is refused before any other check, on its stored file (records/lock.py)
        lock.require_unlocked(ws.layout, record_id, "verify (heal or mark stale)")
    check_verify_flags(record_id, all_safe=all_safe, dry_run=dry_run, manual=manual)
    view = suspect.repo_view(ws)
    head = view.head()
    if head is None:
        raise InputError("the repository has no commits yet; commit before verifying", "no_commits")
    entries = suspect.current_entries(ws)
    reasons = _reasons(staleness.compute(entries, view, ws.clock))
    if record_id:
        targets = [_find(ws, entries, record_id)]
    else:
        targets = [e for e in entries if e.id in reasons and _is_record(e)]
    plan = verify_mod.Plan(head, ws.clock.today(), all_safe, dry_run, manual)
    writer = RecordWriter(ws, reasons)
    run = runner or ShellRunner()
    locked = {e.id for e in targets if lock.is_locked(ws.layout, e.id)}
    items = [
        _locked_item(e, reasons.get(e.id, ()))
        if e.id in locked
        else verify_mod.verify_entry(e, reasons.get(e.id, ()), plan, run, writer)
        for e in targets
    ]
    if any(i.action == "healed" for i in items):
        left: dict[str, list[str]] = {}
        for verdict in staleness.compute(suspect.current_entries(ws), view, ws.clock).verdicts:
            left.setdefault(verdict.id, []).append(verdict.message)
        items = against_uncommitted([_still(i, left) for i in items], targets, view)
    return verify_mod.VerifyResult(head, dry_run, tuple(items))


def _locked_item(entry: Entry, reasons: tuple[str, ...]) -> VerifyItem:
    """What ``--all-safe`` does with a locked record: skips it (a human reviews and edits it)."""
    from git_memzoi.memkeep.verify import VerifyItem

    return VerifyItem(entry.id, entry.path, "skipped", "locked (locked: true); a human re-tests it", reasons=reasons)


def _still(item: VerifyItem, left: Mapping[str, list[str]]) -> VerifyItem:
    if item.action == "healed" and item.id in left:
        return replace(item, still_suspect=tuple(left[item.id]))
    return item


def _reasons(report: Any) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for verdict in report.verdicts:  # a stale record has none: --all-safe leaves it to a named verify, as memkeep
        out[verdict.id] = (*out.get(verdict.id, ()), verdict.reason)
    return out


def _is_record(entry: Entry) -> bool:
    """A current record's entry, not the stand-in of a withdrawn record a current one explains from."""
    return "written_at" in entry.fields


def _find(ws: Workspace, entries: list[Entry], record_id: str) -> Entry:
    for entry in entries:
        if entry.id == record_id and _is_record(entry):
            return entry
    try:
        record = record_store.load(ws.layout, record_id)  # InputError unknown_record / bad_id
    except record_store.RecordNotFound as exc:
        if _is_entry(ws, record_id):  # `git memzoi show` finds it: say which tool verifies it
            raise record_store.RecordNotFound(
                f"{record_id} is an entry of the memkeep store, not a record; verify it with "
                f"`git memkeep verify {record_id}`"
            ) from exc
        raise
    if record.status != "active":
        raise InputError(f"record {record_id} is {record.status}; only a current record is verified", "not_current")
    if record.memkeep is None:
        raise InputError(
            f"record {record_id} has no memkeep envelope, so nothing watches it; supersede it with --scope or --check",
            "not_watched",
        )
    raise InputError(f"record {record_id} is not current (its retention ended)", "not_current")


def _is_entry(ws: Workspace, entry_id: str) -> bool:
    from git_memzoi.memzoi.recall.index import db as index_db

    return bool(index_db.scalars(ws.layout, "SELECT 1 FROM records WHERE id = ? AND store = 'entry'", (entry_id,)))


@dataclass(frozen=True)
class RecordWriter:
    """Writes a verify outcome into a record's ``memkeep`` block through the governed lifecycle."""

    ws: Workspace
    reasons: Mapping[str, tuple[str, ...]]

    @property
    def root(self) -> Path:
        """The repository root: checks run there."""
        return self.ws.layout.root

    def write(self, entry: Entry, changes: Mapping[str, Any], *, during: str = "while its check ran") -> None:
        """Apply ``changes`` (``anchor``, ``verified_at``, ``status``) to the record's envelope, byte-stably;
        ``during`` names when a change made meanwhile happened (a manual re-test runs no check).

        Raises:
            ToolError: the envelope changed while the check ran (``changed_during_verify``), or it is not in the
                writer's block form (``not_rewritable``).
        """
        from git_memzoi.memzoi.records import lock

        layout = self.ws.layout
        with lifecycle.guarded(layout):
            lock.require_unlocked(layout, entry.id, "verify (heal or mark stale)")  # locked since the check began
            path = record_store.record_path(layout, entry.id)
            data = record_store.read_bytes(path, entry.path)  # a FIFO or a link there is refused, never opened
            _parts, fields = record_store.parse_fields(data)
            env = fields.get(okf.EXTENSION_KEY)
            if not isinstance(env, Mapping) or any(
                _norm(k, env.get(k)) != _norm(k, entry.fields.get(k)) for k in GUARDED
            ):
                raise ToolError(f"{entry.path} changed {during}; run verify again", "changed_during_verify")
            values = {k: v.isoformat() if hasattr(v, "isoformat") else v for k, v in changes.items()}
            if values.get("status") == "verified" and "status" not in env:
                del values["status"]
            new = update_envelope(data, values)
            parts, after = record_store.parse_fields(new)
            okf.record_from_fields(entry.id, entry.path, after, parts.body)  # still a valid record
            lifecycle.run_steps(layout, "verify", [lifecycle.Step(path, new)])
            stale = values.get("status") == "stale"
            payload: dict[str, Any] = {"reasons": list(self.reasons.get(entry.id, ()))}
            if "anchor" in values:
                payload["anchor"] = values["anchor"]
            kind = "record_marked_stale" if stale else "record_verified"
            events.append(layout, kind, self.ws.actor, self.ws.clock.now(), payload, record_id=entry.id)


def _norm(key: str, value: Any) -> Any:
    if key == "status":
        return "stale" if value == "stale" else "verified"
    if key == "verified_at" and value is not None:
        return str(value)[:10]
    return value


def update_envelope(data: bytes, changes: Mapping[str, Any]) -> bytes:
    """``data`` with the top-level keys of its ``memkeep:`` block set to ``changes`` (scalars): a key's line is
    rewritten in place, a new key appended as the block's last line; no other byte changes.

    Raises:
        ToolError: no block-style ``memkeep:`` mapping, or a changed key whose value spans lines
            (``not_rewritable``); the result is re-parsed and must hold exactly the changed values.
    """
    text = data.decode("utf-8")
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(nl)
    try:
        start = lines.index(f"{okf.EXTENSION_KEY}:", 1)
        close = lines.index("---", 1)
    except ValueError:
        raise ToolError(
            "the record's memkeep envelope is not a block mapping; edit it by hand", "not_rewritable"
        ) from None
    if start > close:
        raise ToolError("the record has no memkeep envelope in its frontmatter", "not_rewritable")
    end = start + 1
    while end < close and lines[end].startswith(" "):
        end += 1
    for key, value in changes.items():
        rendered = f"  {key}: {okf.scalar(value)}"
        at = next((n for n in range(start + 1, end) if (m := _KEY_LINE.match(lines[n])) and m.group(1) == key), None)
        if at is None:
            lines.insert(end, rendered)
            end, close = end + 1, close + 1
        elif not lines[at].split(":", 1)[1].strip() or (at + 1 < end and lines[at + 1].startswith("   ")):
            raise ToolError(f"memkeep.{key} is not a one-line value; edit it by hand", "not_rewritable")
        else:
            lines[at] = rendered
    result = nl.join(lines).encode("utf-8")
    _parts, fields = record_store.parse_fields(result)
    env = fields.get(okf.EXTENSION_KEY)
    if not isinstance(env, Mapping) or any(env.get(k) != v for k, v in changes.items()):
        raise ToolError("the record's memkeep envelope could not be rewritten in place", "not_rewritable")
    return result
