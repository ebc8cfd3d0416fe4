"""Turn memkeep's typed results into text for people (their ``--json`` shapes are :mod:`git_memzoi.memkeep.schema`'s)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # type names only: importing the api here would load every command's code
    from git_memzoi.memkeep.api import IndexResult, LintResult, StatusResult, VerifyResult


def plural(count: int, noun: str) -> str:
    """``1 entry``, ``2 entries``, ``0 violations``."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {noun[:-1]}ies" if noun.endswith("y") else f"{count} {noun}s"


def status_text(result: StatusResult, *, verbose_clean: bool = True) -> str:
    """``status`` for people: a summary line, then one line per verdict, stale entry and unreadable file."""
    from git_memzoi.memkeep import api  # its names load on first use: STALE_NOTE only the report's module

    report = result.report
    head = report.head[:12] if report.head else "no commits yet"
    suspect = len(report.suspect_ids)
    entries = plural(report.entries, "entry")
    broken = f", {len(result.unreadable)} unreadable" if result.unreadable else ""  # as --json's summary counts them
    lines = [
        f"memkeep: {entries} in {result.store.rel}/, {suspect} suspect, {len(report.stale)} stale{broken} (HEAD {head})"
    ]
    if report.shallow:
        lines.append("  note: shallow clone; anchors older than its history cannot be checked")
    for v in report.verdicts:
        lines.append(f"  suspect    {v.id}  {v.reason}: {v.message}")
    for entry_id in report.stale:
        lines.append(f"  stale      {entry_id}  {api.STALE_NOTE}")
    for u in result.unreadable:
        where = f"{u.path}:{u.line}" if u.line else u.path
        lines.append(f"  broken     {where}  {u.reason}")
    for c in report.unchecked:
        lines.append(f"  unchecked  {c.id}  {c.field}: {c.message}")
    if report.verdicts:
        lines.append("Re-check with `git memkeep verify <id>` (or --all-safe), or edit the claim.")
    if report.unchecked:
        lines.append("Unchecked entries are not watched until their fields are fixed (see git memkeep lint).")
    if verbose_clean and not report.entries and not result.unreadable:
        lines.append(
            f"No entries yet: git memkeep index lists them once you write a first one, {result.store.rel}/entries/<id>.md"
        )
    elif verbose_clean and not (report.verdicts or report.stale or report.unchecked or result.unreadable):
        lines.append("All claims hold as far as git can tell.")
    return "\n".join(lines)


def hook_text(result: StatusResult) -> str:
    """The suspect summary injected into an agent session ('' when the store is clean)."""
    report = result.report
    if not report.verdicts and not report.stale and not report.unchecked and not result.unreadable:
        return ""
    return status_text(result, verbose_clean=False) + (
        "\nThese memory claims may be wrong now: verify them before relying on them."
    )


def index_text(result: IndexResult) -> str:
    """``index`` for people."""
    state = "rewritten" if result.changed else "already current"
    lines = [f"INDEX.md {state}: {plural(result.entries, 'entry')}"]
    lines += [f"  left out {u.path}: {u.reason}" for u in result.unreadable]
    if result.unreadable:
        lines.append(f"memkeep index: {plural(len(result.unreadable), 'entry')} left out; fix them and run it again")
    return "\n".join(lines)


def lint_text(result: LintResult) -> str:
    """``lint`` for people: ``path[:line]: id: field: rule: message`` per violation."""
    lines = []
    if result.fixed_index:
        lines.append("INDEX.md regenerated")
    for v in result.violations:
        where = f"{v.path}:{v.line}" if v.line else v.path
        who = f"{v.id}: " if v.id else ""
        lines.append(f"{where}: {who}{v.field}: {v.rule}: {v.message}")
    lines.append(f"memkeep lint: {plural(result.entries, 'entry')}, {plural(len(result.violations), 'violation')}")
    return "\n".join(lines)


def verify_text(result: VerifyResult, noun: str = "entry") -> str:
    """``verify`` for people; dry runs are grouped by what would happen. ``noun``: what is verified (``entry``
    for ``git memkeep``, ``record`` for ``git memzoi``)."""
    unread = (
        f"\nnote: {plural(result.unreadable, 'entry file')} cannot be read, so "
        f"{'it is' if result.unreadable == 1 else 'they are'} left out (git memkeep lint says why)"
        if result.unreadable
        else ""
    )
    if not result.items:
        return f"nothing to verify: no suspect {noun}{unread}"
    if result.dry_run:
        return _grouped(result) + unread
    lines = []
    for item in result.items:
        still = f" (still suspect: {'; '.join(item.still_suspect)})" if item.still_suspect else ""
        lines.append(f"{item.action:<13} {item.id}  {item.message}{still}")
        for r in item.results:
            if r.outcome.value != "pass":
                how = f"exit {r.exit_code}" if r.exit_code is not None else "no exit status: timed out or not started"
                lines.append(f"    {r.check.label}: {r.outcome.value} ({how}): {r.shown_run}")
                lines.extend(f"    | {line}" for line in (r.output or "").splitlines()[-10:])
    if result.index_updated:
        lines.append("INDEX.md regenerated: a verified entry's status or claim changed")
    return "\n".join(lines) + unread


def _grouped(result: VerifyResult) -> str:
    titles = {"would_run": "would run (safe check)", "skipped": "needs you (no safe check)"}
    lines = ["dry run: nothing is run or written"]
    for action, title in titles.items():
        group = [i for i in result.items if i.action == action]
        if group:
            lines.append(f"{title}:")
            for i in group:
                first, *rest = i.message.strip().splitlines() or [""]
                lines.append(f"  {i.id}  [{', '.join(i.reasons) or 'not suspect'}]  {first}")
                lines += [f"      {line}" for line in rest if line.strip()]  # a multi-line check command
    return "\n".join(lines)
