"""Whole commands as one all-or-nothing operation (issue 13, crash leftovers): ``lifecycle.operation`` journals every
file it changes before the change, rolls all of them back on a failure, and leaves a journal after a kill that the
next command - any command, a read included - rolls back; a packet that vanishes while it is read is skipped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.memzoi.proposals import files as proposal_files
from git_memzoi.memzoi.proposals import inbox, lifecycle
from git_memzoi.memzoi.proposals.lifecycle import Step
from git_memzoi.memzoi.workspace import Workspace, open_workspace
from tests.support import repos
from tests.support.repos import Repo, tree

KILLED_MID_OPERATION = """\
import os, signal, sys
from pathlib import Path
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.proposals import lifecycle

layout = Layout(Path(sys.argv[1]))
with lifecycle.operation(layout, "drill"):
    lifecycle.write_step(layout, lifecycle.Step(layout.records / "kept.md", b"changed\\n"))
    lifecycle.write_step(layout, lifecycle.Step(layout.records / "new.md", b"new\\n"))
    lifecycle.write_step(layout, lifecycle.Step(layout.records / "gone.md", None))
    os.kill(os.getpid(), signal.SIGKILL)
"""


def seeded(repo: Repo) -> Workspace:
    ws = repos.memzoi_workspace(repo)
    (ws.layout.records / "kept.md").write_bytes(b"kept\n")
    (ws.layout.records / "gone.md").write_bytes(b"gone\n")
    return ws


def test_a_failed_operation_restores_every_file(repo: Repo) -> None:
    ws = seeded(repo)
    before = tree(repo.root)
    with pytest.raises(RuntimeError), lifecycle.operation(ws.layout, "drill"):
        lifecycle.write_step(ws.layout, Step(ws.layout.records / "kept.md", b"changed\n"))
        lifecycle.write_step(ws.layout, Step(ws.layout.records / "new.md", b"new\n"))
        lifecycle.write_step(ws.layout, Step(ws.layout.records / "gone.md", None))
        raise RuntimeError("a later step failed")
    assert tree(repo.root) == before
    assert lifecycle.pending_transactions(ws.layout) == ()


def test_a_killed_operation_is_rolled_back_by_the_next_command_even_a_read(repo: Repo) -> None:
    ws = seeded(repo)
    before = tree(repo.root)
    proc = subprocess.run([sys.executable, "-c", KILLED_MID_OPERATION, str(repo.root)], check=False)
    assert proc.returncode == -signal.SIGKILL
    assert (ws.layout.records / "new.md").read_bytes() == b"new\n"  # half done on disk
    [tx] = lifecycle.pending_transactions(ws.layout)
    assert (tx.operation, tx.kind, tx.files) == ("drill", "operation", 3)
    checks = {c["name"]: c for c in json.loads(repos.run(repo, "doctor", "--json").stdout)["checks"]}
    assert checks["transactions"]["status"] == "warn" and "drill" in checks["transactions"]["message"]
    assert repos.run(repo, "proposals", "list").exit_code == 0  # a read: it heals first
    assert tree(repo.root) == before
    assert lifecycle.pending_transactions(ws.layout) == ()


def test_healing_never_waits_for_a_live_writer(repo: Repo) -> None:
    ws = seeded(repo)
    code = (
        "import sys, time; from pathlib import Path; from git_memzoi.memzoi.layout import Layout\n"
        "from git_memzoi.memzoi.proposals import lifecycle\n"
        "layout = Layout(Path(sys.argv[1]))\n"
        "with lifecycle.operation(layout, 'slow'):\n"
        "    print('inside', flush=True); time.sleep(10)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(repo.root)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "inside\n"
        started = time.monotonic()
        open_workspace(repo.root)  # sees the live journal, finds the lock held, goes on
        assert time.monotonic() - started < 2
        assert [t.operation for t in lifecycle.pending_transactions(ws.layout)] == ["slow"]
    finally:
        holder.kill()
        holder.wait()


def test_propose_apply_that_fails_after_the_packet_is_written_leaves_nothing(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = repos.memzoi_workspace(repo)
    before = {k: v for k, v in tree(repo.root).items() if not k.endswith("events.jsonl")}

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(proposal_files, "apply_packet", broken)
    draft = inbox.make_draft(
        title="Use tabs", body="We indent with tabs.", type="decision", sensitivity="repo-safe", actor="zoki"
    )
    with pytest.raises(OSError, match="No space left"):
        inbox.propose(ws, draft, memzoi_home=None, apply=True)
    after = {k: v for k, v in tree(repo.root).items() if not k.endswith("events.jsonl")}
    assert after == before  # no pending packet, no inbox state: the proposal never happened
    assert lifecycle.pending_transactions(ws.layout) == ()


def test_a_packet_or_record_that_vanishes_while_it_is_read_is_skipped(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from git_memzoi.memzoi.records import store as record_store

    ws = repos.memzoi_workspace(repo)
    real = record_store.markdown_files

    def listing(root: Path, links: list[Path] | None = None) -> list[Path]:
        # listed, then moved (a packet applied) or removed (a record rolled back) before it is read
        return [*real(root, links), root / "moved-meanwhile.md"]

    monkeypatch.setattr(record_store, "markdown_files", listing)
    assert proposal_files.inventory(ws.layout).pending() == ()
    assert record_store.scan(ws.layout).problems == ()
    result = repos.run(repo, "doctor", "--json")
    assert result.exit_code == 0
    checks = {c["name"]: c["status"] for c in json.loads(result.stdout)["checks"]}
    assert checks["proposals"] == checks["records"] == "ok"


def test_temporary_files_of_a_dead_memkeep_writer_are_reported_then_swept(repo: Repo) -> None:
    repo.commit("start", **{"agent-memory/entries/a.md": repos.entry_text("a", anchor=None)})
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True).stdout)
    left = repo.root / "agent-memory" / "entries" / f".a.md.{dead}-0123456789ab.tmp"
    left.write_text("half")
    assert repos.run(repo, "init").exit_code == 0
    checks = {c["name"]: c for c in json.loads(repos.run(repo, "doctor", "--json").stdout)["checks"]}
    assert checks["leftovers"]["status"] == "warn"
    assert checks["leftovers"]["message"] == (
        f"1 temporary file(s) left by interrupted writes: agent-memory/entries/{left.name}"
    )
    assert repos.memkeep("-C", str(repo.root), "index").exit_code == 0
    assert not left.exists() and os.path.exists(repo.root / "agent-memory" / "INDEX.md")
