"""The upstream project's own memory (shared/conformance/memzoi/dogfood-records): every record loads, is
searchable after rebuild, re-serializes byte-identically when nothing changed, and a lifecycle change rewrites
only its own line. Read in place; skipped where ../shared is absent (a user's clone)."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from git_memzoi.core import frontmatter
from git_memzoi.core.clock import FixedClock
from git_memzoi.memzoi.layout import Layout, init
from git_memzoi.memzoi.proposals import lifecycle
from git_memzoi.memzoi.recall.index import db as index_db
from git_memzoi.memzoi.records import okf
from git_memzoi.memzoi.records import store as record_store
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import Repo

CLOCK = FixedClock(dt.date(2026, 7, 20))


@pytest.fixture
def layout(repo: Repo, dogfood_records: Path) -> Layout:
    lay = Layout(repo.root)
    init(lay)
    for file in sorted(dogfood_records.glob("*.md")):
        shutil.copyfile(file, lay.records / file.name)
    return lay


def test_every_record_loads(layout: Layout) -> None:
    scan = record_store.scan(layout)
    assert (len(scan.records), scan.problems) == (35, ())
    assert sum(r.status == "superseded" for r in scan.records) == 1
    assert [r.supersedes for r in scan.records if r.supersedes] == [
        "rebuild-runtime-index-after-applying-proposal-files"
    ]


def test_every_record_is_searchable_after_rebuild(layout: Layout) -> None:
    result = index_db.rebuild(layout)
    assert (result.records["repo"], result.unreadable) == (35, ())
    for record in record_store.scan(layout).records:
        word = max(okf.concept_slug(record.title).split("-"), key=len)
        rows = index_db.search_rows(
            layout, index_db.fts_query(word), destinations=("repo",), limit=100, now=CLOCK.now()
        )
        found = record.id in {row["id"] for row in rows}
        assert found == (record.status == "active"), (record.id, word)  # superseded records are never recalled


def test_unchanged_records_reserialize_byte_identically(layout: Layout) -> None:
    for file in sorted(layout.records.glob("*.md")):
        data = file.read_bytes()
        fields = frontmatter.parse(data).fields
        assert frontmatter.update(data, {}) == data
        assert frontmatter.update(data, {"status": fields["status"]}) == data


def test_tombstoning_a_record_rewrites_only_its_status_line(layout: Layout, repo: Repo) -> None:
    target = "prefer-source-files-below-1000-lines"
    path: Path = layout.records / f"{target}.md"
    before = path.read_bytes().splitlines()
    ctx = Workspace(layout, CLOCK, "test")
    lifecycle.tombstone(ctx, target, reason="obsolete", actor="test")
    after = path.read_bytes().splitlines()
    changed = [(b, a) for b, a in zip(before, after, strict=False) if b != a]
    assert len(before) == len(after)
    assert changed == [(b"status: active", b"status: tombstoned")]
