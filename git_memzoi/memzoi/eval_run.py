"""The outcome of one evaluation run (``eval recall``, ``eval capture``), as the CLI renders and exits on it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunResult:
    """One evaluation: the report, whether it passed (gates and baseline), whether its gates passed (recall's
    thresholds, capture's hard gates), and whether the baseline file was (re)written."""

    report: dict[str, Any]
    passed: bool
    gates_passed: bool
    baseline_written: bool
