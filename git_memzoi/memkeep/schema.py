"""The ``--json`` shapes of memkeep's commands (memkeep README "JSON output"), as named types and their builders.

One object per command, with ``schema_version``; the CLI prints them and the MCP server returns the status one.
Pure: the results come in typed, nothing is read or written here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from git_memzoi.memkeep.commands import IndexResult, LintResult, StatusResult
    from git_memzoi.memkeep.store import Unreadable
    from git_memzoi.memkeep.verify import VerifyResult

SCHEMA_VERSION = 1


class UnreadableJson(TypedDict):
    """A file of the store that could not be read as an entry."""

    path: str
    line: int | None
    code: str
    reason: str


class StatusSummaryJson(TypedDict):
    """The counts of a ``status``."""

    entries: int
    suspect: int
    verdicts: int
    stale: int
    tombstones: int
    unreadable: int


class UncheckedJson(TypedDict):
    """An entry whose fields keep it from being watched."""

    id: str
    path: str
    field: str
    message: str


class StatusJson(TypedDict):
    """``status --json``: one verdict per entry × reason (each verdict also carries its reason's evidence keys)."""

    schema_version: int
    store: str
    head: str | None
    shallow: bool
    today: str
    summary: StatusSummaryJson
    verdicts: list[dict[str, Any]]
    stale: list[str]
    unreadable: list[UnreadableJson]
    unchecked: list[UncheckedJson]


class IndexJson(TypedDict):
    """``index --json``."""

    schema_version: int
    path: str
    changed: bool
    entries: int
    unreadable: list[UnreadableJson]


class ViolationJson(TypedDict):
    """One lint violation."""

    path: str
    id: str | None
    field: str
    rule: str
    message: str
    line: int | None


class LintSummaryJson(TypedDict):
    """The counts of a ``lint``."""

    entries: int
    violations: int


class LintJson(TypedDict):
    """``lint --json``."""

    schema_version: int
    store: str
    summary: LintSummaryJson
    fixed_index: bool
    violations: list[ViolationJson]


class CheckJson(TypedDict):
    """One check run by ``verify`` and its outcome (``duration_ms`` in milliseconds)."""

    label: str
    run: str
    outcome: str
    exit_code: int | None
    duration_ms: int | None
    output: str | None


class VerifyItemJson(TypedDict):
    """What ``verify`` did with one entry."""

    id: str
    path: str
    action: str
    message: str
    reasons: list[str]
    still_suspect: list[str]
    checks: list[CheckJson]


class VerifyJson(TypedDict):
    """``verify --json``."""

    schema_version: int
    head: str | None
    dry_run: bool
    index_updated: bool
    items: list[VerifyItemJson]


def _unreadable(items: tuple[Unreadable, ...]) -> list[UnreadableJson]:
    return [{"path": u.path, "line": u.line, "code": u.code, "reason": u.reason} for u in items]


def status_json(result: StatusResult) -> StatusJson:
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


def index_json(result: IndexResult) -> IndexJson:
    """``index --json``."""
    return {
        "schema_version": SCHEMA_VERSION,
        "path": str(result.path),
        "changed": result.changed,
        "entries": result.entries,
        "unreadable": _unreadable(result.unreadable),
    }


def lint_json(result: LintResult) -> LintJson:
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


def verify_json(result: VerifyResult) -> VerifyJson:
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
                    {
                        "label": r.check.label,
                        "run": r.shown_run,
                        "outcome": r.outcome.value,
                        "exit_code": r.exit_code,
                        "duration_ms": r.duration_ms,
                        "output": r.output,
                    }
                    for r in i.results
                ],
            }
            for i in result.items
        ],
    }
