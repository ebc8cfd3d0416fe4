"""Credentials never reach git-visible memory through the write commands: ``propose`` (with or without
``--apply``), ``supersede`` and ``proposal-files apply`` of a hand-written packet are refused with exit 2 and
``prohibited_content_detected``, name the rule and the field and line of the text the user gave (never a file that
does not exist), never echo the value, and write nothing. Secrets are built
at test time from a seeded RNG."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

from tests.memzoi.proposals.test_proposal_files import packet_text
from tests.support.repos import Repo, ok_json, run


def _key() -> str:
    rng = random.Random(4242)
    return "AKIA" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(16))


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and (".git" not in p.relative_to(root).parts or p.is_relative_to(root / ".git/memzoi/local"))
        and p.name != "lifecycle.lock"
        and not p.name.startswith("index.sqlite")
    }


def refused(result: object, key: str) -> dict[str, object]:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "prohibited_content_detected" and "AWS Access Key" in error["message"]
    assert key not in result.stdout + result.stderr
    return error


def test_propose_and_supersede_refuse_a_credential(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    key = _key()
    record = ok_json(
        repo,
        "propose",
        "--apply",
        "--sensitivity",
        "repo-safe",
        "--type",
        "decision",
        "--title",
        "Deploy keys",
        "--body",
        "Rotate deploy keys every quarter.",
    )
    before = files(repo.root)
    for extra in ([], ["--apply"]):
        result = run(
            repo,
            "propose",
            *extra,
            "--sensitivity",
            "repo-safe",
            "--type",
            "fact",
            "--title",
            "AWS",
            "--body",
            f"aws_access_key_id = {key}",
            "--json",
        )
        # the field and the line of the text the user gave, not of the rendered packet
        assert refused(result, key)["message"].startswith("the proposal: body line 1 holds a credential")
        assert files(repo.root) == before
    result = run(
        repo,
        "propose",
        "--sensitivity",
        "repo-safe",
        "--type",
        "risk",
        "--title",
        "Paths",
        "--body",
        "b",
        "--applies-to",
        "docs/a.md",
        "--applies-to",
        f"keys/{key}.txt",
        "--json",
    )
    assert refused(result, key)["message"].startswith("the proposal: --applies-to item 2 holds a credential")
    assert files(repo.root) == before
    target = record["applied"]["record_id"] if "applied" in record else record["proposal"]["record_id"]
    result = run(
        repo,
        "supersede",
        target,
        "--sensitivity",
        "repo-safe",
        "--title",
        "Deploy keys",
        "--body",
        f"First line.\nUse {key} for deploys.",
        "--json",
    )
    message = refused(result, key)["message"]
    assert message == (
        "the replacement: --body line 2 holds a credential (AWS Access Key; not printed): remove it, "
        "secrets never go to git-visible memory"
    )
    assert ".memzoi/records/" not in message  # never a path that does not exist
    assert files(repo.root) == before


def test_a_hand_written_packet_with_a_credential_is_never_applied(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    key = _key()
    repo.write(".memzoi/proposals/pending/mem_test_one.md", packet_text(body=f"The key is {key}."))
    before = files(repo.root)
    result = run(repo, "proposal-files", "apply", "mem_test_one", "--json")
    message = refused(result, key)["message"]
    # refused when the packet is read (every reader withholds it), naming the packet's field, never a record file
    assert message == (
        ".memzoi/proposals/pending/mem_test_one.md: description: holds a credential (AWS Access Key; not printed): "
        "remove it, secrets never go to git-visible memory"
    )
    assert files(repo.root) == before and not list((repo.root / ".memzoi/records").glob("*.md"))
