"""Reciprocal Rank Fusion of two ranked lists (pure; vault-memory's hybrid search, seed 004).

A candidate's fused score is ``Σ 1/(k + rank)`` over the lists that hold it, ``rank`` 1-based, ``k`` 60 unless
``[recall] rrf_k`` says otherwise. Candidates of equal score in one list share its rank (standard competition
ranking, "1 2 2 4"): a record and a memkeep entry of the same text tie in both lists and so in the fused order,
where the caller's own tie rule (trusted before suspect) decides, as in lexical mode. Each method fetches ``3 × limit`` candidates, after every filter, so a hit
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


def ranks(scored: Sequence[tuple[K, float]]) -> list[tuple[K, int]]:
    """The 1-based competition rank of each key of a best-first list of ``(key, score)``: a key whose score
    equals the one before it shares that one's rank."""
    out: list[tuple[K, int]] = []
    for position, (key, value) in enumerate(scored, 1):
        out.append((key, out[-1][1] if out and value == scored[position - 2][1] else position))
    return out


def rrf(
    lexical: Sequence[tuple[K, float]],
    semantic: Sequence[tuple[K, float]],
    *,
    k: int = DEFAULT_K,
    sort_key: Mapping[K, str] | None = None,
) -> list[Fused[K]]:
    """Fuse two best-first lists of distinct keys by Reciprocal Rank Fusion, best first.

    Args:
        lexical: ``(key, score)`` ranked by bm25, best first (the score only decides ties).
        semantic: ``(key, similarity)`` ranked by similarity, best first.
        k: the RRF constant (≥ 1).
        sort_key: the final tie-break text of each key (its record id); default ``str(key)``.

    Returns:
        Every key of either list once, ordered by RRF score descending, then best single rank, then sort key.

    Raises:
        ValueError: ``k`` below 1.
    """
    if k < 1:
        raise ValueError("rrf k must be at least 1")
    found: dict[K, list[int | None]] = {}
    for key, rank in ranks(lexical):
        found.setdefault(key, [None, None])[0] = rank
    for key, rank in ranks(semantic):
        found.setdefault(key, [None, None])[1] = rank
    fused = [
        Fused(key, lex, sem, sum(1.0 / (k + r) for r in (lex, sem) if r is not None))
        for key, (lex, sem) in found.items()
    ]
    tie = sort_key or {}
    fused.sort(key=lambda f: (-f.rrf, f.best_rank, tie.get(f.key, str(f.key))))
    return fused
