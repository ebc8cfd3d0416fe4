"""``git memzoi show <id>`` (issue 18, "Reading memory"): one record with its fields, body, supersedes lineage,
envelope and suspect reasons; ``--max-chars``; the ``target_not_found`` / ``ambiguous_target`` refusals. Real
repositories, the CLI in-process and as a subprocess (exit codes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from blake3 import blake3

from tests.support import repos
from tests.support.repos import PINNED, Repo, entry_text, ok_json, run

SIGNER = "src/signer.py"


def write_record(repo: Repo, concept_id: str, title: str, body: str, **extra: Any) -> None:
    """A canonical record file of type decision; ``supersedes`` and ``memkeep`` (the envelope) as given."""
    repos.write_record(
        repo,
        concept_id,
        title,
        body,
        memory_type="decision",
        source="test",
        status=extra.get("status", "active"),
        supersedes=extra.get("supersedes"),
        memkeep=extra.get("memkeep"),
    )


@pytest.fixture
def chain(repo: Repo) -> str:
    """Three records superseding each other (use-npm ← use-yarn ← use-pnpm-a1b2c3), the newest watching
    src/signer.py from the first commit, which a second commit then changes (it becomes suspect). The anchor."""
    assert run(repo, "init").exit_code == 0
    anchor = repo.commit("code", **{SIGNER: "sign()\n"})
    write_record(repo, "use-npm", "Use npm", "Install with npm.", status="superseded")
    write_record(repo, "use-yarn", "Use yarn", "Install with yarn.", status="superseded", supersedes="use-npm")
    envelope = {"anchor": anchor, "scope": [SIGNER], "verified_at": "2026-07-01"}
    write_record(
        repo, "use-pnpm-a1b2c3", "Use pnpm", "Install with pnpm, never npm.", supersedes="use-yarn", memkeep=envelope
    )
    repo.commit("records and a change", **{SIGNER: "sign(m)\n"})
    return anchor


def test_show_record_json(repo: Repo, chain: str) -> None:
    out = ok_json(repo, "show", "use-pnpm-a1b2c3")
    envelope = {"anchor": chain, "scope": [SIGNER], "verified_at": "2026-07-01"}
    data = (repo.root / ".memzoi/records/use-pnpm-a1b2c3.md").read_bytes()
    hashed = "blake3:" + blake3(data).hexdigest()
    assert out.pop("statements") == {"state": "indexed", "source_hash": hashed, "statements": []}
    assert out == {
        "ok": True,
        "id": "use-pnpm-a1b2c3",
        "store": "record",
        "path": ".memzoi/records/use-pnpm-a1b2c3.md",
        "fields": {
            "id": "use-pnpm-a1b2c3",
            "kind": "memory",
            "profile": "memzoi",
            "type": "decision",
            "lane": "semantic",
            "title": "Use pnpm",
            "description": "Install with pnpm, never npm.",
            "timestamp": "2026-07-01T00:00:00Z",
            "updated": "2026-07-01T00:00:00Z",
            "status": "active",
            "scope": "repo",
            "visibility": "repo",
            "content_class": "general_repo_knowledge",
            "confidence": 1,
            "source": "test",
            "source_ref": "test://use-pnpm-a1b2c3",
            "supersedes": "use-yarn",
            "retention": {},
            "origin": {"origin_key": "repository-record:use-pnpm-a1b2c3", "route": "repository_materialization"},
            "memkeep": envelope,
        },
        "body": "\n# Use pnpm\n\nInstall with pnpm, never npm.\n",
        "body_chars": 43,
        "truncated": False,
        "max_chars": None,
        "budget_used": 43,
        "lineage": {"supersedes": ["use-yarn", "use-npm"], "superseded_by": []},
        "envelope": envelope,
        "suspect": {
            "reasons": [
                {
                    "reason": "scope_hit",
                    "message": f"src/signer.py changed since {chain[:12]}",
                    "evidence": {"anchor": chain, "files": [SIGNER]},
                }
            ]
        },
        "valid_at": True,
    }


def test_lineage_both_ways_and_no_envelope(repo: Repo, chain: str) -> None:
    out = ok_json(repo, "show", "use-yarn")
    assert out["lineage"] == {"supersedes": ["use-npm"], "superseded_by": ["use-pnpm-a1b2c3"]}
    assert (out["envelope"], out["suspect"]) == (None, None)
    oldest = ok_json(repo, "show", "use-npm")
    assert oldest["lineage"] == {"supersedes": [], "superseded_by": ["use-yarn", "use-pnpm-a1b2c3"]}


def test_unique_prefix_names_the_record(repo: Repo, chain: str) -> None:
    assert ok_json(repo, "show", "use-pn")["id"] == "use-pnpm-a1b2c3"


def test_max_chars_truncates_the_body(repo: Repo, chain: str) -> None:
    out = ok_json(repo, "show", "use-pnpm-a1b2c3", "--max-chars", "11")
    assert (out["body"], out["truncated"], out["budget_used"], out["body_chars"], out["max_chars"]) == (
        "\n# Use pnpm",
        True,
        11,
        43,
        11,
    )
    whole = ok_json(repo, "show", "use-pnpm-a1b2c3", "--max-chars", "43")
    assert (whole["truncated"], whole["budget_used"]) == (False, 43)
    text = run(repo, "show", "use-pnpm-a1b2c3", "--max-chars", "11")
    assert text.exit_code == 0
    assert text.stdout.endswith("\n# Use pnpm\n[truncated: 11 of 43 characters]\n")


def test_text_output(repo: Repo, chain: str) -> None:
    result = run(repo, "show", "use-yarn")
    assert result.exit_code == 0
    assert result.stdout == (
        "use-yarn\tdecision\tsuperseded\tUse yarn\n"
        "file: .memzoi/records/use-yarn.md\n"
        "supersedes: use-npm\n"
        "superseded by: use-pnpm-a1b2c3\n"
        "\n"
        "\n# Use yarn\n\nInstall with yarn.\n"
    )


@pytest.mark.parametrize(
    ("target", "code", "line"),
    [
        ("nosuch", "target_not_found", "no record or entry 'nosuch'"),
        ("", "target_not_found", "no record or entry ''"),
        ("../../etc/passwd", "target_not_found", "no record or entry '../../etc/passwd'"),
    ],
)
def test_refusals_exit_2(repo: Repo, chain: str, target: str, code: str, line: str) -> None:
    result = run(repo, "show", target, "--json", prog_name="git-memzoi")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == code
    assert result.stderr == f"git-memzoi: error: {line}\n"
    proc = subprocess.run(
        [sys.executable, "-m", "git_memzoi", "-C", str(repo.root), "show", target],
        capture_output=True,
        text=True,
        env={**os.environ, **PINNED},
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr.count("\n")) == (2, "", 1)
    assert proc.stderr.endswith(f"error: {line}\n")


def _hostile_files(repo: Repo) -> None:
    """A record and an entry of each kind the index cannot read, next to the readable chain."""
    records, entries = repo.root / ".memzoi/records", repo.root / "agent-memory/entries"
    entries.mkdir(parents=True, exist_ok=True)
    outside = repo.root.parent / "outside.md"
    outside.write_text("x\n", "utf-8")
    (records / "linked.md").symlink_to(outside)
    os.mkfifo(records / "piped.md")
    (records / "huge.md").write_text("x" * (300 * 1024), "utf-8")
    good = (records / "use-npm.md").read_text("utf-8")
    (records / "broken.md").write_text(good.replace('title: "Use npm"', "title: [unclosed"), "utf-8")
    (entries / "linked-entry.md").symlink_to(outside)
    os.mkfifo(entries / "piped-entry.md")


@pytest.mark.parametrize(
    ("target", "code", "line"),
    [
        ("linked", "symlink", ".memzoi/records/linked.md: a symlink; records must be regular files"),
        ("piped", "not_a_regular_file", ".memzoi/records/piped.md: a FIFO, not a regular file; not read"),
        ("huge", "file_too_large", ".memzoi/records/huge.md: larger than 262144 bytes; not read"),
        ("broken", "bad_frontmatter", ".memzoi/records/broken.md: line 8: expected ',' or ']', but got ':'"),
        ("linked-entry", "symlink", "agent-memory/entries/linked-entry.md: a symlink; entries must be regular files"),
        (
            "piped-entry",
            "not_a_regular_file",
            "agent-memory/entries/piped-entry.md: a FIFO, not a regular file; not read",
        ),
    ],
)
def test_a_file_the_index_cannot_read_is_refused_for_what_it_is(
    repo: Repo, chain: str, target: str, code: str, line: str
) -> None:
    """Naming an unreadable file by id gets its own refusal, as ``expiry`` or ``tombstone`` give it; never a
    ``target_not_found`` that hides the file (a fresh user's walk found that)."""
    _hostile_files(repo)
    result = run(repo, "show", target, "--json", prog_name="git-memzoi")
    assert (result.exit_code, json.loads(result.stdout)["error"]["code"]) == (2, code)
    assert result.stderr == f"git-memzoi: error: {line}\n"
    assert ok_json(repo, "show", "use-npm")["id"] == "use-npm"  # the other files are still read


def test_private_local_record_is_not_shown(repo: Repo, chain: str) -> None:
    """A private local record (in the git dir) is never read by show, as search never reads it."""
    local = repo.root / ".git" / "memzoi" / "local" / "records"
    local.mkdir(parents=True, exist_ok=True)
    (local / "my-secret-note.md").write_text((repo.root / ".memzoi/records/use-npm.md").read_text())
    result = run(repo, "show", "my-secret-note", "--json")
    assert (result.exit_code, json.loads(result.stdout)["error"]["code"]) == (2, "target_not_found")


def test_record_holding_a_credential_is_withheld(repo: Repo, chain: str) -> None:
    """A hand-edited record holding a credential is refused, as search withholds it: its text is never echoed."""
    key = "AKIA" + "Q" * 16  # split: the repository's own secret scan must not flag this test
    write_record(repo, "deploy-key", "Deploy", f"The key is {key}.")
    result = run(repo, "show", "deploy-key", "--json", prog_name="git-memzoi")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "content_withheld"
    assert key not in result.stdout + result.stderr
    assert result.stderr.startswith("git-memzoi: error: record 'deploy-key' withheld: its body")


@pytest.fixture
def entries(repo: Repo) -> str:
    """Memkeep entries: old-timeout (tombstoned, superseded_by http-timeouts) and http-timeouts scoped to src/http/**
    from the first commit, which a second commit changes (memkeep reports it scope_hit); beside a record of the
    same id, shared-id. The anchor."""
    assert run(repo, "init").exit_code == 0
    anchor = repo.commit("code", **{"src/http/client.py": "get()\n"})
    repo.write(
        "agent-memory/entries/http-timeouts.md",
        entry_text("http-timeouts", anchor=anchor, scope=["src/http/**"], claim="Timeouts retry three times."),
    )
    old = "status: tombstone\ntombstone_reason: replaced\nsuperseded_by: http-timeouts"
    repo.write(
        "agent-memory/entries/old-timeout.md",
        entry_text("old-timeout", anchor=anchor, claim="Timeouts never retry.").replace("status: verified", old),
    )
    repo.write("agent-memory/entries/shared-id.md", entry_text("shared-id", anchor=anchor, claim="An entry."))
    write_record(repo, "shared-id", "A record", "A record body.")
    repo.commit("entries and a change", **{"src/http/client.py": "get(retry=3)\n"})
    return anchor


def test_show_entry_json(repo: Repo, entries: str) -> None:
    out = ok_json(repo, "show", "http-timeouts")
    assert out == {
        "ok": True,
        "id": "http-timeouts",
        "store": "entry",
        "path": "agent-memory/entries/http-timeouts.md",
        "fields": {
            "schema_version": 1,
            "id": "http-timeouts",
            "type": "fact",
            "status": "verified",
            "written_at": "2026-11-01",
            "verified_at": "2026-11-01",
            "anchor": entries,
            "scope": ["src/http/**"],
            "evidence": "Seen in the code.\n",
        },
        "body": "Timeouts retry three times.\n",
        "body_chars": 28,
        "truncated": False,
        "max_chars": None,
        "budget_used": 28,
        "lineage": {"supersedes": ["old-timeout"], "superseded_by": []},
        "envelope": {"anchor": entries, "scope": ["src/http/**"], "verified_at": "2026-11-01"},
        "suspect": {
            "reasons": [
                {
                    "reason": "scope_hit",
                    "message": f"src/http/client.py changed since {entries[:12]}",
                    "evidence": {"anchor": entries, "files": ["src/http/client.py"]},
                }
            ]
        },
        "valid_at": True,
    }
    old = ok_json(repo, "show", "old-timeout")
    assert (old["store"], old["lineage"]) == ("entry", {"supersedes": [], "superseded_by": ["http-timeouts"]})


def test_a_prefix_naming_one_lineage_names_its_newest_record(repo: Repo, chain: str) -> None:
    """A fresh user's walk: after a supersede the short id stopped working (both records start with it)."""
    assert ok_json(repo, "show", "use-")["id"] == "use-pnpm-a1b2c3"  # use-npm → use-yarn → use-pnpm-a1b2c3
    assert ok_json(repo, "show", "use-y")["id"] == "use-yarn"  # a replaced record by its own prefix
    write_record(repo, "use-bun", "Use bun", "Install with bun.")  # another lineage: ambiguous again
    result = run(repo, "show", "use-", "--json", prog_name="git-memzoi")
    assert (result.exit_code, json.loads(result.stdout)["error"]["code"]) == (2, "ambiguous_target")
    assert result.stderr == (
        "git-memzoi: error: 'use-' names 4 memories: record use-bun, record use-npm, record use-pnpm-a1b2c3,"
        " record use-yarn (give more of the id or --store)\n"
    )


def test_record_and_entry_of_one_id(repo: Repo, entries: str) -> None:
    result = run(repo, "show", "shared-id", "--json", prog_name="git-memzoi")
    assert (result.exit_code, json.loads(result.stdout)["error"]["code"]) == (2, "ambiguous_target")
    assert result.stderr == (
        "git-memzoi: error: 'shared-id' names 2 memories: record shared-id, entry shared-id"
        " (give more of the id or --store)\n"
    )
    assert ok_json(repo, "show", "shared-id", "--store", "records")["store"] == "record"
    assert ok_json(repo, "show", "shared-id", "--store", "entries")["store"] == "entry"
    assert run(repo, "show", "old-timeout", "--store", "records", "--json").exit_code == 2


def test_entry_text_output(repo: Repo, entries: str) -> None:
    result = run(repo, "show", "old-timeout")
    assert result.exit_code == 0
    assert result.stdout == (
        "old-timeout\tfact\ttombstone\tTimeouts never retry.\n"
        "file: agent-memory/entries/old-timeout.md\n"
        "supersedes: -\n"
        "superseded by: http-timeouts\n"
        "\n"
        "Timeouts never retry.\n"
    )


def test_show_parses_only_the_record_it_shows(repo: Repo, chain: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index names the records and their supersedes (issue 18): a show once the index is fresh parses one
    record file, not all of them (at 5,000 records a show took 490 ms by scanning them all, 19 ms now)."""
    from git_memzoi.memzoi import record_show
    from git_memzoi.memzoi.records import store

    ws = repos.memzoi_workspace(repo)
    record_show.show(ws, "use-yarn", log=False)  # the index is fresh after this
    parsed: list[str] = []
    real = store.read
    monkeypatch.setattr(store, "read", lambda layout, file: parsed.append(file.name) or real(layout, file))
    shown = record_show.show(ws, "use-yarn", log=False)
    assert parsed == ["use-yarn.md"]
    assert (shown.supersedes, shown.superseded_by) == (("use-npm",), ("use-pnpm-a1b2c3",))


def test_a_record_written_after_the_index_is_shown(repo: Repo, chain: str) -> None:
    assert ok_json(repo, "show", "use-yarn")["id"] == "use-yarn"
    write_record(repo, "use-bun", "Use bun", "Install with bun.", supersedes="use-pnpm-a1b2c3")
    assert ok_json(repo, "show", "use-bun")["lineage"]["supersedes"] == ["use-pnpm-a1b2c3", "use-yarn", "use-npm"]
    assert ok_json(repo, "show", "use-yarn")["lineage"]["superseded_by"] == ["use-pnpm-a1b2c3", "use-bun"]


def test_every_command_naming_a_malformed_record_names_its_file(repo: Repo, chain: str) -> None:
    """``expiry`` and ``tombstone`` said only ``line 8: ...``: which file was left to guess (a fresh user's walk)."""
    _hostile_files(repo)
    expected = "git-memzoi: error: .memzoi/records/broken.md: line 8: expected ',' or ']', but got ':'\n"
    for args in (("expiry", "broken"), ("tombstone", "broken", "--reason", "gone")):
        result = run(repo, *args, "--json", prog_name="git-memzoi")
        assert (result.exit_code, json.loads(result.stdout)["error"]["code"]) == (2, "bad_frontmatter"), args
        assert result.stderr == expected, args
