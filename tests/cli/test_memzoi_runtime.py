"""``git memzoi`` runtime commands: local, checkpoint, session-end, events export and rebuild.

Commands run in-process through click's CliRunner against real repositories in tmp_path, with the clock pinned
by ``MEMZOI_NOW``; outputs are compared as exact values.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from git_memzoi.cli.memzoi import cli
from tests.support.repos import NOW_TEXT as NOW
from tests.support.repos import PINNED, SEED_YAML, Repo, invoke, ok_json, run


def initialized(repo: Repo) -> Repo:
    assert run(repo, "init").exit_code == 0
    return repo


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and (".git" not in p.relative_to(root).parts or p.is_relative_to(root / ".git/memzoi/local"))
        and p.name != "lifecycle.lock"
    }


def test_local_add_list_search(repo: Repo) -> None:
    initialized(repo)
    added = ok_json(
        repo,
        "local",
        "add",
        "--type",
        "preference",
        "--title",
        "Terse answers",
        "--body",
        "Prefer short replies.",
        "--actor",
        "agent-7",
    )
    record = {
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
        "created_at": NOW,
        "updated_at": NOW,
        "supersedes_id": None,
        "retention": {},
        "origin": {"origin_key": "local-memory:local-terse-answers", "route": "local_memory"},
        "lineage": None,
    }
    assert added == {"ok": True, "record": record, "path": ".git/memzoi/local/runtime/local/local-terse-answers.md"}
    assert ok_json(repo, "local", "list") == {"ok": True, "destination": "local", "count": 1, "records": [record]}
    assert run(repo, "local", "list").stdout == "local-terse-answers\tpreference\tTerse answers\n"

    found = ok_json(repo, "local", "search", "short replies", "--limit", "5")
    assert (found["query"], found["destination"], found["limit"]) == ("short replies", "local", 5)
    assert [r["record"] for r in found["results"]] == [record]
    assert found["results"][0]["citations"][0]["provenance"] == "runtime"
    assert run(repo, "local", "search", "nothing-like-it").stdout == "no matching local records\n"
    assert repo.git("status", "--porcelain", "--untracked-files=all").splitlines() == [
        "?? .memzoi/.gitignore",
        "?? .memzoi/index.md",
        "?? .memzoi/initialized",
    ]


def test_local_add_errors_exit_2_and_write_nothing(repo: Repo) -> None:
    initialized(repo)
    before = files(repo.root)
    result = run(repo, "local", "add", "--type", "opinion", "--title", "t", "--body", "b", "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "invalid_type"
    assert files(repo.root) == before


def test_checkpoint_add_and_list(repo: Repo, tmp_path: Path) -> None:
    initialized(repo)
    notes = tmp_path / "notes.md"
    notes.write_text("Wired the routes.\n", "utf-8")
    added = ok_json(repo, "checkpoint", "add", "--task", "Implement auth middleware", "--from-file", str(notes))
    assert added["path"] == ".git/memzoi/local/runtime/session/session-implement-auth-middleware.md"
    record = added["record"]
    assert {
        k: record[k]
        for k in ("id", "destination", "lane", "memory_type", "visibility", "source_kind", "body", "retention")
    } == {
        "id": "session-implement-auth-middleware",
        "destination": "session",
        "lane": "session",
        "memory_type": "episode",
        "visibility": "private",
        "source_kind": "memzoi-checkpoint",
        "body": "Wired the routes.",
        "retention": {"started_at": NOW},
    }
    assert ok_json(repo, "checkpoint", "list")["records"] == [record]
    both = run(repo, "checkpoint", "add", "--task", "t", "--note", "n", "--from-file", str(notes))
    assert both.exit_code == 2 and "exactly one of --note or --from-file" in both.stderr


def test_session_end_seed_example(repo: Repo, tmp_path: Path) -> None:
    initialized(repo)
    notes = tmp_path / "notes.yml"
    notes.write_text(SEED_YAML, "utf-8")

    out = ok_json(repo, "session-end", "--from-file", str(notes))

    path = ".memzoi/proposals/pending/protected-routes-validate-sessions-server-side.md"
    assert out == {
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
    assert (repo.root / path).is_file()
    assert list((repo.root / ".memzoi/records").iterdir()) == []
    text = run(repo, "session-end", "--from-file", str(notes))
    assert text.stdout == (
        "candidate 0 (repo): proposal protected-routes-validate-sessions-server-side-2 "
        "(.memzoi/proposals/pending/protected-routes-validate-sessions-server-side-2.md)\n"
    )


def test_session_end_blocked_batch_writes_nothing_and_never_prints_the_title(repo: Repo, tmp_path: Path) -> None:
    initialized(repo)
    notes = tmp_path / "notes.yml"
    notes.write_text(
        SEED_YAML
        + """\
  - destination: local
    type: fact
    title: Local finding
    body: Fine locally.
  - destination: repo
    type: fact
    title: Ultraviolet canary endpoint
    body: The ultraviolet canary lives at an internal host.
    sensitivity: secret
""",
        "utf-8",
    )
    before = files(repo.root)

    for args in (("--json",), ()):
        result = run(repo, "session-end", "--from-file", str(notes), *args)
        assert result.exit_code == 1
        assert "ultraviolet" not in (result.stdout + result.stderr).lower()
        assert files(repo.root) == before
    out = json.loads(run(repo, "session-end", "--from-file", str(notes), "--json").stdout)
    assert out["ok"] is False and out["writes"] == []
    assert out["error"]["code"] == "repo_sensitivity_required"
    assert out["results"][2] == {
        "index": 2,
        "destination": "repo",
        "action": "blocked",
        "code": "repo_sensitivity_required",
        "classification": "secret",
        "title": "[redacted]",
    }


def test_session_end_rejects_free_text(repo: Repo, tmp_path: Path) -> None:
    initialized(repo)
    notes = tmp_path / "notes.md"
    notes.write_text("We learned that the auth tests are flaky.\n", "utf-8")
    result = run(repo, "session-end", "--from-file", str(notes), "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "unstructured_input"
    checkpoint = ok_json(repo, "checkpoint", "add", "--task", "Auth", "--note", "free text, no YAML here")
    result = run(repo, "session-end", "--from-checkpoint", checkpoint["record"]["id"], "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "unstructured_input"
    assert run(repo, "session-end").exit_code == 2


def test_events_export_jsonl(repo: Repo) -> None:
    initialized(repo)
    empty = run(repo, "events", "export", "--jsonl")
    assert (empty.exit_code, empty.stdout) == (0, "")
    run(repo, "local", "add", "--type", "fact", "--title", "One", "--body", "First.")
    run(repo, "checkpoint", "add", "--task", "Two", "--note", "Second.", "--actor", "agent-7")

    lines = run(repo, "events", "export", "--jsonl").stdout.splitlines()

    first = (
        '{"actor":"cli","created_at":"2026-07-10T12:00:00Z","event_type":"memory.local_created",'
        '"id":"evt_000000000000","payload":{"destination":"local","memory_type":"fact","route":"local_memory"},'
        '"proposal_id":null,"record_id":"local-one"}'
    )
    second_id = f"evt_{len(first.encode()) + 1:012d}"  # an event's id is the log's byte offset of its line
    assert lines == [
        first,
        (
            '{"actor":"agent-7","created_at":"2026-07-10T12:00:00Z","event_type":"memory.checkpoint_created",'
            f'"id":"{second_id}","payload":{{"destination":"session","memory_type":"episode",'
            '"route":"checkpoint_create"},"proposal_id":null,"record_id":"session-two"}'
        ),
    ]
    for line in lines:
        event = json.loads(line)
        assert set(event) == {"id", "event_type", "actor", "payload", "record_id", "proposal_id", "created_at"}
    assert run(repo, "events", "export").stdout.splitlines() == lines  # JSON Lines is the default (and only) format


def test_rebuild_after_deleting_the_index(repo: Repo) -> None:
    initialized(repo)
    run(repo, "local", "add", "--type", "fact", "--title", "Kept", "--body", "Survives.")
    run(repo, "local", "list")
    (repo.root / ".git/memzoi/worktree/index.sqlite").unlink()

    out = ok_json(repo, "rebuild")

    assert out["records"] == {"repo": 0, "local": 1, "session": 0}
    assert (out["total"], out["unreadable"], out["runtime_preserved"]) == (1, [], True)
    assert out["proposals"]["pending"] == 0 and out["proposals"]["discarded"] == 0
    assert run(repo, "rebuild").stdout == (
        "rebuilt .git/memzoi/worktree/index.sqlite: 0 repo, 1 local, 0 session records; "
        "0 unreadable; 0 pending proposal files kept\n"
    )
    assert [r["id"] for r in ok_json(repo, "local", "list")["records"]] == ["local-kept"]


def test_uninitialized_repository_names_init(repo: Repo) -> None:
    result = run(repo, "local", "list")
    assert result.exit_code == 2 and "git memzoi init" in result.stderr
    assert not (repo.root / ".memzoi").exists()


def test_from_file_is_read_relative_to_the_directory_dash_c_names(repo: Repo, tmp_path: Path) -> None:
    """``-C DIR`` is "run as if started in DIR": checkpoint add and session-end read ``--from-file`` from the
    process's own directory instead, as import plan never did (a fresh user's walk)."""
    initialized(repo)
    repo.write("notes/note.txt", "Routes wired; tests next.\n")
    repo.write("notes/end.yml", SEED_YAML)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    before = os.getcwd()
    os.chdir(elsewhere)  # neither file is here: only -C's directory holds them
    try:
        sub = str(repo.root / "notes")
        added = invoke(
            cli, ["-C", sub, "checkpoint", "add", "--task", "T", "--from-file", "note.txt", "--json"], env=PINNED
        )
        ended = invoke(cli, ["-C", sub, "session-end", "--from-file", "end.yml", "--json"], env=PINNED)
    finally:
        os.chdir(before)
    assert added.exit_code == 0, added.stderr
    assert json.loads(added.stdout)["record"]["body"].strip() == "Routes wired; tests next."
    assert ended.exit_code == 0, ended.stderr


def test_checkpoints_of_one_instant_list_and_resume_in_write_order(repo: Repo) -> None:
    """Checkpoints are stamped to the second: two of one second came back by id, so session-context resumed the
    older one (a fresh user's walk). The file written later is the newer."""
    initialized(repo)
    same = {**PINNED, "MEMZOI_NOW": "2026-12-03T10:00:00Z"}
    for task in ("Alpha task", "Zeta task"):  # id order and write order disagree
        assert (
            invoke(cli, ["-C", str(repo.root), "checkpoint", "add", "--task", task, "--note", task], env=same).exit_code
            == 0
        )
    later = {**PINNED, "MEMZOI_NOW": "2026-12-03T10:00:05Z"}
    listed = json.loads(invoke(cli, ["-C", str(repo.root), "checkpoint", "list", "--json"], env=later).stdout)
    assert [r["id"] for r in listed["records"]] == ["session-zeta-task", "session-alpha-task"]
    context = invoke(cli, ["-C", str(repo.root), "integrate", "session-context"], env=later, input="{}")
    assert "Resuming: Zeta task [session-zeta-task" in context.stdout
