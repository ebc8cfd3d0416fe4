"""Shared by the capture and import tests: the pinned time of the ``ctx`` fixture (``conftest.py``) and a snapshot
of every project file (to prove that an operation wrote nothing)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

NOW = dt.datetime(2026, 7, 10, 12, 0, tzinfo=dt.UTC)


def tree(root: Path) -> dict[str, bytes]:
    """Every file but git's and the (empty) lifecycle lock file, which apply creates before it checks."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts and p.name != "lifecycle.lock"
    }
