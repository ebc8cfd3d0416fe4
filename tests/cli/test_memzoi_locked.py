"""Locked records over real repositories (issue 19, vault-memory "Document locks"; records/lock.py).

``locked: true`` in the stored file refuses supersede, tombstone, verify and a packet apply with
``record_locked`` (exit 2, nothing written), checked on the file as it is on disk before any other check; only
the boolean locks; a locked record stays readable and searchable; doctor counts locks; the pre-commit hook
warns when a commit unlocks one.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from git_memzoi.memzoi.proposals import files as proposal_files
from git_memzoi.memzoi.records.lock import RecordLocked
from git_memzoi.memzoi.workspace import Workspace
from tests.memzoi.proposals.test_proposal_files import packet_text, pending, supersede_packet
from tests.support import repos
from tests.support.repos import Repo, ok_json, refused, run, tree

RECORD = ".memzoi/records/release-rule.md"


@pytest.fixture
def root(repo: Repo) -> Repo:
    assert run(repo, "init").exit_code == 0
    repos.spec_ids(repo.root)
    repos.write_record(repo, "release-rule", "Release from main only", "Tags come from main.", locked=True)
    repo.commit("a reviewed, locked record")
    return repo


def test_the_writer_writes_the_boolean_and_recall_reads_it(root: Repo) -> None:
    assert "\nlocked: true\n" in (root.root / RECORD).read_text()
    found = ok_json(root, "search", "release")["results"]
    assert [(r["record"]["id"], r["record"]["locked"]) for r in found] == [("release-rule", True)]
    shown = ok_json(root, "show", "release-rule")
    assert shown["fields"]["locked"] is True and shown["body"].endswith("Tags come from main.\n")
    assert "release-rule" in json.dumps(ok_json(root, "context", "--task", "release from main"))


def test_supersede_and_tombstone_are_refused_before_any_other_check(root: Repo) -> None:
    message = "record release-rule is locked (locked: true in its file); supersede is refused. Unlocking is a human "
    # sensitivity unknown would be refused too, later: the lock is checked first
    error = refused(root, "supersede", "release-rule", "--title", "Release from any branch", "--body", "Any.")
    assert error == {"code": "record_locked", "message": message + "edit of the file", "exit_code": 2}
    error = refused(
        root, "supersede", "release-rule", "--title", "T", "--body", "B", "--sensitivity", "repo-safe",
        "--valid-to", "not a time",
    )  # fmt: skip
    assert error["code"] == "record_locked"
    assert refused(root, "tombstone", "release-rule", "--reason", "obsolete")["code"] == "record_locked"
    assert refused(root, "tombstone", "release-rule", "--reason", "")["code"] == "record_locked"


def test_a_process_exits_2(root: Repo) -> None:
    command = [sys.executable, "-m", "git_memzoi", "-C", str(root.root), "tombstone", "release-rule", "--reason", "x"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert "record release-rule is locked" in done.stderr


def test_the_file_on_disk_decides_never_the_index(root: Repo) -> None:
    path = root.root / RECORD
    ok_json(root, "search", "release")  # the index holds the record as locked
    path.write_text(path.read_text().replace("locked: true\n", ""))  # a human unlocks it
    ok_json(root, "tombstone", "release-rule", "--reason", "obsolete")
    repos.write_record(root, "other", "Other rule", "Body.")
    ok_json(root, "search", "other")  # indexed unlocked
    other = root.root / ".memzoi/records/other.md"
    other.write_text(other.read_text().replace("---\n\n# Other", "locked: true\n---\n\n# Other"))
    assert refused(root, "tombstone", "other", "--reason", "obsolete")["code"] == "record_locked"


@pytest.mark.parametrize("value", ['"true"', "1", "null", "yes", "[true]"])
def test_only_the_boolean_locks_any_other_value_is_invalid(root: Repo, value: str) -> None:
    path = root.root / RECORD
    path.write_text(path.read_text().replace("locked: true", f"locked: {value}"))
    rebuilt = ok_json(root, "rebuild")["unreadable"]
    assert [(u["code"], u["reason"]) for u in rebuilt] == [
        ("invalid_record", f"{RECORD}: locked: must be the boolean true or false")
    ]
    assert ok_json(root, "search", "release")["results"] == []


def test_locked_false_does_not_lock(root: Repo) -> None:
    path = root.root / RECORD
    path.write_text(path.read_text().replace("locked: true", "locked: false"))
    assert ok_json(root, "tombstone", "release-rule", "--reason", "obsolete")["record_id"] == "release-rule"


def test_a_packet_apply_is_refused_and_an_incoming_locked_false_cannot_bypass(root: Repo) -> None:
    ctx = repos.memzoi_workspace(root, actor="reviewer", spec=True)
    pending(root, "replace", supersede_packet("release-rule"))
    before = tree(root.root)
    with pytest.raises(RecordLocked):
        proposal_files.apply_packet(ctx, "replace", actor="reviewer")
    assert tree(root.root) == before
    drop = packet_text("mem_drop", action="tombstone", proposal_extra="  reason: r\n  target: release-rule\n")
    pending(root, "drop", drop)
    assert refused(root, "proposal-files", "apply", "mem_drop")["code"] == "record_locked"
    sneaky = supersede_packet("release-rule", extra="locked: false\n").replace("mem_replace", "mem_sneaky")
    pending(root, "sneaky", sneaky)
    error = refused(root, "proposal-files", "apply", "mem_sneaky")
    assert error["code"] == "invalid_proposal" and "locked" in error["message"]  # never read as the record's lock
    assert "\nlocked: true\n" in (root.root / RECORD).read_text()


def test_verify_refuses_a_named_locked_record_and_all_safe_skips_it(root: Repo) -> None:
    anchor = root.commit("code", **{"src/signer.py": "sign()\n"})
    envelope = {
        "anchor": anchor,
        "scope": ["src/signer.py"],
        "verified_at": "2026-07-01",
        "check": {"run": "true", "safe": True},
    }
    repos.write_record(root, "signer-rule", "Signer sorts keys", "It sorts.", memkeep=envelope, locked=True)
    root.commit("watched and locked", **{"src/signer.py": "sign(m)\n"})
    assert refused(root, "verify", "signer-rule")["code"] == "record_locked"
    assert refused(root, "verify", "signer-rule", "--manual")["code"] == "record_locked"
    result = run(root, "verify", "--all-safe", "--json")
    items = json.loads(result.stdout)["items"]
    assert [(i["id"], i["action"], i["message"]) for i in items] == [
        ("signer-rule", "skipped", "locked (locked: true); a human re-tests it")
    ]
    assert 'verified_at: "2026-07-01"' in (root.root / ".memzoi/records/signer-rule.md").read_text()


def test_doctor_counts_locked_records(root: Repo) -> None:
    repos.write_record(root, "plain", "Plain rule", "Body.")
    doctor = run(root, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["records"] == {
        "name": "records",
        "status": "ok",
        "message": "2 canonical record(s) readable, 1 locked",
        "next_step": "",
    }


def test_the_pre_commit_hook_warns_when_a_commit_unlocks_a_record(root: Repo) -> None:
    path = root.root / RECORD
    path.write_text(path.read_text().replace("locked: true\n", ""))
    root.git("add", RECORD)
    result = run(root, "hook", "run", "pre-commit")
    assert result.exit_code == 0, result.stderr
    assert f"git-memzoi: warning: this commit unlocks {RECORD} (locked: true removed)" in result.stderr
    path.write_text(path.read_text().replace("Tags come from main.", "Tags come from main, signed."))
    root.git("add", RECORD)
    root.git("commit", "-qm", "unlock")
    relock = path.read_text().replace("---\n\n# Release", "locked: true\n---\n\n# Release")
    path.write_text(relock)
    root.git("add", RECORD)
    assert "unlocks" not in run(root, "hook", "run", "pre-commit").stderr  # locking is no warning


def test_the_pre_commit_hook_warns_when_a_commit_deletes_a_locked_record(root: Repo) -> None:
    repos.write_record(root, "plain-rule", "Plain rule", "Not locked.")
    root.commit("a plain record")
    root.git("rm", "-q", ".memzoi/records/plain-rule.md")
    assert "deletes" not in run(root, "hook", "run", "pre-commit").stderr  # an unlocked record goes quietly
    root.git("rm", "-q", RECORD)
    result = run(root, "hook", "run", "pre-commit")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("deletes the locked record") == 1
    assert f"git-memzoi: warning: this commit deletes the locked record {RECORD}" in result.stderr


def test_a_workspace_api_refusal_names_the_code(root: Repo) -> None:
    from git_memzoi.memzoi.proposals import lifecycle

    ctx: Workspace = repos.memzoi_workspace(root, spec=True)
    with pytest.raises(RecordLocked) as caught:
        lifecycle.supersede(ctx, "release-rule", title="X", body="Y", actor="t", sensitivity="repo-safe")
    assert caught.value.code == "record_locked"
