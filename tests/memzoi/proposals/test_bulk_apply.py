"""Bulk apply (issue 17, "Bulk paths"): ``import apply --approve`` and ``proposal-files apply ID ID …`` write many
records in one operation - counts, events, the index, the approval policy, all-or-nothing checks, and rollback
of a failure or a kill part-way (by the next command)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.errors import InputError
from git_memzoi.memzoi.imports import apply as importer_apply
from git_memzoi.memzoi.imports import plan as importer
from git_memzoi.memzoi.proposals import lifecycle
from git_memzoi.memzoi.recall.index import db as index_db
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import Repo, ok_json, run, tree

N = 12


def manifest(n: int = N, *, local: bool = True) -> dict[str, Any]:
    candidates: list[dict[str, Any]] = [
        {
            "destination": "repo",
            "reason": "imported handbook note",
            "type": "decision",
            "title": f"Handbook rule number {i}",
            "body": f"Rule {i}: run the release checks before tagging quartz{i}.",
            "sensitivity": "repo-safe",
            "scope": {"paths": [f"src/mod_{i}/x.py"]},
            "tags": ["handbook"],
        }
        for i in range(n)
    ]
    if local:
        candidates.append(
            {"destination": "local", "reason": "mine", "type": "fact", "title": "Local", "body": "Local body."}
        )
    return {"version": "memzoi/import-v1", "sources": [{"path": "docs/handbook.md"}], "candidates": candidates}


def events(ctx: Workspace) -> list[dict[str, Any]]:
    return [json.loads(line) for line in ctx.layout.events.read_text("utf-8").splitlines()]


def approve(ctx: Workspace, raw: dict[str, Any], home: Path) -> dict[str, Any]:
    plan = importer.plan(ctx, raw, actor="cli")
    return importer_apply.apply(ctx, raw, plan_id=plan["plan_id"], actor="cli", approve=True, memzoi_home=home)


def test_import_approve_applies_every_packet_in_one_operation(repo: Repo, ctx: Workspace, tmp_path: Path) -> None:
    result = approve(ctx, manifest(), tmp_path / "home")
    assert result["approval"] == {
        "mode": "auto",
        "source": "default",
        "path": None,
        "applied": N,
        "routed_to_review": 0,
    }
    records = sorted(p.stem for p in (repo.root / ".memzoi/records").glob("*.md"))
    packets = [w for w in result["writes"] if w["kind"] == "proposal_file"]
    assert sorted(w["record_id"] for w in packets) == records and len(records) == N
    for w in packets:
        assert w["path"] == f".memzoi/proposals/resolved/applied/{w['proposal_id']}.md"
        text = (repo.root / ".memzoi/records" / f"{w['record_id']}.md").read_text("utf-8")
        assert f"proposal_id: {w['proposal_id']}" in text and "status: active" in text
    assert not any((repo.root / ".memzoi/proposals/pending").glob("*.md"))
    counts = Counter(e["event_type"] for e in events(ctx))
    assert counts == {
        "proposal_file_written": N,
        "proposal_file_applied": N,
        "import_runtime_written": 1,
        "import_applied": 1,
    }
    ids = [e["id"] for e in events(ctx)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)  # offsets: unique and increasing
    (summary,) = [e for e in events(ctx) if e["event_type"] == "import_applied"]
    assert summary["payload"]["applied"] == N
    # the index was refreshed once, by the apply: nothing is left to read, and search finds a record at once
    assert index_db.refresh(ctx.layout).read == ()
    found = ok_json(repo, "search", "quartz7")
    assert [r["record"]["id"] for r in found["results"]] == [next(w["record_id"] for w in packets if w["index"] == 7)]
    assert lifecycle.pending_transactions(ctx.layout) == ()


def test_every_packet_an_import_writes_is_read_by_the_fast_reader(repo: Repo, ctx: Workspace, tmp_path: Path) -> None:
    from git_memzoi.core import frontmatter
    from git_memzoi.memzoi.records import okf_subset

    approve(ctx, manifest(3, local=False), tmp_path / "home")
    written = sorted((repo.root / ".memzoi/proposals/resolved/applied").glob("*.md"))
    assert len(written) == 3
    for path in written:  # sources is a list of mappings: declined, each packet was parsed twice by the slow chain
        fields = okf_subset.load(frontmatter.split(path.read_bytes()).yaml_text)
        assert fields is not None and fields["sources"] == [{"path": "docs/handbook.md"}], path.name


def test_a_manual_policy_routes_the_import_to_review(repo: Repo, ctx: Workspace, tmp_path: Path) -> None:
    repo.write(".memzoi/config.toml", '[workflow]\nproposal_approval = "manual"\n')
    result = approve(ctx, manifest(), tmp_path / "home")
    assert (result["approval"]["mode"], result["approval"]["source"]) == ("manual", "repo")
    assert (result["approval"]["applied"], result["approval"]["routed_to_review"]) == (0, N)
    assert len(list((repo.root / ".memzoi/proposals/pending").glob("*.md"))) == N
    assert not any((repo.root / ".memzoi/records").glob("*.md"))
    assert all("record_id" not in w for w in result["writes"] if w["kind"] == "proposal_file")
    assert "proposal_file_applied" not in {e["event_type"] for e in events(ctx)}


def test_without_approve_nothing_is_applied_and_no_approval_is_reported(repo: Repo, ctx: Workspace) -> None:
    raw = manifest(3, local=False)
    plan = importer.plan(ctx, raw, actor="cli")
    result = importer_apply.apply(ctx, raw, plan_id=plan["plan_id"], actor="cli")
    assert "approval" not in result
    assert len(list((repo.root / ".memzoi/proposals/pending").glob("*.md"))) == 3


def test_a_failure_mid_batch_rolls_every_file_back(
    repo: Repo, ctx: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = manifest()
    plan = importer.plan(ctx, raw, actor="cli")
    before = tree(repo.root)
    from git_memzoi.core import atomic

    real, calls = atomic._filled_temp, []

    def failing(dir_fd: int, target: Path, *args: Any) -> Any:
        if "/.memzoi/" in str(target):  # a memory file of the batch, not the operation's own journal
            calls.append(target)
            if len(calls) == 5:  # four files written (no pending file: applied at once), the disk full at the fifth
                raise OSError(28, "No space left on device")
        return real(dir_fd, target, *args)

    monkeypatch.setattr(atomic, "_filled_temp", failing)
    with pytest.raises(OSError):
        importer_apply.apply(ctx, raw, plan_id=plan["plan_id"], actor="cli", approve=True, memzoi_home=tmp_path)
    assert len(calls) == 5
    assert tree(repo.root) == before  # no record, no packet, no event, no runtime record
    assert lifecycle.pending_transactions(ctx.layout) == ()


KILL = """
import os, sys
from pathlib import Path
from git_memzoi.core.clock import FixedClock
from git_memzoi.memzoi import workspace
from git_memzoi.memzoi.imports import apply, plan
from git_memzoi.memzoi.proposals import lifecycle
import datetime as dt, json
root, raw = Path(sys.argv[1]), json.loads(sys.argv[2])
now = dt.datetime(2026, 7, 1, 12, tzinfo=dt.UTC)
ws = workspace.open_workspace(root, clock=FixedClock(now.date(), now), actor="cli")
planned = plan.plan(ws, raw, actor="cli")
from git_memzoi.core import atomic
real, calls = atomic._filled_temp, []
def dying(dir_fd, target, *args):
    if "/.memzoi/" in str(target):  # a memory file of the batch, not the operation's own journal
        calls.append(1)
        if len(calls) == int(sys.argv[3]):
            os._exit(9)  # killed: no rollback, no cleanup
    return real(dir_fd, target, *args)
atomic._filled_temp = dying
apply.apply(ws, raw, plan_id=planned["plan_id"], actor="cli", approve=True, memzoi_home=root / "home")
"""


def test_a_kill_mid_batch_is_rolled_back_by_the_next_command(repo: Repo, ctx: Workspace) -> None:
    before = tree(repo.root)
    raw = json.dumps(manifest())
    proc = subprocess.run([sys.executable, "-c", KILL, str(repo.root), raw, "7"], capture_output=True)
    assert proc.returncode == 9, proc.stderr
    # killed at memory file 7: the batch writes its files folder by folder, the records first: six records in
    assert len(list((repo.root / ".memzoi/records").glob("*.md"))) == 6
    assert not any((repo.root / ".memzoi/proposals/resolved/applied").glob("*.md"))
    (left,) = lifecycle.pending_transactions(ctx.layout)
    assert (left.operation, left.kind) == ("import_apply", "operation")
    run(repo, "proposal-files", "list")  # any command heals first
    assert tree(repo.root) == before
    assert lifecycle.pending_transactions(ctx.layout) == ()
    # and the same plan applies now, as a whole
    assert approve(ctx, manifest(), repo.root / "home")["approval"]["applied"] == N


def pending_ids(repo: Repo, n: int) -> list[str]:
    raw = manifest(n, local=False)
    repo.write("manifest.json", json.dumps(raw))
    plan = ok_json(repo, "import", "plan", "--from-file", str(repo.root / "manifest.json"))
    done = ok_json(
        repo, "import", "apply", "--from-file", str(repo.root / "manifest.json"), "--plan-id", plan["plan_id"]
    )
    return [w["proposal_id"] for w in done["writes"]]


def test_cli_applies_several_named_packets_in_one_operation(repo: Repo, ctx: Workspace) -> None:
    ids = pending_ids(repo, 5)
    out = ok_json(repo, "proposal-files", "apply", *ids[:3])
    assert [r["proposal_id"] for r in out["results"]] == ids[:3]
    assert [r["replayed"] for r in out["results"]] == [False] * 3
    assert len(list((repo.root / ".memzoi/records").glob("*.md"))) == 3
    applied = [e for e in events(ctx) if e["event_type"] == "proposal_file_applied"]
    assert [e["proposal_id"] for e in applied] == ids[:3]
    again = ok_json(repo, "proposal-files", "apply", ids[0], ids[3])  # one applied earlier: a replay
    assert [(r["proposal_id"], r["replayed"]) for r in again["results"]] == [(ids[0], True), (ids[3], False)]
    text = run(repo, "proposal-files", "apply", ids[4], ids[1]).stdout
    assert text.splitlines()[0].startswith(f"applied {ids[4]}: created record ")
    assert text.splitlines()[1].startswith(f"{ids[1]} was already applied")


def test_cli_refuses_the_whole_batch_on_bad_input(repo: Repo, ctx: Workspace) -> None:
    ids = pending_ids(repo, 3)
    before = tree(repo.root)
    unknown = run(repo, "proposal-files", "apply", ids[0], "mem_nope", "--json")
    assert unknown.exit_code == 2 and json.loads(unknown.stdout)["error"]["code"] == "unknown_proposal"
    twice = run(repo, "proposal-files", "apply", ids[0], ids[0], "--json")
    assert twice.exit_code == 2 and json.loads(twice.stdout)["error"]["code"] == "duplicate_proposal"
    assert tree(repo.root) == before
    # a credential hand-edited into one pending packet: the batch is refused, the field named, never the value
    token = "ghp_" + "Zq3" * 12
    packet = repo.root / f".memzoi/proposals/pending/{ids[2]}.md"
    packet.write_text(packet.read_text("utf-8") + f"\nThe deploy token is {token}\n", "utf-8")
    before = tree(repo.root)
    held = run(repo, "proposal-files", "apply", ids[0], ids[2], "--json")
    assert held.exit_code == 2 and json.loads(held.stdout)["error"]["code"] == "prohibited_content_detected"
    assert token not in held.stdout + held.stderr
    assert tree(repo.root) == before


def test_cli_refuses_a_batch_holding_a_packet_that_is_not_repo_safe(repo: Repo, ctx: Workspace) -> None:
    ids = pending_ids(repo, 2)
    packet = repo.root / f".memzoi/proposals/pending/{ids[1]}.md"
    packet.write_text(packet.read_text("utf-8").replace("sensitivity: repo-safe", "sensitivity: sensitive"), "utf-8")
    before = tree(repo.root)
    out = run(repo, "proposal-files", "apply", ids[0], ids[1], "--json")
    assert out.exit_code == 1 and json.loads(out.stdout)["error"]["code"] == "repo_sensitivity_required"
    assert tree(repo.root) == before


def test_cli_import_apply_approve(repo: Repo, ctx: Workspace) -> None:
    repo.write("manifest.json", json.dumps(manifest(4, local=False)))
    where = str(repo.root / "manifest.json")
    plan = ok_json(repo, "import", "plan", "--from-file", where)
    text = run(repo, "import", "apply", "--from-file", where, "--plan-id", plan["plan_id"], "--approve").stdout
    assert "approved: 4 proposal(s) applied into records, 0 left for review (approval policy auto, default)" in text
    assert len(list((repo.root / ".memzoi/records").glob("*.md"))) == 4


def test_approve_scans_the_actor_it_adds_to_every_packet(repo: Repo, ctx: Workspace, tmp_path: Path) -> None:
    token = "ghp_" + "Zq3" * 12
    raw = manifest(2, local=False)
    plan = importer.plan(ctx, raw, actor=token)
    before = tree(repo.root)
    with pytest.raises(InputError) as err:
        importer_apply.apply(ctx, raw, plan_id=plan["plan_id"], actor=token, approve=True, memzoi_home=tmp_path)
    assert err.value.code == "prohibited_content_detected" and token not in err.value.message
    assert tree(repo.root) == before


def test_two_packets_of_one_batch_cannot_change_one_target(repo: Repo, ctx: Workspace) -> None:
    from tests.memzoi.proposals.test_proposal_files import packet_text, pending, record, supersede_packet

    record(repo, "legacy-auth")
    pending(repo, "replace", supersede_packet())
    drop = "  reason: obsolete\n  target: legacy-auth\n"
    pending(repo, "drop", packet_text("mem_drop", action="tombstone", proposal_extra=drop))
    before = tree(repo.root)
    out = run(repo, "proposal-files", "apply", "replace", "mem_drop", "--json")
    assert out.exit_code == 2 and json.loads(out.stdout)["error"]["code"] == "target_inactive"
    assert "changed by another packet of this batch" in out.stderr
    assert tree(repo.root) == before
    done = ok_json(repo, "proposal-files", "apply", "replace")  # alone, each applies as it always did
    assert (done["action"], done["target_id"]) == ("supersede", "legacy-auth")
