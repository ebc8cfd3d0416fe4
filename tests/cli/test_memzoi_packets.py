"""``git memzoi proposal-files``, ``supersede`` and ``tombstone`` through the command line (CliRunner).

Exact ``--json`` objects, exit codes, and the privacy rule: a blocked packet's title and body appear nowhere in
stdout, stderr or the resolved files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests.memzoi.proposals.test_proposal_files import packet_text, record_text
from tests.support import repos
from tests.support.repos import Repo, spec_ids

ENV = {"MEMZOI_NOW": "2026-07-10T12:00:00Z"}
SECRET_TITLE = "Opal vault token"
# sensitive, not a credential: a credential is refused before sensitivity is looked at, private memory included
SECRET_BODY = "SENTINEL opal notes live in the staging vault."


def run(repo: Repo, *args: str) -> Result:
    """Invoke ``git memzoi -C <repo> ...`` in-process; never an internal error."""
    return repos.run(repo, *args, env=ENV)


def run_json(repo: Repo, *args: str, code: int = 0) -> Any:
    result = run(repo, *args, "--json")
    assert result.exit_code == code, (result.stdout, result.stderr)
    return json.loads(result.stdout)


@pytest.fixture
def root(repo: Repo) -> Repo:
    assert run(repo, "init").exit_code == 0
    spec_ids(repo.root)  # records named by their bare slugs (memzoi-spec v0 ids) below
    return repo


def pending(repo: Repo, name: str, text: str) -> Path:
    return repo.write(f".memzoi/proposals/pending/{name}.md", text)


def files_text(repo: Repo, folder: str) -> str:
    base = repo.root / folder
    return "".join(p.read_text() for p in sorted(base.rglob("*")) if p.is_file())


# --------------------------------------------------------------------------------------------- read-only commands


def test_list_show_validate_json(root: Repo) -> None:
    pending(root, "create-one", packet_text())
    listed = run_json(root, "proposal-files", "list")
    assert listed == {
        "ok": True,
        "schema_version": 1,
        "proposals": [
            {
                "id": "mem_test_one",
                "file_id": "create-one",
                "path": ".memzoi/proposals/pending/create-one.md",
                "redacted": False,
                "classification": "repo-safe",
                "state": "pending",
                "status": "proposed",
                "action": "create",
                "type": "decision",
                "title": "Use pnpm for installs",
                "problem": None,
            }
        ],
    }
    shown = run_json(root, "proposal-files", "show", "create-one")
    assert (shown["state"], shown["path"], shown["redacted"]) == (
        "pending",
        ".memzoi/proposals/pending/create-one.md",
        False,
    )
    assert shown["proposal"]["proposal"] == {
        "action": "create",
        "proposed_by": "agent",
        "proposed_at": "2026-07-05T00:00:00Z",
    }
    assert shown["proposal"]["sources"] == [{"url": "https://example.com/pr/7"}]
    assert shown["proposal"]["body"] == "Install dependencies with pnpm, never npm."
    assert run_json(root, "proposal-files", "validate") == {
        "ok": True,
        "schema_version": 1,
        "valid": True,
        "proposals": [
            {
                "id": "mem_test_one",
                "file_id": "create-one",
                "path": ".memzoi/proposals/pending/create-one.md",
                "redacted": False,
                "classification": "repo-safe",
                "valid": True,
                "issues": [],
            }
        ],
    }
    text = run(root, "proposal-files", "list")
    assert text.stdout == "mem_test_one  create  proposed  Use pnpm for installs\n1 pending proposal packet\n"


def test_validate_exits_1_and_names_the_issue(root: Repo) -> None:
    pending(
        root, "drop", packet_text("mem_drop", action="tombstone", proposal_extra="  reason: obsolete\n  target: gone\n")
    )
    out = run_json(root, "proposal-files", "validate", code=1)
    assert out["valid"] is False
    assert out["proposals"][0]["issues"] == [
        {
            "code": "target_missing",
            "field": "proposal.target",
            "message": ".memzoi/proposals/pending/drop.md: proposal.target: target record 'gone' does not exist",
        }
    ]
    text = run(root, "proposal-files", "validate")
    assert text.exit_code == 1 and text.stdout.endswith("1 pending, 1 invalid\n")


def test_unknown_id_exits_2_without_echoing_it(root: Repo) -> None:
    result = run(root, "proposal-files", "show", "mem_private_alias", "--json")
    assert result.exit_code == 2 and "mem_private_alias" not in result.stdout + result.stderr
    assert json.loads(result.stdout)["error"]["code"] == "unknown_proposal"


# --------------------------------------------------------------------------------------------- apply and reject


def test_apply_json_and_replay(root: Repo) -> None:
    pending(root, "create-one", packet_text())
    expected = {
        "ok": True,
        "schema_version": 1,
        "proposal_id": "mem_test_one",
        "file_id": "create-one",
        "action": "create",
        "record_id": "use-pnpm-for-installs",
        "target_id": None,
        "replayed": False,
        "resolved_path": ".memzoi/proposals/resolved/applied/create-one.md",
        "written": [
            ".memzoi/records/use-pnpm-for-installs.md",
            ".memzoi/proposals/resolved/applied/create-one.md",
            ".memzoi/proposals/pending/create-one.md",
        ],
        "drift": [],
    }
    assert run_json(root, "proposal-files", "apply", "mem_test_one", "--actor", "reviewer") == expected
    again = run_json(root, "proposal-files", "apply", "mem_test_one")
    assert again == {**expected, "replayed": True, "written": []}
    resolved = (root.root / ".memzoi/proposals/resolved/applied/create-one.md").read_text()
    assert "  resolved_by: reviewer\n" in resolved
    refused = run(root, "proposal-files", "reject", "mem_test_one", "--reason", "late", "--json")
    assert refused.exit_code == 2 and json.loads(refused.stdout)["error"]["code"] == "opposite_outcome"


def test_reject_json(root: Repo) -> None:
    pending(root, "create-one", packet_text())
    out = run_json(root, "proposal-files", "reject", "create-one", "--reason", "duplicate")
    assert out == {
        "ok": True,
        "schema_version": 1,
        "proposal_id": "mem_test_one",
        "file_id": "create-one",
        "redacted": False,
        "replayed": False,
        "reason": "duplicate",
        "resolved_path": ".memzoi/proposals/resolved/rejected/create-one.md",
        "written": [".memzoi/proposals/resolved/rejected/create-one.md", ".memzoi/proposals/pending/create-one.md"],
    }
    assert run(root, "proposal-files", "reject", "create-one", "--reason", "x").stdout == (
        "mem_test_one was already rejected; nothing changed\n"
    )


@pytest.mark.parametrize("sensitivity", ["secret", "unknown", "local-only"])
def test_blocked_apply_is_content_free(root: Repo, sensitivity: str) -> None:
    pending(
        root, "secret-file", packet_text("mem_secret", title=SECRET_TITLE, body=SECRET_BODY, sensitivity=sensitivity)
    )
    result = run(root, "proposal-files", "apply", "mem_secret", "--json")
    assert result.exit_code == 1
    guidance = {
        "secret": "secret proposals must not become repo-shared memory",
        "unknown": "classify the proposal sensitivity before applying it to repo records",
        "local-only": "local-only proposals belong in the future local/runtime memory plane",
    }[sensitivity]
    message = f"proposal sensitivity {sensitivity} cannot be applied into repo records; {guidance}"
    assert json.loads(result.stdout) == {
        "ok": False,
        "error": {
            "code": "repo_sensitivity_required",
            "operation": "proposal_files_apply",
            "classification": sensitivity,
            "sensitivity": sensitivity,
            "message": message,
            "next_step": guidance,
        },
    }
    assert result.stderr.endswith(f": error: {message}\n") and result.stderr.count("\n") == 1
    for args in (
        ("proposal-files", "list"),
        ("proposal-files", "validate"),
        ("proposal-files", "show", "mem_secret"),
        ("proposal-files", "list", "--json"),
        ("proposal-files", "show", "secret-file", "--json"),
        ("proposal-files", "apply", "mem_secret"),
    ):
        seen = run(root, *args)
        for secret in (SECRET_TITLE, "SENTINEL", "staging vault"):
            assert secret not in seen.stdout + seen.stderr
    assert not list((root.root / ".memzoi/records").iterdir())
    assert files_text(root, ".memzoi/proposals/resolved") == ""


def test_blocked_reject_archives_a_receipt_and_leaks_nothing(root: Repo) -> None:
    pending(root, "secret-file", packet_text("mem_secret", title=SECRET_TITLE, body=SECRET_BODY, sensitivity="secret"))
    result = run(root, "proposal-files", "reject", "mem_secret", "--reason", "unsafe content removed", "--json")
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert out["redacted"] is True and out["proposal_id"].startswith("redacted-identity-")
    everything = (
        result.stdout + result.stderr + files_text(root, ".memzoi/proposals") + files_text(root, ".git/memzoi/local")
    )
    for secret in (SECRET_TITLE, "SENTINEL", "staging vault", "mem_secret", "secret-file"):
        assert secret not in everything
    shown = run_json(root, "proposal-files", "show", "mem_secret")
    assert (shown["state"], shown["proposal"]["title"]) == ("rejected", "Redacted non-repo-safe proposal")


# --------------------------------------------------------------------------------------------- supersede, tombstone


def test_supersede_command(root: Repo) -> None:
    old = root.write(".memzoi/records/legacy-auth.md", record_text("legacy-auth")).read_text()
    blocked = run(root, "supersede", "legacy-auth", "--title", SECRET_TITLE, "--body", SECRET_BODY, "--json")
    assert blocked.exit_code == 1
    assert json.loads(blocked.stdout)["error"] | {"message": ""} == {
        "code": "repo_sensitivity_required",
        "operation": "supersede",
        "classification": "unknown",
        "sensitivity": "unknown",
        "message": "",
        "next_step": "classify the proposal sensitivity before applying it to repo records",
    }
    assert SECRET_TITLE not in blocked.stdout + blocked.stderr and "SENTINEL" not in blocked.stdout + blocked.stderr
    out = run_json(
        root,
        "supersede",
        "legacy-auth",
        "--title",
        "Use OAuth device flow",
        "--body",
        "Use it.",
        "--sensitivity",
        "repo-safe",
        "--source-kind",
        "pr",
        "--source-ref",
        "https://example.com/pr/9",
    )
    assert out == {
        "ok": True,
        "schema_version": 1,
        "record_id": "use-oauth-device-flow",
        "superseded": "legacy-auth",
        "written": [".memzoi/records/legacy-auth.md", ".memzoi/records/use-oauth-device-flow.md"],
        "watch": {
            "watched": False,
            "reason": "no_commits",
            "message": "the repository has no commits yet, so no anchor can be recorded: nothing watches this record",
            "envelope": None,
        },
    }
    assert (root.root / ".memzoi/records/legacy-auth.md").read_text() == old.replace(
        "status: active", "status: superseded"
    )
    new = (root.root / ".memzoi/records/use-oauth-device-flow.md").read_text()
    assert (
        "status: active\n" in new
        and "supersedes: legacy-auth\n" in new
        and "source: pr\n" in new
        and 'origin_key: "owner-command:supersede:legacy-auth"\n' in new
        and 'timestamp: "2026-07-10T12:00:00Z"\n' in new
    )
    again = run(root, "supersede", "legacy-auth", "--title", "T", "--body", "B", "--sensitivity", "repo-safe", "--json")
    assert again.exit_code == 2 and json.loads(again.stdout)["error"]["code"] == "target_inactive"
    cross = run(
        root,
        "supersede",
        "use-oauth-device-flow",
        "--title",
        "T",
        "--body",
        "B",
        "--sensitivity",
        "repo-safe",
        "--scope-kind",
        "team",
        "--json",
    )
    assert cross.exit_code == 2 and json.loads(cross.stdout)["error"]["code"] == "target_cross_scope"
    private = run(
        root,
        "supersede",
        "use-oauth-device-flow",
        "--title",
        "T",
        "--body",
        "B",
        "--sensitivity",
        "repo-safe",
        "--visibility",
        "private",
        "--json",
    )
    assert private.exit_code == 2 and json.loads(private.stdout)["error"]["code"] == "private_visibility"


def test_tombstone_command(root: Repo) -> None:
    old = root.write(".memzoi/records/legacy-auth.md", record_text("legacy-auth")).read_text()
    root.write(".memzoi/records/private-note.md", record_text("private-note", visibility="private"))
    out = run_json(root, "tombstone", "legacy-auth", "--reason", "obsolete", "--actor", "owner")
    assert out == {
        "ok": True,
        "schema_version": 1,
        "record_id": "legacy-auth",
        "status": "tombstoned",
        "written": [".memzoi/records/legacy-auth.md"],
    }
    assert (root.root / ".memzoi/records/legacy-auth.md").read_text() == old.replace(
        "status: active", "status: tombstoned"
    )
    event = json.loads((root.root / ".git/memzoi/local/events.jsonl").read_text().splitlines()[-1])
    assert (event["event_type"], event["actor"], event["record_id"]) == ("record_tombstoned", "owner", "legacy-auth")
    private = run(root, "tombstone", "private-note", "--reason", "x", "--json")
    assert private.exit_code == 2 and json.loads(private.stdout)["error"]["code"] == "target_private"
    missing = run(root, "tombstone", "nothing", "--reason", "x", "--json")
    assert json.loads(missing.stdout)["error"]["code"] == "target_missing"


def test_commands_need_init(repo: Repo) -> None:
    result = run(repo, "proposal-files", "list")
    assert result.exit_code == 2 and "git memzoi init" in result.stderr
    assert not (repo.root / ".memzoi").exists()


def test_a_title_without_a_slug_keeps_its_id_length_across_supersedes(repo: Repo) -> None:
    """A Japanese title has no concept slug, so the record is named from its proposal id; each supersede appended
    another ``-<6 hex>`` to its target's id (a fresh user's walk). The replacement takes the base, not the id."""
    assert repos.run(repo, "init").exit_code == 0
    repo.commit("code", **{"a.txt": "a\n"})
    made = repos.ok_json(
        repo, "propose", "--type", "risk", "--title", "署名の前にキーをソートする", "--body", "本文", "--sensitivity",
        "repo-safe", "--apply",
    )["applied"]["record_id"]  # fmt: skip
    ids = [made]
    for title in ("新しいタイトル", "もう一度"):
        out = repos.ok_json(repo, "supersede", ids[-1], "--title", title, "--body", "x", "--sensitivity", "repo-safe")
        ids.append(out["record_id"])
    assert len({len(i) for i in ids}) == 1, ids
    assert len({i.rsplit("-", 1)[0] for i in ids}) == 1 and len(set(ids)) == 3
