"""The write paths' fast lanes against real repositories, each checked to behave exactly like the slow path it
stands in for: the packet identity cache (``proposal_files.identities``), frontmatter in the writer's YAML subset
read and status lines rewritten without ruamel (``record_store``, ``packets.parse``, the receipt preflight), and
the inbox apply that does not re-read the packet it just resolved. Speed is measured in
evals/bench/memzoi_store.py, never here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.core import frontmatter, yamlio
from git_memzoi.errors import InputError
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.proposals import drafts, inbox, lifecycle, packets, receipts
from git_memzoi.memzoi.proposals import files as proposal_files
from git_memzoi.memzoi.records import okf, vocab
from git_memzoi.memzoi.records import store as record_store
from git_memzoi.memzoi.workspace import Workspace
from tests.memzoi.proposals.test_proposal_files import packet_text, record_text
from tests.support.repos import NOW, PROJECT, Repo, memzoi_workspace

PAST = 1_700_000_000  # 2023: older than any cache written by a test


@pytest.fixture
def ctx(repo: Repo) -> Workspace:
    return memzoi_workspace(repo, actor="reviewer", spec=True)  # records named by bare slugs below


def pending(ctx: Workspace, name: str, text: str) -> Path:
    path = ctx.layout.pending / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path


def age(layout: Layout, seconds: int = 0) -> None:
    """Give every packet file an mtime in the past (distinct per file), so a cache written now trusts it."""
    for n, path in enumerate(sorted(layout.base.glob("proposals/**/*.md"))):
        os.utime(path, (PAST + seconds + n, PAST + seconds + n))


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The repository-relative packet files ``proposal_files`` reads (parses) from now on."""
    reads: list[str] = []
    original = proposal_files._entry

    def counting(layout: Layout, state: str, root: Path, file: Path) -> proposal_files.Entry:
        reads.append(file.relative_to(layout.root).as_posix())
        return original(layout, state, root, file)

    monkeypatch.setattr(proposal_files, "_entry", counting)
    return reads


def cache_file(layout: Layout) -> Path:
    return layout.identity_cache


def store(ctx: Workspace) -> None:
    """Pending packets (one whose id differs from its file id, one secret), an applied and a rejected one."""
    pending(ctx, "applied-one", packet_text("mem_applied"))
    proposal_files.apply_packet(ctx, "mem_applied", actor="r")
    pending(ctx, "secret-file", packet_text("mem_secret", sensitivity="secret", title="Staging vault"))
    proposal_files.reject_packet(ctx, "mem_secret", reason="secret", actor="r")
    pending(ctx, "one", packet_text("mem_one"))
    pending(ctx, "nested/two", packet_text("mem_two_id", title="Second"))
    pending(ctx, "local-file", packet_text("mem_local", sensitivity="local-only", title="Local"))
    pending(ctx, "broken", "---\nid: mem_broken\nsensitivity: repo-safe\nkind: [\n---\n\nbody\n")


def aliases(layout: Layout) -> list[str]:
    found = [
        "applied-one",
        "mem_applied",
        "mem_secret",
        "secret-file",
        "one",
        "mem_one",
        "nested/two",
        "mem_two_id",
        "local-file",
        "mem_local",
        "broken",
        "mem_broken",
    ]
    return found + [e.shown_id or "" for e in proposal_files.inventory(layout).entries]


# --------------------------------------------------------------------------------------------- identity cache


def test_identities_find_and_take_exactly_what_the_inventory_does(ctx: Workspace) -> None:
    store(ctx)
    full = proposal_files.inventory(ctx.layout)
    for warm in (False, True):  # computed from the files, then from the cache a writer saved
        known = proposal_files.identities(ctx.layout)
        assert known.taken() == full.taken()
        for alias in aliases(ctx.layout):
            found, expected = known.find(alias), full.find(alias)
            assert (found.rel, found.state, found.tokens, found.packet, found.pre) == (
                expected.rel,
                expected.state,
                expected.tokens,
                expected.packet,
                expected.pre,
            )
        with pytest.raises(InputError) as caught:
            known.find("mem_nobody")
        assert caught.value.code == "unknown_proposal" and "mem_nobody" not in caught.value.message
        if not warm:
            age(ctx.layout)
            known.save()


def test_a_warm_cache_reads_only_the_files_that_changed(ctx: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    store(ctx)
    age(ctx.layout)
    proposal_files.identities(ctx.layout).save()
    reads = count_reads(monkeypatch)
    assert all(k.entry is None for k in proposal_files.identities(ctx.layout).known) and reads == []
    edited = pending(ctx, "one", packet_text("mem_one_renamed"))  # an in-place edit: new id, new mtime
    os.utime(edited, (PAST - 50, PAST - 50))
    os.rename(ctx.layout.pending / "nested/two.md", ctx.layout.pending / "moved.md")  # same inode, size, mtime
    known = proposal_files.identities(ctx.layout)
    assert sorted(reads) == [".memzoi/proposals/pending/moved.md", ".memzoi/proposals/pending/one.md"]
    assert known.find("mem_one_renamed").rel == ".memzoi/proposals/pending/one.md"
    assert known.find("moved").packet is not None
    for gone in ("mem_one", "nested/two"):
        with pytest.raises(InputError):
            known.find(gone)


def test_a_file_not_older_than_the_cache_is_read_again(ctx: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    pending(ctx, "one", packet_text("mem_one"))
    racy = pending(ctx, "two", packet_text("mem_two"))
    age(ctx.layout)
    proposal_files.identities(ctx.layout).save()
    future = cache_file(ctx.layout).stat().st_mtime_ns // 10**9 + 3600
    os.utime(racy, (future, future))  # as if written in the cache's own clock tick or later
    proposal_files.identities(ctx.layout).save()
    reads = count_reads(monkeypatch)
    proposal_files.identities(ctx.layout)
    assert reads == [".memzoi/proposals/pending/two.md"]


def listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The packet folders ``identities`` lists from now on (repository-relative)."""
    listed: list[str] = []
    original = record_store.signed_markdown_files

    def counting(directory: str, prefix: str, out: list[tuple[str, str, list[int]]]) -> None:
        listed.append(prefix)
        original(directory, prefix, out)

    monkeypatch.setattr(record_store, "signed_markdown_files", counting)
    return listed


def test_propose_apply_lists_the_packet_folders_once(ctx: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lock is held from the new packet to its apply: the apply takes the listing the packet's reservation
    made, with the new packet in it (issue 17, writes)."""
    store(ctx)
    listed = listings(monkeypatch)
    draft = inbox.make_draft(title="Use pnpm", body="Install with pnpm.", sensitivity="repo-safe", actor="agent")
    result = inbox.propose(ctx, draft, memzoi_home=None, apply=True)
    assert result.applied is not None and result.proposal.status == "applied"
    once = [
        ".memzoi/proposals/pending/",
        ".memzoi/proposals/pending/nested/",
        ".memzoi/proposals/resolved/applied/",
        ".memzoi/proposals/resolved/rejected/",
    ]
    assert listed == once
    assert proposal_files.identities(ctx.layout).find(result.proposal.file_id).state == "applied"  # out of the hold
    assert listed == once * 2


def test_a_listing_within_one_hold_is_made_again_after_a_write_in_a_packet_folder(
    ctx: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    store(ctx)
    listed = listings(monkeypatch)
    with lifecycle.guarded(ctx.layout):
        first = proposal_files.identities(ctx.layout)
        assert proposal_files.identities(ctx.layout) is first and len(listed) == 4
        from git_memzoi.core import atomic

        atomic.write_bytes_atomic(
            ctx.layout.pending / "three.md", packet_text("mem_three").encode(), root=ctx.layout.root
        )
        assert proposal_files.identities(ctx.layout).find("mem_three").rel == ".memzoi/proposals/pending/three.md"
        assert len(listed) == 8
    with lifecycle.guarded(ctx.layout):  # a new hold: another process may have written in between
        proposal_files.identities(ctx.layout)
    assert len(listed) == 12


def test_a_duplicate_behind_a_warm_cache_is_refused_with_the_inventory_message(ctx: Workspace) -> None:
    store(ctx)
    age(ctx.layout)
    proposal_files.identities(ctx.layout).save()
    pending(ctx, "sneaky", packet_text("mem_applied", title="Sneaky second copy"))
    with pytest.raises(InputError) as slow:
        proposal_files.inventory(ctx.layout)
    for call in (
        lambda: proposal_files.identities(ctx.layout),
        lambda: proposal_files.show_packet(ctx.layout, "one"),
        lambda: proposal_files.apply_packet(ctx, "one", actor="r"),
    ):
        with pytest.raises(InputError) as fast:
            call()
        assert (fast.value.code, fast.value.message) == ("duplicate_identity", slow.value.message)


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b'{"version": 2, "files": {}}',
        b'{"version": 1, "files": []}',
        b'{"version": 1, "files": {"k": 5}}',
        b"[1, 2]",
        b"",
    ],
)
def test_a_foreign_or_corrupt_cache_is_ignored_and_rewritten(ctx: Workspace, content: bytes) -> None:
    store(ctx)
    cache_file(ctx.layout).write_bytes(content)
    assert proposal_files.identities(ctx.layout).taken() == proposal_files.inventory(ctx.layout).taken()
    proposal_files.write_pending_packet(ctx, packets.parse("draft", "draft.md", packet_text("mem_new").encode()))
    assert json.loads(cache_file(ctx.layout).read_bytes())["version"] == 1


def test_a_cache_entry_with_stray_values_is_read_from_the_file(ctx: Workspace) -> None:
    pending(ctx, "one", packet_text("mem_one"))
    age(ctx.layout)
    known = proposal_files.identities(ctx.layout)
    known.save()
    data = json.loads(cache_file(ctx.layout).read_bytes())
    [key] = data["files"]
    data["files"][key] = [*data["files"][key][:3], 7, ["x"]]
    cache_file(ctx.layout).write_text(json.dumps(data))
    assert proposal_files.identities(ctx.layout).find("mem_one").rel == ".memzoi/proposals/pending/one.md"


def test_the_cache_holds_no_name_or_id_of_a_redacted_packet(ctx: Workspace) -> None:
    store(ctx)
    proposal_files.identities(ctx.layout).save()
    text = cache_file(ctx.layout).read_text()
    for secret in ("secret-file", "mem_secret", "local-file", "mem_local", "Staging", "pending/", "resolved/"):
        assert secret not in text


def test_read_only_commands_never_write_the_cache(ctx: Workspace) -> None:
    store(ctx)
    cache_file(ctx.layout).unlink(missing_ok=True)
    proposal_files.show_packet(ctx.layout, "mem_one")
    proposal_files.list_packets(ctx.layout)
    proposal_files.validate(ctx.layout)
    assert not cache_file(ctx.layout).exists()


def test_a_new_packet_skips_an_id_used_only_inside_another_resolved_file(ctx: Workspace) -> None:
    pending(ctx, "other-name", packet_text("mem_new"))
    proposal_files.apply_packet(ctx, "other-name", actor="r")  # resolved/applied/other-name.md has id mem_new
    age(ctx.layout)
    for expected in ("mem_new-2", "mem_new-3"):  # the second call runs on the cache the first one saved
        packet = packets.parse("draft", "draft.md", packet_text("mem_new").encode())
        file_id, path = proposal_files.write_pending_packet(ctx, packet)
        assert (file_id, path.name) == (expected, f"{expected}.md")


def test_apply_and_reject_save_the_cache_only_when_they_write(ctx: Workspace) -> None:
    pending(ctx, "one", packet_text("mem_one"))
    proposal_files.apply_packet(ctx, "mem_one", actor="r")
    assert cache_file(ctx.layout).exists()
    cache_file(ctx.layout).unlink()
    assert proposal_files.apply_packet(ctx, "mem_one", actor="r").replayed
    with pytest.raises(InputError):
        proposal_files.reject_packet(ctx, "mem_one", reason="no", actor="r")
    assert not cache_file(ctx.layout).exists()
    pending(ctx, "two", packet_text("mem_two"))
    proposal_files.reject_packet(ctx, "mem_two", reason="no", actor="r")
    assert cache_file(ctx.layout).exists()


# --------------------------------------------------------------------------------------------- YAML without ruamel


def written_record(record_id: str = "use-pnpm", **kw: Any) -> bytes:
    fields = {
        "id": record_id,
        "kind": "memory",
        "profile": "memzoi",
        "type": "decision",
        "lane": "semantic",
        "title": "Use pnpm: always",
        "scope": "repo",
        "visibility": "repo",
        "content_class": "general_repo_knowledge",
        "status": "active",
        "confidence": 1.0,
        "timestamp": "2026-07-01T00:00:00Z",
        "retention": {},
        "tags": ["auth", "two words"],
        "origin": {"origin_key": f"owner-command:{record_id}", "route": "owner_command"},
        **kw,
    }
    rel = f".memzoi/records/{record_id}.md"
    return okf.render(okf.record_from_fields(record_id, rel, fields, "Install with pnpm.")).encode()


SAMPLES = {
    "writer": written_record(),
    "hand-written, comment": record_text("legacy").encode(),
    "crlf": written_record().replace(b"\n", b"\r\n"),
    "bom": b"\xef\xbb\xbf" + written_record(),
    "no frontmatter": b"# just a body\n",
}


@pytest.mark.parametrize("name", SAMPLES)
def test_parse_fields_equals_frontmatter_parse(name: str) -> None:
    data = SAMPLES[name]
    parts, fields = record_store.parse_fields(data)
    doc = frontmatter.parse(data)
    assert (parts, fields) == (doc.split, doc.fields)


@pytest.mark.parametrize("name", [n for n in SAMPLES if n != "no frontmatter"])
@pytest.mark.parametrize("status", vocab.RECORD_STATUSES)
def test_the_status_rewrite_equals_frontmatter_update(name: str, status: str, ctx: Workspace) -> None:
    path = ctx.layout.records / "r.md"
    path.write_bytes(SAMPLES[name])
    changed = record_store.update_fields(ctx.layout, "r", {"status": status})
    assert changed == (path, SAMPLES[name], frontmatter.update(SAMPLES[name], {"status": status}))


@pytest.mark.parametrize(
    "changes",
    [
        {"title": "two words"},
        {"confidence": "1"},
        {"status": 1},
        {"nope": "x"},
        {"retention": "x"},
        {"status": "yes"},
        {"tags": "x"},
    ],
)
def test_the_status_rewrite_leaves_everything_else_to_frontmatter(changes: dict[str, Any]) -> None:
    assert record_store._update_subset(written_record(), changes) is None
    assert record_store._update_subset(record_text("legacy").encode(), {"status": "superseded"}) is None


def test_a_record_check_of_the_whole_store_reads_the_same_records(ctx: Workspace) -> None:
    for n, data in enumerate((written_record("a"), record_text("b").encode(), written_record("c", scope_id="t"))):
        (ctx.layout.records / f"{'abc'[n]}.md").write_bytes(data)
    for record_id in "abc":
        path = ctx.layout.records / f"{record_id}.md"
        doc = frontmatter.parse(path.read_bytes())
        expected = okf.record_from_fields(record_id, f".memzoi/records/{record_id}.md", doc.fields, doc.body)
        assert record_store.load(ctx.layout, record_id) == expected


INBOX_DRAFT = drafts.make_draft(title="Use pnpm", body="Install.", sensitivity="repo-safe")
PACKETS = {
    "inbox create": drafts.build_packet(INBOX_DRAFT, "prop_019f4be6-1e00-7ed4-998e-120d4cada218", NOW),
    "hand-written with sources": packets.parse("mem_x", "x.md", packet_text("mem_x").encode()),
}


@pytest.mark.parametrize("name", PACKETS)
@pytest.mark.parametrize("resolved", [False, True])
def test_packet_parse_equals_the_ruamel_reading(name: str, resolved: bool) -> None:
    from dataclasses import replace

    packet = PACKETS[name]
    if resolved:
        packet = replace(
            packet,
            status="applied",
            resolution=packets.Resolution("applied", "r", "2026-07-10T12:00:00Z", record_id="use-pnpm"),
        )
    data = packets.render(packet).encode()
    doc = frontmatter.parse(data)
    slow = packets.packet_from_fields(packet.file_id, "p.md", doc.fields, doc.body)
    assert packets.parse(packet.file_id, "p.md", data) == slow


RAW_SCALARS = [
    "mem_x",
    '"mem_x"',
    "'mem_x'",
    "yes",
    "no",
    "123",
    "1.5",
    "null",
    "~",
    "",
    '"caf\\u00e9"',
    '"a\\tb"',
    "a # c",
    "[a]",
    "{}",
    "2026-07-01",
    "true",
    "mem x",
]


@pytest.mark.parametrize("value", RAW_SCALARS)
def test_the_preflight_reads_raw_scalars_like_ruamel(value: str) -> None:
    try:
        fields, _ = yamlio.load_mapping(f"v: {value}")
        expected = fields.get("v") if isinstance(fields.get("v"), str) else None
    except yamlio.YamlProblem:
        expected = None
    assert receipts._yaml_string(value) == expected


SCRIPT = """
import datetime as dt, sys
from pathlib import Path
from git_memzoi.core.clock import FixedClock
from git_memzoi.memzoi import inbox, lifecycle, workspace
now = dt.datetime(2026, 7, 10, 12, tzinfo=dt.timezone.utc)
ctx = workspace.open_workspace(Path(sys.argv[1]), clock=FixedClock(now.date(), now), actor="agent")
draft = inbox.make_draft(title="Use pnpm", body="Install with pnpm.", sensitivity="repo-safe", actor="agent")
result = inbox.propose(ctx, draft, memzoi_home=None, apply=True)
lifecycle.supersede(ctx, result.applied.record_id, title="Use uv", body="Install with uv.", actor="agent",
                    sensitivity="repo-safe")
lifecycle.tombstone(ctx, "use-uv", reason="moved on", actor="agent")
print(sorted(m for m in sys.modules if m.startswith("ruamel")))
"""


def test_propose_apply_supersede_and_tombstone_never_load_the_yaml_library(ctx: Workspace) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ctx.layout.root)],
        capture_output=True,
        text=True,
        check=True,
        cwd=PROJECT,
    )
    assert proc.stdout.strip() == "[]"
    statuses = {p.stem: record_store.load(ctx.layout, p.stem).status for p in ctx.layout.records.glob("*.md")}
    assert statuses == {"use-pnpm": "superseded", "use-uv": "tombstoned"}


WRITE_ONE = """
import datetime as dt, json, sys
from pathlib import Path
from git_memzoi.core.clock import FixedClock
from git_memzoi.memzoi import inbox, workspace
now = dt.datetime(2026, 7, 10, 12, tzinfo=dt.timezone.utc)
ctx = workspace.open_workspace(Path(sys.argv[1]), clock=FixedClock(now.date(), now), actor="agent")
draft = inbox.make_draft(
    title="Use pnpm", body="Install with pnpm.", sensitivity="repo-safe", actor="agent", applies_to=sys.argv[2:]
)
result = inbox.propose(ctx, draft, memzoi_home=None, apply=True)
envelope = result.watch.envelope if result.watch else None
print(json.dumps([result.watch.reason if result.watch else None, envelope, "pygit2" in sys.modules]))
"""


@pytest.mark.parametrize(
    ("commits", "applies_to", "reason"),
    [(True, [], "no_scope"), (True, ["src/**"], None), (False, [], "no_commits"), (False, ["src/**"], "no_commits")],
)
def test_a_record_anchored_at_head_is_written_without_loading_pygit2(
    ctx: Workspace, repo: Repo, commits: bool, applies_to: list[str], reason: str | None
) -> None:
    """HEAD read from the refs anchors the record (pygit2 costs 45-100 ms to import, issue 17 "writes"): the
    same commit id pygit2 resolves, no_scope when nothing watches it, and no_commits on an unborn branch."""
    head = repo.commit("code", **{"src/app.py": "x\n"}) if commits else None
    run = [sys.executable, "-c", WRITE_ONE, str(ctx.layout.root), *applies_to]
    proc = subprocess.run(run, capture_output=True, text=True, check=True, cwd=PROJECT)
    envelope = {"anchor": str(head), "scope": applies_to, "verified_at": "2026-07-10"} if reason is None else None
    assert json.loads(proc.stdout) == [reason, envelope, False]


# --------------------------------------------------------------------------------------------- inbox apply


def test_propose_apply_returns_the_state_a_fresh_load_reconciles(ctx: Workspace) -> None:
    draft = inbox.make_draft(title="Use pnpm", body="Install with pnpm.", sensitivity="repo-safe", actor="agent")
    result = inbox.propose(ctx, draft, memzoi_home=None, apply=True)
    assert result.applied is not None and result.proposal.status == "applied"
    assert result.proposal == inbox.load(ctx.layout, result.proposal.id)
    assert (result.proposal.applied_by, result.proposal.record_id, result.proposal.packet_missing) == (
        "agent",
        "use-pnpm",
        False,
    )
    assert lifecycle.pending_transactions(ctx.layout) == ()
