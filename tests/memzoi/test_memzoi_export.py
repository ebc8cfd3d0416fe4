"""``export``: okf, agents-md and claude-md projections on real repositories.

Regenerating is byte-stable (unchanged files are not even rewritten), private and non-current records are
skipped, and a projection kept inside a user's AGENTS.md / CLAUDE.md only ever rewrites the bytes between its
two marker lines.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.core.clock import FixedClock
from git_memzoi.errors import InputError
from git_memzoi.memzoi import export, workspace
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.records import events, okf
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import Repo

NOW = dt.datetime(2026, 7, 10, 12, tzinfo=dt.UTC)
USER_TEXT = "# Agent notes\r\n\r\nRun `make test` before pushing.\r\n"


def write_record(ctx: Workspace, record_id: str, memory_type: str, title: str, body: str, **extra: Any) -> None:
    fields: dict[str, Any] = {
        "id": record_id,
        "type": memory_type,
        "lane": "procedural" if memory_type == "procedure" else "semantic",
        "title": title,
        "scope": "repo",
        "visibility": "repo",
        "content_class": "general_repo_knowledge",
        "status": "active",
        "confidence": 1.0,
        "timestamp": "2026-07-01T00:00:00Z",
        "body": body,
        "origin": {"origin_key": f"test:{record_id}", "route": "repository_materialization"},
    }
    fields.update(extra)
    (ctx.layout.records / f"{record_id}.md").write_text(okf.render(okf.Record(**fields)), "utf-8")


@pytest.fixture
def ctx(repo: Repo) -> Workspace:
    workspace.init(repo.root)
    c = Workspace(Layout(repo.root), FixedClock(NOW.date(), NOW), "tester")
    write_record(
        c,
        "run-migrations",
        "procedure",
        "Run migrations with make migrate",
        "Apply migrations locally before opening a pull request.",
        applies_to=("db/migrations/**",),
    )
    write_record(
        c,
        "money-in-cents",
        "decision",
        'Store money as "integer" cents',
        "Floats never hold money.",
        source="path",
        source_ref="docs/adr/0003.md",
        applies_to=("api/pricing/**", "api/money.py"),
    )
    write_record(c, "orders-table-lock", "risk", "Adding a column locks the orders table", "Backfill in batches.")
    write_record(c, "lockfile", "warning", "Never edit the lockfile by hand", "Use pnpm add.")
    write_record(c, "redis-port", "fact", "Redis listens on 6380", "Facts are not projected into AGENTS.md.")
    write_record(c, "my-editor", "preference", "Private editor preference", "Private.", visibility="private")
    write_record(c, "old-lockfile", "warning", "Yarn lockfile rule", "Superseded.", status="superseded")
    write_record(
        c,
        "sale-freeze",
        "warning",
        "Deploy freeze",
        "Expired.",
        retention={"explicit_expires_at": "2026-07-01T00:00:00Z"},
    )
    write_record(c, "team-rule", "decision", "Team rule", "Team scoped.", scope="team", scope_id="team-a")
    return c


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts and "local" not in p.parts
    }


# ------------------------------------------------------------------------------------------------ okf


def test_okf_writes_one_quoted_file_per_current_non_private_record(ctx: Workspace) -> None:
    result = export.export(ctx, "okf")
    assert result.records == ("money-in-cents", "redis-port", "run-migrations", "orders-table-lock", "lockfile")
    assert result.skipped_private == 1
    assert (result.files[0].path, result.files[0].action) == (".memzoi/exports/okf/money-in-cents.md", "written")
    text = (ctx.layout.base / "exports" / "okf" / "money-in-cents.md").read_text("utf-8")
    assert text.startswith(
        '---\nid: "money-in-cents"\ntype: "decision"\nlane: "semantic"\nscope_kind: "repo"\n'
        'visibility: "repo"\nstatus: "active"\nconfidence: "1"\nsource_kind: "path"\n'
        'source_ref: "docs/adr/0003.md"\ncontent_hash: "'
    )
    assert text.endswith(
        'created_at: "2026-07-01T00:00:00Z"\nupdated_at: "2026-07-01T00:00:00Z"\napplies_to:\n'
        '  - "api/pricing/**"\n  - "api/money.py"\n---\n\n# Store money as "integer" cents\n\n'
        "Floats never hold money.\n"
    )
    assert export.export(ctx, "okf", scope_kind="team").records == ("team-rule",)


def test_okf_regeneration_is_byte_stable_and_removes_only_its_own_stale_files(ctx: Workspace) -> None:
    export.export(ctx, "okf")
    folder = ctx.layout.base / "exports" / "okf"
    (folder / "README.md").write_text("my notes about the exports\n", "utf-8")
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}
    again = export.export(ctx, "okf")
    assert {f.action for f in again.files} == {"unchanged"}
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()} == before
    (ctx.layout.records / "lockfile.md").unlink()
    result = export.export(ctx, "okf")
    assert ("lockfile" not in result.records) and (".memzoi/exports/okf/lockfile.md", "removed") in [
        (f.path, f.action) for f in result.files
    ]
    assert (folder / "README.md").read_text("utf-8") == "my notes about the exports\n"


# ------------------------------------------------------------------------------------------------ agents-md


def test_agents_md_standalone_layout(ctx: Workspace) -> None:
    result = export.export(ctx, "agents-md")
    assert [(f.path, f.action) for f in result.files] == [(".memzoi/exports/AGENTS.memory.md", "written")]
    text = (ctx.layout.base / "exports" / "AGENTS.memory.md").read_text("utf-8")
    assert text == (
        "<!-- Generated by memzoi. Do not edit directly. -->\n# Memzoi Projection for AGENTS.md\n\n"
        "This file is generated from active canonical memory records.\n\n"
        '## Store money as "integer" cents [decision]\n\nRecord: `money-in-cents`\n\nApplies to:\n'
        "- `api/pricing/**`\n- `api/money.py`\n\nFloats never hold money.\n\n"
        "## Run migrations with make migrate [procedure]\n\nRecord: `run-migrations`\n\nApplies to:\n"
        "- `db/migrations/**`\n\nApply migrations locally before opening a pull request.\n\n"
        "## Adding a column locks the orders table [risk]\n\nRecord: `orders-table-lock`\n\nBackfill in batches.\n\n"
        "## Never edit the lockfile by hand [warning]\n\nRecord: `lockfile`\n\nUse pnpm add.\n\n"
    )
    claude = export.export(ctx, "claude-md")
    assert claude.files[0].path == ".memzoi/exports/CLAUDE.memory.md"
    assert "# Memzoi Projection for CLAUDE.md" in (ctx.layout.root / claude.files[0].path).read_text("utf-8")
    assert export.export(ctx, "agents-md").files[0].action == "unchanged"


def test_failed_attempts_are_projected_and_what_is_left_out_is_counted(ctx: Workspace) -> None:
    write_record(ctx, "tried-sqlite", "failed_attempt", "SQLite for the queue failed", "Locks under load.")
    result = export.export(ctx, "agents-md")
    text = (ctx.layout.root / result.files[0].path).read_text("utf-8")
    assert "## SQLite for the queue failed [failed_attempt]" in text and "Redis listens" not in text
    assert text.count("\n## ") == len(result.records) == 5  # what was written is what is counted
    assert result.to_json()["left_out"] == {"fact": 1}
    assert "tried-sqlite" in result.records and "redis-port" not in result.records
    assert len(export.export(ctx, "okf").records) == 6 and export.export(ctx, "okf").left_out == ()


def test_a_marked_block_only_rewrites_the_bytes_between_its_markers(ctx: Workspace) -> None:
    agents = ctx.layout.root / "AGENTS.md"
    agents.write_bytes(USER_TEXT.encode())
    first = export.export(ctx, "agents-md", target="AGENTS.md")
    assert [(f.path, f.action) for f in first.files] == [("AGENTS.md", "appended")]
    data = agents.read_bytes()
    assert data.startswith(USER_TEXT.encode() + b"\r\n" + export.begin_marker("agents-md").encode() + b"\r\n")
    assert data.endswith(export.end_marker("agents-md").encode() + b"\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")  # the block follows the file's CRLF line endings
    assert b"### Never edit the lockfile by hand [warning]" in data  # headings one level down inside a user's file
    # the user writes around the block and inside it; only the inside is replaced
    begin, end = export.begin_marker("agents-md").encode(), export.end_marker("agents-md").encode()
    head, rest = data.split(begin, 1)
    inner, tail = rest.split(end, 1)
    agents.write_bytes(
        head
        + begin
        + inner.replace(b"Use pnpm add.", b"EDITED BY HAND")
        + end
        + tail
        + b"\r\n## My own section\r\nKeep this.\r\n"
    )
    user_head, user_tail = head, tail + b"\r\n## My own section\r\nKeep this.\r\n"
    again = export.export(ctx, "agents-md", target="AGENTS.md")
    assert again.files[0].action == "replaced"
    now = agents.read_bytes()
    assert now.startswith(user_head) and now.endswith(user_tail) and b"EDITED BY HAND" not in now
    assert now == user_head + begin + inner + end + user_tail
    mtime = agents.stat().st_mtime_ns
    assert export.export(ctx, "agents-md", target="AGENTS.md").files[0].action == "unchanged"
    assert agents.stat().st_mtime_ns == mtime
    # a record change moves only bytes inside the markers
    write_record(ctx, "lockfile", "warning", "Never edit the lockfile by hand", "Use pnpm add or pnpm remove.")
    export.export(ctx, "agents-md", target="AGENTS.md")
    changed = agents.read_bytes()
    assert changed.startswith(user_head + begin) and changed.endswith(end + user_tail)
    assert b"Use pnpm add or pnpm remove." in changed


def test_a_missing_target_is_created_and_two_formats_keep_separate_blocks(ctx: Workspace) -> None:
    result = export.export(ctx, "claude-md", target="CLAUDE.md")
    assert result.files[0].action == "created"
    text = (ctx.layout.root / "CLAUDE.md").read_text("utf-8")
    assert text.startswith(export.begin_marker("claude-md") + "\n## Memzoi Projection for CLAUDE.md\n")
    export.export(ctx, "agents-md", target="CLAUDE.md")
    both = (ctx.layout.root / "CLAUDE.md").read_text("utf-8")
    assert both.startswith(text + "\n" + export.begin_marker("agents-md"))
    assert export.export(ctx, "claude-md", target="CLAUDE.md").files[0].action == "unchanged"


@pytest.mark.parametrize(
    "content",
    [
        "intro\n{begin}\nstale\n",
        "intro\n{end}\n",
        "{end}\nx\n{begin}\n",
        "{begin}\n{end}\n{begin}\n{end}\n",
    ],
)
def test_broken_markers_are_refused_without_writing(ctx: Workspace, content: str) -> None:
    agents = ctx.layout.root / "AGENTS.md"
    agents.write_text(
        content.format(begin=export.begin_marker("agents-md"), end=export.end_marker("agents-md")), "utf-8"
    )
    before = agents.read_bytes()
    with pytest.raises(export.MarkerError) as info:
        export.export(ctx, "agents-md", target="AGENTS.md")
    assert info.value.code == "broken_markers" and agents.read_bytes() == before


@pytest.mark.parametrize(
    "target",
    [
        "../AGENTS.md",
        "/tmp/AGENTS.md",
        "docs/../AGENTS.md",
        "./AGENTS.md",
        ".git/AGENTS.md",
        "AGENTS.txt",
        "missing/AGENTS.md",
        "linked.md",
        "linkdir/AGENTS.md",
        "docs",
        "C:/AGENTS.md",
        ".memzoi/records/proj.md",  # read back as a broken record (a fresh user's walk)
        ".memzoi/proposals/pending/p.md",
        ".memzoi/index.md",
    ],
)
def test_unsafe_targets_are_refused(ctx: Workspace, tmp_path: Path, target: str) -> None:
    root = ctx.layout.root
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "AGENTS.md").write_text("outside\n", "utf-8")
    (root / "linked.md").symlink_to(outside / "AGENTS.md")
    (root / "linkdir").symlink_to(outside)
    (root / "docs.md").mkdir()
    before = tree(root)
    with pytest.raises(InputError) as info:
        export.export(ctx, "agents-md", target=target)
    assert info.value.code == "unsafe_target"
    assert tree(root) == before and (outside / "AGENTS.md").read_text("utf-8") == "outside\n"


def test_a_directory_named_like_a_markdown_file_is_refused(ctx: Workspace) -> None:
    (ctx.layout.root / "docs.md").mkdir()
    with pytest.raises(InputError) as info:
        export.export(ctx, "claude-md", target="docs.md")
    assert info.value.code == "unsafe_target"


def test_bad_arguments(ctx: Workspace) -> None:
    for kwargs, code in (
        ({"fmt": "html"}, "invalid_format"),
        ({"fmt": "okf", "target": "AGENTS.md"}, "bad_usage"),
        ({"fmt": "okf", "scope_kind": "galaxy"}, "invalid_scope_kind"),
    ):
        with pytest.raises(InputError) as info:
            export.export(ctx, **kwargs)
        assert info.value.code == code
    assert not (ctx.layout.base / "exports").exists()


def test_export_logs_counts_only(ctx: Workspace) -> None:
    export.export(ctx, "agents-md")
    last = list(events.export(ctx.layout))[-1]
    assert '"event_type":"memory.exported"' in last and "Floats never hold money" not in last


def test_dogfood_records_export_stably(repo: Repo, dogfood_records: Path) -> None:
    workspace.init(repo.root)
    for file in sorted(dogfood_records.glob("*.md")):
        shutil.copyfile(file, repo.root / ".memzoi" / "records" / file.name)
    c = Workspace(Layout(repo.root), FixedClock(dt.date(2026, 7, 20)), "tester")
    first = export.export(c, "okf")
    assert len(first.records) == 34 and not first.unreadable  # 35 records, one superseded
    agents = export.export(c, "agents-md")
    snapshot = tree(repo.root)
    assert {f.action for f in export.export(c, "okf").files} == {"unchanged"}
    assert export.export(c, "agents-md").files[0].action == "unchanged" and tree(repo.root) == snapshot
    from git_memzoi.memzoi.records import store as record_store

    types = {r.id: r.type for r in record_store.scan(c.layout).records}
    text = (repo.root / agents.files[0].path).read_text("utf-8")
    assert text.count("\n## ") == sum(types[r] in export.PROJECTED_TYPES for r in agents.records) > 0
