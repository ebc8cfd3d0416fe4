"""verify: re-run an entry's checks and heal it, or mark it stale (memkeep README "Commands": verify).

Exit 0 of every check heals (``anchor := HEAD``, ``verified_at := today``, ``stale`` becomes ``verified``);
exit 1 of any check marks the entry ``stale``; anything else is a tool error that leaves the entry untouched.
Only the changed frontmatter lines are rewritten, atomically, under the lifecycle lock. A healed entry can stay
suspect (a dependency is stale or suspect, a referenced path is missing); the item then says so. A check's
command and output are shown with their credentials masked (``checks.shown``), dry runs included.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from git_memzoi.errors import InputError, ToolError

if TYPE_CHECKING:
    from git_memzoi.memkeep.checks import CheckResult, Runner
    from git_memzoi.memkeep.entries import Entry
    from git_memzoi.memkeep.store import Store

_GUARDED = ("anchor", "status", "verified_at")


@dataclass(frozen=True)
class VerifyItem:
    """What verify did to one entry: ``healed``, ``marked_stale``, ``tool_error``, ``would_run`` or ``skipped``.

    ``reasons`` are why the entry was suspect before; ``still_suspect`` the verdict messages left after a heal.
    """

    id: str
    path: str
    action: str
    message: str
    results: tuple[CheckResult, ...] = ()
    reasons: tuple[str, ...] = ()
    still_suspect: tuple[str, ...] = ()


@dataclass(frozen=True)
class VerifyResult:
    """``git memkeep verify``: one item per entry considered."""

    head: str | None
    dry_run: bool
    items: tuple[VerifyItem, ...]
    index_updated: bool = False  # INDEX.md regenerated: a verified entry's status or claim changed
    unreadable: int = 0  # entry files that cannot be read: not considered (said in the text, as status counts them)

    @property
    def exit_code(self) -> int:
        """2 when any check was a tool error; 1 when any check failed, a healed entry is still suspect, or a dry
        run previews a suspect entry; else 0."""
        actions = {i.action for i in self.items}
        if "tool_error" in actions:
            return 2
        if self.dry_run:
            return 1 if any(i.reasons for i in self.items) else 0
        return 1 if "marked_stale" in actions or any(i.still_suspect for i in self.items) else 0


@dataclass(frozen=True)
class Plan:
    """How this verify run treats each entry: the commit and day a heal records, and the flags."""

    head: str
    today: dt.date
    all_safe: bool
    dry_run: bool
    manual: bool


class Writer(Protocol):
    """Where verify writes a heal or a stale mark: a memkeep entry file (:class:`EntryWriter`) or a memzoi record's
    envelope (``git memzoi verify``); ``root`` is where the checks run."""

    @property
    def root(self) -> Path:
        """The repository root."""
        ...

    def write(self, entry: Entry, changes: Mapping[str, Any], *, during: str = "while its check ran") -> None:
        """Apply ``changes`` (``anchor``, ``verified_at``, ``status``) to ``entry``'s file; ``during`` names when a
        change made meanwhile happened, for the refusal."""
        ...


@dataclass(frozen=True)
class EntryWriter:
    """Rewrites entry fields in place under the lifecycle lock, refusing if the entry changed meanwhile."""

    store: Store
    lock: Path

    @property
    def root(self) -> Path:
        """The repository root: checks run there."""
        return self.store.root

    def write(self, entry: Entry, changes: Mapping[str, Any], *, during: str = "while its check ran") -> None:
        """Apply ``changes`` to ``entry``'s file byte-stably; ``during`` says when a change made meanwhile happened
        (a manual re-test runs no check).

        Raises:
            ToolError: the entry's anchor, status or verified_at changed since it was read.
        """
        from git_memzoi.core import frontmatter, safe_read
        from git_memzoi.core.atomic import lifecycle_lock, write_bytes_atomic
        from git_memzoi.memkeep.store import MAX_ENTRY_BYTES, entry_file, sweep_leftovers

        path = entry_file(self.store, entry.path)
        with lifecycle_lock(self.lock, root=self.lock.parent):
            sweep_leftovers(self.store)
            data = safe_read.read_bytes(path, MAX_ENTRY_BYTES)  # read before: it may have been swapped since
            current = frontmatter.parse(data).fields
            if any(current.get(k) != entry.fields.get(k) for k in _GUARDED):
                raise ToolError(f"{entry.path} changed {during}; run verify again", "changed_during_verify")
            write_bytes_atomic(path, frontmatter.update(data, changes), root=self.store.root)


def verify_entry(entry: Entry, reasons: Sequence[str], plan: Plan, runner: Runner, writer: Writer) -> VerifyItem:
    """Verify one entry under ``plan``: skip, preview, run its checks, then heal or mark it stale.

    Raises:
        InputError: the entry has no check and neither ``--manual`` nor ``--all-safe`` was given (``no_check``),
            or a check field is malformed (``check_format``; with ``--all-safe`` the entry is skipped instead).
    """
    from git_memzoi.memkeep.checks import Outcome, shown

    def item(action: str, message: str, results: tuple[CheckResult, ...] = ()) -> VerifyItem:
        return VerifyItem(entry.id, entry.path, action, message, results, tuple(reasons))

    if plan.manual:
        writer.write(entry, _heal(entry, plan), during="since verify read it")
        return item("healed", "recorded a manual re-test")
    problems = entry.check_problems()
    if problems:  # never run a check with other settings than the ones written (a timeout read as the default)
        field, problem = problems[0]
        if plan.all_safe:
            return item("skipped", f"its {field} is malformed ({problem}); see git memkeep lint")
        raise InputError(f"{entry.id}: {field}: {problem}; nothing was run (see git memkeep lint)", "check_format")
    checks = entry.checks()
    if not checks:
        if plan.all_safe:
            return item("skipped", "no check; verify it by hand (--manual)")
        raise InputError(f"{entry.id} has no check; re-test it yourself and run verify {entry.id} --manual", "no_check")
    if plan.all_safe and not all(c.safe for c in checks):
        return item("skipped", "its check is not marked safe")
    if plan.dry_run:  # the command is shown, its credentials never
        return item("would_run", "; ".join(shown(c.run) for c in checks))
    results = _run(entry, checks, runner, writer.root)
    outcomes = {r.outcome for r in results}
    if Outcome.TOOL_ERROR in outcomes:
        return item("tool_error", "a check could not run; entry untouched", results)
    if Outcome.FAIL in outcomes:
        writer.write(entry, {"status": "stale"})
        return item("marked_stale", "a check failed: marked stale", results)
    writer.write(entry, _heal(entry, plan))
    return item("healed", "checks passed", results)


def _heal(entry: Entry, plan: Plan) -> dict[str, Any]:
    changes: dict[str, Any] = {"anchor": plan.head, "verified_at": plan.today}
    if entry.status == "stale":
        changes["status"] = "verified"
    return changes


def _run(entry: Entry, checks: Sequence[Any], runner: Runner, root: Path) -> tuple[CheckResult, ...]:
    """Run the checks in order, stopping at the first that does not pass."""
    from dataclasses import replace

    from git_memzoi.memkeep.checks import Outcome, shown

    results = []
    for check in checks:
        result = runner.run(check, root, entry.environment())
        results.append(replace(result, output=shown(result.output)))  # a check may print a credential
        if result.outcome is not Outcome.PASS:
            break
    return tuple(results)
