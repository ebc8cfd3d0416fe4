"""``git memzoi propose --tag`` and ``--scope-id`` (MCP ``propose_memory``'s ``tags`` and ``scope_id``): they reach
the packet and the record, ``search`` matches the tags and filters by the scope id, and a bad or secret-bearing
value exits 2 with nothing written (over MCP both were accepted and dropped with a warning)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.repos import Repo, run


def _files(repo: Repo) -> list[str]:
    return sorted(p.relative_to(repo.root).as_posix() for p in (repo.root / ".memzoi").rglob("*.md"))


def test_tags_reach_the_record_and_search_matches_them(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    args = ("propose", "--title", "Ledger rows", "--body", "Rows are appended, never updated.")
    done = run(repo, *args, "--tag", "billing", "--tag", "ledger.v2", "--tag", "billing", "--sensitivity",
               "repo-safe", "--apply", "--json")  # fmt: skip
    assert done.exit_code == 0, done.stderr
    record_id = json.loads(done.stdout)["applied"]["record_id"]
    text = (repo.root / ".memzoi" / "records" / f"{record_id}.md").read_text()
    assert "\ntags:\n  - billing\n  - ledger.v2\n" in text  # once each, in the order given
    found = json.loads(run(repo, "search", "billing", "--json").stdout)["results"]
    assert [r["record"]["id"] for r in found] == [record_id]  # the word is in its tags alone


def test_a_bad_or_secret_tag_exits_2_and_writes_nothing(repo: Repo, tmp_path: Path) -> None:
    assert run(repo, "init").exit_code == 0
    before = _files(repo)
    base = ("propose", "--title", "T", "--body", "B", "--sensitivity", "repo-safe", "--json")
    spaced = run(repo, *base, "--tag", "two words")
    assert spaced.exit_code == 2 and json.loads(spaced.stdout)["error"] == {
        "code": "invalid_tag",
        "message": "tag 'two words' must be one word of at most 64 letters, digits and -_.:/",
        "exit_code": 2,
    }
    key = "AKIA" + "UJZDE8GXD6NCF10E"
    secret = run(repo, *base, "--tag", key)
    error = json.loads(secret.stdout)["error"]
    assert secret.exit_code == 2 and error["code"] == "prohibited_content_detected"
    assert error["message"].startswith("the proposal: --tag item 1 holds a credential (AWS Access Key; not printed)")
    assert key not in secret.stdout + secret.stderr
    assert _files(repo) == before


def test_a_scope_id_reaches_the_record_and_search_filters_by_it(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    base = ("propose", "--body", "Rotates weekly.", "--scope-kind", "team", "--sensitivity", "repo-safe", "--apply")
    ids = {}
    for team in ("payments", "search"):
        done = run(repo, *base, "--title", f"Pager rota of {team}", "--scope-id", team, "--json")
        assert done.exit_code == 0, done.stderr
        ids[team] = json.loads(done.stdout)["applied"]["record_id"]
    found = json.loads(run(repo, "search", "pager rota", "--scope-id", "payments", "--json").stdout)["results"]
    assert [(r["record"]["id"], r["record"]["scope_id"]) for r in found] == [(ids["payments"], "payments")]
    before = _files(repo)
    empty = run(repo, *base, "--title", "T", "--scope-id", " ", "--json")
    assert (empty.exit_code, json.loads(empty.stdout)["error"]["code"]) == (2, "empty_scope_id")
    assert _files(repo) == before
