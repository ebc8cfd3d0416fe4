"""Issue 13's read paths that printed credentials: a packet holding one (hand-edited, or committed with
``--no-verify``) is withheld by ``proposal-files show`` and ``proposals show``, listed as withheld, failed by
``validate`` and refused by ``apply`` and ``reject``; ``git memkeep verify`` masks a credential in a check's command
(``--dry-run`` included) and in its output. No value is ever printed. Secrets are built at test time."""

from __future__ import annotations

import json
import random
import string

import pytest

from git_memzoi.core.secret_scan import MASK
from tests.cli.test_memkeep_cli import STORE, _verify_entry, as_json, in_repo
from tests.cli.test_memkeep_cli import base as base
from tests.memzoi.proposals.test_proposal_files import packet_text
from tests.support import repos
from tests.support.repos import Repo

ENV = {"MEMZOI_NOW": "2026-07-10T12:00:00Z"}
WHY = "holds a credential (gcp-api-key; not printed): remove it, secrets never go to git-visible memory"


def _google_key() -> str:
    rng = random.Random(31)
    return "AIza" + "".join(rng.choice(string.ascii_letters + string.digits + "-_") for _ in range(35))


def run(repo: Repo, *args: str) -> object:
    return repos.run(repo, *args, env=ENV)


@pytest.fixture
def leaked(repo: Repo) -> tuple[Repo, str]:
    """A repo-safe pending packet whose body holds a Google API key."""
    assert repos.run(repo, "init", env=ENV).exit_code == 0
    key = _google_key()
    repo.write(".memzoi/proposals/pending/leak.md", packet_text("mem_leak", body=f"Maps calls use {key} today."))
    return repo, key


def test_proposal_files_show_validate_list_apply_reject_withhold_it(leaked: tuple[Repo, str]) -> None:
    repo, key = leaked
    where = ".memzoi/proposals/pending/leak.md: description: "  # the first field holding it
    shown = repos.run(repo, "proposal-files", "show", "mem_leak", "--json", env=ENV)
    assert shown.exit_code == 2 and key not in shown.stdout + shown.stderr
    error = {"code": "prohibited_content_detected", "message": where + WHY, "exit_code": 2}
    assert json.loads(shown.stdout)["error"] == error
    checked = repos.run(repo, "proposal-files", "validate", "--json", env=ENV)
    assert checked.exit_code == 1 and key not in checked.stdout
    assert json.loads(checked.stdout)["proposals"][0]["issues"] == [
        {"code": "prohibited_content_detected", "field": "description", "message": where + WHY}
    ]
    text = repos.run(repo, "proposal-files", "validate", env=ENV)
    assert text.stdout.startswith("invalid  mem_leak  ") and text.stdout.endswith("1 pending, 1 invalid\n")
    assert key not in text.stdout
    listed = repos.run(repo, "proposal-files", "list", env=ENV)
    assert listed.stdout.splitlines()[0] == f".memzoi/proposals/pending/leak.md  withheld: {where + WHY}"
    before = repos.tree(repo.root)
    for args in (("apply", "mem_leak"), ("reject", "mem_leak", "--reason", "holds a key")):
        result = repos.run(repo, "proposal-files", *args, "--json", env=ENV)
        assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "prohibited_content_detected"
        assert key not in result.stdout + result.stderr
    assert repos.tree(repo.root) == before


def test_proposals_show_withholds_a_packet_edited_to_hold_a_credential(repo: Repo) -> None:
    assert repos.run(repo, "init", env=ENV).exit_code == 0
    made = repos.ok_json(
        repo,
        "propose",
        "--manual",
        "--sensitivity",
        "repo-safe",
        "--type",
        "fact",
        "--title",
        "Maps quota",
        "--body",
        "Maps calls stay cached.",
        env=ENV,
    )
    prop_id = made["proposal"]["id"]
    packet = next((repo.root / ".memzoi/proposals/pending").glob("*.md"))
    key = _google_key()
    packet.write_text(packet.read_text("utf-8").replace("stay cached.", f"stay cached; key {key}."), "utf-8")
    shown = repos.ok_json(repo, "proposals", "show", prop_id, env=ENV)
    assert (shown["packet"], shown["withheld"]) == (None, True)
    text = repos.run(repo, "proposals", "show", prop_id, env=ENV)
    assert key not in text.stdout + text.stderr and "Maps quota" not in text.stdout


def _curl(key: str) -> str:
    return f"curl -fsS -H 'Authorization: token {key}' https://api.github.com/user"


def _github_token() -> str:
    rng = random.Random(5)
    return "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


def test_verify_dry_run_and_run_mask_a_credential_in_the_check(base: Repo) -> None:
    key = _github_token()
    check = f'{{run: "{_curl(key)}; echo leaked {key}; exit 1", safe: true}}'
    base.write(f"{STORE}/entries/subject.md", _verify_entry(base.first, check))
    dry = in_repo(base, "verify", "--all-safe", "--dry-run", "--json")
    assert as_json(dry)["items"][0]["message"] == f"{_curl(MASK)}; echo leaked {MASK}; exit 1"
    text = in_repo(base, "verify", "--all-safe", "--dry-run")
    assert key not in text.stdout and f"token {MASK}" in text.stdout
    ran = in_repo(base, "verify", "subject", "--json")
    out = as_json(ran)["items"][0]["checks"][0]
    assert (out["run"], out["output"]) == (f"{_curl(MASK)}; echo leaked {MASK}; exit 1", out["output"])
    assert key not in ran.stdout and key not in in_repo(base, "verify", "subject").stdout


def test_verify_manual_never_says_a_check_ran(base: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry is edited after verify read it and before it writes: with --manual no check ran, so the message
    says the entry changed since verify read it (a check run keeps "while its check ran")."""
    import contextlib
    from collections.abc import Iterator
    from pathlib import Path

    from git_memzoi.core import atomic

    path = base.write(f"{STORE}/entries/subject.md", _verify_entry(base.first, "'true'"))
    real = atomic.lifecycle_lock

    @contextlib.contextmanager
    def edited_first(lock: Path, *args: object, **kwargs: object) -> Iterator[None]:
        path.write_text(path.read_text("utf-8").replace("status: verified", "status: stale"), "utf-8")
        with real(lock, *args, **kwargs):
            yield

    monkeypatch.setattr(atomic, "lifecycle_lock", edited_first)
    error = as_json(in_repo(base, "verify", "subject", "--manual", "--json"))["error"]
    message = f"{STORE}/entries/subject.md changed since verify read it; run verify again"
    assert error == {"code": "changed_during_verify", "message": message, "exit_code": 2}
