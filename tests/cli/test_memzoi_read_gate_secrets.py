"""A credential that reached a memory file anyway (hand-edited, or pulled from a commit made with ``--no-verify``) is
never copied out of it: ``export`` refuses (exit 2, ``prohibited_content_detected``, nothing written), ``context``
and ``handoff`` leave the record out and say so, ``doctor`` fails naming the file, line and rule; and ``local add``
and ``checkpoint add`` refuse to store one. The value is never echoed. Secrets are built at test time."""

from __future__ import annotations

import json

from tests.cli.test_memzoi_write_gate_secrets import _key, files, refused
from tests.support.repos import Repo, ok_json, run, spec_ids

WHY = "remove it, secrets never go to git-visible memory"
PRIVATE_WHY = "remove it, memory never stores credentials, private memory included"


def leaked(repo: Repo, key: str) -> int:
    """Two repo records (one decision, one risk) about deploy keys; the decision's file is then edited by hand to
    hold ``key``. Returns the line of the file that holds it."""
    assert run(repo, "init").exit_code == 0
    spec_ids(repo.root)  # records named by their bare slugs (memzoi-spec v0 ids) below
    for kind, title, body in (
        ("decision", "Deploy keys", "Rotate deploy keys every quarter."),
        ("risk", "Deploy key scope", "Deploy keys must stay read-only."),
    ):
        ok_json(
            repo, "propose", "--apply", "--sensitivity", "repo-safe", "--type", kind, "--title", title, "--body", body
        )
    path = repo.root / ".memzoi/records/deploy-keys.md"
    text = path.read_text("utf-8").replace("every quarter.\n", f"every quarter.\nThe current key is {key}.\n")
    path.write_text(text, "utf-8")
    return text.splitlines().index(f"The current key is {key}.") + 1


def test_export_refuses_a_record_holding_a_credential_and_writes_nothing(repo: Repo) -> None:
    key = _key()
    line = leaked(repo, key)
    repo.write("AGENTS.md", "# Mine\n")
    before = files(repo.root)
    expected = (
        f"export refused (nothing written): record deploy-keys: .memzoi/records/deploy-keys.md line {line} "
        f"holds a credential (AWS Access Key; not printed): {WHY}"
    )
    for args in (
        ["claude-md", "--file", "CLAUDE.md"],
        ["agents-md", "--file", "AGENTS.md"],
        ["claude-md"],
        ["agents-md"],
        ["okf"],
    ):
        result = run(repo, "export", *args, "--json")
        assert refused(result, key)["message"] == expected
        assert files(repo.root) == before
        text = run(repo, "export", *args)
        assert text.exit_code == 2 and key not in text.output + text.stderr
        assert text.stderr.endswith(f": error: {expected}\n")
        assert files(repo.root) == before and not (repo.root / "CLAUDE.md").exists()


def test_export_goes_ahead_once_the_credential_is_removed(repo: Repo) -> None:
    key = _key()
    leaked(repo, key)
    path = repo.root / ".memzoi/records/deploy-keys.md"
    path.write_text(path.read_text("utf-8").replace(f"The current key is {key}.\n", ""), "utf-8")
    assert ok_json(repo, "export", "claude-md", "--file", "CLAUDE.md")["records"] == ["deploy-keys", "deploy-key-scope"]


def test_context_and_handoff_leave_the_record_out_and_name_it(repo: Repo) -> None:
    key = _key()
    leaked(repo, key)
    result = run(repo, "context", "--task", "deploy keys", "--json")
    assert result.exit_code == 0 and key not in result.stdout + result.stderr
    pack = json.loads(result.stdout)
    assert [r["record"]["id"] for r in pack["records"]] == ["deploy-key-scope"]
    assert "deploy-keys" not in pack["prompt"] and pack["budget"]["candidate_records"] == 1
    assert pack["omitted"] == [
        {
            "record_id": "deploy-keys",
            "title": "[withheld]",
            "type": "decision",
            "lane": "semantic",
            "destination": "repo",
            "estimated_size": 0,
            "reason": "prohibited_content_detected",
            "rule": "AWS Access Key",
            "field": "body line 2",
            "path": ".memzoi/records/deploy-keys.md",
        }
    ]
    warning = (
        "memory deploy-keys was left out: its body line 2 holds a credential (AWS Access Key; not printed); "
        "remove it from .memzoi/records/deploy-keys.md"
    )
    assert pack["warnings"] == [warning] and pack["next_queries"] == []
    text = run(repo, "context", "--task", "deploy keys")
    assert text.exit_code == 0 and key not in text.stdout + text.stderr
    assert text.stdout.startswith("# Memzoi Context\n- [deploy-key-scope]") and warning in text.stderr
    handoff = run(repo, "handoff", "--task", "deploy keys", "--json")
    assert handoff.exit_code == 0 and key not in handoff.stdout + handoff.stderr
    assert json.loads(handoff.stdout)["context"]["omitted"] == pack["omitted"]
    assert key not in (repo.root / ".git/memzoi/local/events.jsonl").read_text("utf-8")


def test_context_leaves_out_a_hand_edited_local_record(repo: Repo) -> None:
    key = _key()
    assert run(repo, "init").exit_code == 0
    spec_ids(repo.root)  # records named by their bare slugs (memzoi-spec v0 ids) below
    written = ok_json(repo, "local", "add", "--type", "fact", "--title", "Deploy host", "--body", "Deploy from ci-1.")
    path = repo.root / written["path"]
    path.write_text(path.read_text("utf-8").replace("Deploy from ci-1.", f"Deploy with {key}."), "utf-8")
    result = run(repo, "context", "--task", "deploy", "--include-local", "--json")
    assert result.exit_code == 0 and key not in result.stdout + result.stderr
    pack = json.loads(result.stdout)
    assert pack["records"] == [] and pack["prompt"] == ""
    assert [(o["record_id"], o["reason"], o["field"]) for o in pack["omitted"]] == [
        (written["record"]["id"], "prohibited_content_detected", "body line 1")
    ]


def test_doctor_fails_naming_the_file_line_and_rule(repo: Repo) -> None:
    key = _key()
    line = leaked(repo, key)
    before = files(repo.root)
    result = run(repo, "doctor", "--json")
    assert result.exit_code == 1 and key not in result.stdout + result.stderr
    check = next(c for c in json.loads(result.stdout)["checks"] if c["name"] == "credentials")
    assert check["status"] == "fail"
    assert check["message"] == (
        f"1 memory file(s) hold a credential (not printed): .memzoi/records/deploy-keys.md line {line} (AWS Access Key)"
    )
    text = run(repo, "doctor")
    assert text.exit_code == 1 and key not in text.output + text.stderr
    assert f"fail  credentials: {check['message']} -> " in text.output
    assert files(repo.root) == before


def test_local_add_and_checkpoint_add_refuse_a_credential(repo: Repo) -> None:
    key = _key()
    assert run(repo, "init").exit_code == 0
    spec_ids(repo.root)  # records named by their bare slugs (memzoi-spec v0 ids) below
    before = files(repo.root)
    result = run(repo, "local", "add", "--type", "fact", "--title", "my key", "--body", f"key {key}", "--json")
    assert refused(result, key)["message"] == (
        f"the local record: --body line 1 holds a credential (AWS Access Key; not printed): {PRIVATE_WHY}"
    )
    result = run(repo, "checkpoint", "add", "--task", "deploy", "--note", f"key {key}", "--json")
    assert refused(result, key)["message"] == (
        f"the checkpoint: --note line 1 holds a credential (AWS Access Key; not printed): {PRIVATE_WHY}"
    )
    result = run(repo, "checkpoint", "add", "--task", f"deploy {key}", "--note", "done", "--json")
    assert refused(result, key)["message"].startswith("the checkpoint: --task line 1 holds a credential")
    assert files(repo.root) == before
    notes = repo.root.parent / "notes.txt"
    notes.write_text(f"Deployed.\nkey {key}\n", "utf-8")
    result = run(repo, "checkpoint", "add", "--task", "deploy", "--from-file", str(notes), "--json")
    assert refused(result, key)["message"].startswith(f"the checkpoint: --from-file {notes} line 2 holds")
    text = run(repo, "local", "add", "--type", "fact", "--title", "my key", "--body", f"key {key}")
    assert text.exit_code == 2 and key not in text.output + text.stderr
    assert files(repo.root) == before and not (repo.root / ".git/memzoi/local/runtime").exists()


def test_session_end_refuses_a_candidate_holding_a_credential(repo: Repo) -> None:
    key = _key()
    assert run(repo, "init").exit_code == 0
    spec_ids(repo.root)  # records named by their bare slugs (memzoi-spec v0 ids) below
    before = files(repo.root)
    notes = repo.root.parent / "notes.yml"
    for bad, field in (
        (0, "candidates[0]: body line 1"),
        (1, "candidates[1]: new local record local-key: body line 1"),
    ):
        bodies = ["Clean body.", "Clean too."]
        bodies[bad] = f"key {key}"
        notes.write_text(
            "task: deploy\ncandidates:\n"
            f"  - {{destination: repo, type: fact, title: Deploy, body: '{bodies[0]}', "
            "sensitivity: repo-safe}\n"
            f"  - {{destination: local, type: fact, title: Key, body: '{bodies[1]}'}}\n",
            "utf-8",
        )
        result = run(repo, "session-end", "--from-file", str(notes), "--json")
        assert refused(result, key)["message"].startswith(f"{notes}: {field} holds a credential (AWS Access Key")
        assert files(repo.root) == before
