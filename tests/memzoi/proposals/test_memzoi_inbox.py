"""The proposal inbox and the approval policy against real repositories (seed "Status values", "Approval policy").

Every test builds a real git repository, initialises ``.memzoi/`` and drives the core functions with a fixed
clock; ids, statuses and files are spelled out exactly.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.core.clock import FixedClock
from git_memzoi.errors import InputError
from git_memzoi.memzoi import workspace
from git_memzoi.memzoi.proposals import files as proposal_files
from git_memzoi.memzoi.proposals import inbox, packets, review
from git_memzoi.memzoi.proposals.inbox import ProposalNotFound, TransitionRefused
from git_memzoi.memzoi.proposals.packets import SensitivityBlocked
from git_memzoi.memzoi.records import policy
from git_memzoi.memzoi.records import store as record_store
from git_memzoi.memzoi.records.policy import ApprovalPolicy, PolicyError
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import Repo, spec_ids

NOW = dt.datetime(2026, 7, 10, 12, 0, tzinfo=dt.UTC)
LATER = dt.datetime(2026, 7, 10, 12, 5, tzinfo=dt.UTC)
TITLE = "Use pnpm for installs"
BODY = "Install dependencies with pnpm, never npm."
PNPM_ID = "prop_019f4be6-1e00-7ed4-998e-120d4cada218"  # the decision draft below, at NOW
# sensitive, not a credential (a credential is refused everywhere, private memory included)
SECRET_BODY = "The staging vault sits on host hunter2-opaline behind the ops VPN."
MANUAL = '[workflow]\nproposal_approval = "manual"\n'
AUTO = '[workflow]\nproposal_approval = "auto" # or "manual"\n'
NON_REPO_SAFE = (
    "local-only",
    "sensitive",
    "secret",
    "raw-transcript",
    "private-personal-data",
    "temporary-state",
    "unknown",
)


def init(repo: Repo, when: dt.datetime = NOW) -> Workspace:
    """Initialise ``.memzoi/``, commit it, and return a context with a fixed clock."""
    workspace.init(repo.root)
    spec_ids(repo.root)  # the records below are named by their bare slugs (memzoi-spec v0 ids)
    repo.commit("memzoi init")
    return context(repo, when)


def context(repo: Repo, when: dt.datetime) -> Workspace:
    return workspace.open_workspace(repo.root, clock=FixedClock(when.date(), when), actor="agent")


def draft(**kw: Any) -> inbox.Draft:
    fields: dict[str, Any] = {
        "title": TITLE,
        "body": BODY,
        "type": "decision",
        "sensitivity": "repo-safe",
        "actor": "agent",
    }
    return inbox.make_draft(**{**fields, **kw})


def propose(ctx: Workspace, home: Path | None = None, **kw: Any) -> inbox.ProposeResult:
    override = kw.pop("override", None)
    apply = kw.pop("apply", False)
    return inbox.propose(ctx, draft(**kw), memzoi_home=home, override=override, apply=apply)


def tree(repo: Repo) -> dict[str, bytes]:
    """Every file of the working tree except .git and the lock file, by relative path."""
    return {
        p.relative_to(repo.root).as_posix(): p.read_bytes()
        for p in sorted(repo.root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo.root).parts and p.name != "lifecycle.lock"
    }


def git_status(repo: Repo) -> str:
    return repo.git("status", "--porcelain", "--untracked-files=all")


def event_types(repo: Repo) -> list[str]:
    lines = (repo.root / ".git/memzoi/local/events.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line)["event_type"] for line in lines]


# --------------------------------------------------------------------------------------------- policy


@pytest.mark.parametrize(
    ("user", "repo_cfg", "override", "expected"),
    [
        (None, None, None, ("auto", "default")),
        (MANUAL, None, None, ("manual", "user")),
        (MANUAL, AUTO, None, ("auto", "repo")),
        (AUTO, MANUAL, None, ("manual", "repo")),
        (MANUAL, AUTO, "manual", ("manual", "override")),
        (AUTO, MANUAL, "auto", ("auto", "override")),
        (None, MANUAL, None, ("manual", "repo")),
        (MANUAL, None, "auto", ("auto", "override")),
        ("[other]\nx = 1\n", "[workflow]\n", None, ("auto", "default")),
    ],
)
def test_policy_layers_resolve_in_order(
    tmp_path: Path, user: str | None, repo_cfg: str | None, override: str | None, expected: tuple[str, str]
) -> None:
    home, repo_config = tmp_path / "home", tmp_path / "repo" / ".memzoi" / "config.toml"
    for path, text in ((home / "config.toml", user), (repo_config, repo_cfg)):
        if text is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    result = policy.resolve(repo_config, home, override)
    deciding = {"user": str(home / "config.toml"), "repo": str(repo_config)}.get(expected[1])
    assert result == ApprovalPolicy(expected[0], expected[1], deciding)
    assert result.to_json() == {"mode": expected[0], "source": expected[1], "path": deciding}


def test_policy_without_a_home_skips_the_user_layer(tmp_path: Path) -> None:
    assert policy.resolve(tmp_path / "missing.toml", None) == ApprovalPolicy("auto", "default")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[workflow\nproposal_approval = 1", "not valid TOML"),
        ('[workflow]\nproposal_approval = "sometimes"\n', 'must be "auto" or "manual", not \'sometimes\''),
        ("[workflow]\nproposal_approval = true\n", 'must be "auto" or "manual", not True'),
        ('[workflow]\nproposal_approval = "auto"\nauto_apply = true\n', "unknown key 'auto_apply'"),
        ('workflow = "manual"\n', "[workflow] must be a table"),
        (b"\xff\xfe".decode("latin-1"), "not valid TOML"),
    ],
)
def test_bad_config_is_one_line_error_naming_the_file(tmp_path: Path, text: str, reason: str) -> None:
    config = tmp_path / "config.toml"
    config.write_bytes(text.encode("latin-1") if text.startswith("\xff") else text.encode("utf-8"))
    with pytest.raises(PolicyError) as info:
        policy.resolve(tmp_path / "absent.toml", tmp_path, "manual")  # an override never hides a broken file
    assert info.value.code == "invalid_config"
    assert info.value.message.startswith(f"{config}: ")
    assert reason in info.value.message and "\n" not in info.value.message
    assert int(info.value.exit_code) == 2


def test_bad_override_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="approval override"):
        policy.resolve(tmp_path / "absent.toml", None, "sometimes")


# --------------------------------------------------------------------------------------------- ids


def test_ids_are_uuidv7_shaped_and_derived_from_clock_and_content() -> None:
    pid = inbox.proposal_id(NOW, draft().identity())
    assert pid == PNPM_ID
    value = uuid.UUID(pid.removeprefix("prop_"))
    assert (value.version, value.variant) == (7, uuid.RFC_4122)
    assert value.int >> 80 == 1_783_684_800_000 == int(NOW.timestamp() * 1000)
    assert inbox.proposal_id(NOW, draft().identity()) == pid
    other = inbox.proposal_id(NOW, draft(body="Something else.").identity())
    assert other != pid and other[:19] == pid[:19]  # same millisecond prefix, different hash bits
    assert inbox.proposal_id(LATER, draft().identity()) > pid  # ids sort by creation time


@pytest.mark.parametrize(
    "bad",
    [
        "../etc/passwd",
        "prop_x",
        "prop_019f4be6-1e00-70e5-84bf-14b59269a9d9/..",
        "PROP_019F4BE6-1E00-70E5-84BF-14B59269A9D9",
        "mem_test",
        "",
    ],
)
def test_malformed_ids_are_refused(repo: Repo, bad: str) -> None:
    ctx = init(repo)
    with pytest.raises(InputError) as info:
        inbox.approve(ctx, bad, actor="agent")
    assert info.value.code == "bad_proposal_id"


def test_unknown_id_is_refused(repo: Repo) -> None:
    ctx = init(repo)
    with pytest.raises(ProposalNotFound) as info:
        inbox.reject(ctx, PNPM_ID, reason="no", actor="agent")
    assert info.value.code == "unknown_proposal"


# --------------------------------------------------------------------------------------------- propose


def test_default_policy_auto_approves_but_does_not_apply(repo: Repo) -> None:
    ctx = init(repo)
    result = propose(ctx)
    p = result.proposal
    assert (result.created, result.auto_approved, result.policy) == (True, True, ApprovalPolicy("auto", "default"))
    assert (p.id, p.status, p.approved_by, p.approved_at, p.record_id) == (
        PNPM_ID,
        "approved",
        "agent",
        "2026-07-10T12:00:00Z",
        None,
    )
    assert (p.location, p.file_id, p.sensitivity, p.type, p.lane) == (
        "pending",
        PNPM_ID,
        "repo-safe",
        "decision",
        "semantic",
    )
    assert not list((repo.root / ".memzoi/records").iterdir())
    packet = packets.parse(PNPM_ID, "x", (repo.root / f".memzoi/proposals/pending/{PNPM_ID}.md").read_bytes())
    assert (packet.id, packet.title, packet.body, packet.status, packet.sensitivity) == (
        PNPM_ID,
        TITLE,
        BODY,
        "proposed",
        "repo-safe",
    )
    assert (packet.proposed_by, packet.proposed_at, packet.origin) == (
        "agent",
        "2026-07-10T12:00:00Z",
        {"origin_key": f"owner-command:{PNPM_ID}", "route": "owner_command"},
    )
    state = json.loads((repo.root / f".git/memzoi/local/inbox/{PNPM_ID}.json").read_text())
    assert state["schema"] == "memzoi/inbox-proposal-v1" and state["status"] == "approved"
    assert TITLE not in json.dumps(state) and BODY not in json.dumps(state)
    assert event_types(repo) == ["proposal_file_written", "proposal.proposed", "proposal.approved"]


def test_repo_config_manual_leaves_it_pending(repo: Repo, tmp_path: Path) -> None:
    ctx = init(repo)
    (repo.root / ".memzoi/config.toml").write_text(MANUAL)
    result = propose(ctx, tmp_path / "home")
    assert result.proposal.status == "pending" and not result.auto_approved
    assert result.policy == ApprovalPolicy("manual", "repo", str(repo.root / ".memzoi/config.toml"))


def test_auto_approve_flag_beats_manual_configs(repo: Repo, tmp_path: Path) -> None:
    ctx = init(repo)
    (tmp_path / "config.toml").write_text(MANUAL)
    (repo.root / ".memzoi/config.toml").write_text(MANUAL)
    result = propose(ctx, tmp_path, override="auto")
    assert (result.proposal.status, result.policy) == ("approved", ApprovalPolicy("auto", "override"))


def test_propose_apply_creates_approves_and_applies(repo: Repo) -> None:
    ctx = init(repo)
    result = propose(ctx, override=None, apply=True, source_kind="path", source_ref="package.json")
    p = result.proposal
    assert (p.status, p.record_id, p.applied_by, p.applied_at) == (
        "applied",
        "use-pnpm-for-installs",
        "agent",
        "2026-07-10T12:00:00Z",
    )
    assert result.applied is not None and result.applied.record_id == "use-pnpm-for-installs"
    record = record_store.load(ctx.layout, "use-pnpm-for-installs")
    assert (record.proposal_id, record.status, record.title, record.body) == (p.id, "active", TITLE, BODY)
    assert (record.source, record.source_ref, record.type, record.visibility) == (
        "path",
        "package.json",
        "decision",
        "repo",
    )
    assert (repo.root / f".memzoi/proposals/resolved/applied/{p.id}.md").is_file()
    assert not (repo.root / f".memzoi/proposals/pending/{p.id}.md").exists()
    assert event_types(repo)[-2:] == ["proposal_file_applied", "proposal.applied"]


def test_apply_with_manual_is_refused_before_writing(repo: Repo) -> None:
    ctx = init(repo)
    before = tree(repo)
    with pytest.raises(InputError) as info:
        propose(ctx, override="manual", apply=True)
    assert info.value.code == "conflicting_options"
    assert tree(repo) == before


@pytest.mark.parametrize("sensitivity", NON_REPO_SAFE)
def test_apply_of_non_repo_safe_draft_is_refused_before_writing(repo: Repo, sensitivity: str) -> None:
    ctx = init(repo)
    before = tree(repo)
    with pytest.raises(SensitivityBlocked) as info:
        propose(ctx, apply=True, sensitivity=sensitivity, body=SECRET_BODY)
    assert info.value.envelope()["error"]["classification"] == sensitivity
    assert SECRET_BODY not in json.dumps(info.value.envelope()) and TITLE not in info.value.message
    assert tree(repo) == before


def test_same_proposal_at_the_same_instant_is_one_proposal(repo: Repo) -> None:
    ctx = init(repo)
    first, second = propose(ctx, override="manual"), propose(ctx, override="manual")
    assert (first.created, second.created, second.proposal.id) == (True, False, first.proposal.id)
    assert len(list((repo.root / ".memzoi/proposals/pending").iterdir())) == 1
    assert propose(context(repo, LATER), override="manual").proposal.id != first.proposal.id


def test_episode_gets_episodic_lane_and_occurrence(repo: Repo) -> None:
    ctx = init(repo)
    result = propose(ctx, type="episode", apply=True)
    record = record_store.load(ctx.layout, result.proposal.record_id or "")
    assert (record.lane, dict(record.retention)) == ("episodic", {"occurred_at": "2026-07-10T12:00:00Z"})


@pytest.mark.parametrize(
    ("kw", "code"),
    [
        ({"type": "opinion"}, "invalid_type"),
        ({"lane": "working"}, "invalid_lane"),
        ({"scope_kind": "galaxy"}, "invalid_scope_kind"),
        ({"visibility": "secret"}, "invalid_visibility"),
        ({"sensitivity": "repo_safe"}, "invalid_sensitivity"),
        ({"title": "   "}, "empty_title"),
        ({"title": "two\nlines"}, "invalid_title"),
        ({"body": ""}, "empty_body"),
        ({"body": " \n "}, "empty_body"),
        ({"source_kind": "Not A Kind"}, "invalid_source_kind"),
        ({"source_ref": ""}, "empty_source_ref"),
        ({"actor": ""}, "empty_actor"),
    ],
)
def test_bad_values_are_refused_with_stable_codes(kw: dict[str, Any], code: str) -> None:
    with pytest.raises(InputError) as info:
        draft(**kw)
    assert info.value.code == code and "\n" not in info.value.message


def test_traversal_in_a_path_source_is_refused_before_writing(repo: Repo) -> None:
    ctx = init(repo)
    before = tree(repo)
    with pytest.raises(InputError):
        propose(ctx, source_kind="path", source_ref="../outside.txt")
    assert tree(repo) == before


# --------------------------------------------------------------------------------------------- transitions


def test_every_transition_is_monotonic_and_idempotent(repo: Repo) -> None:
    ctx = init(repo)
    pid = propose(ctx, override="manual").proposal.id
    with pytest.raises(TransitionRefused) as info:
        inbox.apply_proposal(ctx, pid, actor="agent")
    assert info.value.code == "proposal_not_approved"
    later = context(repo, LATER)
    first = inbox.approve(ctx, pid, actor="reviewer")
    again = inbox.approve(later, pid, actor="someone-else")
    assert (first.changed, again.changed) == (True, False)
    assert (again.proposal.status, again.proposal.approved_by, again.proposal.approved_at) == (
        "approved",
        "reviewer",
        "2026-07-10T12:00:00Z",
    )
    applied = inbox.apply_proposal(later, pid, actor="reviewer")
    assert (applied.changed, applied.proposal.status, applied.proposal.record_id) == (
        True,
        "applied",
        "use-pnpm-for-installs",
    )
    replay = inbox.apply_proposal(later, pid, actor="reviewer")
    assert (replay.changed, replay.applied) == (False, None)
    for call, verb in (
        (lambda: inbox.approve(ctx, pid, actor="x"), "approved"),
        (lambda: inbox.reject(ctx, pid, reason="late", actor="x"), "rejected"),
    ):
        with pytest.raises(TransitionRefused) as refused:
            call()
        assert refused.value.code == "proposal_applied" and f"cannot be {verb}" in refused.value.message
    assert inbox.load(ctx.layout, pid).status == "applied"


def test_rejection_is_terminal_and_idempotent(repo: Repo) -> None:
    ctx = init(repo)
    pid = propose(ctx).proposal.id  # approved: rejecting an approved proposal is allowed
    first = inbox.reject(ctx, pid, reason="duplicate of another decision", actor="reviewer")
    again = inbox.reject(context(repo, LATER), pid, reason="second thoughts", actor="other")
    assert (first.changed, again.changed) == (True, False)
    assert (again.proposal.status, again.proposal.reason, again.proposal.rejected_by) == (
        "rejected",
        "duplicate of another decision",
        "reviewer",
    )
    assert (repo.root / f".memzoi/proposals/resolved/rejected/{pid}.md").is_file()
    assert not (repo.root / f".memzoi/proposals/pending/{pid}.md").exists()
    for call in (lambda: inbox.approve(ctx, pid, actor="x"), lambda: inbox.apply_proposal(ctx, pid, actor="x")):
        with pytest.raises(TransitionRefused) as refused:
            call()
        assert refused.value.code == "proposal_rejected"
    assert not list((repo.root / ".memzoi/records").iterdir())


def test_reject_needs_a_reason(repo: Repo) -> None:
    ctx = init(repo)
    pid = propose(ctx).proposal.id
    before = tree(repo)
    with pytest.raises(InputError) as info:
        inbox.reject(ctx, pid, reason="  ", actor="agent")
    assert info.value.code == "missing_reason" and tree(repo) == before


def test_packet_resolved_directly_reads_as_resolved(repo: Repo) -> None:
    ctx = init(repo)
    pid = propose(ctx, override="manual").proposal.id
    proposal_files.apply_packet(ctx, pid, actor="maintainer")
    p = inbox.load(ctx.layout, pid)
    assert (p.status, p.record_id, p.applied_by) == ("applied", "use-pnpm-for-installs", "maintainer")
    assert (review.counts(ctx.layout).open, review.pending_count(ctx.layout)) == (0, 0)


def test_bulk_apply_applies_every_approved_proposal(repo: Repo) -> None:
    ctx = init(repo)
    a = propose(ctx, title="First decision", body="Body one.").proposal.id
    b = propose(ctx, title="Second decision", body="Body two.").proposal.id
    c = propose(ctx, title="Third decision", body="Body three.", override="manual").proposal.id
    counts = review.counts(ctx.layout)
    assert (counts.open, counts.pending, counts.validated, counts.approved) == (3, 1, 0, 2)
    result = review.apply_all_approved(ctx, actor="agent")
    assert [o.item.id for o in result.applied] == sorted([a, b]) and result.failed == ()
    assert sorted(p.name for p in (repo.root / ".memzoi/records").iterdir()) == [
        "first-decision.md",
        "second-decision.md",
    ]
    assert [i.id for i in review.list_items(ctx.layout, "open").items] == [c]
    expected = [t for _, t in sorted([(a, "First decision"), (b, "Second decision")])]
    assert [i.title for i in review.list_items(ctx.layout, "applied").items] == expected
    assert review.apply_all_approved(ctx, actor="agent").applied == ()


def test_list_filters_and_rejects_unknown_filters(repo: Repo) -> None:
    ctx = init(repo)
    pid = propose(ctx).proposal.id
    assert [i.id for i in review.list_items(ctx.layout, "approved").items] == [pid]
    assert review.list_items(ctx.layout, "pending").items == ()
    assert [i.title for i in review.list_items(ctx.layout, "all").items] == [TITLE]
    with pytest.raises(InputError) as info:
        review.list_items(ctx.layout, "closed")
    assert info.value.code == "invalid_status"


def test_unreadable_state_file_is_reported_not_fatal(repo: Repo) -> None:
    ctx = init(repo)
    pid = propose(ctx).proposal.id
    bogus = repo.write(".git/memzoi/local/inbox/prop_019f4be6-1e00-7000-8000-000000000000.json", "{not json")
    listing = review.list_items(ctx.layout, "all")
    assert [i.id for i in listing.items] == [pid]
    assert listing.problems == (
        f"{bogus}: not a readable inbox state file "
        "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
    )


# --------------------------------------------------------------------------------------------- privacy


@pytest.mark.parametrize("sensitivity", [*NON_REPO_SAFE, None])
def test_non_repo_safe_proposals_never_touch_git_visible_paths(repo: Repo, sensitivity: str | None) -> None:
    ctx = init(repo)
    assert git_status(repo) == ""
    result = propose(ctx, sensitivity=sensitivity, title="Staging credentials", body=SECRET_BODY)
    p = result.proposal
    expected = sensitivity or "unknown"
    assert (p.status, p.sensitivity, p.location, result.auto_approved) == ("pending", expected, "private", False)
    assert result.warnings and "not auto-approved" in result.warnings[0]
    assert (repo.root / f".git/memzoi/local/proposals/{p.id}.md").is_file()
    assert git_status(repo) == ""
    for call in (
        lambda: inbox.apply_proposal(ctx, p.id, actor="agent"),
        lambda: inbox.approve(ctx, p.id, actor="agent"),
    ):
        with pytest.raises(SensitivityBlocked) as info:
            call()
        envelope = info.value.envelope()
        assert envelope["ok"] is False and envelope["error"]["code"] == "repo_sensitivity_required"
        assert envelope["error"]["classification"] == expected
        assert "Staging" not in json.dumps(envelope) and "hunter2" not in json.dumps(envelope)
    assert [i.title for i in review.list_items(ctx.layout, "all").items] == [None]
    assert inbox.show(ctx.layout, p.id).packet is None and inbox.show(ctx.layout, p.id).path is None
    assert inbox.reject(ctx, p.id, reason="belongs in local memory", actor="agent").proposal.status == "rejected"
    assert git_status(repo) == ""
    log = (repo.root / ".git/memzoi/local/events.jsonl").read_text()
    assert "hunter2" not in log and "Staging" not in log and "belongs in local memory" not in log
    ignored = repo.git("status", "--porcelain", "--ignored", "--untracked-files=all")
    assert p.id not in ignored  # in the git directory: git never lists it, ignored or not


def test_private_state_can_never_be_staged(repo: Repo) -> None:
    """Private proposals and inbox state live in the git directory: ``git add -f`` stages nothing of them."""
    ctx = init(repo)
    p = propose(ctx, sensitivity="secret", body=SECRET_BODY).proposal
    files = [ctx.layout.private_proposals / f"{p.id}.md", ctx.layout.inbox / f"{p.id}.json"]
    paths = [ctx.layout.label(f) for f in files]
    assert paths == [f".git/memzoi/local/proposals/{p.id}.md", f".git/memzoi/local/inbox/{p.id}.json"]
    assert all(f.is_file() for f in files)
    subprocess.run(["git", "add", "-f", *paths], cwd=repo.root, capture_output=True, check=False)
    proc = subprocess.run(["git", "ls-files", "--cached"], cwd=repo.root, capture_output=True, text=True)
    assert p.id not in proc.stdout
