"""The staleness fixpoint is order-independent and terminates on any explains graph (cycles included)."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from git_memzoi.core.clock import FixedClock
from git_memzoi.core.gitview_fake import linear_history
from git_memzoi.memkeep.entries import Entry
from git_memzoi.memkeep.staleness import compute

VIEW = linear_history({"src/a.py": "1", "docs/b.md": "1"}, {"src/a.py": "2", "docs/b.md": "1"})
CLOCK = FixedClock(dt.date(2026, 11, 30))

graphs = st.integers(min_value=1, max_value=12).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(st.sampled_from(["src/**", "docs/**", "other/**"]), min_size=n, max_size=n),
        st.lists(st.sampled_from(["verified", "stale", "tombstone"]), min_size=n, max_size=n),
        st.lists(st.lists(st.integers(0, n - 1), max_size=4), min_size=n, max_size=n),
    )
)


def build(n: int, scopes: list[str], statuses: list[str], edges: list[list[int]]) -> list[Entry]:
    return [
        Entry(
            f"e/{i}.md",
            {
                "id": f"n{i}",
                "status": statuses[i],
                "anchor": "c1",
                "scope": [scopes[i]],
                "explains": [f"n{j}" for j in edges[i]],
            },
            "claim",
            1,
            f"n{i}",
        )
        for i in range(n)
    ]


def reference_suspects(entries: list[Entry]) -> set[str]:
    """The least fixpoint computed naively: iterate the formula to saturation."""
    by_id = {e.id: e for e in entries}
    live = {e.id for e in entries if e.status not in ("stale", "tombstone")}
    stale = {e.id for e in entries if e.status == "stale"}
    suspect = {i for i in live if by_id[i].scope == ("src/**",)}
    while True:
        grown = suspect | {i for i in live if any(d in suspect or d in stale for d in by_id[i].explains)}
        if grown == suspect:
            return suspect
        suspect = grown


@given(graphs, st.randoms(use_true_random=False))
def test_fixpoint_is_order_independent_and_matches_the_formula(graph, rnd) -> None:
    entries = build(*graph)
    shuffled = list(entries)
    rnd.shuffle(shuffled)
    first, second = compute(entries, VIEW, CLOCK), compute(shuffled, VIEW, CLOCK)
    assert first.verdicts == second.verdicts
    assert set(first.suspect_ids) == reference_suspects(entries)
