"""``git memzoi verify``'s core (proposals/verify.py): the byte-stable envelope rewrite and the guard that refuses
a record whose envelope changed while its check ran."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from git_memzoi.errors import ToolError
from git_memzoi.memkeep.checks import CheckResult, Outcome
from git_memzoi.memkeep.entries import Check
from git_memzoi.memzoi.proposals import verify as record_verify
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import Repo, ok_json

RECORD = """---
id: a
kind: memory
memkeep:
  anchor: 1111111111111111111111111111111111111111
  scope:
    - src/a.py
  verified_at: "2026-07-01"
other: x
---

# A

Body.
"""


def test_update_envelope_rewrites_only_the_changed_lines_and_appends_new_keys() -> None:
    new = record_verify.update_envelope(
        RECORD.encode(), {"anchor": "2a" * 20, "verified_at": "2026-07-10", "status": "stale"}
    )
    assert new.decode() == RECORD.replace("1" * 40, "2a" * 20).replace("2026-07-01", "2026-07-10").replace(
        '"2026-07-10"\nother', '"2026-07-10"\n  status: stale\nother'
    )
    crlf = RECORD.replace("\n", "\r\n").encode()
    assert record_verify.update_envelope(crlf, {"anchor": "3b" * 20}) == crlf.replace(b"1" * 40, b"3b" * 20)


def test_update_envelope_refuses_what_it_cannot_rewrite_in_place() -> None:
    with pytest.raises(ToolError) as no_block:
        record_verify.update_envelope(RECORD.replace("memkeep:", "memkeep: {}\nx:").encode(), {"anchor": "2a" * 20})
    assert no_block.value.code == "not_rewritable"
    with pytest.raises(ToolError) as multi_line:
        record_verify.update_envelope(RECORD.encode(), {"scope": "src/b.py"})
    assert multi_line.value.code == "not_rewritable"


class EditingRunner:
    """A check that passes, but rewrites the record's anchor while it runs (another verify, a hand edit)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def run(self, check: Check, cwd: Path, env: Mapping[str, str]) -> CheckResult:
        text = self.path.read_text()
        head = text.split("  anchor: ", 1)[1][:40]
        self.path.write_text(text.replace(head, "f" * 40))
        return CheckResult(check, Outcome.PASS, 0, "", 1)


def test_a_record_changed_while_its_check_ran_is_left_alone(repo: Repo, ctx: Workspace) -> None:
    repo.commit("code", **{"src/a.py": "a\n"})
    given = ["--title", "A holds", "--body", "It holds.", "--applies-to", "src/a.py", "--check", "true", "--apply"]
    record_id = ok_json(repo, "propose", "--sensitivity", "repo-safe", *given)["applied"]["record_id"]
    path = repo.root / f".memzoi/records/{record_id}.md"
    repo.commit("record")
    with pytest.raises(ToolError) as changed:
        record_verify.verify(ctx, record_id, runner=EditingRunner(path))
    assert changed.value.code == "changed_during_verify"
    assert f"  anchor: {'f' * 40}\n" in path.read_text()
