"""File-backed proposal packets against real repositories: apply, reject, identities, redaction, rollback.

memzoi-spec.md §3. Every test builds a real git repository in tmp_path, initialises ``.memzoi/`` and drives the
core functions with a fixed clock; expected files are spelled out byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from blake3 import blake3

from git_memzoi.errors import InputError
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.proposals import files as proposal_files
from git_memzoi.memzoi.proposals import lifecycle, packets
from git_memzoi.memzoi.proposals.lifecycle import TargetError
from git_memzoi.memzoi.proposals.packets import PacketError, SensitivityBlocked
from git_memzoi.memzoi.records import store as record_store
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import PROJECT, Repo, memzoi_workspace

TITLE = "Use pnpm for installs"
BODY = "Install dependencies with pnpm, never npm."
NON_REPO_SAFE = (
    "local-only",
    "sensitive",
    "secret",
    "raw-transcript",
    "private-personal-data",
    "temporary-state",
    "unknown",
)


# --------------------------------------------------------------------------------------------- helpers


def packet_text(
    pid: str = "mem_test_one",
    *,
    title: str = TITLE,
    body: str = BODY,
    action: str = "create",
    sensitivity: str | None = "repo-safe",
    proposal_extra: str = "",
    supersedes: str = "[]",
    scope: str = "  kind: repo\n",
    proposed_at: str = "2026-07-05T00:00:00Z",
    status: str = "proposed",
    extra: str = "",
) -> str:
    """A proposal packet as text (the knobs cover every action shape and classification)."""
    sens = f"sensitivity: {sensitivity}\n" if sensitivity is not None else ""
    return (
        f"---\nid: {pid}\nkind: proposal\nprofile: memzoi\ntype: decision\nlane: semantic\ntitle: {title}\n"
        f"description: {body.splitlines()[0]}\nstatus: {status}\nproposal:\n  action: {action}\n"
        f'  proposed_by: agent\n  proposed_at: "{proposed_at}"\n{proposal_extra}scope:\n{scope}'
        f'timestamp: "2026-07-05T00:00:00Z"\ncreated_by: agent\nsources:\n  - url: https://example.com/pr/7\n'
        f"supersedes: {supersedes}\n{sens}content_class: general_repo_knowledge\nretention: {{}}\norigin:\n"
        f'  origin_key: "test:{pid}"\n  route: repository_proposal\n{extra}---\n\n# {title}\n\n{body}\n'
    )


def record_text(
    rid: str,
    *,
    status: str = "active",
    scope: str = "repo",
    scope_id: str | None = None,
    updated: str = "2026-07-01T00:00:00Z",
    visibility: str = "repo",
) -> str:
    """A hand-written canonical record (upstream key order, a trailing comment) to check byte stability."""
    sid = f"scope_id: {scope_id}\n" if scope_id else ""
    return (
        f"---\nid: {rid}\nkind: memory\nprofile: memzoi\nretention: {{}}\norigin:\n"
        f'  origin_key: "repository-record:{rid}"\n  route: repository_proposal\ntype: decision\n'
        f'lane: semantic\ntitle: "Legacy guidance {rid}"\ntimestamp: "2026-07-01T00:00:00Z"\n'
        f'updated: "{updated}"\nstatus: {status}   # lifecycle\nscope: {scope}\n{sid}visibility: {visibility}\n'
        f"content_class: general_repo_knowledge\nconfidence: 1\nsource: pr\n"
        f'source_ref: "https://example.com/pr/1"\ntags:\n  - auth\n---\n\n# Legacy guidance {rid}\n\n'
        f"Evidence body for {rid}.\n"
    )


def init(repo: Repo) -> Workspace:
    """Initialise ``.memzoi/`` and return a context with the fixed clock; records get memzoi-spec v0 ids, the
    shape this module's upstream packets and their expected bytes name."""
    return memzoi_workspace(repo, actor="reviewer", spec=True)


def pending(repo: Repo, name: str, text: str) -> Path:
    return repo.write(f".memzoi/proposals/pending/{name}.md", text)


def record(repo: Repo, rid: str, **kw: Any) -> Path:
    return repo.write(f".memzoi/records/{rid}.md", record_text(rid, **kw))


def tree(repo: Repo) -> dict[str, bytes]:
    """Every file under .memzoi/ and the private folder (.git/memzoi/local/) except the lock and the event log,
    as bytes."""
    base = repo.root / ".memzoi"
    private = Layout(repo.root).private
    skip = {private / "lifecycle.lock", private / "events.jsonl"}
    return {
        p.relative_to(repo.root).as_posix()[len(".memzoi/") if p.is_relative_to(base) else 0 :]: p.read_bytes()
        for p in sorted([*base.rglob("*"), *private.rglob("*")])
        if p.is_file() and p not in skip
    }


def b3(data: bytes) -> str:
    return blake3(data).hexdigest()


@pytest.fixture
def ctx(repo: Repo) -> Workspace:
    return init(repo)


# --------------------------------------------------------------------------------------------- create


EXPECTED_CREATE = """---
id: use-pnpm-for-installs
kind: memory
profile: memzoi
type: decision
lane: semantic
title: "Use pnpm for installs"
description: "Install dependencies with pnpm, never npm."
timestamp: "2026-07-05T00:00:00Z"
updated: "2026-07-05T00:00:00Z"
status: active
scope: repo
visibility: repo
content_class: general_repo_knowledge
confidence: 1
source: url
source_ref: "https://example.com/pr/7"
proposal_id: mem_test_one
retention: {}
origin:
  origin_key: "test:mem_test_one"
  route: repository_proposal
---

# Use pnpm for installs

Install dependencies with pnpm, never npm.
"""


def test_create_writes_one_active_record_and_resolves_the_packet(repo: Repo, ctx: Workspace) -> None:
    pending(repo, "create-one", packet_text())
    result = proposal_files.apply_packet(ctx, "mem_test_one", actor="reviewer")
    assert result == proposal_files.ApplyResult(
        "mem_test_one",
        "create-one",
        "create",
        "use-pnpm-for-installs",
        None,
        False,
        ".memzoi/proposals/resolved/applied/create-one.md",
        (
            ".memzoi/records/use-pnpm-for-installs.md",
            ".memzoi/proposals/resolved/applied/create-one.md",
            ".memzoi/proposals/pending/create-one.md",
        ),
    )
    assert (repo.root / ".memzoi/records/use-pnpm-for-installs.md").read_text() == EXPECTED_CREATE
    assert not (repo.root / ".memzoi/proposals/pending/create-one.md").exists()
    resolved = (repo.root / result.resolved_path).read_text()
    assert "status: applied\n" in resolved
    assert (
        'resolution:\n  outcome: applied\n  resolved_by: reviewer\n  resolved_at: "2026-07-10T12:00:00Z"\n'
        "  record_id: use-pnpm-for-installs\n"
    ) in resolved
    assert not list((repo.root / ".git/memzoi/local/journals").iterdir())
    event = json.loads((repo.root / ".git/memzoi/local/events.jsonl").read_text().splitlines()[-1])
    assert event["event_type"] == "proposal_file_applied" and event["record_id"] == "use-pnpm-for-installs"
    assert event["payload"] == {"action": "create", "target_id": None}


def test_record_id_collision_takes_a_numeric_suffix_and_file_id_fallback(repo: Repo, ctx: Workspace) -> None:
    record(repo, "use-pnpm-for-installs")
    pending(repo, "first", packet_text("mem_a"))
    pending(repo, "mem_only_symbols", packet_text("mem_b", title="+++"))
    assert proposal_files.apply_packet(ctx, "mem_a", actor="r").record_id == "use-pnpm-for-installs-2"
    assert proposal_files.apply_packet(ctx, "mem_only_symbols", actor="r").record_id == "mem-only-symbols"


def test_replay_of_an_applied_packet_is_an_idempotent_no_op(repo: Repo, ctx: Workspace) -> None:
    pending(repo, "create-one", packet_text())
    proposal_files.apply_packet(ctx, "create-one", actor="reviewer")
    before = tree(repo)
    again = proposal_files.apply_packet(ctx, "mem_test_one", actor="reviewer")
    assert (again.replayed, again.record_id, again.written, again.drift) == (True, "use-pnpm-for-installs", (), ())
    assert tree(repo) == before


def test_opposite_outcomes_are_refused(repo: Repo, ctx: Workspace) -> None:
    pending(repo, "one", packet_text("mem_one"))
    pending(repo, "two", packet_text("mem_two", title="Another title"))
    proposal_files.apply_packet(ctx, "mem_one", actor="r")
    proposal_files.reject_packet(ctx, "mem_two", reason="not needed", actor="r")
    before = tree(repo)
    with pytest.raises(InputError) as applied:
        proposal_files.reject_packet(ctx, "mem_one", reason="late", actor="r")
    with pytest.raises(InputError) as rejected:
        proposal_files.apply_packet(ctx, "mem_two", actor="r")
    assert applied.value.code == rejected.value.code == "opposite_outcome"
    assert tree(repo) == before


def test_reject_moves_the_packet_and_replay_is_a_no_op(repo: Repo, ctx: Workspace) -> None:
    pending(repo, "create-one", packet_text())
    result = proposal_files.reject_packet(ctx, "create-one", reason="duplicate of an ADR", actor="reviewer")
    assert (result.proposal_id, result.redacted, result.replayed) == ("mem_test_one", False, False)
    text = (repo.root / ".memzoi/proposals/resolved/rejected/create-one.md").read_text()
    assert (
        "status: rejected\n" in text
        and "resolution:\n  outcome: rejected\n  resolved_by: reviewer\n"
        '  resolved_at: "2026-07-10T12:00:00Z"\n  reason: "duplicate of an ADR"\n'
        in text
    )
    assert not list((repo.root / ".memzoi/records").iterdir())
    before = tree(repo)
    again = proposal_files.reject_packet(ctx, "mem_test_one", reason="again", actor="reviewer")
    assert (again.replayed, again.reason) == (True, "duplicate of an ADR")
    assert tree(repo) == before
    with pytest.raises(InputError, match="must not be empty"):
        proposal_files.reject_packet(ctx, "mem_test_one", reason="  ", actor="reviewer")


# --------------------------------------------------------------------------------------------- supersede, tombstone


def supersede_packet(target: str = "legacy-auth", **kw: Any) -> str:
    return packet_text(
        "mem_replace",
        title="Use OAuth device flow",
        action="supersede",
        supersedes=f"[{target}]",
        proposal_extra="  reason: the old flow is deprecated\n",
        **kw,
    )


def test_supersede_keeps_the_target_bytes_but_status_and_links_the_replacement(repo: Repo, ctx: Workspace) -> None:
    old = record(repo, "legacy-auth").read_text()
    pending(repo, "replace", supersede_packet())
    result = proposal_files.apply_packet(ctx, "replace", actor="reviewer")
    assert (result.action, result.record_id, result.target_id) == ("supersede", "use-oauth-device-flow", "legacy-auth")
    target = (repo.root / ".memzoi/records/legacy-auth.md").read_text()
    assert target == old.replace("status: active   # lifecycle", "status: superseded   # lifecycle")
    new = record_store.load(ctx.layout, "use-oauth-device-flow")
    assert (new.status, new.supersedes, new.proposal_id, new.scope) == ("active", "legacy-auth", "mem_replace", "repo")
    resolved = (repo.root / ".memzoi/proposals/resolved/applied/replace.md").read_text()
    assert "  record_id: use-oauth-device-flow\n  target_id: legacy-auth\n" in resolved


def test_tombstone_keeps_the_evidence(repo: Repo, ctx: Workspace) -> None:
    old = record(repo, "legacy-auth").read_text()
    pending(
        repo,
        "drop",
        packet_text("mem_drop", action="tombstone", proposal_extra="  reason: obsolete\n  target: legacy-auth\n"),
    )
    result = proposal_files.apply_packet(ctx, "mem_drop", actor="reviewer")
    assert (result.action, result.record_id, result.target_id) == ("tombstone", "legacy-auth", "legacy-auth")
    after = (repo.root / ".memzoi/records/legacy-auth.md").read_text()
    assert after == old.replace("status: active   # lifecycle", "status: tombstoned   # lifecycle")
    assert sorted(p.name for p in (repo.root / ".memzoi/records").iterdir()) == ["legacy-auth.md"]


SHAPES = {
    "create with target": (dict(proposal_extra="  target: legacy-auth\n"), "proposal.target"),
    "create with supersedes": (dict(supersedes="[legacy-auth]"), "supersedes"),
    "supersede with target": (
        dict(action="supersede", supersedes="[legacy-auth]", proposal_extra="  reason: r\n  target: legacy-auth\n"),
        "proposal.target",
    ),
    "supersede without entry": (dict(action="supersede", proposal_extra="  reason: r\n"), "supersedes"),
    "supersede with two": (
        dict(action="supersede", supersedes="[legacy-auth, other]", proposal_extra="  reason: r\n"),
        "supersedes",
    ),
    "supersede without reason": (dict(action="supersede", supersedes="[legacy-auth]"), "proposal.reason"),
    "tombstone without target": (dict(action="tombstone", proposal_extra="  reason: r\n"), "proposal.target"),
    "tombstone with supersedes": (
        dict(action="tombstone", supersedes="[legacy-auth]", proposal_extra="  reason: r\n  target: legacy-auth\n"),
        "supersedes",
    ),
    "tombstone without reason": (dict(action="tombstone", proposal_extra="  target: legacy-auth\n"), "proposal.reason"),
    "update": (dict(action="update"), "proposal.action"),
}


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_every_action_shape_error_names_file_and_field(repo: Repo, ctx: Workspace, case: str) -> None:
    knobs, field = SHAPES[case]
    record(repo, "legacy-auth")
    pending(repo, "shape", packet_text(**knobs))
    before = tree(repo)
    with pytest.raises(PacketError) as caught:
        proposal_files.apply_packet(ctx, "shape", actor="r")
    assert (caught.value.path, caught.value.field) == (".memzoi/proposals/pending/shape.md", field)
    assert str(caught.value).startswith(f".memzoi/proposals/pending/shape.md: {field}: ")
    assert tree(repo) == before
    [(_, issues)] = proposal_files.validate(ctx.layout)
    assert [i.field for i in issues] == [field]


TARGETS = {
    "target_missing": (dict(), "nothing-here", {}),
    "target_inactive": (dict(status="superseded"), "legacy-auth", {}),
    "target_cross_scope": (dict(scope="team", scope_id="alpha"), "legacy-auth", {}),
    "target_newer": (dict(updated="2026-07-06T00:00:00Z"), "legacy-auth", {}),
}


@pytest.mark.parametrize("code", sorted(TARGETS))
@pytest.mark.parametrize("action", ["supersede", "tombstone"])
def test_every_target_check_refuses_before_mutation(repo: Repo, ctx: Workspace, code: str, action: str) -> None:
    record_kw, target, _ = TARGETS[code]
    record(repo, "legacy-auth", **record_kw)
    if action == "supersede":
        text = supersede_packet(target)
    else:
        text = packet_text(
            "mem_replace", action="tombstone", proposal_extra=f"  reason: obsolete\n  target: {target}\n"
        )
    pending(repo, "change", text)
    before = tree(repo)
    with pytest.raises(TargetError) as caught:
        proposal_files.apply_packet(ctx, "mem_replace", actor="r")
    field = "supersedes" if action == "supersede" else "proposal.target"
    assert caught.value.code == code
    assert caught.value.message.startswith(f".memzoi/proposals/pending/change.md: {field}: target record ")
    assert tree(repo) == before
    [(_, issues)] = proposal_files.validate(ctx.layout)
    assert [(i.code, i.field) for i in issues] == [(code, field)]


def test_same_scope_with_scope_id_and_same_instant_is_accepted(repo: Repo, ctx: Workspace) -> None:
    record(repo, "legacy-auth", scope="team", scope_id="alpha", updated="2026-07-05T00:00:00Z")
    pending(repo, "replace", supersede_packet(scope="  kind: team\n  id: alpha\n"))
    assert proposal_files.validate(ctx.layout)[0][1] == ()
    assert proposal_files.apply_packet(ctx, "mem_replace", actor="r").record_id == "use-oauth-device-flow"
    assert record_store.load(ctx.layout, "use-oauth-device-flow").scope_id == "alpha"


# --------------------------------------------------------------------------------------------- schema


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (packet_text(extra="version: okf/v0.2\n"), "version"),
        (packet_text(body="   "), "body"),
        (packet_text().replace("# Use pnpm", "# Use npm"), "body"),
        (packet_text(status="applied"), "resolution"),
        (
            packet_text(
                extra='resolution:\n  outcome: rejected\n  resolved_by: a\n  resolved_at: "2026-07-06T00:00:00Z"\n'
            ),
            "resolution",
        ),
        (packet_text(proposal_extra="  note: x\n"), "proposal.note"),
        (packet_text(scope="  kind: galaxy\n"), "scope.kind"),
        (packet_text(scope="  kind: repo\n  paths: [../etc]\n"), "scope.paths"),
        (packet_text().replace("  - url: https://example.com/pr/7", "  - path: /etc/passwd"), "sources[0].path"),
        (packet_text().replace("  - url: https://example.com/pr/7", "  - {}"), "sources[0]"),
        (packet_text().replace("kind: proposal", "kind: memory"), "kind"),
        (packet_text().replace("  route: repository_proposal", "  route: teleport"), "origin.route"),
        (packet_text("Bad_ID"), "id"),
    ],
)
def test_schema_errors_name_the_field(text: str, field: str) -> None:
    with pytest.raises(PacketError) as caught:
        packets.parse("ok-file", "p.md", text.encode())
    assert caught.value.field == field


def test_missing_sensitivity_defaults_to_unknown_and_is_blocked(repo: Repo, ctx: Workspace) -> None:
    pending(repo, "nosens", packet_text(sensitivity=None))
    with pytest.raises(SensitivityBlocked) as caught:
        proposal_files.apply_packet(ctx, "nosens", actor="r")
    assert caught.value.classification == "unknown"


def test_writer_round_trips_and_keeps_key_order() -> None:
    packet = packets.parse(
        "evidence",
        "p.md",
        packet_text(
            scope="  kind: team\n  id: alpha\n  paths: [src/**]\n",
            extra="lineage:\n  kind: renewal\n  predecessor_id: old\n",
        ).encode(),
    )
    text = packets.render(packet)
    assert packets.parse("evidence", "p.md", text.encode()) == packet
    keys = [line.split(":")[0] for line in text.split("---")[1].splitlines() if line and not line.startswith(" ")]
    assert keys == [
        "id",
        "kind",
        "profile",
        "type",
        "lane",
        "title",
        "description",
        "status",
        "proposal",
        "scope",
        "timestamp",
        "created_by",
        "sources",
        "supersedes",
        "sensitivity",
        "content_class",
        "retention",
        "origin",
        "lineage",
    ]


# --------------------------------------------------------------------------------------------- sensitivity, receipts


SECRET_TITLE = "Opal vault token"
# sensitive, not a credential: a credential is refused before sensitivity is looked at, private memory included
SECRET_BODY = "SENTINEL opal notes live in the staging vault."


@pytest.mark.parametrize("sensitivity", NON_REPO_SAFE)
def test_non_repo_safe_packets_are_never_applied(repo: Repo, ctx: Workspace, sensitivity: str) -> None:
    pending(
        repo, "secret-file", packet_text("mem_secret", title=SECRET_TITLE, body=SECRET_BODY, sensitivity=sensitivity)
    )
    before = tree(repo)
    with pytest.raises(SensitivityBlocked) as caught:
        proposal_files.apply_packet(ctx, "mem_secret", actor="r")
    envelope = caught.value.envelope()
    assert envelope["error"]["code"] == "repo_sensitivity_required"
    assert envelope["error"]["operation"] == "proposal_files_apply"
    assert envelope["error"]["classification"] == sensitivity
    assert envelope["error"]["next_step"] == packets.GUIDANCE[sensitivity]
    assert SECRET_TITLE not in json.dumps(envelope) and "SENTINEL" not in json.dumps(envelope)
    assert tree(repo) == before
    [(entry, issues)] = proposal_files.validate(ctx.layout)
    assert [i.code for i in issues] == ["repo_sensitivity_required"] and entry.redacted


def test_malformed_secret_packet_is_preflighted_into_an_exact_receipt(repo: Repo, ctx: Workspace) -> None:
    raw = (
        f"---\nid: mem_secret\nsensitivity: secret\ncontent_class: raw-transcript\ntitle: {SECRET_TITLE}\n"
        f"proposal: [this is: not valid\n---\n\n{SECRET_BODY}\n"
    )
    pending(repo, "nested/secret-file", raw)
    data = raw.encode()
    digest = b3(b"proposal-id\0mem_secret\0proposal-file-id\0nested/secret-file\0proposal-markdown\0" + data)
    cls = b3(b"memzoi.rejected-proposal-classification.v1\0secret\0raw-transcript")
    rid, fid = "redacted-identity-" + b3(b"mem_secret"), "redacted-identity-" + b3(b"nested/secret-file")
    [entry] = proposal_files.list_packets(ctx.layout)
    assert (entry.shown_id, entry.shown_file_id, entry.shown_path, entry.redacted) == (rid, fid, None, True)
    for alias in ("mem_secret", "nested/secret-file", rid, fid):
        assert proposal_files.show_packet(ctx.layout, alias) == entry
    result = proposal_files.reject_packet(ctx, "mem_secret", reason="unsafe content removed", actor="reviewer")
    assert (result.proposal_id, result.file_id, result.redacted) == (rid, fid, True)
    assert result.resolved_path == f".memzoi/proposals/resolved/rejected/{fid}.md"
    assert result.written == (result.resolved_path,)
    expected = f"""---
id: {rid}
kind: proposal
profile: memzoi
type: fact
lane: semantic
title: "Redacted non-repo-safe proposal"
description: "Original proposal content and identity redacted before archival."
status: rejected
proposal:
  action: create
  proposed_by: redacted
  proposed_at: "1970-01-01T00:00:00Z"
scope:
  kind: repo
timestamp: "1970-01-01T00:00:00Z"
supersedes: []
sensitivity: repo-safe
content_class: general_repo_knowledge
resolution:
  outcome: rejected
  resolved_by: reviewer
  resolved_at: "2026-07-10T12:00:00Z"
  reason: "unsafe content removed"
retention: {{}}
origin:
  origin_key: "rejected-proposal:{digest}"
  route: repository_proposal
---

# Redacted non-repo-safe proposal

Original non-repo-safe proposal content, identity, and classification were redacted before archival.

Content hash (BLAKE3): `{digest}`.

Original classification hash (BLAKE3): `{cls}`.
"""
    assert (repo.root / result.resolved_path).read_text() == expected
    assert not (repo.root / ".memzoi/proposals/pending/nested/secret-file.md").exists()
    everything = b"".join(tree(repo).values()) + (repo.root / ".git/memzoi/local/events.jsonl").read_bytes()
    for secret in (SECRET_TITLE, "SENTINEL", "mem_secret", "secret-file"):
        assert secret.encode() not in everything
    again = proposal_files.reject_packet(ctx, "nested/secret-file", reason="x", actor="reviewer")
    assert (again.replayed, again.redacted, again.proposal_id) == (True, True, rid)
    with pytest.raises(InputError) as refused:
        proposal_files.apply_packet(ctx, "mem_secret", actor="reviewer")
    assert refused.value.code == "opposite_outcome"


def test_missing_id_receipt_hashes_the_digest(repo: Repo, ctx: Workspace) -> None:
    raw = "---\nsensitivity: sensitive\n---\n\nbody\n"
    pending(repo, "anon", raw)
    digest = b3(b"proposal-id\0<missing-or-non-string>\0proposal-file-id\0anon\0proposal-markdown\0" + raw.encode())
    [entry] = proposal_files.list_packets(ctx.layout)
    assert entry.shown_id == "redacted-identity-" + b3(f"missing-id:{digest}".encode())
    cls = b3(b"memzoi.rejected-proposal-classification.v1\0sensitive\0<missing>")
    assert entry.packet is not None and f"`{cls}`" in entry.packet.body


# --------------------------------------------------------------------------------------------- inventory rules


def test_symlinked_pending_root_is_refused_without_reading(repo: Repo, ctx: Workspace, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text(packet_text())
    pending_dir = repo.root / ".memzoi/proposals/pending"
    pending_dir.rmdir()
    pending_dir.symlink_to(outside, target_is_directory=True)
    for call in (
        lambda: proposal_files.list_packets(ctx.layout),
        lambda: proposal_files.apply_packet(ctx, "mem_test_one", actor="r"),
    ):
        with pytest.raises(InputError) as caught:
            call()
        assert caught.value.code == "symlinked_root"
    assert not list((repo.root / ".memzoi/records").iterdir())


def test_hidden_and_symlinked_files_are_skipped(repo: Repo, ctx: Workspace) -> None:
    target = pending(repo, ".hidden", packet_text("mem_hidden"))
    (repo.root / ".memzoi/proposals/pending/link.md").symlink_to(target)
    pending(repo, "index", "# not a packet\n")
    assert proposal_files.list_packets(ctx.layout) == ()


def test_duplicate_identity_is_refused(repo: Repo, ctx: Workspace) -> None:
    pending(repo, "one", packet_text("mem_same"))
    pending(repo, "two", packet_text("mem_same", title="Other"))
    with pytest.raises(InputError) as caught:
        proposal_files.apply_packet(ctx, "one", actor="r")
    assert caught.value.code == "duplicate_identity"
    assert "pending/one.md" in caught.value.message and "pending/two.md" in caught.value.message


def test_a_resolved_identity_cannot_return_to_pending(repo: Repo, ctx: Workspace) -> None:
    pending(repo, "one", packet_text("mem_one"))
    proposal_files.apply_packet(ctx, "mem_one", actor="r")
    pending(repo, "renamed", packet_text("mem_one", title="Sneaky second copy"))
    with pytest.raises(InputError) as caught:
        proposal_files.list_packets(ctx.layout)
    assert caught.value.code == "duplicate_identity"


def test_unknown_id_is_not_echoed(repo: Repo, ctx: Workspace) -> None:
    with pytest.raises(InputError) as caught:
        proposal_files.show_packet(ctx.layout, "mem_private_alias")
    assert caught.value.code == "unknown_proposal" and "mem_private_alias" not in caught.value.message


def test_write_pending_packet_reserves_the_next_free_identity(repo: Repo, ctx: Workspace) -> None:
    pending(repo, "mem_new", packet_text("mem_new"))
    proposal_files.reject_packet(ctx, "mem_new", reason="no", actor="r")
    pending(repo, "mem_new-2", packet_text("mem_other"))
    packet = packets.parse("draft", "draft.md", packet_text("mem_new").encode())
    file_id, path = proposal_files.write_pending_packet(ctx, packet)
    assert (file_id, path) == ("mem_new-3", repo.root / ".memzoi/proposals/pending/mem_new-3.md")
    assert path.read_text() == packets.render(packets.parse("mem_new-3", "x", path.read_bytes()))
    assert proposal_files.show_packet(ctx.layout, "mem_new-3").packet.id == "mem_new-3"
    with pytest.raises(SensitivityBlocked):
        proposal_files.write_pending_packet(ctx, packets.parse("d", "d.md", packet_text(sensitivity="secret").encode()))


# --------------------------------------------------------------------------------------------- rollback and repair


def fail_on_call(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    real = lifecycle.write_bytes_atomic
    calls = {"n": 0}

    def flaky(path: Path, data: bytes, **where: Any) -> None:
        calls["n"] += 1
        if calls["n"] == n:
            raise OSError(28, "No space left on device")
        real(path, data, **where)

    monkeypatch.setattr(lifecycle, "write_bytes_atomic", flaky)


def test_a_failed_write_rolls_back_the_first_file_byte_for_byte(
    repo: Repo, ctx: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    record(repo, "legacy-auth")
    pending(repo, "replace", supersede_packet())
    before = tree(repo)
    fail_on_call(monkeypatch, 2)  # 1: target status, 2: the new record
    with pytest.raises(OSError, match="No space left"):
        proposal_files.apply_packet(ctx, "replace", actor="r")
    after = tree(repo)
    assert after == before
    assert lifecycle.pending_transactions(ctx.layout) == ()


def test_an_interrupted_operation_is_reported_and_repaired(
    repo: Repo, ctx: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = record(repo, "legacy-auth").read_bytes()
    pending(repo, "replace", supersede_packet())

    def killed(*_: Any) -> list[str]:
        raise SystemExit(137)  # the process dies mid-operation: no rollback runs

    with monkeypatch.context() as patched, pytest.raises(SystemExit):  # undone alone, not the suite's patches
        fail_on_call(patched, 2)
        patched.setattr(lifecycle, "_rollback", killed)
        proposal_files.apply_packet(ctx, "replace", actor="r")
    assert b"status: superseded" in (repo.root / ".memzoi/records/legacy-auth.md").read_bytes()
    [tx] = proposal_files.pending_transactions(ctx.layout)
    assert (tx.operation, tx.files, tx.committed) == ("proposal_files_apply", 4, False)
    journal = (repo.root / ".git/memzoi/local/journals" / tx.txid / "journal.json").read_text()
    assert "Evidence body" not in journal and "OAuth" not in journal
    assert proposal_files.repair(ctx.layout) == (tx,)
    assert (repo.root / ".memzoi/records/legacy-auth.md").read_bytes() == old
    assert proposal_files.pending_transactions(ctx.layout) == ()
    assert proposal_files.apply_packet(ctx, "replace", actor="r").record_id == "use-oauth-device-flow"


def test_the_next_guarded_write_repairs_a_leftover_first(
    repo: Repo, ctx: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    record(repo, "legacy-auth")
    pending(repo, "replace", supersede_packet())
    with monkeypatch.context() as patched, pytest.raises(SystemExit):
        fail_on_call(patched, 2)
        patched.setattr(lifecycle, "_rollback", lambda *_: (_ for _ in ()).throw(SystemExit(137)))
        proposal_files.apply_packet(ctx, "replace", actor="r")
    result = proposal_files.apply_packet(ctx, "replace", actor="r")
    assert (result.record_id, result.replayed) == ("use-oauth-device-flow", False)
    assert proposal_files.pending_transactions(ctx.layout) == ()


# --------------------------------------------------------------------------------------------- conformance, concurrency


def test_upstream_evidence_round_trip_fixture_applies(repo: Repo, ctx: Workspace, recall_v2: Path) -> None:
    fixture = recall_v2 / "proposals" / "evidence-round-trip.md"
    pending(repo, "evidence-round-trip", fixture.read_text("utf-8"))
    result = proposal_files.apply_packet(ctx, "mem_eval_evidence_round_trip", actor="eval")
    rec = record_store.load(ctx.layout, result.record_id)
    assert result.record_id == "proposal-evidence-round-trip"  # corpus.yaml expected_record_id
    assert (rec.source, rec.source_ref) == ("path", "docs/rfcs/0001-evidence-backed-capture.md")
    assert rec.applies_to == ("crates/memzoi-core/src/recall_eval.rs",)
    assert (rec.proposal_id, rec.status, rec.visibility, rec.confidence) == (
        "mem_eval_evidence_round_trip",
        "active",
        "repo",
        1.0,
    )
    assert rec.tags == ("eval", "provenance") and rec.origin["origin_key"] == "eval:proposal-evidence-round-trip"


def test_two_processes_applying_at_once_both_succeed(repo: Repo, ctx: Workspace) -> None:
    for n in range(2):
        pending(repo, f"packet-{n}", packet_text(f"mem_proc_{n}", title=f"Concurrent record {n}"))
    env = {**os.environ, "MEMZOI_NOW": "2026-07-10T12:00:00Z"}
    command = [sys.executable, "-m", "git_memzoi", "-C", str(repo.root), "proposal-files", "apply"]
    procs = [
        subprocess.Popen(
            [*command, f"mem_proc_{n}", "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=PROJECT,
        )
        for n in range(2)
    ]
    outputs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert sorted(json.loads(out)["record_id"] for out, _ in outputs) == ["concurrent-record-0", "concurrent-record-1"]
    scan = record_store.scan(ctx.layout)
    assert [r.id for r in scan.records] == ["concurrent-record-0", "concurrent-record-1"] and scan.problems == ()
    assert proposal_files.list_packets(ctx.layout) == ()
    lines = (repo.root / ".git/memzoi/local/events.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["proposal_id"] for line in lines) == ["mem_proc_0", "mem_proc_1"]
    assert proposal_files.pending_transactions(ctx.layout) == ()
