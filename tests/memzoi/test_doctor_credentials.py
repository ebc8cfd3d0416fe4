"""``doctor``'s credential check scans every git-visible memory file of both stores (memzoi records, packets,
exports; memkeep entries and INDEX.md; the memzoi-managed blocks of other Markdown files) with the guard's list
(:mod:`git_memzoi.memzoi.memory_files`) and the guard's rules; ignored and non-memory files are not memory."""

from __future__ import annotations

import random
import string

import pytest

from git_memzoi.memzoi import doctor, memory_files
from git_memzoi.memzoi.workspace import init
from tests.support.repos import Repo, entry_text


def _key() -> str:
    rng = random.Random(1212)
    return "AKIA" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(16))


def _credentials(repo: Repo) -> doctor.Check:
    return next(c for c in doctor.run(repo.root).checks if c.name == "credentials")


@pytest.fixture
def stores(repo: Repo) -> Repo:
    """Both stores, clean: a memzoi memory and a committed memkeep entry with its INDEX.md."""
    init(repo.root)
    repo.commit("code", **{"src/app.py": "x = 1\n"})
    head = repo.head()
    repo.write("agent-memory/entries/app.md", entry_text("app", anchor=head, scope=["src/**"]))
    repo.write("agent-memory/INDEX.md", "# Index\n\n- app: A claim that holds.\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "memory")
    return repo


def test_clean_stores_are_ok_and_count_every_memory_file(stores: Repo) -> None:
    # .memzoi/.gitignore, .memzoi/index.md, .memzoi/initialized, the entry, INDEX.md; src/app.py is not memory
    check = _credentials(stores)
    assert (check.status, check.message) == ("ok", "no credential in 5 git-visible memory file(s)")


@pytest.mark.parametrize(
    ("path", "before", "after"),
    [
        ("agent-memory/entries/app.md", "A claim that holds.", "A claim that holds.\nKey: {key}"),
        ("agent-memory/INDEX.md", "- app: A claim that holds.", "- app: A claim that holds. {key}"),
    ],
)
def test_a_key_committed_in_the_memkeep_store_fails(stores: Repo, path: str, before: str, after: str) -> None:
    key = _key()
    text = (stores.root / path).read_text("utf-8")
    new = text.replace(before, after.format(key=key))
    (stores.root / path).write_text(new, "utf-8")
    stores.git("commit", "-qam", "leak", "--no-verify")
    line = new.splitlines().index(next(ln for ln in new.splitlines() if key in ln)) + 1
    check = _credentials(stores)
    assert check.status == "fail"
    assert check.message == f"1 memory file(s) hold a credential (not printed): {path} line {line} (AWS Access Key)"
    assert key not in check.message + check.next_step


def test_managed_blocks_of_other_markdown_are_scanned_and_the_rest_is_not(stores: Repo) -> None:
    key = _key()
    stores.write("README.md", f"# App\n\nOur example key {key} is prose, not memory.\n")
    stores.write("CLAUDE.md", f"# Notes\n\n<!-- memzoi:start -->\nUse key {key}\n<!-- memzoi:end -->\n")
    check = _credentials(stores)
    assert check.message == "1 memory file(s) hold a credential (not printed): CLAUDE.md line 4 (AWS Access Key)"


def test_an_untracked_export_fails_and_an_ignored_file_is_not_git_visible(stores: Repo) -> None:
    key = _key()
    stores.write(".gitignore", "scratch/\n")
    stores.write("scratch/.memzoi/records/x.md", f"{key}\n")
    assert _credentials(stores).status == "ok"
    stores.write(".memzoi/exports/okf/notes.md", f"---\nid: notes\n---\n{key}\n")
    check = _credentials(stores)
    assert check.message == (
        "1 memory file(s) hold a credential (not printed): .memzoi/exports/okf/notes.md line 4 (AWS Access Key)"
    )


@pytest.mark.parametrize(
    ("path", "store_rel", "kind"),
    [
        (".memzoi/local/notes.md", "agent-memory", memory_files.PRIVATE),
        (".memzoi/records/a.md", "agent-memory", memory_files.MEMZOI_FILE),
        (".memzoi/proposals/p.md", None, memory_files.MEMZOI_FILE),
        ("agent-memory/entries/a.md", "agent-memory", memory_files.ENTRY),
        ("agent-memory/INDEX.md", "agent-memory", memory_files.INDEX),
        ("entries/a.md", ".", memory_files.ENTRY),
        ("INDEX.md", ".", memory_files.INDEX),
        ("INDEX.md", "agent-memory", memory_files.MARKDOWN),
        ("docs/Guide.MD", None, memory_files.MARKDOWN),
        ("src/app.py", "agent-memory", None),
    ],
)
def test_the_memory_file_kinds(path: str, store_rel: str | None, kind: str | None) -> None:
    assert memory_files.kind(path, store_rel) == kind


def test_managed_text_keeps_only_the_blocks_with_the_file_line_numbers() -> None:
    data = b"intro\n<!-- memzoi:start -->\ninside\n<!-- memzoi:end -->\noutside\n"
    assert memory_files.managed_text(data) == "\n\ninside\n\n\n"
    assert memory_files.managed_text(b"no markers\n") is None
    assert memory_files.managed_text(b"<!-- memzoi:start -->\n<!-- memzoi:end -->\n") is None
