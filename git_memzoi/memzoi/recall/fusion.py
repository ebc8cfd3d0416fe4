"""Reciprocal Rank Fusion of two ranked lists (pure; vault-memory's hybrid search, seed 004).

A candidate's fused score is ``Σ 1/(k + rank)`` over the lists that hold it, ``rank`` 1-based, ``k`` 60 unless
``[recall] rrf_k`` says otherwise. Each method fetches ``3 × limit`` candidates, after every filter, so a hit
the limit would cut from one list can still win on the other. Ties on the fused score go to the candidate with
the best single rank (the smaller of its two ranks), then to the smaller key, so the order never depends on
dict or set order.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

DEFAULT_K = 60
CANDIDATES_PER_RESULT = 3

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Fused(Generic[K]):
    """One fused candidate: its key, 1-based rank in each list (``None``: absent there) and the RRF score."""

    key: K
    lexical_rank: int | None
    semantic_rank: int | None
    rrf: float

    @property
    def best_rank(self) -> int:
        """The better of its two ranks (the tie-break after the score)."""
        return min(r for r in (self.lexical_rank, self.semantic_rank) if r is not None)


def rrf(
    lexical: Sequence[K], semantic: Sequence[K], *, k: int = DEFAULT_K, sort_key: Mapping[K, str] | None = None
) -> list[Fused[K]]:
    """Fuse two best-first lists of distinct keys by Reciprocal Rank Fusion, best first.

    Args:
        lexical: keys ranked by bm25, best first.
        semantic: keys ranked by similarity, best first.
        k: the RRF constant (≥ 1).
        sort_key: the final tie-break text of each key (its record id); default ``str(key)``.

    Returns:
        Every key of either list once, ordered by RRF score descending, then best single rank, then sort key.
    """
    if k < 1:
        raise ValueError("rrf k must be at least 1")
    ranks: dict[K, list[int | None]] = {}
    for position, key in enumerate(lexical, 1):
        ranks.setdefault(key, [None, None])[0] = position
    for position, key in enumerate(semantic, 1):
        ranks.setdefault(key, [None, None])[1] = position
    fused = [
        Fused(key, lex, sem, sum(1.0 / (k + r) for r in (lex, sem) if r is not None))
        for key, (lex, sem) in ranks.items()
    ]
    tie = sort_key or {}
    fused.sort(key=lambda f: (-f.rrf, f.best_rank, tie.get(f.key, str(f.key))))
    return fused
