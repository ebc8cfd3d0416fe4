"""Private runtime memory, session-end promotion and the derived SQLite index, on real repositories.

Runtime records are files in the git directory (``Layout.private``); the index (``Layout.index``)
is a cache that is rebuilt from the files, refreshed incrementally, and never the only copy of anything.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_memzoi.core import frontmatter, yamlio
from git_memzoi.core.clock import FixedClock
from git_memzoi.errors import InputError
from git_memzoi.memzoi import workspace
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.recall.index import build as index_build
from git_memzoi.memzoi.recall.index import db as index_db
from git_memzoi.memzoi.recall.index import rows as index_rows
from git_memzoi.memzoi.records import events, okf, okf_subset
from git_memzoi.memzoi.runtime import checkpoint as checkpoints
from git_memzoi.memzoi.runtime import local as runtime
from git_memzoi.memzoi.runtime import session_end as ending
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import SEED_YAML, Repo

NOW = dt.datetime(2026, 7, 10, 12, tzinfo=dt.UTC)


def context(repo: Repo, now: dt.datetime = NOW) -> Workspace:
    if not (repo.root / ".memzoi").exists():
        workspace.init(repo.root)
    return Workspace(Layout(repo.root), FixedClock(now.date(), now), "tester")


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (except git's own, but with the private memory there) with its bytes: a
    before/after picture of a command."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and (".git" not in p.relative_to(root).parts or p.is_relative_to(root / ".git/memzoi/local"))
        and p.name != "lifecycle.lock"
    }


def canonical(repo: Repo, concept_id: str, *, title: str, body: str, **extra: Any) -> Path:
    """Write a valid canonical record through the record writer."""
    record = okf.Record(
        id=concept_id,
        type=extra.get("type", "fact"),
        lane="semantic",
        title=title,
        scope=extra.get("scope", "repo"),
        visibility="repo",
        content_class="general_repo_knowledge",
        status=extra.get("status", "active"),
        confidence=1.0,
        timestamp=extra.get("timestamp", "2026-07-01T00:00:00Z"),
        body=body,
        retention={},
        origin={"origin_key": f"repository-record:{concept_id}", "route": "repository_materialization"},
        applies_to=tuple(extra.get("applies_to", ())),
    )
    return repo.write(f".memzoi/records/{concept_id}.md", okf.render(record))


# --------------------------------------------------------------------------------------------- local and checkpoints


def test_local_record_is_a_private_file_that_git_ignores(repo: Repo) -> None:
    ctx = context(repo)
    written = runtime.add_local(ctx, memory_type="preference", title="Terse answers", body="Prefer short replies.")

    assert written.path == ".git/memzoi/local/runtime/local/local-terse-answers.md"
    assert written.record == {
        "id": "local-terse-answers",
        "memory_type": "preference",
        "lane": "semantic",
        "destination": "local",
        "scope_kind": "repo",
        "scope_id": None,
        "visibility": "private",
        "title": "Terse answers",
        "body": "Prefer short replies.",
        "status": "active",
        "confidence": 1.0,
        "source_kind": "memzoi-local",
        "source_ref": None,
        "proposal_id": None,
        "content_hash": "c37acd28272b39d934c5335c9ec33e630065b39aaf12f2395acca1f0ea5046f1",
        "created_at": "2026-07-10T12:00:00Z",
        "updated_at": "2026-07-10T12:00:00Z",
        "supersedes_id": None,
        "retention": {},
        "origin": {"origin_key": "local-memory:local-terse-answers", "route": "local_memory"},
        "lineage": None,
    }
    assert (repo.root / written.path).read_text("utf-8").startswith("---\nid: local-terse-answers\nkind: memory\n")
    assert list((repo.root / ".memzoi" / "records").iterdir()) == []
    status = repo.git("status", "--porcelain", "--untracked-files=all").splitlines()
    assert status == ["?? .memzoi/.gitignore", "?? .memzoi/index.md", "?? .memzoi/initialized"]
    repo.git("add", "-f", written.path)  # in the git directory: git never stages a file of its own folder
    assert repo.git("ls-files", "--cached") == ""


def test_same_title_gets_the_next_free_id(repo: Repo) -> None:
    ctx = context(repo)
    first = runtime.add_local(ctx, memory_type="fact", title="Uses pnpm", body="The repo uses pnpm.")
    second = runtime.add_local(ctx, memory_type="fact", title="Uses pnpm", body="Still pnpm.")
    assert (first.record["id"], second.record["id"]) == ("local-uses-pnpm", "local-uses-pnpm-2")
    # one instant (the fixed clock): newest first is the later write
    assert [r["id"] for r in runtime.list_records(ctx, "local")] == ["local-uses-pnpm-2", "local-uses-pnpm"]


def test_local_add_rejects_bad_input_and_writes_nothing(repo: Repo) -> None:
    ctx = context(repo)
    before = tree(repo.root)
    for kwargs, code in (
        ({"memory_type": "opinion", "title": "t", "body": "b"}, "invalid_type"),
        ({"memory_type": "fact", "title": "two\nlines", "body": "b"}, "invalid_title"),
        ({"memory_type": "fact", "title": "t", "body": "  "}, "empty_body"),
    ):
        with pytest.raises(InputError) as err:
            runtime.add_local(ctx, **kwargs)
        assert err.value.code == code
    assert tree(repo.root) == before


def test_checkpoint_stores_only_the_explicit_note(repo: Repo, tmp_path: Path) -> None:
    ctx = context(repo)
    note = checkpoints.add_checkpoint(ctx, task="Implement auth middleware", note="Routes wired; tests next.")
    notes = tmp_path / "notes.md"
    notes.write_text("  From a file.\n\nSecond paragraph.\n", "utf-8")
    from_file = checkpoints.add_checkpoint(ctx, task="Implement auth middleware", from_file=notes)

    record = note.record
    assert (record["id"], record["destination"], record["lane"], record["memory_type"]) == (
        "session-implement-auth-middleware",
        "session",
        "session",
        "episode",
    )
    assert (record["visibility"], record["source_kind"], record["body"]) == (
        "private",
        "memzoi-checkpoint",
        "Routes wired; tests next.",
    )
    assert record["retention"] == {"started_at": "2026-07-10T12:00:00Z"}
    assert record["origin"]["route"] == "checkpoint_create"
    assert from_file.record["id"] == "session-implement-auth-middleware-2"
    assert from_file.record["body"] == "From a file.\n\nSecond paragraph."
    with pytest.raises(InputError, match="exactly one"):
        checkpoints.add_checkpoint(ctx, task="t", note="n", from_file=notes)


def test_checkpoints_leave_the_list_after_their_session_lease(repo: Repo) -> None:
    checkpoints.add_checkpoint(context(repo), task="Short task", note="Done soon.")
    assert [r["id"] for r in runtime.list_records(context(repo, NOW + dt.timedelta(hours=23)), "session")] == [
        "session-short-task"
    ]
    assert runtime.list_records(context(repo, NOW + dt.timedelta(hours=24)), "session") == []
    assert (repo.root / ".git/memzoi/local/runtime/session/session-short-task.md").is_file()  # never rewritten


def test_local_search_finds_local_records_only(repo: Repo) -> None:
    ctx = context(repo)
    canonical(repo, "repo-uses-pnpm", title="Repo uses pnpm", body="The package manager is pnpm.")
    runtime.add_local(ctx, memory_type="preference", title="Pnpm flags", body="Run pnpm with --frozen-lockfile.")
    checkpoints.add_checkpoint(ctx, task="Pnpm upgrade", note="pnpm upgraded halfway.")

    result = runtime.search_local(ctx, "pnpm", limit=0)
    assert [r["record"]["id"] for r in result["results"]] == ["local-pnpm-flags"]
    hit = result["results"][0]
    assert (hit["snippet"], hit["rationale"], hit["ranking"], hit["paths"]) == (
        "Pnpm flags",
        "fts5 title/body match",
        None,
        [],
    )
    assert hit["citations"] == [
        {
            "record_id": "local-pnpm-flags",
            "memory_type": "preference",
            "scope_kind": "repo",
            "provenance": "runtime",
            "destination": "local",
            "visibility": "private",
            "source_kind": "memzoi-local",
            "source_ref": None,
            "path": None,
        }
    ]
    assert hit["score"] > 0
    assert result["limit"] == 10
    assert runtime.search_local(ctx, " -- ", limit=5)["results"] == []
    last = list(events.export(ctx.layout))[-1]
    assert json.loads(last)["payload"] == {"destination": "local", "result_ids": []}


# --------------------------------------------------------------------------------------------- session-end


def test_session_end_seed_example_becomes_one_pending_proposal(repo: Repo, tmp_path: Path) -> None:
    ctx = context(repo)
    notes = tmp_path / "notes.yml"
    notes.write_text(SEED_YAML, "utf-8")

    result = ending.session_end(ctx, from_file=notes)

    path = ".memzoi/proposals/pending/protected-routes-validate-sessions-server-side.md"
    assert result.to_json() == {
        "ok": True,
        "status": "promoted",
        "task": "Implement auth middleware",
        "results": [
            {
                "index": 0,
                "destination": "repo",
                "title": "Protected routes validate sessions server-side",
                "action": "create_proposal",
                "proposal_id": "protected-routes-validate-sessions-server-side",
                "path": path,
            }
        ],
        "writes": [
            {
                "kind": "proposal_file",
                "index": 0,
                "proposal_id": "protected-routes-validate-sessions-server-side",
                "path": path,
            }
        ],
    }
    packet = frontmatter.parse((repo.root / path).read_bytes())
    assert packet.fields["status"] == "proposed"
    assert packet.fields["sensitivity"] == "repo-safe"
    assert packet.fields["content_class"] == "general_repo_knowledge"
    assert packet.fields["scope"] == {"kind": "repo", "paths": ["src/auth/**"]}
    assert packet.fields["tags"] == ["auth", "security"]
    assert packet.fields["proposal"] == {
        "action": "create",
        "proposed_by": "tester",
        "proposed_at": "2026-07-10T12:00:00Z",
        "reason": "Learned while implementing middleware.",
    }
    assert packet.fields["origin"]["route"] == "session_end"
    assert list((repo.root / ".memzoi" / "records").iterdir()) == []
    assert not ctx.layout.runtime("local").exists() and not ctx.layout.runtime("session").exists()
    kinds = [json.loads(line)["event_type"] for line in events.export(ctx.layout)]
    assert kinds == ["proposal_file_written", "memory.session_end_completed"]


def test_session_end_routes_every_destination(repo: Repo, tmp_path: Path) -> None:
    ctx = context(repo)
    notes = tmp_path / "notes.yml"
    notes.write_text(
        SEED_YAML
        + """\
  - destination: local
    type: preference
    title: Run auth tests with -x
    body: Stop at the first failing auth test.
    sensitivity: local-only
  - destination: session
    title: Middleware wiring done
    body: Routes are wired; integration tests next.
  - destination: discard
    title: Stale note
  - destination: needs_review
    title: Maybe shared
    body: Unsure whether this is shareable.
""",
        "utf-8",
    )

    result = ending.session_end(ctx, from_file=notes)

    assert [(r["index"], r["action"]) for r in result.results] == [
        (0, "create_proposal"),
        (1, "create_runtime"),
        (2, "create_runtime"),
        (3, "no_write"),
        (4, "no_write"),
    ]
    assert [w for w in result.writes if w["kind"] == "runtime_record"] == [
        {"kind": "runtime_record", "index": 1, "record_id": "local-run-auth-tests-with-x", "destination": "local"},
        {"kind": "runtime_record", "index": 2, "record_id": "session-middleware-wiring-done", "destination": "session"},
    ]
    (local,) = runtime.list_records(ctx, "local")
    (session,) = runtime.list_records(ctx, "session")
    assert (local["memory_type"], local["lane"], local["origin"]["route"]) == ("preference", "semantic", "session_end")
    assert (session["memory_type"], session["lane"], session["retention"]) == (
        "episode",
        "session",
        {"started_at": "2026-07-10T12:00:00Z"},
    )
    assert ctx.layout.journals.is_dir() and not any(ctx.layout.journals.iterdir())  # the operation ended


def test_one_unsafe_repo_candidate_blocks_the_whole_batch(repo: Repo, tmp_path: Path) -> None:
    ctx = context(repo)
    notes = tmp_path / "notes.yml"
    notes.write_text(
        SEED_YAML
        + """\
  - destination: local
    type: fact
    title: Local finding
    body: Fine to keep locally.
  - destination: repo
    type: fact
    title: Ultraviolet canary endpoint
    body: The ultraviolet canary lives at an internal host.
""",
        "utf-8",
    )
    before = tree(repo.root)

    result = ending.session_end(ctx, from_file=notes)

    assert tree(repo.root) == before  # no proposal, no runtime record, no event
    out = result.to_json()
    assert out["ok"] is False and out["status"] == "blocked" and out["writes"] == []
    assert out["results"][2] == {
        "index": 2,
        "destination": "repo",
        "action": "blocked",
        "code": "repo_sensitivity_required",
        "classification": "unknown",
        "title": "[redacted]",
    }
    assert [r["action"] for r in out["results"][:2]] == ["not_written", "not_written"]
    assert "ultraviolet" not in json.dumps(out).lower()
    assert "task" not in out


@pytest.mark.parametrize(
    ("text", "code", "message"),
    [
        ("Learned that the auth tests are flaky.\n", "unstructured_input", "free-text notes are rejected"),
        ("- just\n- a list\n", "unstructured_input", "free-text notes are rejected"),
        ("task: t\n", "invalid_session_end", "candidates: required"),
        ("task: t\ncandidates: []\nextra: 1\n", "invalid_session_end", "extra: unknown key"),
        (
            "task: t\ncandidates:\n  - destination: repo\n    type: fact\n    title: x\n    body: y\n    secret: z\n",
            "invalid_session_end",
            "candidates[0].secret: unknown key",
        ),
        ("task: t\ncandidates:\n  - destination: team\n", "invalid_session_end", "candidates[0].destination"),
        (
            "task: t\ncandidates:\n  - destination: local\n    title: x\n    body: y\n",
            "invalid_session_end",
            "candidates[0].type",
        ),
        (
            "task: t\ncandidates:\n  - destination: session\n    lane: semantic\n    title: x\n    body: y\n",
            "invalid_session_end",
            "candidates[0].lane",
        ),
        (
            (
                "task: t\ncandidates:\n  - destination: repo\n    type: fact\n    title: x\n    body: y\n"
                "    scope: {paths: [../out]}\n"
            ),
            "invalid_session_end",
            "scope.paths",
        ),
    ],
)
def test_invalid_batches_are_rejected_before_any_write(
    repo: Repo, tmp_path: Path, text: str, code: str, message: str
) -> None:
    ctx = context(repo)
    notes = tmp_path / "notes.yml"
    notes.write_text(text + "", "utf-8")
    before = tree(repo.root)
    with pytest.raises(InputError) as err:
        ending.session_end(ctx, from_file=notes)
    assert err.value.code == code
    assert message in err.value.message
    assert tree(repo.root) == before


def test_an_invalid_later_candidate_stops_earlier_valid_ones(repo: Repo, tmp_path: Path) -> None:
    ctx = context(repo)
    notes = tmp_path / "notes.yml"
    notes.write_text(SEED_YAML + "  - destination: local\n    type: fact\n    title: x\n    body: 7\n", "utf-8")
    before = tree(repo.root)
    with pytest.raises(InputError, match=r"candidates\[1\]\.body"):
        ending.session_end(ctx, from_file=notes)
    assert tree(repo.root) == before


def test_session_end_from_checkpoint(repo: Repo) -> None:
    ctx = context(repo)
    checkpoint = checkpoints.add_checkpoint(ctx, task="Auth", note=SEED_YAML.replace("repo-safe", "repo-safe"))
    free_text = checkpoints.add_checkpoint(ctx, task="Auth notes", note="Remember: middleware order matters.")

    result = ending.session_end(ctx, from_checkpoint=checkpoint.record["id"])
    assert [w["proposal_id"] for w in result.writes] == ["protected-routes-validate-sessions-server-side"]

    with pytest.raises(InputError) as err:
        ending.session_end(ctx, from_checkpoint=free_text.record["id"])
    assert err.value.code == "invalid_session_end"  # a mapping, but not a session-end batch
    with pytest.raises(InputError) as err:
        ending.session_end(ctx, from_checkpoint="session-nope")
    assert err.value.code == "unknown_checkpoint"
    with pytest.raises(InputError) as err:
        ending.session_end(ctx, from_checkpoint="../../records/x")
    assert err.value.code == "unknown_checkpoint"


def test_a_failure_after_the_proposal_removes_every_file_of_the_batch(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = context(repo)
    notes = tmp_path / "notes.yml"
    notes.write_text(SEED_YAML + "  - destination: local\n    type: fact\n    title: Local one\n    body: b\n", "utf-8")

    def boom(*_args: Any, **_kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(ending, "_session_end_events", boom)
    with pytest.raises(OSError, match="disk full"):
        ending.session_end(ctx, from_file=notes)
    assert list(ctx.layout.pending.iterdir()) == []
    assert list(index_db.runtime_dir(ctx.layout, "local").iterdir()) == []


# --------------------------------------------------------------------------------------------- the index


def age(*paths: Path) -> None:
    """Move mtimes 5 s into the past, so no file is "racily clean" (as new as the index write) by chance."""
    for path in paths:
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 5_000_000_000))


def counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    real = index_db.read_file

    def read(source: index_db.Source, rel: str, absolute: str) -> Any:
        reads.append(rel)
        return real(source, rel, absolute)

    monkeypatch.setattr(index_rows, "read_file", read)  # a refresh imports it from rows when a file changed
    monkeypatch.setattr(index_build, "read_file", read)  # a from-scratch fill reads through recall/index/build.py
    return reads


def test_refresh_rereads_only_changed_files(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = context(repo)
    for n in range(3):
        canonical(repo, f"fact-{n}", title=f"Fact {n}", body=f"Body number {n}.")
    runtime.add_local(ctx, memory_type="fact", title="Local fact", body="Private body.")
    age(*(repo.root / ".memzoi").rglob("*.md"))
    reads = counting_reads(monkeypatch)

    first = index_db.refresh(ctx.layout)
    assert (first.rebuilt, first.scanned) == (True, 4)
    assert sorted(reads) == [
        ".git/memzoi/local/runtime/local/local-local-fact.md",
        ".memzoi/records/fact-0.md",
        ".memzoi/records/fact-1.md",
        ".memzoi/records/fact-2.md",
    ]

    reads.clear()
    assert index_db.refresh(ctx.layout) == index_db.RefreshResult(4, (), (), (), False)
    assert reads == []

    age(canonical(repo, "fact-1", title="Fact 1", body="A longer, changed body number 1."))
    (repo.root / ".memzoi/records/fact-2.md").unlink()
    age(canonical(repo, "fact-3", title="Fact 3", body="Brand new."))
    again = index_db.refresh(ctx.layout)
    assert sorted(reads) == [".memzoi/records/fact-1.md", ".memzoi/records/fact-3.md"]
    assert again.removed == (".memzoi/records/fact-2.md",)
    fts = index_db.fts_query("changed")
    assert fts is not None
    assert [r["id"] for r in index_db.search_rows(ctx.layout, fts, now=NOW)] == ["fact-1"]

    reads.clear()
    (repo.root / ".memzoi/records/fact-0.md").rename(repo.root / ".memzoi/records/fact-9.md")  # same inode
    renamed = index_db.refresh(ctx.layout)
    assert reads == [".memzoi/records/fact-9.md"]
    assert renamed.problems[0].path == ".memzoi/records/fact-9.md"  # its id no longer matches the file name
    assert renamed.problems[0].code == "invalid_record"


def test_a_file_as_new_as_the_index_is_read_again(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = context(repo)
    future = canonical(repo, "racy", title="Racy", body="Written in the same tick as the index.")
    os.utime(future, ns=(0, 4_102_444_800_000_000_000))  # 2100-01-01: never older than an index write
    age(canonical(repo, "calm", title="Calm", body="Old enough."))
    index_db.refresh(ctx.layout)
    reads = counting_reads(monkeypatch)
    assert index_db.refresh(ctx.layout).read == (".memzoi/records/racy.md",)
    assert index_db.refresh(ctx.layout).read == (".memzoi/records/racy.md",)
    assert reads == [".memzoi/records/racy.md", ".memzoi/records/racy.md"]


def test_rebuild_after_deleting_the_index_loses_nothing(repo: Repo) -> None:
    ctx = context(repo)
    canonical(repo, "uses-pnpm", title="Repo uses pnpm", body="The package manager is pnpm.")
    runtime.add_local(ctx, memory_type="preference", title="Pnpm flags", body="Use --frozen-lockfile.")
    checkpoints.add_checkpoint(ctx, task="Upgrade pnpm", note="Halfway.")
    repo.write(".memzoi/proposals/pending/open-question.md", "not even a packet\n")
    index_db.refresh(ctx.layout)
    index_db.index_path(ctx.layout).unlink()

    result = runtime.rebuild(ctx)

    assert result.to_json() == {
        "ok": True,
        "index": ".git/memzoi/worktree/index.sqlite",
        "schema_version": 1,
        "records": {"repo": 1, "local": 1, "session": 1},
        "total": 3,
        "proposals": {
            "pending": 1,
            "discarded": 0,
            "note": "pending proposals are files under .memzoi/proposals/pending/; rebuild never discards them",
        },
        "runtime_preserved": True,
        "unreadable": [],
    }
    assert (repo.root / ".memzoi/proposals/pending/open-question.md").is_file()
    assert [r["id"] for r in runtime.list_records(ctx, "local")] == ["local-pnpm-flags"]
    assert sorted(p.name for p in ctx.layout.derived.iterdir() if p.name.startswith(".index")) == []
    assert json.loads(list(events.export(ctx.layout))[-1])["payload"] == {
        "records": {"repo": 1, "local": 1, "session": 1},
        "unreadable": 0,
        "pending_proposals": 1,
    }


@pytest.mark.parametrize("damage", ["garbage", "foreign_schema", "empty"])
def test_a_corrupt_or_foreign_index_is_rebuilt(repo: Repo, damage: str) -> None:
    ctx = context(repo)
    canonical(repo, "kept", title="Kept record", body="Survives any cache damage.")
    index_db.refresh(ctx.layout)
    path = index_db.index_path(ctx.layout)
    if damage == "garbage":
        path.write_bytes(b"this is not a database" * 100)
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA user_version = 99")
        conn.commit()
        conn.close()

    assert index_db.refresh(ctx.layout).rebuilt is True
    assert [r["id"] for r in index_db.list_rows(ctx.layout, "repo", now=NOW)] == ["kept"]


def test_a_broken_record_never_hides_the_others(repo: Repo) -> None:
    ctx = context(repo)
    canonical(repo, "good", title="Good record", body="Readable.")
    repo.write(".memzoi/records/bad.md", "---\nid: bad\nkind: memory\n---\n# Bad\n")
    repo.write(
        ".memzoi/records/unclassified.md",
        okf.render(
            okf.Record(
                id="unclassified",
                type="fact",
                lane="semantic",
                title="Unclassified",
                scope="repo",
                visibility="repo",
                content_class="unknown",
                status="active",
                confidence=1.0,
                timestamp="2026-07-01T00:00:00Z",
                body="b",
                origin={"origin_key": "k", "route": "owner_command"},
            )
        ),
    )
    repo.write(".memzoi/records/index.md", "# not a record\n")
    repo.write(".memzoi/records/.hidden.md", "ignored\n")

    result = index_db.rebuild(ctx.layout)

    assert result.records == {"repo": 1, "local": 0, "session": 0}
    assert [(p.path, p.code) for p in result.unreadable] == [
        (".memzoi/records/bad.md", "invalid_record"),
        (".memzoi/records/unclassified.md", "unclassified_record"),
    ]
    assert "required field is missing" in result.unreadable[0].reason
    assert [p.path for p in index_db.refresh(ctx.layout).problems] == [p.path for p in result.unreadable]


def test_search_rows_filters_before_the_limit_and_orders_by_rank(repo: Repo) -> None:
    ctx = context(repo)
    canonical(repo, "quartz-one", title="Quartz sentinel", body="Quartz quartz quartz sentinel.")
    canonical(repo, "quartz-two", title="Other", body="Mentions quartz once.", timestamp="2026-07-02T00:00:00Z")
    canonical(repo, "quartz-old", title="Old quartz", body="Superseded quartz.", status="superseded")
    canonical(repo, "quartz-path", title="Path quartz", body="quartz", type="warning", applies_to=["src/auth/**"])
    fts = index_db.fts_query("quartz")
    assert fts == '"quartz"'

    rows = index_db.search_rows(ctx.layout, fts, now=NOW, limit=10)
    # superseded never recalled; a title hit weighs 4 body hits, so of the two titles holding quartz the shorter
    # record ranks first (bm25 saturates the repeated body hits of quartz-one)
    assert [r["id"] for r in rows] == ["quartz-path", "quartz-one", "quartz-two"]
    assert rows[0]["rank"] < rows[1]["rank"]
    typed = index_db.search_rows(ctx.layout, fts, now=NOW, filters={"type": "warning"}, limit=1)
    assert [r["id"] for r in typed] == ["quartz-path"]
    pathed = index_db.search_rows(
        ctx.layout,
        fts,
        now=NOW,
        path="src/auth/login.py",
        limit=1,
        path_match=lambda stored, requested: requested.startswith(stored[:-2]),
    )
    assert [r["id"] for r in pathed] == ["quartz-path"]
    assert index_db.search_rows(ctx.layout, fts, now=NOW, destinations=("local",)) == []


def test_dogfood_records_all_load_and_are_searchable(repo: Repo, dogfood_records: Path) -> None:
    ctx = context(repo)
    sources = sorted(dogfood_records.glob("*.md"))
    for file in sources:
        shutil.copyfile(file, ctx.layout.records / file.name)

    result = index_db.rebuild(ctx.layout)

    assert result.unreadable == ()
    assert result.records["repo"] == len(sources) == 35
    fts = index_db.fts_query("shadowed binary directory")
    assert fts is not None
    rows = index_db.search_rows(ctx.layout, fts, now=NOW, limit=3)
    assert rows[0]["id"] == "source-installer-can-verify-a-shadowed-binary-directory"
    assert rows[0]["plane"] == "git" and rows[0]["destination"] == "repo"


# --------------------------------------------------------------------------------------------- fast frontmatter


_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), min_size=1, max_size=40
).filter(lambda s: s.strip() and "\n" not in s)


@settings(max_examples=200, deadline=None)
@given(title=_TEXT, body=_TEXT, tags=st.lists(_TEXT, max_size=3), ref=st.one_of(st.none(), _TEXT))
def test_the_fast_reader_agrees_with_ruamel(title: str, body: str, tags: list[str], ref: str | None) -> None:
    record = okf.Record(
        id="x",
        type="fact",
        lane="semantic",
        title=title.strip(),
        scope="repo",
        visibility="repo",
        content_class="general_repo_knowledge",
        status="active",
        confidence=0.75,
        timestamp="2026-07-01T00:00:00Z",
        body=body,
        retention={},
        origin={"origin_key": "k:x", "route": "owner_command"},
        tags=tuple(tags),
        source_ref=ref,
        applies_to=("src/a.py", "docs/**"),
    )
    yaml_text = frontmatter.split(okf.render(record).encode("utf-8")).yaml_text
    fast = okf_subset.load(yaml_text)
    try:
        slow = yamlio.load_mapping(yaml_text)[0]
    except yamlio.YamlProblem:
        slow = None  # e.g. a raw DEL character: ruamel refuses the file, and so must the fast reader
    assert fast is None or fast == slow


_KEYS = st.sampled_from(("path", "url", "ref", "kind", "line", "note"))
_SCALARS = st.one_of(_TEXT, st.integers(0, 10**6), st.booleans(), st.sampled_from(("docs/a.md", "no", "on", "1.10")))
_ITEMS = st.one_of(
    _SCALARS,
    st.dictionaries(
        _KEYS, st.one_of(_SCALARS, st.lists(_SCALARS, max_size=2), st.dictionaries(_KEYS, _SCALARS)), max_size=3
    ),
)


@settings(max_examples=300, deadline=None)
@given(items=st.lists(_ITEMS, min_size=1, max_size=4))
def test_the_fast_reader_reads_the_writers_lists_of_mappings_as_ruamel_does(items: list[Any]) -> None:
    # a packet's sources (a list of mappings opened on the dash line) is what sent packets to the slow reader
    yaml_text = "\n".join(["id: x", *okf.yaml_lines("sources", items), "tail: 1"]) + "\n"
    fast = okf_subset.load(yaml_text)
    try:
        slow = yamlio.load_mapping_ruamel(yaml_text)[0]
    except yamlio.YamlProblem:
        slow = None
    assert fast is None or fast == slow


@settings(max_examples=500, deadline=None)
@given(line=st.text(alphabet=st.sampled_from(list(" :a_Z9-é\t#\"'")), max_size=12))
def test_the_key_line_split_is_the_key_pattern(line: str) -> None:
    match = okf_subset._KEY.fullmatch(line)
    assert okf_subset._key_line(line) == (None if match is None else (len(match[1]), match[2], match[3]))


def test_the_fast_reader_takes_what_the_writer_writes_and_declines_the_rest() -> None:
    written = 'id: a\ntitle: "A: b"\nconfidence: 1\nretention: {}\ntags:\n  - x\norigin:\n  route: capture\n'
    sources = 'sources:\n  - path: "docs/a.md"\n    ref: v1\n  - url: "https://x.example/a"\n'
    assert okf_subset.load(sources) == {"sources": [{"path": "docs/a.md", "ref": "v1"}, {"url": "https://x.example/a"}]}
    assert okf_subset.load(written) == {
        "id": "a",
        "title": "A: b",
        "confidence": 1,
        "retention": {},
        "tags": ["x"],
        "origin": {"route": "capture"},
    }
    for text in (
        "a: 2026-07-01T00:00:00Z\n",
        "a: yes\n",
        "a: b # c\n",
        "a: 'q'\n",
        "a: |\n  x\n",
        "a:\n- x\n",
        "a: [x]\n",
        "a: 1\na: 2\n",
        "a:\n",
        "null: x\n",
        'a: "\\u00e9"\n',
        "a: 0x10\n",
        "a: -1\n",
        "a:\n  - b: 1\n   c: 2\n",  # a mapping item's keys out of line
        "a:\n  - b: 1\n    b: 2\n",  # a key twice in one item
        "a:\n  - b:\n",  # a key with no value
        "a:\n  - b: 1\n      c: 2\n",  # deeper than the item's keys
    ):
        assert okf_subset.load(text) is None, text


def test_a_pre_compact_input_without_a_trigger_names_the_checkpoint_once() -> None:
    from git_memzoi.memzoi.runtime import compact

    assert compact._task(None, [], "") == "Work on this repository (before compaction)"
    assert compact._task(None, [], "auto") == "Work on this repository (before auto compaction)"
