"""The pre-commit guard reads the memory-file list from ``git_memzoi.memzoi.memory_files`` (the one doctor uses):
a staged memkeep INDEX.md is a memory file and is screened for secrets; the managed blocks of other Markdown are
screened, the rest of those files is not."""

from __future__ import annotations

import json
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


def test_a_store_below_the_root_is_guarded_as_the_roots_is(repo: Repo) -> None:
    """``svc/agent-memory/`` is the store ``git memkeep`` finds from ``svc/``: its staged entries are screened
    for secrets and linted, and an entry of it whose scope the change hits is reported (a fresh user's walk
    committed a token there with exit 0: the guard only knew the root's store). A root store stays checked."""
    base = repo.commit("base", **{"svc/a.py": "1\n", "src/b.py": "2\n"})
    repo.commit("root store", **{"agent-memory/entries/r1.md": entry_text("r1", anchor=base, scope=["src/**"])})
    key = _key()
    repo.write("svc/agent-memory/entries/n1.md", entry_text("n1", anchor=base, scope=["svc/**"], claim=f"uses {key}"))
    repo.write("svc/agent-memory/entries/n2.md", "---\nschema_version: 1\nid: n2\n---\nno type.\n")
    repo.write("svc/a.py", "3\n")
    repo.write("docs/entries/notes.md", f"not a store: {key}\n")
    repo.git("add", "-A")
    result = guard.pre_commit(repo.root)
    found = sorted((f.path, f.rule) for f in result.violations)
    n2 = "svc/agent-memory/entries/n2.md"
    assert found == [
        ("svc/agent-memory/entries/n1.md", "secret: AWS Access Key"),
        *((n2, rule) for rule in ("date_missing", "scope_required", "status_missing", "type_missing")),
    ]
    assert (result.note, result.touched) == (None, (("n1", "svc/agent-memory/entries/n1.md"),))


def test_a_staged_deletion_or_rename_of_a_scoped_file_is_reported(repo: Repo) -> None:
    """Removing or renaming the file a claim is about is the largest change to it: the guard reports the entry
    as it does for an edit (a fresh user's walk saw no warning for ``git rm`` or ``git mv``)."""
    base = repo.commit("base", **{"a.py": "A = 1\n", "b.py": "B = 1\n"})
    repo.commit("entries", **{
        "agent-memory/entries/on-a.md": entry_text("on-a", anchor=base, scope=["a.py"]),
        "agent-memory/entries/on-b.md": entry_text("on-b", anchor=base, scope=["b.py"]),
    })  # fmt: skip
    repo.git("rm", "-q", "a.py")
    repo.git("mv", "b.py", "c.py")
    assert guard.pre_commit(repo.root).touched == (
        ("on-a", "agent-memory/entries/on-a.md"),
        ("on-b", "agent-memory/entries/on-b.md"),
    )


CONFLICTED = "<<<<<<< HEAD\nThe limit is 10.\n=======\nThe limit is 20.\n>>>>>>> other\n"


def test_a_memory_file_a_merge_left_unresolved_is_unreadable_and_refused(repo: Repo) -> None:
    """git's conflict markers in an entry's claim parsed as a claim that holds ("All claims hold" during an
    unresolved merge, a fresh user's walk); now the file is unreadable (``merge_conflict``, its line named) for
    status, and the guard refuses to commit it. An opening ``---`` that never closes is named as such."""
    from git_memzoi.memkeep import api as memkeep

    base = repo.commit("base", **{"a.py": "A = 1\n"})
    text = entry_text("limit", anchor=base, scope=["a.py"])
    repo.write("agent-memory/entries/limit.md", text.replace("A claim that holds.\n", CONFLICTED))
    repo.write("agent-memory/entries/open.md", "---\nschema_version: 1\nid: open\n")
    repo.git("add", "-A")
    loaded = memkeep.load_store(memkeep.locate_store(repo.root, repo.root))
    unreadable = sorted((u.path, u.code, u.reason) for u in loaded.unreadable)
    line = text.splitlines().index("A claim that holds.") + 1
    assert unreadable == [
        (
            "agent-memory/entries/limit.md",
            "merge_conflict",
            f"unresolved merge conflict (<<<<<<< on line {line}): resolve it, then git add the file",
        ),
        (
            "agent-memory/entries/open.md",
            "no_frontmatter",
            "the frontmatter block opened by --- on line 1 has no closing --- line",
        ),
    ]
    found = sorted((f.path, f.rule, f.line) for f in guard.pre_commit(repo.root).violations)
    assert found == [
        ("agent-memory/entries/limit.md", "conflict_marker", line),
        ("agent-memory/entries/open.md", "parse", 1),
    ]


def test_a_record_a_merge_left_unresolved_is_left_out_of_recall(repo: Repo) -> None:
    from tests.support.repos import run

    repo.commit("base", **{"a.py": "1\n"})
    assert run(repo, "init").exit_code == 0
    propose = ("--type", "risk", "--title", "Limit", "--body", "The limit is 10.", "--sensitivity", "repo-safe")
    assert run(repo, "propose", *propose, "--apply").exit_code == 0
    (record,) = (repo.root / ".memzoi" / "records").glob("*.md")
    record.write_text(record.read_text("utf-8").replace("The limit is 10.\n", CONFLICTED), "utf-8")
    found = json.loads(run(repo, "search", "limit", "--json").stdout)
    rel = record.relative_to(repo.root).as_posix()
    assert (found["results"], [(n["code"], n["path"]) for n in found["notes"]]) == ([], [("unreadable_records", rel)])


def test_a_broken_memkeep_yml_does_not_switch_the_guard_off(repo: Repo) -> None:
    """A typo in ``.memkeep.yml`` (or a link outside) left the store unlocated, so its entries were not even
    screened and a token was committed with exit 0 (a fresh user's walk): an entry whose store cannot be
    located is refused, screened all the same, and a staged ``.memkeep.yml`` symlink is refused."""
    base = repo.commit("base", **{"a.py": "1\n"})
    key = _key()
    repo.write(".memkeep.yml", "referential_checks: true\n")
    repo.write("agent-memory/entries/e1.md", entry_text("e1", anchor=base, scope=["a.py"], claim=f"uses {key}"))
    repo.write("svc/.memkeep.yml", "store_dir: [not, a, name]\n")
    repo.write("svc/agent-memory/entries/e2.md", entry_text("e2", anchor=base, scope=["a.py"]))
    repo.git("add", "-A")
    found = sorted((f.path, f.rule) for f in guard.pre_commit(repo.root).violations)
    assert found == [
        ("agent-memory/entries/e1.md", "secret: AWS Access Key"),
        ("agent-memory/entries/e1.md", "store_unlocated"),
        ("svc/agent-memory/entries/e2.md", "store_unlocated"),
    ]
    repo.git("rm", "-q", "--cached", "-r", ".")
    (repo.root / ".memkeep.yml").unlink()
    (repo.root / "settings.yml").write_text("store_dir: agent-memory\n")
    (repo.root / ".memkeep.yml").symlink_to("settings.yml")
    repo.git("add", ".memkeep.yml", "settings.yml")
    assert [(f.path, f.rule) for f in guard.pre_commit(repo.root).violations] == [(".memkeep.yml", "symlink")]


def test_a_store_below_the_root_gets_the_scope_report_without_staging_its_entries(repo: Repo) -> None:
    base = repo.commit("base", **{"svc/a.py": "1\n"})
    repo.commit("entry", **{"svc/agent-memory/entries/s1.md": entry_text("s1", anchor=base, scope=["svc/a.py"])})
    repo.write("svc/a.py", "2\n")
    repo.git("add", "svc/a.py")
    result = guard.pre_commit(repo.root)
    assert (result.violations, result.touched, result.note) == ((), (("s1", "svc/agent-memory/entries/s1.md"),), None)
