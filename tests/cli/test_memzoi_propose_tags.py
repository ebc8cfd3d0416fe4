"""``git memzoi propose --tag`` (and MCP ``propose_memory``'s ``tags``): the tags reach the packet and the record,
``search`` matches them, and a bad or secret-bearing tag exits 2 with nothing written (it was accepted over MCP
and dropped with a warning)."""

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
