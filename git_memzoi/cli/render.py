"""Turn typed results into text for people or JSON objects (the only place command output is shaped)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type names only: importing the api here would load every command's code
    from git_memzoi.memkeep.api import IndexResult, LintResult, StatusResult, VerifyResult
    from git_memzoi.memkeep.store import Unreadable

SCHEMA_VERSION = 1


def plural(count: int, noun: str) -> str:
    """``1 entry``, ``2 entries``, ``0 violations``."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {noun[:-1]}ies" if noun.endswith("y") else f"{count} {noun}s"


def _unreadable(items: tuple[Unreadable, ...]) -> list[dict[str, Any]]:
    return [{"path": u.path, "line": u.line, "code": u.code, "reason": u.reason} for u in items]


def status_json(result: StatusResult) -> dict[str, Any]:
    """``status --json``: summary, one verdict per entry × reason, unreadable files."""
    report = result.report
    return {
        "schema_version": SCHEMA_VERSION,
        "store": result.store.rel,
        "head": report.head,
        "shallow": report.shallow,
        "today": report.today.isoformat(),
        "summary": {
            "entries": report.entries,
            "suspect": len(report.suspect_ids),
            "verdicts": len(report.verdicts),
            "stale": len(report.stale),
            "tombstones": report.tombstones,
            "unreadable": len(result.unreadable),
        },
        "verdicts": [
            {"id": v.id, "path": v.path, "reason": v.reason, "message": v.message, **v.evidence}
            for v in report.verdicts
        ],
        "stale": list(report.stale),
        "unreadable": _unreadable(result.unreadable),
        "unchecked": [{"id": u.id, "path": u.path, "field": u.field, "message": u.message} for u in report.unchecked],
    }


def status_text(result: StatusResult, *, verbose_clean: bool = True) -> str:
    """``status`` for people: a summary line, then one line per verdict, stale entry and unreadable file."""
    report = result.report
    head = report.head[:12] if report.head else "no commits yet"
    suspect = len(report.suspect_ids)
    entries = plural(report.entries, "entry")
    lines = [f"memkeep: {entries} in {result.store.rel}/, {suspect} suspect, {len(report.stale)} stale (HEAD {head})"]
    if report.shallow:
        lines.append("  note: shallow clone; anchors older than its history cannot be checked")
    for v in report.verdicts:
        lines.append(f"  suspect    {v.id}  {v.reason}: {v.message}")
    for entry_id in report.stale:
        lines.append(f"  stale      {entry_id}  failed its last verify; fix the claim or tombstone it")
    for u in result.unreadable:
        where = f"{u.path}:{u.line}" if u.line else u.path
        lines.append(f"  broken     {where}  {u.reason}")
    for c in report.unchecked:
        lines.append(f"  unchecked  {c.id}  {c.field}: {c.message}")
    if report.verdicts:
        lines.append("Re-check with `git memkeep verify <id>` (or --all-safe), or edit the claim.")
    if report.unchecked:
        lines.append("Unchecked entries are not watched until their fields are fixed (see git memkeep lint).")
    if verbose_clean and not (report.verdicts or report.stale or report.unchecked or result.unreadable):
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


def index_json(result: IndexResult) -> dict[str, Any]:
    """``index --json``."""
    return {
        "schema_version": SCHEMA_VERSION,
        "path": str(result.path),
        "changed": result.changed,
        "entries": result.entries,
        "unreadable": _unreadable(result.unreadable),
    }


def index_text(result: IndexResult) -> str:
    """``index`` for people."""
    state = "rewritten" if result.changed else "already current"
    lines = [f"INDEX.md {state}: {plural(result.entries, 'entry')}"]
    lines += [f"  left out {u.path}: {u.reason}" for u in result.unreadable]
    return "\n".join(lines)


def lint_json(result: LintResult) -> dict[str, Any]:
    """``lint --json``: every violation with path, id, field, rule, message and line."""
    return {
        "schema_version": SCHEMA_VERSION,
        "store": result.store.rel,
        "summary": {"entries": result.entries, "violations": len(result.violations)},
        "fixed_index": result.fixed_index,
        "violations": [
            {"path": v.path, "id": v.id, "field": v.field, "rule": v.rule, "message": v.message, "line": v.line}
            for v in result.violations
        ],
    }


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


def verify_json(result: VerifyResult) -> dict[str, Any]:
    """``verify --json``: one item per entry with its action and each check's outcome."""
    return {
        "schema_version": SCHEMA_VERSION,
        "head": result.head,
        "dry_run": result.dry_run,
        "index_updated": result.index_updated,
        "items": [
            {
                "id": i.id,
                "path": i.path,
                "action": i.action,
                "message": i.message,
                "reasons": list(i.reasons),
                "still_suspect": list(i.still_suspect),
                "checks": [
                    {"label": r.check.label, "run": r.check.run, "outcome": r.outcome.value,
                     "exit_code": r.exit_code, "duration_ms": r.duration_ms, "output": r.output}
                    for r in i.results
                ],  # fmt: skip
            }
            for i in result.items
        ],
    }


def verify_text(result: VerifyResult) -> str:
    """``verify`` for people; dry runs are grouped by what would happen."""
    if not result.items:
        return "nothing to verify: no suspect entry"
    if result.dry_run:
        return _grouped(result)
    lines = []
    for item in result.items:
        still = f" (still suspect: {'; '.join(item.still_suspect)})" if item.still_suspect else ""
        lines.append(f"{item.action:<13} {item.id}  {item.message}{still}")
        for r in item.results:
            if r.outcome.value != "pass":
                how = f"exit {r.exit_code}" if r.exit_code is not None else "no exit status: timed out or not started"
                lines.append(f"    {r.check.label}: {r.outcome.value} ({how}): {r.check.run}")
                lines.extend(f"    | {line}" for line in (r.output or "").splitlines()[-10:])
    if result.index_updated:
        lines.append("INDEX.md regenerated: a status changed")
    return "\n".join(lines)


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
