"""The values a staleness computation reports (pure): :class:`Verdict`, :class:`Unchecked` and
:class:`StalenessReport` (memkeep README "How staleness works"; the rule itself is
:mod:`git_memzoi.memkeep.staleness`, which re-exports them).

Their own light module so that a status answer served from the result cache
(:mod:`git_memzoi.memkeep.status_cache`) is rebuilt without loading the computation, its globs and scope index,
or the entry model: about 6 ms of imports a warm ``git memkeep status`` no longer pays (issue 17, "warm status
at 1,000 entries").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple

STALE_NOTE = "failed its last verify; fix the claim or tombstone it"  # a stale entry's line, wherever one is listed


class Verdict(NamedTuple):
    """One reason one entry is suspect (one object per entry × reason in ``status --json``).

    ``evidence`` holds the reason's facts: ``files`` for scope_hit, ``age_days``/``ttl_days`` for ttl_expired,
    ``dependencies`` for dependency_suspect, ``anchor``/``state`` for anchor_unreachable, ``refs`` for
    ref_missing. Immutable; a named tuple because a status builds one per suspect entry and it is built in half
    the time of a frozen dataclass.
    """

    id: str
    path: str
    reason: str
    message: str
    evidence: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Unchecked:
    """One field that keeps a live entry from being (fully) watched: ``scope``, ``explains`` or ``ttl_days``."""

    id: str
    path: str
    field: str
    message: str


@dataclass(frozen=True)
class StalenessReport:
    """The suspect set of a store at one HEAD on one day."""

    head: str | None
    shallow: bool
    today: dt.date
    entries: int
    verdicts: tuple[Verdict, ...]
    stale: tuple[str, ...]  # ids whose status is stale
    tombstones: int
    unchecked: tuple[Unchecked, ...] = ()  # sorted by id, then field
    stale_paths: tuple[str, ...] = ()  # the file of each id in ``stale``, in the same order (CI reports point at it)

    @property
    def suspect_ids(self) -> tuple[str, ...]:
        """Sorted unique ids of suspect entries."""
        return tuple(sorted({v.id for v in self.verdicts}))
