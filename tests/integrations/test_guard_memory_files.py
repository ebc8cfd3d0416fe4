"""The pre-commit guard reads the memory-file list from ``git_memzoi.memzoi.memory_files`` (the one doctor uses):
a staged memkeep INDEX.md is a memory file and is screened for secrets; the managed blocks of other Markdown are
screened, the rest of those files is not."""

from __future__ import annotations

import random
import string

from git_memzoi.integrations import guard
from tests.support.repos import Repo, entry_text


def _key() -> str:
    rng = random.Random(77)
    return "AKIA" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(16))


def test_a_staged_index_and_a_managed_block_are_screened(repo: Repo) -> None:
    base = repo.commit("base", **{"src/a.py": "1\n"})
    repo.commit("entry", **{"agent-memory/entries/e1.md": entry_text("e1", anchor=base, scope=["src/**"])})
    key = _key()
    repo.write("agent-memory/INDEX.md", f"# Index\n\n- e1: uses {key}\n")
    repo.write("AGENTS.md", f"# Agents\n\n<!-- memzoi:start -->\nkey {key}\n<!-- memzoi:end -->\n")
    repo.write("README.md", f"example {key}\n")
    repo.git("add", "-A")
    found = [(f.path, f.rule, f.line) for f in guard.pre_commit(repo.root).violations]
    assert found == [
        ("AGENTS.md", "secret: AWS Access Key", 4),
        ("agent-memory/INDEX.md", "secret: AWS Access Key", 3),
    ]


def test_a_record_renamed_by_hand_is_refused_naming_its_concept_id(repo: Repo) -> None:
    """Recall refuses a record whose file name is not its id (it would vanish from search); so does the guard."""
    from tests.support.repos import run

    repo.commit("base", **{"src/a.py": "1\n"})
    assert run(repo, "init").exit_code == 0
    title = ("--type", "risk", "--title", "Holds x", "--body", "x.", "--sensitivity", "repo-safe", "--apply")
    assert run(repo, "propose", *title).exit_code == 0
    (record,) = (repo.root / ".memzoi" / "records").glob("*.md")
    record.rename(record.with_name("renamed.md"))
    repo.git("add", "-A")
    found = [(f.path, f.rule, f.line, f.message) for f in guard.pre_commit(repo.root).violations]
    assert found == [
        (".memzoi/records/renamed.md", "invalid_record", 2, "id: must equal the file's concept id 'renamed'")
    ]
