"""What a refresh and a rebuild of the derived index did (pure values; split from
:mod:`~git_memzoi.memzoi.recall.index.db`, which re-exports them, for size)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from git_memzoi.memzoi.records.problem import Problem

JSON_VERSION = 1  # the ``rebuild --json`` object's own version, as every --json object's


@dataclass(frozen=True)
class RefreshResult:
    """What :func:`refresh` did. ``read`` lists the files it (re-)read; an unchanged store reads none."""

    scanned: int
    read: tuple[str, ...]
    removed: tuple[str, ...]
    problems: tuple[Problem, ...]
    rebuilt: bool


@dataclass(frozen=True)
class RebuildResult:
    """What :func:`rebuild` indexed, per destination, and the files it could not read (the others are served).

    ``pending_proposals`` counts packet files in ``.memzoi/proposals/pending/``: proposals are files, so a
    rebuild never discards them (the index does not hold them).
    """

    path: str
    records: Mapping[str, int]
    unreadable: tuple[Problem, ...]
    pending_proposals: int

    def to_json(self) -> dict[str, Any]:
        """The ``rebuild --json`` object."""
        note = "pending proposals are files under .memzoi/proposals/pending/; rebuild never discards them"
        proposals = {"pending": self.pending_proposals, "discarded": 0, "note": note}
        return {
            "ok": True,
            "index": self.path,
            "schema_version": JSON_VERSION,
            "records": dict(self.records),
            "total": sum(self.records.values()),
            "proposals": proposals,
            "runtime_preserved": True,
            "unreadable": [{"path": p.path, "code": p.code, "reason": p.reason} for p in self.unreadable],
        }
