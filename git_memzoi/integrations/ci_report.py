"""``git memkeep status`` for CI: GitHub workflow annotations and SARIF 2.1.0 (research/landscape.md §3e).

Pure: a :class:`~git_memzoi.memkeep.api.StatusResult` in, text or a JSON-ready mapping out. Annotations are
sorted errors first, one warning per suspect entry (its verdicts joined), at most :data:`ANNOTATION_LIMIT` of each
level: GitHub shows 10 warning (and 10 error) annotations per step and drops the rest silently, so one
``::notice::`` line counts what was left out and points at ``git memkeep status``. Messages and properties are
escaped as the workflow-command rules ask (``%``, CR, LF; ``:`` and ``,`` in properties). SARIF results carry
stable ``partialFingerprints`` (entry id + reason) so code scanning tracks one verdict across runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from git_memzoi import __version__

if TYPE_CHECKING:
    from git_memzoi.integrations.team_review import ReviewItem
    from git_memzoi.memkeep.api import StatusResult, Unchecked, Verdict

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
ANNOTATION_LIMIT = 10  # GitHub keeps this many annotations of one level per step
_LEVELS = {"error": 0, "warning": 1, "notice": 2}


# the frontmatter field each finding is about: annotations and SARIF regions point at that field's line
_FIELDS = {
    "scope_hit": "scope",
    "ttl_expired": "ttl_days",
    "dependency_suspect": "explains",
    "anchor_unreachable": "anchor",
    "stale": "status",
}


def field_line(text: str | None, name: str) -> int:
    """The 1-based line of the top-level frontmatter field ``name`` in an entry's ``text``; 1 (the file's first
    line) when the text, its frontmatter or the field is missing."""
    if not text or not name:
        return 1
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return 1
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() == "---":
            break
        if line.startswith(f"{name}:"):
            return number
    return 1


def finding_paths(result: StatusResult) -> list[str]:
    """The entry files the findings of ``result`` point at (read them for :func:`github` and :func:`sarif`'s
    ``texts``, so each finding names the line of its field)."""
    report = result.report
    paths = {v.path for v in report.verdicts} | {c.path for c in report.unchecked} | set(report.stale_paths)
    return sorted(p for p in paths if p)


def _items(
    result: StatusResult, texts: Mapping[str, str] | None = None, review: Sequence[ReviewItem] = ()
) -> list[tuple[str, str, int, str, str]]:
    """(level, path, line, rule, message) for every finding, errors first; ``line`` is the line of the field the
    finding is about when ``texts`` (path → entry text) holds the file, else 1. ``review`` items (merged
    branches' INDEX.md drift and conflicting claims, :mod:`~git_memzoi.integrations.team_review`) are warnings."""
    got = texts or {}
    report = result.report
    items = [
        ("error", u.path, u.line or 1, f"unreadable/{u.code}", f"{u.path} cannot be read: {u.reason}")
        for u in result.unreadable
    ]
    items += [
        ("warning", v.path, field_line(got.get(v.path), _FIELDS.get(v.reason, "")), v.reason, _verdict_text(v))
        for v in report.verdicts
    ]
    stale_paths = report.stale_paths if len(report.stale_paths) == len(report.stale) else ("",) * len(report.stale)
    items += [
        ("warning", path, field_line(got.get(path), "status"), "stale", f"{i} failed its last verify")
        for i, path in zip(report.stale, stale_paths, strict=True)
    ]
    items += [
        ("notice", c.path, field_line(got.get(c.path), c.field), f"unchecked/{c.field}", _unchecked_text(c))
        for c in report.unchecked
    ]
    items += [("warning", r.path, 1, r.rule, r.message) for r in review]
    return sorted(items, key=lambda i: (_LEVELS[i[0]], i[1], i[3]))


def _verdict_text(v: Verdict) -> str:
    return f"{v.id} is suspect ({v.reason}): {v.message}"


def _unchecked_text(c: Unchecked) -> str:
    return f"{c.id} is not watched: {c.field}: {c.message}"


def escape_data(text: str) -> str:
    """Escape an annotation's message: ``%``, CR and LF."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape an annotation property value: as data, plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


class _Annotation(NamedTuple):
    level: str
    path: str
    line: int
    rule: str
    message: str
    verdicts: int = 0  # the suspect verdicts this annotation carries
    end_line: int = 0  # a changed-code annotation's last line


CODE_RULE = "scope_hit/code"  # a notice on changed code lines that hit a suspect entry's scope


def changed_ranges(old: str | None, new: str) -> list[tuple[int, int]]:
    """The ``(first, last)`` 1-based line ranges of ``new`` that differ from ``old`` (``None``: the file is new,
    all of it changed); a deletion marks the line after it (the last line at the end of the file)."""
    from difflib import SequenceMatcher

    new_lines = new.splitlines()
    if not new_lines:
        return []
    if old is None:
        return [(1, len(new_lines))]
    ranges = []
    for tag, _i1, _i2, j1, j2 in SequenceMatcher(None, old.splitlines(), new_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        first = min(j1 + 1, len(new_lines))
        ranges.append((first, max(first, j2)))
    return ranges


def _code_annotations(result: StatusResult, code: Mapping[str, Sequence[tuple[int, int]]]) -> list[_Annotation]:
    """One notice per changed line range of a file that a ``scope_hit`` verdict names, listing the entries whose
    scope it hits (``code``: path → :func:`changed_ranges` of the file since the entries' anchors)."""
    hits: dict[str, list[Verdict]] = {}
    for verdict in result.report.verdicts:
        if verdict.reason == "scope_hit":
            for path in verdict.evidence.get("files", ()):
                hits.setdefault(path, []).append(verdict)
    out = []
    for path in sorted(hits):
        entries = sorted({(v.id, v.path) for v in hits[path]})
        message = "\n".join(
            f"this change is in the scope of memkeep entry {i} ({p}), now suspect: check that it still holds, "
            f"then run `git memkeep verify {i}`"
            for i, p in entries
        )
        out += [_Annotation("notice", path, a, CODE_RULE, message, 0, b) for a, b in sorted(set(code.get(path, ())))]
    return out


def _annotations(
    result: StatusResult,
    texts: Mapping[str, str] | None = None,
    code: Mapping[str, Sequence[tuple[int, int]]] | None = None,
    review: Sequence[ReviewItem] = (),
) -> list[_Annotation]:
    """Errors (unreadable files), one warning per suspect entry by path, the stale ids, the review items, the
    unchecked fields.

    An entry's verdicts share one annotation (titles joined by `` + ``, messages one per line): ten annotations
    point at ten entries, and the stale ids, which have no file to point at, come after them.
    """
    items = [_Annotation(*item) for item in _items(result, texts, review)]
    by_entry: dict[tuple[str, str], list[Verdict]] = {}
    for verdict in sorted(result.report.verdicts, key=lambda v: (v.path, v.id, v.reason)):
        by_entry.setdefault((verdict.path, verdict.id), []).append(verdict)
    suspect = [
        _Annotation(
            "warning",
            path,
            field_line((texts or {}).get(path), _FIELDS.get(group[0].reason, "")),
            " + ".join(v.reason for v in group),
            "\n".join(_verdict_text(v) for v in group),
            len(group),
        )
        for (path, _id), group in by_entry.items()
    ]
    stale = [a for a in items if a.level == "warning" and a.rule == "stale"]
    reviewed = [_Annotation("warning", r.path, 1, r.rule, r.message) for r in review]
    notices = _code_annotations(result, code or {}) + [a for a in items if a.level == "notice"]
    return [a for a in items if a.level == "error"] + suspect + stale + reviewed + notices


def _more(count: int, one: str, many: str) -> str:
    return f"{count} more {one if count == 1 else many}"


def github(
    result: StatusResult,
    limit: int = ANNOTATION_LIMIT,
    texts: Mapping[str, str] | None = None,
    code: Mapping[str, Sequence[tuple[int, int]]] | None = None,
    review: Sequence[ReviewItem] = (),
) -> str:
    """Workflow annotations for ``result``, at most ``limit`` per level, then the one-line summary.

    ``::error`` per unreadable file, ``::warning file=…,line=…,title=…::`` per suspect entry (then per stale id)
    on the entry file at the line of the field it is about (``texts``: path → entry text), ``::notice`` per
    changed line range of code that hits a suspect entry's scope (``code``: path → :func:`changed_ranges`),
    then per unchecked field; a ``::warning`` per ``review`` item (merged branches' INDEX.md drift, conflicting
    claims) after the stale ids. What exceeds ``limit`` is counted in one ``::notice::`` line (it takes one of
    the notice slots) that names ``git memkeep status``. The exit code stays the caller's (``status``'s).
    """
    annotations = _annotations(result, texts, code, review)
    errors, warnings, notices = ([a for a in annotations if a[0] == level] for level in _LEVELS)
    capped = len(errors) > limit or len(warnings) > limit or len(notices) > limit
    notice_slots = limit - 1 if capped else limit
    lines = [_annotation(a) for a in errors[:limit] + warnings[:limit]]
    if capped:
        lines.append(_overflow(errors[limit:], warnings[limit:], notices[notice_slots:], limit))
    lines += [_annotation(a) for a in notices[:notice_slots]]
    report = result.report
    noun = "entry" if report.entries == 1 else "entries"
    lines.append(
        f"memkeep: {report.entries} {noun}, {len(report.suspect_ids)} suspect, {len(report.stale)} stale, "
        f"{len(result.unreadable)} unreadable" + (f", {len(review)} to review after merges" if review else "")
    )
    return "\n".join(lines)


def _annotation(a: _Annotation) -> str:
    where = f"file={escape_property(a.path)},line={a.line}," if a.path else ""
    if a.end_line > a.line:
        where += f"endLine={a.end_line},"
    return f"::{a.level} {where}title={escape_property('memkeep ' + a.rule)}::{escape_data(a.message)}"


def _overflow(errors: list[_Annotation], warnings: list[_Annotation], notices: list[_Annotation], limit: int) -> str:
    """The ``::notice::`` line counting the annotations left out, by kind."""
    suspect = [a for a in warnings if a.verdicts]
    reviewed = [a for a in warnings if not a.verdicts and a.rule != "stale"]
    code = [a for a in notices if a.rule == CODE_RULE]
    parts = []
    if suspect:
        verdicts = sum(a.verdicts for a in suspect)
        entries = f"{len(suspect)} {'entry' if len(suspect) == 1 else 'entries'}"
        parts.append(_more(verdicts, "suspect verdict", "suspect verdicts") + f" ({entries})")
    for left, one, many in (
        (len(warnings) - len(suspect) - len(reviewed), "stale entry", "stale entries"),
        (len(reviewed), "review item", "review items"),
        (len(errors), "unreadable file", "unreadable files"),
        (len(code), "changed-code note", "changed-code notes"),
        (len(notices) - len(code), "unchecked field", "unchecked fields"),
    ):
        if left:
            parts.append(_more(left, one, many))
    message = (
        f"memkeep: {', '.join(parts)} not annotated (GitHub shows at most {limit} annotations of a level "
        "per step); run `git memkeep status` to see them all"
    )
    return f"::notice::{escape_data(message)}"


def summary_markdown(result: StatusResult, review: Sequence[ReviewItem] = ()) -> str:
    """A Markdown table of every finding for ``$GITHUB_STEP_SUMMARY``, those beyond the annotation cap too."""
    rows = ["| level | file | rule | message |", "|---|---|---|---|"]
    for level, path, _line, rule, message in _items(result, review=review):
        cell = message.replace("|", "/").replace("\r", " ").replace("\n", " ")
        rows.append(f"| {level} | {path} | {rule} | {cell} |")
    return "\n".join(["## memkeep status", "", *rows, ""])


def fingerprint(*parts: str) -> str:
    """A stable hex fingerprint of ``parts``."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def _fallback_uri(result: StatusResult) -> str:
    """The store's INDEX.md: where a finding without a file of its own points (a report built without paths)."""
    rel = getattr(result.store, "rel", ".")
    return "INDEX.md" if rel == "." else f"{rel}/INDEX.md"


def sarif(
    result: StatusResult, texts: Mapping[str, str] | None = None, review: Sequence[ReviewItem] = ()
) -> dict[str, Any]:
    """The SARIF 2.1.0 log of ``result``: one run, one rule per verdict reason. Every result has a location, as
    GitHub code scanning requires of each (it rejects the whole upload otherwise): the entry file (the unreadable
    file) and the line of the field the finding is about, when ``texts`` holds the file's text (else line 1);
    ``review`` items are warnings on their file's first line."""
    items = _items(result, texts, review)
    rules = sorted({rule for _, _, _, rule, _ in items})
    results = []
    for level, path, line, rule, message in items:
        entry: dict[str, Any] = {
            "ruleId": rule,
            "level": "note" if level == "notice" else level,
            "message": {"text": message},
            "partialFingerprints": {"memkeepFinding/v1": fingerprint(rule, path, message.split(":", 1)[0])},
        }
        entry["locations"] = [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": path or _fallback_uri(result), "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": line},
                }
            }
        ]
        results.append(entry)
    driver = {
        "name": "git-memkeep",
        "version": __version__,
        "rules": [{"id": r, "shortDescription": {"text": f"memkeep {r}"}} for r in rules],
    }
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "automationDetails": {"id": "memkeep-status/"}, "results": results}],
    }
