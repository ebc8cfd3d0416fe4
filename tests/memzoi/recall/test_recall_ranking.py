"""Ranking (issue 17, "recall quality falls with size"; issue 20, stop words): weighted FTS5 columns for the title,
body, tags, type and paths of records and memkeep entries, and stop words that never match on their own.
Real repositories, the core search and the CLI in-process."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from git_memzoi.memzoi.recall import search
from git_memzoi.memzoi.recall.index import db as index_db
from git_memzoi.memzoi.recall.index import query, schema
from git_memzoi.memzoi.recall.stopwords import STOP_WORDS, without_stop_words
from tests.memzoi.recall.test_memzoi_recall import ctx_of, ids
from tests.support import repos
from tests.support.repos import Repo, entry_text, ok_json, run


def note(repo: Repo, concept_id: str, title: str, body: str, **extra: Any) -> None:
    """A canonical record file with ``tags``, ``applies_to`` and ``type`` as given (type ``fact`` by default)."""
    repos.write_record(
        repo,
        concept_id,
        title,
        body,
        memory_type=extra.get("memory_type", "fact"),
        source="test",
        applies_to=extra.get("applies_to", ()),
        tags=extra.get("tags", ()),
    )


def test_an_exact_title_ranks_its_record_first_among_many_sharing_its_words(repo: Repo) -> None:
    ctx = ctx_of(repo)
    words = ["signer", "salt", "default", "rotation", "tenant", "cache", "worker", "budget"]
    for n in range(60):  # every one holds the title's words in its body, several times over, most of them shorter
        body = " ".join(words[(n + k) % len(words)] for k in range(3 + n % 5)) + " signer salt default"
        note(repo, f"noise-{n:02d}", f"Worker budget note {n}", body)
    note(repo, "target", "Signer salt default", "Chosen per repository; see the release notes for the reason.")
    found = search.search(ctx, "Signer salt default", log=False).results
    assert ids(found)[0] == "target"
    assert search.search(ctx, "signer salt default", log=False, limit=1).results[0]["record"]["id"] == "target"


def test_tags_type_and_paths_match_and_rank(repo: Repo) -> None:
    ctx = ctx_of(repo)
    note(repo, "tagged", "Webhook deliveries", "Deliveries back off exponentially.", tags=("kestrel",))
    note(repo, "bound", "Upload chunks", "Chunks are five megabytes.", applies_to=("src/uploader/chunker.py",))
    note(repo, "risky", "Nonce reuse", "Reusing a nonce leaks the key.", memory_type="risk")
    note(repo, "plain", "Chunker notes", "The chunker in the uploader keeps no state.")
    assert ids(search.search(ctx, "kestrel", log=False).results) == ["tagged"]
    assert ids(search.search(ctx, "chunker.py", log=False).results) == ["bound"]
    # every word in the title or body first; a record matching in its paths alone after it
    assert ids(search.search(ctx, "uploader chunker", log=False).results) == ["plain", "bound"]
    # of two records with the same text, a tag or path hit ranks the one holding it first
    note(repo, "twin-a", "Thumbnail sizes", "Thumbnails are resized to 256 pixels.")
    note(repo, "twin-b", "Thumbnail sizes", "Thumbnails are resized to 256 pixels.", applies_to=("src/thumbnail.py",))
    note(repo, "twin-c", "Thumbnail sizes", "Thumbnails are resized to 256 pixels.", tags=("thumbnail",))
    assert ids(search.search(ctx, "thumbnail sizes", log=False).results) == ["twin-c", "twin-b", "twin-a"]
    assert ids(search.search(ctx, "risk", log=False).results) == ["risky"]
    assert ids(search.search(ctx, "nonce", memory_type="risk", log=False).results) == ["risky"]


def test_an_entrys_scope_globs_are_its_paths(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    anchor = repo.commit("code", **{"src/billing/ledger.py": "x\n"})
    claim = "Ledger rows are append-only."
    repo.write(
        "agent-memory/entries/ledger.md",
        entry_text("ledger", anchor=anchor, scope=["src/billing/**"], claim=claim, verified_at="2026-07-01"),
    )
    found = ok_json(repo, "search", "billing")["results"]
    assert [(r["store"], r["record"]["id"]) for r in found] == [("entry", "ledger")]


def test_the_index_holds_the_weighted_columns_in_two_tables(repo: Repo) -> None:
    ctx = ctx_of(repo)
    note(repo, "r", "Title words", "Body words.", tags=("alpha", "beta"), applies_to=("src/a.py", "docs/**"))
    index_db.refresh(ctx.layout)
    with sqlite3.connect(index_db.index_path(ctx.layout)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (schema.SCHEMA_VERSION,)
        assert conn.execute("SELECT title, body FROM records_fts").fetchall() == [("Title words", "Body words.")]
        assert conn.execute("SELECT tags, type, paths FROM records_meta").fetchall() == [
            ("alpha beta", "fact", "src/a.py docs/**")
        ]
    assert query.hits_sql().count("bm25(") == 2
    assert set(schema.WEIGHTS) == {*schema.FTS_COLUMNS, *schema.META_COLUMNS}


def test_a_rank_is_the_sum_of_both_tables_bm25_and_meta_alone_matches_only_the_any_term_tier(repo: Repo) -> None:
    ctx = ctx_of(repo)
    note(repo, "both", "Kestrel uploads", "Uploads retry.", tags=("kestrel",))
    note(repo, "text", "Kestrel notes", "Nothing else.")
    note(repo, "meta", "Unrelated title", "Unrelated body.", tags=("kestrel",))
    note(repo, "none", "Other", "Other.")
    index_db.refresh(ctx.layout)
    fts, meta = '"kestrel"', '"kestrel"'
    w = schema.WEIGHTS
    with sqlite3.connect(index_db.index_path(ctx.layout)) as conn:
        by_path = dict(conn.execute("SELECT rowid, id FROM records"))
        main = dict(
            conn.execute(
                f"SELECT rowid, bm25(records_fts, {w['title']}, {w['body']}) FROM records_fts WHERE records_fts MATCH ?",
                (fts,),
            )
        )
        extra = dict(
            conn.execute(
                f"SELECT rowid, bm25(records_meta, {w['tags']}, {w['type']}, {w['paths']}) FROM records_meta"
                " WHERE records_meta MATCH ?",
                (meta,),
            )
        )
        expected = {by_path[r]: main.get(r, 0.0) + extra.get(r, 0.0) for r in {*main, *extra}}
        any_term = {by_path[r]: rank for r, rank in conn.execute(query.hits_sql(), (fts, meta))}
        every_term = {by_path[r]: rank for r, rank in conn.execute(query.hits_sql(meta_candidates=False), (fts, meta))}
    assert any_term.keys() == {"both", "text", "meta"}
    assert all(any_term[k] == pytest.approx(v, rel=1e-12) for k, v in expected.items())
    assert every_term.keys() == {"both", "text"}
    assert all(every_term[k] == pytest.approx(expected[k], rel=1e-12) for k in every_term)
    assert any_term["both"] < any_term["text"] and any_term["both"] < any_term["meta"]


def test_an_index_of_the_previous_schema_is_rebuilt(repo: Repo) -> None:
    ctx = ctx_of(repo)
    note(repo, "r", "Basalt", "Basalt body.", tags=("granite",))
    index_db.refresh(ctx.layout)
    with sqlite3.connect(index_db.index_path(ctx.layout)) as conn:
        conn.execute("DROP TABLE records_meta")
        conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION - 1}")
    assert index_db.refresh(ctx.layout).rebuilt
    assert ids(search.search(ctx, "granite", log=False).results) == ["r"]


# ------------------------------------------------------------------------------------------------ stop words


def test_stop_word_list_is_lucenes() -> None:
    assert len(STOP_WORDS) == 33 and {"the", "a", "of", "not", "with"} <= STOP_WORDS
    assert "default" not in STOP_WORDS and "all" not in STOP_WORDS
    assert without_stop_words(["change", "the", "The", "salt", "don t"]) == ["change", "salt", "don t"]
    assert without_stop_words(["to", "be", "or", "not"]) == ["to", "be", "or", "not"]
    assert index_db.fts_query("the signer") == '"signer"'
    assert index_db.fts_query("the") == '"the"'


def test_a_query_of_stop_words_only_still_searches_for_them(repo: Repo) -> None:
    ctx = ctx_of(repo)
    note(repo, "hamlet", "To be or not to be", "That is the question.")
    note(repo, "other", "Signer salt", "Rotated yearly.")
    assert ids(search.search(ctx, "to be or not to be", log=False).results) == ["hamlet"]
    assert ids(search.search(ctx, "the", log=False).results) == ["hamlet"]


def test_a_stop_word_alone_never_pulls_an_unrelated_record_into_context(repo: Repo) -> None:
    """Issue 20: ``context --task "change the signer salt default"`` matched a record through "the" alone."""
    assert run(repo, "init").exit_code == 0
    note(repo, "signer-salt", "Signer salt default", "The signer salt defaults to a per-repository value.")
    note(repo, "unrelated", "Deploys go out on Tuesdays", "The release train leaves at noon.")
    pack = ok_json(repo, "context", "--task", "change the signer salt default")
    assert [item["record_id"] for item in pack["included"]] == ["signer-salt"]
    assert pack["omitted"] == []
    assert ids(ok_json(repo, "search", "the signer")["results"]) == ["signer-salt"]


@pytest.mark.parametrize("text", ["the of and", "The THE", "a"])
def test_stop_word_only_text_is_kept(text: str) -> None:
    assert without_stop_words(search.terms(text)) == search.terms(text)
