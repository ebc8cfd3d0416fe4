"""The search fast path (best bm25 matches first, then filters and sort) answers exactly as the full query.

``index_db.search_rows`` filters and sorts only the best matches by bm25 and keeps that answer only when it
cannot differ from the full query's. On one generated store, with a small vocabulary (so many matches, equal
bm25 ranks and equal ``updated_at``), every drawn query, filter, path and limit must give the same rows (ids,
order, ranks, every column) as the full query, also with a cut as small as the limit itself.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import random
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memzoi.core.clock import FixedClock
from git_memzoi.memzoi import workspace
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.recall import search
from git_memzoi.memzoi.recall.index import db as index_db
from git_memzoi.memzoi.recall.pathmatch import path_matches_request
from git_memzoi.memzoi.records import okf
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import Repo

NOW = dt.datetime(2026, 7, 10, 12, tzinfo=dt.UTC)
WORDS = ("alpha", "beta", "gamma", "delta", "cache", "index", "token", "auth", "session", "schema")
PATHS = ("src/app.py", "src/auth/login.py", "src/auth/", "docs/guide.md", "src/**", "tests/test_app.py")
TYPES = ("fact", "decision", "warning")
STAMPS = ("2026-06-01T00:00:00Z", "2026-06-15T08:30:00Z", "2026-07-01T00:00:00Z")
EXPIRES = (None, None, None, "2026-07-05T00:00:00Z", "2026-12-31T00:00:00Z")  # some already expired at NOW


def write_store(repo: Repo, count: int, seed: int) -> None:
    """``count`` records: repo ones (some superseded or expired), and local and session copies of some."""
    rng = random.Random(seed)
    for n in range(count):
        words = lambda k: " ".join(rng.choice(WORDS) for _ in range(k))  # noqa: E731
        title = words(rng.randint(1, 3)).capitalize()
        body = words(rng.randint(0, 6)) if rng.random() < 0.8 else title.lower()
        expires = rng.choice(EXPIRES)
        kind = rng.choice(("repo", "repo", "project"))
        record = okf.Record(
            id=f"rec-{n:04d}",
            type=rng.choice(TYPES),
            lane="semantic",
            title=title,
            scope=kind,
            scope_id="p1" if kind == "project" else None,
            visibility="repo",
            content_class="general_repo_knowledge",
            status="superseded" if rng.random() < 0.1 else "active",
            confidence=1.0,
            timestamp=rng.choice(STAMPS),
            body=body or "none",
            retention={} if expires is None else {"explicit_expires_at": expires},
            origin={"origin_key": f"repository-record:rec-{n:04d}", "route": "repository_materialization"},
            applies_to=tuple(rng.sample(PATHS, rng.randint(0, 2))),
        )
        folder = rng.choice(
            (
                ".memzoi/records",
                ".memzoi/records",
                ".memzoi/records",
                ".git/memzoi/local/runtime/local",
                ".git/memzoi/local/runtime/session",
            )
        )
        repo.write(f"{folder}/rec-{n:04d}.md", okf.render(record))


@contextlib.contextmanager
def full_query() -> Iterator[None]:
    """Force the full query (no fast path)."""
    saved = index_db.MAX_FAST_LIMIT
    index_db.MAX_FAST_LIMIT = 0
    try:
        yield
    finally:
        index_db.MAX_FAST_LIMIT = saved


@contextlib.contextmanager
def cut(size: Callable[[int], int] | None) -> Iterator[None]:
    """The fast path with another number of best matches (``None``: the default)."""
    saved = index_db._top_size
    if size is not None:
        index_db._top_size = size
    try:
        yield
    finally:
        index_db._top_size = saved


def counting_verdicts() -> tuple[dict[bool, int], Any]:
    seen = {True: 0, False: 0}
    real = index_db._top_is_exact

    def verdict(rows: list[dict[str, Any]], limit: int, top: int) -> bool:
        exact = real(rows, limit, top)
        seen[exact] += 1
        return exact

    return seen, verdict


queries = st.lists(st.sampled_from((*WORDS, "missing")), min_size=1, max_size=3).map(" ".join)
filters = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(TYPES),
        "scope_kind": st.sampled_from(("repo", "project")),
        "scope_id": st.just("p1"),
        "lane": st.just("semantic"),
    },
)
paths = st.one_of(st.none(), st.sampled_from(("src/app.py", "src/auth/login.py", "docs/guide.md", "README.md")))
cuts = st.one_of(st.none(), st.integers(0, 40).map(lambda extra: lambda limit: limit + extra))


def test_fast_path_equals_the_full_query(repo: Repo, monkeypatch: Any) -> None:
    workspace.init(repo.root)
    write_store(repo, 360, seed=7)
    ctx = Workspace(Layout(repo.root), FixedClock(NOW.date(), NOW), "tester")
    assert index_db.refresh(ctx.layout).problems == ()
    seen, verdict = counting_verdicts()
    monkeypatch.setattr(index_db, "_top_is_exact", verdict)

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        query=queries,
        operator=st.sampled_from(("OR", "AND")),
        chosen=filters,
        path=paths,
        destination=st.sampled_from(("repo", "repo", "local", "session")),
        limit=st.integers(1, 50),
        size=cuts,
    )
    def check(
        query: str,
        operator: str,
        chosen: dict[str, str],
        path: str | None,
        destination: str,
        limit: int,
        size: Callable[[int], int] | None,
    ) -> None:
        fts = search.fts_expression(search.terms(query), operator) or ""
        kwargs: dict[str, Any] = {"now": NOW, "destinations": (destination,), "filters": chosen, "limit": limit}
        if path is not None:
            kwargs.update(path=path, path_match=path_matches_request)
        with cut(size):
            fast = index_db.search_rows(ctx.layout, fts, **kwargs)
        with full_query():
            full = index_db.search_rows(ctx.layout, fts, **kwargs)
        assert fast == full
        with cut(size):
            fast_tiers = search.search_rows(ctx, query, destination=destination, filters=chosen, path=path, limit=limit)
        with full_query():
            full_tiers = search.search_rows(ctx, query, destination=destination, filters=chosen, path=path, limit=limit)
        assert fast_tiers == full_tiers

    check()
    assert seen[True] > 50 and seen[False] > 20, seen  # both the fast answer and the fallback were exercised


def test_ties_at_the_cut_fall_back(repo: Repo) -> None:
    """Forty records with one identical text tie in bm25; whichever the cut keeps, the answer is the full one."""
    workspace.init(repo.root)
    for n in range(40):
        record = okf.Record(
            id=f"tie-{n:02d}",
            type="fact",
            lane="semantic",
            title="Token cache",
            scope="repo",
            visibility="repo",
            content_class="general_repo_knowledge",
            status="active",
            confidence=1.0,
            timestamp=STAMPS[n % len(STAMPS)],
            body="token cache",
            retention={},
            origin={"origin_key": f"repository-record:tie-{n:02d}", "route": "repository_materialization"},
        )
        repo.write(f".memzoi/records/tie-{n:02d}.md", okf.render(record))
    ctx = Workspace(Layout(repo.root), FixedClock(NOW.date(), NOW), "tester")
    for limit in range(1, 41):
        for extra in (0, 1, 5, 30):
            with cut(lambda lim, extra=extra: lim + extra):
                fast = index_db.search_rows(ctx.layout, '"token"', now=NOW, limit=limit)
            with full_query():
                full = index_db.search_rows(ctx.layout, '"token"', now=NOW, limit=limit)
            assert [r["id"] for r in fast] == [r["id"] for r in full]
            assert fast == full
    expected = sorted(
        range(40), key=lambda n: (-["2026-06-01", "2026-06-15", "2026-07-01"].index(STAMPS[n % 3][:10]), n)
    )
    assert [r["id"] for r in index_db.search_rows(ctx.layout, '"token"', now=NOW, limit=40)] == [
        f"tie-{n:02d}" for n in expected
    ]
