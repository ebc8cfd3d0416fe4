"""The outcome of one evaluation run (``eval recall``, ``eval capture``), as the CLI renders and exits on it, and
the baseline such a run starts from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class RunResult:
    """One evaluation: the report, whether it passed (gates and baseline), whether its gates passed (recall's
    thresholds, capture's hard gates), and whether the baseline file was (re)written."""

    report: dict[str, Any]
    passed: bool
    gates_passed: bool
    baseline_written: bool


def previous_baseline(baseline: Path | None, update_baseline: bool) -> dict[str, Any] | None:
    """The baseline an evaluation compares with: ``None`` without one, or when ``update_baseline`` will write it
    for the first time.

    Raises:
        InputError: ``update_baseline`` without ``baseline`` (``bad_usage``). BaselineError: an unreadable or
            (without ``update_baseline``) missing baseline.
    """
    from git_memzoi.errors import InputError
    from git_memzoi.memzoi.eval import report as eval_report

    if update_baseline and baseline is None:
        raise InputError("--update-baseline requires --baseline", "bad_usage")
    if baseline is not None and (not update_baseline or baseline.exists()):
        return eval_report.read_baseline(baseline)
    return None
