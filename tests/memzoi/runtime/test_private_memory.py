"""Private memory in the common git directory, shared by every worktree; the migration of an older version's
``.memzoi/local/``; and idempotent session ends and checkpoints keyed by ``(session_id, event_id)`` (issue 15)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.integrations import guard
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.runtime import migrate
from tests.support import repos
from tests.support.repos import Repo

BIN = Path(sys.executable).parent
LOCAL_RECORD = """---
id: local-old-note
kind: memory
profile: memzoi
type: fact
lane: semantic
title: "Old note"
description: Kept by an older version in .memzoi/local/.
timestamp: "2026-07-01T10:00:00Z"
updated: "2026-07-01T10:00:00Z"
status: active
scope: repo
visibility: private
content_class: local_only_state
confidence: 1
source: memzoi-local
retention: {}
origin:
  origin_key: "local-memory:local-old-note"
  route: local_memory
---

# Old note

Kept by an older version in .memzoi/local/.
"""
BATCH = """task: Wire the auth middleware
candidates:
  - destination: local
    type: preference
    title: Run auth tests with -x
    body: Stop at the first failing auth test.
  - destination: repo
    type: decision
    title: Auth lives in middleware
    body: Every route goes through the auth middleware.
    sensitivity: repo-safe
  - destination: session
    title: Middleware wiring done
    body: Routes are wired; integration tests next.
"""


def project(tmp_path: Path) -> Repo:
    """A repository with ``.memzoi/`` committed (a record, so the folder exists in every checkout)."""
    repo = repos.new_repo(tmp_path / "main")
    assert repos.run(repo, "init").exit_code == 0
    repo.write(".memzoi/records/.keep", "")
    repo.commit("memory")
    return repo


def worktree(repo: Repo, name: str) -> Repo:
    """A linked worktree of ``repo`` on a new branch, as a parallel agent gets one."""
    path = repo.root.parent / name
    repo.git("worktree", "add", "-q", "-b", name, str(path))
    return Repo(path)


def cli(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    """``git-memzoi -C <repo> ...`` as a subprocess (exit codes as a hook sees them)."""
    env = {**os.environ, **repos.PINNED}
    return subprocess.run(
        [str(BIN / "git-memzoi"), "-C", str(repo.root), *args], capture_output=True, text=True, env=env, check=False
    )


def as_json(repo: Repo, *args: str, code: int = 0) -> Any:
    result = repos.run(repo, *args, "--json")
    assert result.exit_code == code, (result.stdout, result.stderr)
    return json.loads(result.stdout)


# ------------------------------------------------------------------------------------------------ where it lives


def test_two_worktrees_of_one_repository_see_the_same_private_memory(tmp_path: Path) -> None:
    main = project(tmp_path)
    agent = worktree(main, "agent-1")
    added = as_json(agent, "local", "add", "--type", "fact", "--title", "Shared fact", "--body", "Seen by all.")
    private = Layout(main.root).private
    assert Layout(agent.root).private == private == main.root / ".git" / "memzoi" / "local"
    assert added["path"] == (private / "runtime/local/local-shared-fact.md").as_posix()  # absolute from a worktree
    assert [r["id"] for r in as_json(main, "local", "list")["records"]] == ["local-shared-fact"]
    searched = as_json(main, "local", "search", "seen")
    assert [r["record"]["id"] for r in searched["results"]] == ["local-shared-fact"]
    as_json(main, "checkpoint", "add", "--task", "Resume auth", "--note", "Halfway.")
    listed = cli(agent, "checkpoint", "list", "--json")
    assert listed.returncode == 0 and [r["id"] for r in json.loads(listed.stdout)["records"]] == ["session-resume-auth"]
    # one lock for the memory they share; an index and journals of each worktree's own
    assert Layout(agent.root).lock == Layout(main.root).lock == private / "lifecycle.lock"
    assert Layout(agent.root).index == main.root / ".git/worktrees/agent-1/memzoi/worktree/index.sqlite"
    assert Layout(main.root).index == main.root / ".git/memzoi/worktree/index.sqlite"
    assert Layout(agent.root).journals == Layout(main.root).journals == private / "journals"
    # nothing private in either working tree
    for tree in (main, agent):
        assert tree.git("status", "--porcelain", "--untracked-files=all", "--ignored") == ""


def test_a_worktree_checked_out_before_memzoi_was_committed_is_told_to_commit_it(tmp_path: Path) -> None:
    """A fresh user's walk: the error said `git memzoi init`, which would have started a second store."""
    main = repos.new_repo(tmp_path / "main")
    main.commit("base")
    assert repos.run(main, "init").exit_code == 0  # .memzoi/ made, not committed
    early = worktree(main, "early")
    result = repos.run(early, "search", "x", "--json", prog_name="git-memzoi")
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "not_initialized"
    assert result.stderr == (
        f"git-memzoi: error: no Memzoi memory in this worktree ({early.root}): the main worktree {main.root} has"
        " .memzoi/, but this checkout does not; commit .memzoi/ there and check that commit out here"
        " (`git memzoi init` here would start a separate store)\n"
    )
    from git_memzoi.integrations import quickstart
    from git_memzoi.memzoi import doctor

    (memory,) = [c for c in doctor.run(early.root).checks if c.name == "memory"]
    assert (memory.status, memory.message) == (
        "fail",
        f"no .memzoi/ in this worktree; the main worktree {main.root} has one",
    )
    assert memory.next_step.startswith(f"commit .memzoi/ in {main.root} and check that commit out here")
    first = quickstart.survey(early.root).steps[0]
    assert (first.name, first.done) == ("init", False) and first.command.startswith(f"commit .memzoi/ in {main.root}")
    alone = repos.new_repo(tmp_path / "alone")
    assert (
        repos.run(alone, "search", "x", prog_name="git-memzoi").stderr
        == f"git-memzoi: error: no Memzoi memory in {alone.root}: run `git memzoi init` first\n"
    )


def test_private_memory_can_never_be_committed(tmp_path: Path) -> None:
    main = project(tmp_path)
    written = as_json(main, "local", "add", "--type", "fact", "--title", "Secret plan", "--body", "Private.")
    assert written["path"] == ".git/memzoi/local/runtime/local/local-secret-plan.md"
    main.git("add", "-f", "--", written["path"])  # git never stages a file of its own directory
    assert main.git("diff", "--cached", "--name-only") == ""


def test_the_guard_still_refuses_a_force_added_legacy_private_file(tmp_path: Path) -> None:
    main = project(tmp_path)
    main.write(".memzoi/local/notes.md", "private notes\n")
    main.git("add", "-f", ".memzoi/local/notes.md")
    result = guard.pre_commit(main.root)
    assert [(f.path, f.rule) for f in result.violations] == [(".memzoi/local/notes.md", "private_local")]
    assert result.exit_code == 1


def test_labels_and_confinement_roots(tmp_path: Path) -> None:
    main = project(tmp_path)
    agent = worktree(main, "agent-2")
    layout, linked = Layout(main.root), Layout(agent.root)
    assert layout.label(layout.runtime("local") / "x.md") == ".git/memzoi/local/runtime/local/x.md"
    assert (
        linked.label(linked.runtime("local") / "x.md")
        == (main.root / ".git/memzoi/local/runtime/local/x.md").as_posix()
    )
    assert linked.root / linked.label(linked.runtime("local")) == linked.runtime("local")
    assert layout.root_for(layout.events) == main.root / ".git" / "memzoi"
    assert linked.root_for(linked.index) == main.root / ".git/worktrees/agent-2/memzoi"
    assert linked.root_for(agent.root / ".memzoi/records/r.md") == agent.root


def test_outside_git_the_private_folder_is_memzoi_local(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    assert layout.private == layout.derived == layout.legacy_local == tmp_path / ".memzoi" / "local"
    assert layout.root_for(layout.events) == tmp_path and not migrate.pending(layout)


# ------------------------------------------------------------------------------------------------ migration


def legacy(repo: Repo) -> dict[str, bytes]:
    """What an older version left in ``.memzoi/local/``: a local record, the event log, inbox state, a private
    packet, and derived caches."""
    files = {
        "runtime/local/local-old-note.md": LOCAL_RECORD.encode(),
        "events.jsonl": b'{"id":"evt_000000000000","event_type":"memory.local_created"}\n',
        "inbox/prop_1.json": b'{"status": "pending"}\n',
        "proposals/prop_1.md": b"a private packet\n",
        "notes/mine.txt": b"an unknown file is kept too\n",
    }
    for rel, data in files.items():
        path = repo.root / ".memzoi/local" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (repo.root / ".memzoi/local/index.sqlite").write_bytes(b"an old index")
    (repo.root / ".memzoi/local/lifecycle.lock").write_bytes(b"")
    return files


def private_files(layout: Layout) -> dict[str, bytes]:
    return {
        p.relative_to(layout.private).as_posix(): p.read_bytes()
        for p in sorted(layout.private.rglob("*"))
        if p.is_file() and p.name != "lifecycle.lock" and not p.name.startswith(".")
    }


def test_an_old_memzoi_local_is_migrated_on_first_use_losing_nothing(tmp_path: Path) -> None:
    main = project(tmp_path)
    files = legacy(main)
    assert [r["id"] for r in as_json(main, "local", "list")["records"]] == ["local-old-note"]
    layout = Layout(main.root)
    assert not layout.legacy_local.exists()
    assert private_files(layout) == files
    assert not (layout.private / "index.sqlite").exists()  # derived: rebuilt where this worktree keeps it
    assert layout.index.is_file()
    doctor = as_json(main, "doctor", code=0)
    local = next(c for c in doctor["checks"] if c["name"] == "local")
    assert (local["status"], local["message"]) == (
        "ok",
        "private memory in .git/memzoi/local/ (shared by every worktree) holds only what it should",
    )


def test_a_migration_killed_part_way_is_finished_by_the_next_command(tmp_path: Path) -> None:
    main = project(tmp_path)
    files = legacy(main)
    # a real process death: the migrating process exits hard right after its second link, before its unlink
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from git_memzoi.core import atomic\n"
        "from git_memzoi.memzoi.layout import Layout\n"
        "from git_memzoi.memzoi.runtime import migrate\n"
        "real, calls = atomic.move_new, []\n"
        "def dying(*args, **kwargs):\n"
        "    calls.append(1)\n"
        "    if len(calls) == 2:\n"
        "        source, target = args\n"
        "        os.makedirs(target.parent, exist_ok=True)\n"
        "        os.link(source, target)\n"
        "        os._exit(9)\n"
        "    return real(*args, **kwargs)\n"
        "atomic.move_new = dying\n"
        "migrate.migrate(Layout(Path(sys.argv[1])).require())\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(main.root)], capture_output=True, check=False)
    assert proc.returncode == 9, proc.stderr
    layout = Layout(main.root)
    assert layout.legacy_local.exists() and private_files(layout)  # some files in each place
    assert as_json(main, "local", "list")["count"] == 1
    assert not layout.legacy_local.exists()
    assert private_files(layout) == files  # nothing lost, nothing doubled, no conflict
    assert migrate.conflicts(layout) == []


KILLED_IN_A_WORKTREE = """
import os, sys
from pathlib import Path
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.proposals import lifecycle
layout = Layout(Path(sys.argv[1]))
with lifecycle.operation(layout, "import_apply"):
    for name in ("one", "two"):
        path = layout.runtime("local") / f"local-killed-{name}.md"
        lifecycle.write_step(layout, lifecycle.Step(path, b"half an import"))
    lifecycle.write_step(layout, lifecycle.Step(layout.root / ".memzoi/records/killed.md", b"half"))
    os._exit(9)  # killed: no rollback, no cleanup
"""


@pytest.mark.parametrize("removed", [False, True], ids=["worktree kept", "worktree removed"])
def test_an_operation_killed_in_one_worktree_is_rolled_back_by_the_next_command_in_another(
    tmp_path: Path, removed: bool
) -> None:
    """The journal lives in the private folder every worktree shares, naming its worktree: the main worktree's
    next command rolls back the shared private files (and the agent's own files while its worktree exists)."""
    main = project(tmp_path)
    agent = worktree(main, "agent-9")
    proc = subprocess.run([sys.executable, "-c", KILLED_IN_A_WORKTREE, str(agent.root)], capture_output=True)
    assert proc.returncode == 9, proc.stderr
    runtime = Layout(main.root).runtime("local")
    assert sorted(p.name for p in runtime.iterdir()) == ["local-killed-one.md", "local-killed-two.md"]
    assert (agent.root / ".memzoi/records/killed.md").exists()
    if removed:
        main.git("worktree", "remove", "--force", str(agent.root))
    assert as_json(main, "local", "list")["count"] == 0  # rolled back before the read
    assert list(runtime.iterdir()) == []
    assert not any(Layout(main.root).journals.iterdir())
    if not removed:
        assert not (agent.root / ".memzoi/records/killed.md").exists()


def test_a_file_in_both_places_keeps_both_and_doctor_names_it(tmp_path: Path) -> None:
    main = project(tmp_path)
    agent = worktree(main, "agent-3")
    as_json(main, "local", "add", "--type", "fact", "--title", "Main fact", "--body", "From main.")
    events_before = (Layout(main.root).events).read_bytes()
    old_log = agent.root / ".memzoi/local/events.jsonl"
    old_log.parent.mkdir(parents=True)
    old_log.write_bytes(b'{"id":"evt_000000000000","event_type":"memory.searched"}\n')
    result = cli(agent, "doctor", "--json")  # doctor reads only: it reports, it never migrates
    local = next(c for c in json.loads(result.stdout)["checks"] if c["name"] == "local")
    assert local["status"] == "warn" and "not migrated yet" in local["message"]

    as_json(agent, "local", "list")
    layout = Layout(agent.root)
    kept = layout.private / migrate.CONFLICTS / migrate._worktree_tag(layout) / "events.jsonl"
    assert kept.read_bytes() == b'{"id":"evt_000000000000","event_type":"memory.searched"}\n'
    assert Layout(main.root).events.read_bytes().startswith(events_before)  # never overwritten
    local = next(c for c in as_json(agent, "doctor", code=0)["checks"] if c["name"] == "local")
    assert local["status"] == "warn"
    assert local["message"] == (
        f"private memory in {layout.label(layout.private)}/; the migration kept 1 conflicting file(s): "
        f"{layout.label(kept)}"
    )


def test_an_old_interrupted_operation_is_rolled_back_before_its_files_move(tmp_path: Path) -> None:
    main = project(tmp_path)
    legacy(main)
    txdir = main.root / ".memzoi/local/transactions/0123456789abcdef"
    txdir.mkdir(parents=True)
    (main.root / ".memzoi/local/runtime/local/local-half-written.md").write_text("half\n")
    journal = {
        "version": 1,
        "operation": "session_end",
        "committed": False,
        "entries": [{"path": ".memzoi/local/runtime/local/local-half-written.md", "existed": False}],
    }
    (txdir / "journal.json").write_text(json.dumps(journal))
    assert [r["id"] for r in as_json(main, "local", "list")["records"]] == ["local-old-note"]
    layout = Layout(main.root)
    assert not (layout.runtime("local") / "local-half-written.md").exists()
    assert not layout.legacy_local.exists() and not layout.interrupted()


# ------------------------------------------------------------------------------------------------ idempotence


def session_end(repo: Repo, batch: Path, *ids: str, code: int = 0) -> Any:
    return as_json(repo, "session-end", "--from-file", str(batch), *ids, code=code)


def test_a_replayed_session_end_is_reused_and_writes_nothing_twice(tmp_path: Path) -> None:
    main = project(tmp_path)
    batch = tmp_path / "end.yml"
    batch.write_text(BATCH)
    ids = ("--session-id", "sess-42", "--event-id", "end-1")
    first = session_end(main, batch, *ids)
    assert (first["status"], first["session_id"], first["event_id"], first["reused"]) == (
        "promoted",
        "sess-42",
        "end-1",
        False,
    )
    before = repos.tree(main.root)
    again = session_end(main, batch, *ids)
    assert again == {**first, "reused": True}
    assert repos.tree(main.root) == before  # no -2 proposal, no duplicate record, no event
    agent = worktree(main, "agent-4")  # the key store is shared: a replay from another worktree is reused too
    assert session_end(agent, batch, *ids) == {**first, "reused": True}
    assert [r["id"] for r in as_json(main, "local", "list")["records"]] == ["local-run-auth-tests-with-x"]


def test_a_changed_payload_under_the_same_key_is_refused(tmp_path: Path) -> None:
    main = project(tmp_path)
    batch = tmp_path / "end.yml"
    batch.write_text(BATCH)
    ids = ("--session-id", "sess-42", "--event-id", "end-1")
    session_end(main, batch, *ids)
    batch.write_text(BATCH.replace("Stop at the first failing auth test.", "Run them all."))
    before = repos.tree(main.root)
    refused = session_end(main, batch, *ids, code=2)
    assert refused["error"]["code"] == "checkpoint_mismatch"
    assert repos.tree(main.root) == before
    proc = cli(main, "session-end", "--from-file", str(batch), *ids)
    assert proc.returncode == 2 and proc.stderr.startswith("git-memzoi: error: ") and proc.stderr.count("\n") == 1
    assert "Run them all" not in proc.stderr
    # a new event id is a new event
    assert session_end(main, batch, "--session-id", "sess-42", "--event-id", "end-2")["reused"] is False


def test_without_an_event_id_the_payload_names_the_event(tmp_path: Path) -> None:
    main = project(tmp_path)
    batch = tmp_path / "end.yml"
    batch.write_text(BATCH)
    first = session_end(main, batch, "--session-id", "sess-7")
    assert first["event_id"].startswith("sha256:") and first["reused"] is False
    assert session_end(main, batch, "--session-id", "sess-7")["reused"] is True
    refused = as_json(main, "session-end", "--from-file", str(batch), "--event-id", "e", code=2)
    assert refused["error"]["code"] == "bad_usage"


def test_a_replayed_checkpoint_is_reused_and_a_changed_one_refused(tmp_path: Path) -> None:
    main = project(tmp_path)
    args = ("checkpoint", "add", "--task", "Resume auth", "--session-id", "s", "--event-id", "c1")
    first = as_json(main, *args, "--note", "Halfway.")
    assert (first["record"]["id"], first["reused"]) == ("session-resume-auth", False)
    assert as_json(main, *args, "--note", "Halfway.") == {**first, "reused": True}
    before = repos.tree(main.root)
    assert as_json(main, *args, "--note", "Done.", code=2)["error"]["code"] == "checkpoint_mismatch"
    assert repos.tree(main.root) == before
    assert [r["id"] for r in as_json(main, "checkpoint", "list")["records"]] == ["session-resume-auth"]
    unkeyed = as_json(main, "checkpoint", "add", "--task", "Resume auth", "--note", "Halfway.")
    assert "reused" not in unkeyed and unkeyed["record"]["id"] == "session-resume-auth-2"  # no key: a new one


def claim_path(repo: Repo, kind: str, session_id: str, event_id: str) -> Path:
    from git_memzoi.memzoi.runtime.replay import Key

    return Layout(repo.root).replay / f"{Key(kind, session_id, event_id, '').name}.claim"


def test_a_replay_while_the_event_runs_elsewhere_is_refused(tmp_path: Path) -> None:
    main = project(tmp_path)
    batch = tmp_path / "end.yml"
    batch.write_text(BATCH)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        claim = claim_path(main, "session_end", "sess-9", "end-1")
        claim.parent.mkdir(parents=True, exist_ok=True)
        claim.write_text(json.dumps({"pid": holder.pid, "session_id": "sess-9", "event_id": "end-1"}))
        before = repos.tree(main.root)
        ids = ("--session-id", "sess-9", "--event-id", "end-1")
        assert session_end(main, batch, *ids, code=2)["error"]["code"] == "checkpoint_in_progress"
        assert cli(main, "session-end", "--from-file", str(batch), *ids).returncode == 2
        assert repos.tree(main.root) == before
    finally:
        holder.kill()
        holder.wait()
    # its holder is gone: the claim is stale, the event runs once and the claim is released
    assert session_end(main, batch, "--session-id", "sess-9", "--event-id", "end-1")["reused"] is False
    assert not claim.exists()


def test_invalid_ids_are_refused(tmp_path: Path) -> None:
    main = project(tmp_path)
    args = ("checkpoint", "add", "--task", "T", "--note", "N")
    assert as_json(main, *args, "--session-id", "a\nb", code=2)["error"]["code"] == "invalid_event_id"
    assert as_json(main, *args, "--session-id", "s", "--event-id", "x" * 201, code=2)["error"]["code"] == (
        "invalid_event_id"
    )


@pytest.mark.parametrize(
    ("hook", "ids"),
    [
        ({"session_id": "abc", "hook_event_name": "PreCompact"}, ("abc", None)),
        ({"session_id": "abc", "event_id": "e"}, ("abc", "e")),
        ({"session_id": 3}, (None, None)),
    ],
)
def test_ids_from_a_hook_input(hook: dict[str, Any], ids: tuple[str | None, str | None]) -> None:
    from git_memzoi.memzoi.runtime.replay import ids_from_hook

    assert ids_from_hook(hook) == ids


def test_commands_that_list_private_memory_work_from_a_linked_worktree(tmp_path: Path) -> None:
    """Capture's inventory read the runtime folders relative to the working tree: from a linked worktree (where
    they are outside it) that was an internal error."""
    main = project(tmp_path)
    agent = worktree(main, "agent-5")
    as_json(main, "local", "add", "--type", "fact", "--title", "Shared fact", "--body", "Seen by all.")
    agent.write("notes.md", "# Notes\n\n## Decision: Use pnpm\n\nThe repo uses pnpm for installs.\n")
    plan = as_json(agent, "capture", "plan", "--source", "notes.md")
    assert plan["status"] == "ready"
    batch = tmp_path / "end.yml"
    batch.write_text(BATCH)
    ended = as_json(agent, "session-end", "--from-file", str(batch))
    assert [w["kind"] for w in ended["writes"]] == ["runtime_record", "proposal_file", "runtime_record"]
    assert sorted(r["id"] for r in as_json(main, "local", "list")["records"]) == [
        "local-run-auth-tests-with-x",
        "local-shared-fact",
    ]


def test_an_old_journal_naming_an_absolute_path_is_never_rolled_back(tmp_path: Path) -> None:
    """A journal under .memzoi/local/ can arrive in a commit: it may not restore files of the git directory."""
    main = project(tmp_path)
    as_json(main, "local", "add", "--type", "fact", "--title", "Real fact", "--body", "True.")
    target = Layout(main.root).runtime("local") / "local-real-fact.md"
    before = target.read_bytes()
    txdir = main.root / ".memzoi/local/transactions/0123456789abcdef"
    txdir.mkdir(parents=True)
    (txdir / "0.bak").write_text("planted\n")
    entries = [{"path": target.as_posix(), "existed": True}]
    (txdir / "journal.json").write_text(json.dumps({"version": 1, "operation": "x", "entries": entries}))
    result = repos.run(main, "local", "list", "--json")
    assert result.exit_code != 0 and "absolute path" in result.stderr and result.stderr.count("\n") == 1
    assert target.read_bytes() == before


def test_what_cannot_move_stays_and_doctor_says_so(tmp_path: Path) -> None:
    main = project(tmp_path)
    files = legacy(main)
    outside = tmp_path / "outside.txt"
    outside.write_text("not memory\n")
    (main.root / ".memzoi/local/notes/link").symlink_to(outside)  # an unknown path: never followed, never moved
    assert [r["id"] for r in as_json(main, "local", "list")["records"]] == ["local-old-note"]
    layout = Layout(main.root)
    assert private_files(layout) == files and not (layout.private / "notes/link").exists()
    assert sorted(p.relative_to(layout.legacy_local).as_posix() for p in layout.legacy_local.rglob("*")) == [
        "notes",
        "notes/link",
    ]
    assert outside.read_text() == "not memory\n"
    local = next(c for c in as_json(main, "doctor", code=0)["checks"] if c["name"] == "local")
    assert (local["status"], local["message"]) == (
        "warn",
        "private memory in .git/memzoi/local/; .memzoi/local/ of an older version is not migrated yet (or holds "
        "what could not move)",
    )
