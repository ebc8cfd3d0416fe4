"""``git memkeep status`` for CI: GitHub workflow annotations and SARIF 2.1.0 (research/landscape.md §3e).

Pure: a :class:`~git_memzoi.memkeep.api.StatusResult` in, text or a JSON-ready mapping out. Annotations are
sorted errors first (GitHub keeps only 10 per type per step); SARIF results carry stable
``partialFingerprints`` (entry id + reason) so code scanning tracks one verdict across runs.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from git_memzoi import __version__

if TYPE_CHECKING:
    from git_memzoi.memkeep.api import StatusResult

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"error": 0, "warning": 1, "notice": 2}


def _items(result: StatusResult) -> list[tuple[str, str, int, str, str]]:
    """(level, path, line, rule, message) for every finding, errors first."""
    items = [("error", u.path, u.line or 1, f"unreadable/{u.code}", f"{u.path} cannot be read: {u.reason}")
             for u in result.unreadable]  # fmt: skip
    items += [("warning", v.path, 1, v.reason, f"{v.id} is suspect ({v.reason}): {v.message}")
              for v in result.report.verdicts]  # fmt: skip
    items += [("warning", "", 1, "stale", f"{i} failed its last verify") for i in result.report.stale]
    items += [("notice", c.path, 1, f"unchecked/{c.field}", f"{c.id} is not watched: {c.field}: {c.message}")
              for c in result.report.unchecked]  # fmt: skip
    return sorted(items, key=lambda i: (_LEVELS[i[0]], i[1], i[3]))


def escape_data(text: str) -> str:
    """Escape an annotation's message: ``%``, CR and LF."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape an annotation property value: as data, plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(result: StatusResult) -> str:
    """One ``::warning file=…,line=…,title=…::message`` line per finding (``::error`` for unreadable files)."""
    lines = []
    for level, path, line, rule, message in _items(result):
        where = f"file={escape_property(path)},line={line}," if path else ""
        lines.append(f"::{level} {where}title={escape_property('memkeep ' + rule)}::{escape_data(message)}")
    report = result.report
    lines.append(f"memkeep: {report.entries} entries, {len(report.suspect_ids)} suspect, {len(report.stale)} stale, "
                 f"{len(result.unreadable)} unreadable")  # fmt: skip
    return "\n".join(lines)


def summary_markdown(result: StatusResult) -> str:
    """A Markdown table of every finding for ``$GITHUB_STEP_SUMMARY`` (annotations beyond the cap are dropped)."""
    rows = ["| level | file | rule | message |", "|---|---|---|---|"]
    for level, path, _line, rule, message in _items(result):
        rows.append(f"| {level} | {path} | {rule} | {message.replace('|', '/')} |")
    return "\n".join(["## memkeep status", "", *rows, ""])


def fingerprint(*parts: str) -> str:
    """A stable hex fingerprint of ``parts``."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def sarif(result: StatusResult) -> dict[str, Any]:
    """The SARIF 2.1.0 log of ``result``: one run, one rule per verdict reason."""
    items = _items(result)
    rules = sorted({rule for _, _, _, rule, _ in items})
    results = []
    for level, path, line, rule, message in items:
        entry: dict[str, Any] = {
            "ruleId": rule, "level": "note" if level == "notice" else level, "message": {"text": message},
            "partialFingerprints": {"memkeepFinding/v1": fingerprint(rule, path, message.split(":", 1)[0])},
        }  # fmt: skip
        if path:
            entry["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": path, "uriBaseId": "%SRCROOT%"},
                                                        "region": {"startLine": line}}}]  # fmt: skip
        results.append(entry)
    driver = {"name": "git-memkeep", "version": __version__,
              "rules": [{"id": r, "shortDescription": {"text": f"memkeep {r}"}} for r in rules]}  # fmt: skip
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0",
            "runs": [{"tool": {"driver": driver}, "automationDetails": {"id": "memkeep-status/"},
                      "results": results}]}  # fmt: skip
