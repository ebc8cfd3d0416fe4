"""``search`` and ``precheck`` withhold a record whose file holds a credential (hand-edited, or pulled from a commit
made with ``--no-verify``), as ``context`` does: its text is never printed (CLI text and JSON, MCP), and the output
names the record, field and rule. Only the records a call returns are scanned. The key is built at test time."""

from __future__ import annotations

import json
from typing import Any

import pytest

from git_memzoi.mcp.server import _Server
from tests.cli.test_memzoi_write_gate_secrets import _key
from tests.support.repos import NOW_TEXT as NOW
from tests.support.repos import Repo, ok_json, run, spec_ids

SHELL = "deploy/rotate.sh"


def withheld(record_id: str, kind: str) -> dict[str, Any]:
    return {
        "record_id": record_id,
        "title": "[withheld]",
        "type": kind,
        "lane": "semantic",
        "destination": "repo",
        "reason": "prohibited_content_detected",
        "rule": "AWS Access Key",
        "field": "body line 2",
        "path": f".memzoi/records/{record_id}.md",
    }


def left_out(record_id: str) -> str:
    return (
        f"memory {record_id} was left out: its body line 2 holds a credential (AWS Access Key; not printed); "
        f"remove it from .memzoi/records/{record_id}.md"
    )


def seed(repo: Repo, key: str, *hand_edited: str) -> None:
    """A decision and a risk about deploy keys, both bound to ``deploy/rotate.sh``; the files of ``hand_edited``
    (record ids) then get a second body line holding ``key``."""
    assert run(repo, "init").exit_code == 0
    spec_ids(repo.root)  # records named by their bare slugs (memzoi-spec v0 ids) below
    repo.write(SHELL, "#!/bin/sh\n")  # the bound file exists: no path_not_in_tree note
    for kind, title, body in (
        ("decision", "Deploy keys", "Rotate deploy keys every quarter."),
        ("risk", "Deploy key scope", "Deploy keys must stay read-only."),
    ):
        ok_json(
            repo,
            "propose",
            "--apply",
            "--sensitivity",
            "repo-safe",
            "--type",
            kind,
            "--title",
            title,
            "--body",
            body,
            "--applies-to",
            SHELL,
        )
    for record_id in hand_edited:
        path = repo.root / f".memzoi/records/{record_id}.md"
        text = path.read_text("utf-8")
        body = text.split("\n---\n", 1)[1]
        path.write_text(text.replace(body, body.replace(".\n", f".\nThe current key is {key}.\n", 1)), "utf-8")
        assert key in path.read_text("utf-8")


def clean(result: Any, key: str, code: int = 0) -> Any:
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert key not in result.stdout + result.stderr
    return result


def test_search_json_withholds_the_record_and_names_it(repo: Repo) -> None:
    key = _key()
    seed(repo, key, "deploy-keys")
    payload = json.loads(clean(run(repo, "search", "deploy keys", "--json"), key).stdout)
    assert list(payload) == [
        "ok",  # the --json envelope (issue 20)
        *("query", "destination", "limit", "filters", "path", "results", "withheld", "warnings"),
        *("store", "notes"),  # wave 2: both stores; added after the older fields
        "mode",  # issue 18: the recall mode the search ran in
    ]
    assert [r["record"]["id"] for r in payload["results"]] == ["deploy-key-scope"]
    assert payload["withheld"] == [withheld("deploy-keys", "decision")]
    assert payload["warnings"] == [left_out("deploy-keys")]
    only = json.loads(clean(run(repo, "search", "quarter", "--json"), key).stdout)
    assert (only["results"], only["withheld"]) == ([], [withheld("deploy-keys", "decision")])
    events = (repo.root / ".git/memzoi/local/events.jsonl").read_text("utf-8")
    assert key not in events and '"result_ids": ["deploy-keys"' not in events


def test_search_text_never_prints_the_record(repo: Repo) -> None:
    key = _key()
    seed(repo, key, "deploy-keys")
    lines = clean(run(repo, "search", "deploy keys"), key).stdout.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["deploy-key-scope"]
    only = clean(run(repo, "search", "quarter"), key)
    assert (only.stdout, only.stderr) == ("No matching memories.\n", f"warning: {left_out('deploy-keys')}\n")


def test_search_scans_only_the_returned_records(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    from git_memzoi.memzoi.records import secrets

    key = _key()
    seed(repo, key, "deploy-keys")
    scanned: list[list[str]] = []
    real = secrets.first_credentials

    def spy(items: Any) -> Any:
        scanned.append([str(item["title"]) for item in items])
        return real(items)

    monkeypatch.setattr(secrets, "first_credentials", spy)
    first = json.loads(clean(run(repo, "search", "read-only", "--limit", "1", "--json"), key).stdout)
    assert ([r["record"]["id"] for r in first["results"]], first["withheld"], first["warnings"]) == (
        ["deploy-key-scope"],
        [],
        [],
    )
    assert scanned == [["Deploy key scope"]]  # one detect-secrets pass, over the one returned record


def test_clean_search_and_precheck_keep_their_shape(repo: Repo) -> None:
    seed(repo, _key())
    payload = ok_json(repo, "search", "deploy keys")
    assert [r["record"]["id"] for r in payload["results"]] == ["deploy-keys", "deploy-key-scope"]
    assert (payload["withheld"], payload["warnings"]) == ([], [])
    checked = ok_json(repo, "precheck", "--path", SHELL)
    assert list(checked) == ["ok", "warnings"] and [w["record_id"] for w in checked["warnings"]] == ["deploy-key-scope"]
    assert checked["warnings"][0]["message"] == "Deploy key scope: Deploy keys must stay read-only."


PRECHECK_WARNING = {
    "id": "warn_deploy-key-scope",
    "record_id": "deploy-key-scope",
    "message": "[withheld] its body line 2 holds a credential (AWS Access Key; not printed); remove it from "
    ".memzoi/records/deploy-key-scope.md",
    "severity": "high",
    "citations": [
        {
            "record_id": "deploy-key-scope",
            "memory_type": "risk",
            "scope_kind": "repo",
            "provenance": "git",
            "plane": "git",
            "destination": "repo",
            "visibility": "repo",
            "source_kind": None,
            "source_ref": None,
            "path": None,
        }
    ],
    "suggested_next_step": "This memory still applies: once the credential is removed, run precheck again to read it.",
    "suspect": None,
    "store": "record",
    "claim": "[withheld]",
    "superseded": False,
}


def test_precheck_keeps_the_warning_but_withholds_its_text(repo: Repo) -> None:
    key = _key()
    seed(repo, key, "deploy-key-scope")
    for args in (["--path", SHELL], ["--action", "rotate deploy keys"], ["--path", SHELL, "--command", "read-only"]):
        payload = json.loads(clean(run(repo, "precheck", *args, "--json"), key).stdout)
        assert payload == {
            "ok": True,
            "warnings": [PRECHECK_WARNING],
            "withheld": [withheld("deploy-key-scope", "risk")],
        }
    text = clean(run(repo, "precheck", "--path", SHELL), key)
    assert text.stdout == (
        "[high] deploy-key-scope: [withheld] its body line 2 holds a credential (AWS Access Key; not printed); "
        "remove it from .memzoi/records/deploy-key-scope.md\n"
        "  source: record deploy-key-scope\n"  # no source recorded: the record itself, never "- -"
        f"  next: {PRECHECK_WARNING['suggested_next_step']}\n"
    )
    assert key not in (repo.root / ".git/memzoi/local/events.jsonl").read_text("utf-8")


def test_mcp_tools_withhold_as_the_cli_does(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    key = _key()
    seed(repo, key, "deploy-keys", "deploy-key-scope")
    monkeypatch.setenv("MEMZOI_NOW", NOW)
    server = _Server(repo.root)
    searched = server.search_memory("deploy keys")
    checked = server.precheck_path(SHELL)
    for result in (searched, checked):
        assert not result.is_error and key not in result.content[0].text
    assert {"ok": True, **searched.structured_content} == ok_json(repo, "search", "deploy keys")
    assert searched.structured_content["results"] == []
    assert searched.structured_content["withheld"] == [
        withheld("deploy-key-scope", "risk"),
        withheld("deploy-keys", "decision"),
    ]
    assert searched.structured_content["warnings"] == [left_out("deploy-key-scope"), left_out("deploy-keys")]
    assert {"ok": True, **checked.structured_content} == ok_json(repo, "precheck", "--path", SHELL)
    assert checked.structured_content == {
        "warnings": [PRECHECK_WARNING],
        "withheld": [withheld("deploy-key-scope", "risk")],
    }
