"""``git memkeep status`` against real git histories (memkeep README "How staleness works").

Every test builds a real repository in tmp_path, writes a store under ``agent-memory/entries/`` and reads the
suspect set through the CLI in-process (``status --json``), asserting exact verdicts and evidence. The store
files are left untracked unless a test says otherwise, so only the files a test commits are in history.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests.support.repos import Repo, entry_text, memkeep

STORE = "agent-memory"


# --------------------------------------------------------------------------------------------- helpers


def put(repo: Repo, entry_id: str, *, anchor: str | None, scope: list[str] | None = None, **kw: Any) -> str:
    """Write one valid entry into the default store; return its repository-relative path."""
    rel = f"{STORE}/entries/{entry_id}.md"
    repo.write(rel, quoted(entry_text(entry_id, anchor=anchor, scope=scope, **kw), anchor))
    return rel


def quoted(text: str, anchor: str | None) -> str:
    """Quote the anchor: an id of digits only (or digits and one `e`) would load as a YAML number."""
    return text.replace(f"\nanchor: {anchor}\n", f"\nanchor: '{anchor}'\n") if anchor else text


def invoke(root: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return memkeep("-C", str(root), *args, env=env)


def status(root: Path, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    """Run ``status --json``; return (exit code, parsed JSON)."""
    result = invoke(root, "status", "--json", env=env)
    return result.exit_code, json.loads(result.stdout)


def pairs(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(id, reason) of every verdict, in output order."""
    return [(v["id"], v["reason"]) for v in data["verdicts"]]


def verdict(data: dict[str, Any], entry_id: str, reason: str) -> dict[str, Any]:
    found = [v for v in data["verdicts"] if v["id"] == entry_id and v["reason"] == reason]
    assert len(found) == 1, (entry_id, reason, data["verdicts"])
    return found[0]


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout.strip()


# ------------------------------------------------------------------------------------------ scope_hit


def test_scope_hit_across_several_commits_counts_only_files_in_scope(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n", "src/b.py": "b\n", "docs/x.md": "x\n", "top.txt": "t\n"})
    repo.commit_paths("edit a", {"src/a.py": "a2\n"})
    repo.commit_paths("add c", {"src/sub/c.py": "c\n"})
    repo.commit_paths("docs", {"docs/x.md": "x2\n"})
    repo.commit_paths("readme", {"README.md": "r\n"})
    put(repo, "src-claim", anchor=base, scope=["src/**"])
    put(repo, "docs-claim", anchor=base, scope=["docs/"])
    put(repo, "lib-claim", anchor=base, scope=["lib/**", "top.txt"])
    code, data = status(repo.root)
    assert code == 1
    assert data["summary"]["entries"] == 3
    assert data["summary"]["suspect"] == 2
    assert data["summary"]["verdicts"] == 2
    assert pairs(data) == [("docs-claim", "scope_hit"), ("src-claim", "scope_hit")]
    assert verdict(data, "src-claim", "scope_hit")["files"] == ["src/a.py", "src/sub/c.py"]
    assert verdict(data, "src-claim", "scope_hit")["anchor"] == base
    assert verdict(data, "docs-claim", "scope_hit")["files"] == ["docs/x.md"]
    assert data["head"] == repo.head()


def test_anchor_at_head_is_clean_and_exit_zero(repo: Repo) -> None:
    repo.commit_paths("base", {"src/a.py": "a\n"})
    head = repo.commit_paths("edit", {"src/a.py": "a2\n"})
    put(repo, "fresh", anchor=head, scope=["src/**"])
    code, data = status(repo.root)
    assert code == 0
    assert data["verdicts"] == []
    assert data["summary"] == {
        "entries": 1,
        "suspect": 0,
        "verdicts": 0,
        "stale": 0,
        "tombstones": 0,
        "unreadable": 0,
    }


def test_entry_own_file_never_counts_but_other_entries_do(repo: Repo) -> None:
    base = repo.commit_paths("base", {"docs/x.md": "x\n"})
    put(repo, "mine", anchor=base, scope=["*.md"])
    put(repo, "other", anchor=base, scope=["lib/**"])
    repo.commit("commit the store")  # both entry files now changed since base
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("mine", "scope_hit")]
    # its own file is excluded, the neighbour entry's file is in scope `*.md`
    assert verdict(data, "mine", "scope_hit")["files"] == [f"{STORE}/entries/other.md"]


def test_entry_with_only_own_file_in_scope_is_not_suspect(repo: Repo) -> None:
    base = repo.commit_paths("base", {"docs/x.md": "x\n"})
    rel = put(repo, "selfish", anchor=base, scope=[f"{STORE}/entries/selfish.md"])
    repo.commit("commit the entry")
    repo.write(rel, (repo.root / rel).read_text() + "More body.\n")
    repo.commit("edit the entry")
    code, data = status(repo.root)
    assert (code, data["verdicts"]) == (0, [])


def test_change_made_and_reverted_is_not_a_hit(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.commit_paths("edit", {"src/a.py": "changed\n"})
    repo.commit_paths("revert", {"src/a.py": "a\n"})
    repo.commit_paths("add tmp", {"src/tmp.py": "t\n"})
    (repo.root / "src/tmp.py").unlink()
    repo.commit("remove tmp")
    repo.git("revert", "--no-edit", "HEAD")  # brings src/tmp.py back ...
    repo.git("revert", "--no-edit", "HEAD")  # ... and removes it again
    put(repo, "claim", anchor=base, scope=["src/**"])
    code, data = status(repo.root)
    assert (code, data["verdicts"]) == (0, [])


def test_uncommitted_changes_are_not_hits(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.write("src/a.py", "dirty\n")
    repo.write("src/new.py", "untracked\n")
    repo.git("add", "src/new.py")
    put(repo, "claim", anchor=base, scope=["src/**"])
    code, data = status(repo.root)
    assert (code, data["verdicts"]) == (0, [])


def test_negated_scope_pattern_excludes(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n", "src/gen/x.py": "x\n"})
    repo.commit_paths("edit", {"src/a.py": "a2\n", "src/gen/x.py": "x2\n"})
    # patterns where the glob module and `git check-ignore --no-index` agree (see the report on `src/**`
    # followed by `!src/gen/**`, where they differ)
    put(repo, "only-gen-excluded", anchor=base, scope=["src/**/*.py", "!src/gen/*.py"])
    put(repo, "only-gen", anchor=base, scope=["src/gen/**", "!src/gen/x.py"])
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("only-gen-excluded", "scope_hit")]
    assert verdict(data, "only-gen-excluded", "scope_hit")["files"] == ["src/a.py"]


# --------------------------------------------------------------------------------------------- renames


def test_rename_out_of_scope_reports_old_and_new_path(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/old.py": "print('hello, a long enough file')\n" * 5, "keep.txt": "k\n"})
    (repo.root / "attic").mkdir()
    repo.git("mv", "src/old.py", "attic/old.py")
    repo.git("commit", "-q", "-m", "move out of src")
    put(repo, "both", anchor=base, scope=["src/**", "attic/**"])
    put(repo, "src-only", anchor=base, scope=["src/**"])
    put(repo, "attic-only", anchor=base, scope=["attic/"])
    put(repo, "untouched", anchor=base, scope=["keep.txt"])
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("attic-only", "scope_hit"), ("both", "scope_hit"), ("src-only", "scope_hit")]
    assert verdict(data, "both", "scope_hit")["files"] == ["attic/old.py", "src/old.py"]
    assert verdict(data, "src-only", "scope_hit")["files"] == ["src/old.py"]  # renamed out of scope: still a hit
    assert verdict(data, "attic-only", "scope_hit")["files"] == ["attic/old.py"]  # renamed into scope


def test_gitview_changed_files_lists_both_sides_of_a_rename(repo: Repo) -> None:
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    base = repo.commit_paths("base", {"src/old.py": "x = 1\n" * 20})
    (repo.root / "lib").mkdir()
    repo.git("mv", "src/old.py", "lib/new.py")
    repo.git("commit", "-q", "-m", "rename")
    view = Pygit2RepoView(repo.root)
    assert view.changed_files(base, repo.head()) == ["lib/new.py", "src/old.py"]
    assert view.changed_files(repo.head(), repo.head()) == []


# ---------------------------------------------------------------------------------------------- merges


def _merge_history(repo: Repo) -> dict[str, str]:
    """base → main: M1 (src/a.py); side: S (src/b.py); main merges side (no conflict)."""
    base = repo.commit_paths("base", {"src/a.py": "a\n", "src/b.py": "b\n", "docs/d.md": "d\n"})
    repo.git("checkout", "-q", "-b", "side")
    side = repo.commit_paths("side edits b", {"src/b.py": "b-side\n"})
    repo.git("checkout", "-q", "main")
    m1 = repo.commit_paths("main edits a", {"src/a.py": "a-main\n"})
    repo.git("merge", "-q", "--no-ff", "--no-edit", "side")
    merge = repo.head()
    assert len(repo.git("rev-list", "--parents", "-n1", "HEAD").split()) == 3
    return {"base": base, "side": side, "m1": m1, "merge": merge}


def test_anchor_on_side_branch_merged_into_main(repo: Repo) -> None:
    c = _merge_history(repo)
    put(repo, "on-side", anchor=c["side"], scope=["src/**"])
    put(repo, "on-side-b", anchor=c["side"], scope=["src/b.py"])
    code, data = status(repo.root)
    assert code == 1
    # a tree diff side..HEAD: main's change to src/a.py is not in the side commit's tree
    assert pairs(data) == [("on-side", "scope_hit")]
    assert verdict(data, "on-side", "scope_hit")["files"] == ["src/a.py"]


def test_anchor_on_main_before_merge_that_brings_in_scope_changes(repo: Repo) -> None:
    c = _merge_history(repo)
    put(repo, "before-merge", anchor=c["m1"], scope=["src/b.py"])
    put(repo, "before-merge-a", anchor=c["m1"], scope=["src/a.py", "docs/**"])
    put(repo, "at-base", anchor=c["base"], scope=["src/"])
    put(repo, "at-merge", anchor=c["merge"], scope=["src/**"])
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("at-base", "scope_hit"), ("before-merge", "scope_hit")]
    assert verdict(data, "before-merge", "scope_hit")["files"] == ["src/b.py"]
    assert verdict(data, "at-base", "scope_hit")["files"] == ["src/a.py", "src/b.py"]


# --------------------------------------------------------------------------------- anchor_unreachable


def _rebased_branch(repo: Repo) -> str:
    """base → main: M1; feature: F1 (the anchor); feature rebased onto main. Returns F1's old id."""
    repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.git("checkout", "-q", "-b", "feature")
    f1 = repo.commit_paths("feature work", {"src/f.py": "f\n"})
    repo.git("checkout", "-q", "main")
    repo.commit_paths("main work", {"docs/m.md": "m\n"})
    repo.git("checkout", "-q", "feature")
    repo.git("rebase", "-q", "main")
    assert repo.head() != f1
    return f1


def test_rebase_makes_anchor_not_ancestor(repo: Repo) -> None:
    f1 = _rebased_branch(repo)
    put(repo, "rebased", anchor=f1, scope=["src/**"])
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("rebased", "anchor_unreachable")]
    v = verdict(data, "rebased", "anchor_unreachable")
    assert v["state"] == "not_ancestor"
    assert v["anchor"] == f1


def test_rebase_then_gc_makes_anchor_missing(repo: Repo) -> None:
    f1 = _rebased_branch(repo)
    repo.git("update-ref", "-d", "ORIG_HEAD", check=False)
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    assert subprocess.run(["git", "cat-file", "-e", f1], cwd=repo.root, capture_output=True).returncode != 0
    put(repo, "rebased", anchor=f1, scope=["src/**"])
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("rebased", "anchor_unreachable")]
    assert verdict(data, "rebased", "anchor_unreachable")["state"] == "missing"


def test_abbreviated_anchor_resolves_to_full_id(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.commit_paths("edit", {"src/a.py": "b\n"})
    put(repo, "short", anchor=base[:8], scope=["src/**"])
    put(repo, "short-clean", anchor=repo.head()[:10], scope=["src/**"])
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("short", "scope_hit")]
    v = verdict(data, "short", "scope_hit")
    assert v["anchor"] == base
    assert v["files"] == ["src/a.py"]


@pytest.mark.parametrize("anchor", ["deadbeef" * 5, "deadbeef", "0badc0de1"])
def test_nonexistent_anchor_is_missing(repo: Repo, anchor: str) -> None:
    repo.commit_paths("base", {"src/a.py": "a\n"})
    put(repo, "ghost", anchor=anchor, scope=["src/**"])
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("ghost", "anchor_unreachable")]
    v = verdict(data, "ghost", "anchor_unreachable")
    assert (v["state"], v["anchor"]) == ("missing", anchor)


def test_absent_anchor(repo: Repo) -> None:
    repo.commit_paths("base", {"src/a.py": "a\n"})
    put(repo, "unanchored", anchor=None, scope=["src/**"], status="inferred", extra="ttl_days: 30")
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("unanchored", "anchor_unreachable")]
    v = verdict(data, "unanchored", "anchor_unreachable")
    assert (v["state"], v["anchor"]) == ("absent", None)


def test_anchor_naming_a_blob_is_not_a_commit(repo: Repo) -> None:
    repo.commit_paths("base", {"src/a.py": "a\n"})
    blob = repo.git("rev-parse", "HEAD:src/a.py")
    put(repo, "blobby", anchor=blob, scope=["src/**"])
    code, data = status(repo.root)
    assert code == 1
    assert verdict(data, "blobby", "anchor_unreachable")["state"] == "not_commit"


def test_anchor_on_unmerged_branch_is_not_ancestor(repo: Repo) -> None:
    repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.git("checkout", "-q", "-b", "other")
    other = repo.commit_paths("elsewhere", {"src/a.py": "o\n"})
    repo.git("checkout", "-q", "main")
    put(repo, "elsewhere", anchor=other, scope=["src/**"])
    code, data = status(repo.root)
    assert code == 1
    assert verdict(data, "elsewhere", "anchor_unreachable")["state"] == "not_ancestor"


# -------------------------------------------------------------------------------------- shallow (BR-19)


def test_shallow_clone_anchor_missing_is_shallow_missing(repo: Repo, tmp_path: Path) -> None:
    ids = [repo.commit_paths(f"c{i}", {f"f{i}.md": f"{i}\n"}) for i in range(1, 5)]
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(clone)], check=True, capture_output=True
    )
    assert git(clone, "rev-parse", "--is-shallow-repository") == "true"
    assert subprocess.run(["git", "cat-file", "-e", ids[1]], cwd=clone, capture_output=True).returncode != 0
    rel = f"{STORE}/entries/r.md"
    (clone / rel).parent.mkdir(parents=True)
    (clone / rel).write_text(quoted(entry_text("r", anchor=ids[1], scope=["f*.md"]), ids[1]))
    at_head = quoted(entry_text("at-head", anchor=ids[3], scope=["f*.md"]), ids[3])
    (clone / f"{STORE}/entries/at-head.md").write_text(at_head)
    code, data = status(clone)
    assert code == 1
    assert data["shallow"] is True
    assert data["head"] == ids[3]
    assert pairs(data) == [("r", "anchor_unreachable")]
    v = verdict(data, "r", "anchor_unreachable")
    assert v["state"] == "shallow_missing"
    assert v["anchor"] == ids[1]
    assert "--unshallow" in v["hint"]
    assert "--unshallow" in v["message"]

    text = invoke(clone, "status")
    assert text.exit_code == 1
    assert "shallow" in text.stdout
    assert "--unshallow" in text.stdout


# ----------------------------------------------------------------------------------------- detached HEAD


def test_detached_head(repo: Repo) -> None:
    a = repo.commit_paths("A", {"src/x.py": "x\n", "src/y.py": "y\n"})
    b = repo.commit_paths("B", {"src/x.py": "x2\n"})
    c = repo.commit_paths("C", {"src/y.py": "y2\n"})
    repo.git("checkout", "-q", "--detach", "HEAD~1")
    assert repo.head() == b
    put(repo, "from-a", anchor=a, scope=["src/**"])
    put(repo, "at-b", anchor=b, scope=["src/**"])
    put(repo, "from-future", anchor=c, scope=["src/**"])
    code, data = status(repo.root)
    assert code == 1
    assert data["head"] == b
    assert pairs(data) == [("from-a", "scope_hit"), ("from-future", "anchor_unreachable")]
    assert verdict(data, "from-a", "scope_hit")["files"] == ["src/x.py"]
    assert verdict(data, "from-future", "anchor_unreachable")["state"] == "not_ancestor"


# ---------------------------------------------------------------------------------- empty repo (BR-21)


def test_empty_repository(repo: Repo) -> None:
    put(repo, "anchored", anchor="deadbeefdeadbeef", scope=["src/**"])
    put(repo, "unanchored", anchor=None, scope=["src/**"], status="inferred", extra="ttl_days: 30")
    repo.git("add", "-A")  # staged, never committed: HEAD is unborn
    code, data = status(repo.root)
    assert code == 1
    assert data["head"] is None
    assert data["summary"]["entries"] == 2
    assert data["summary"]["suspect"] == 2
    assert pairs(data) == [("anchored", "anchor_unreachable"), ("unanchored", "anchor_unreachable")]
    assert verdict(data, "anchored", "anchor_unreachable")["state"] == "no_head"
    assert verdict(data, "unanchored", "anchor_unreachable")["state"] == "absent"

    text = invoke(repo.root, "status")
    assert text.exit_code == 1
    assert "no commits yet" in text.stdout
    assert "fatal" not in text.output and "ambiguous argument" not in text.stderr


def test_empty_repository_with_referential_check_and_ttl(repo: Repo) -> None:
    repo.write(".memkeep.yml", "referential_check: true\n")
    put(
        repo,
        "e",
        anchor="abcdef1",
        scope=["src/**"],
        claim="See `src/missing.py`.",
        status="observed",
        verified_at="2026-01-01",
        written_at="2026-01-01",
        extra="ttl_days: 10",
    )
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("e", "ttl_expired"), ("e", "anchor_unreachable")]  # REASONS order
    assert verdict(data, "e", "anchor_unreachable")["state"] == "no_head"


# --------------------------------------------------------------------------------- path encoding (BR-23)


def test_unicode_and_space_paths_in_scope_hit(repo: Repo) -> None:
    anchor = repo.commit_paths("A", {"notes/old.md": "o\n", "other.txt": "x\n"})
    repo.commit_paths("notes", {"notes/caf\u00e9.md": "c\n", "notes/my file.md": "m\n"})
    put(repo, "notes", anchor=anchor, scope=["notes/*.md"], claim="Notes are kept short; see `notes/caf\u00e9.md`.")
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("notes", "scope_hit")]
    files = verdict(data, "notes", "scope_hit")["files"]
    assert files == ["notes/caf\u00e9.md", "notes/my file.md"]
    raw = invoke(repo.root, "status", "--json").stdout
    assert "\\303\\251" not in raw and '"\\"notes' not in raw and "\\u00e9" not in raw


def test_unicode_reference_is_not_ref_missing_but_deleted_file_is(repo: Repo) -> None:
    repo.write(".memkeep.yml", "referential_check: true\n")
    anchor = repo.commit_paths("A", {"notes/gone.md": "g\n", "other.txt": "x\n"})
    (repo.root / "notes/gone.md").unlink()
    repo.commit_paths("notes", {"notes/caf\u00e9.md": "c\n", "notes/my file.md": "m\n"})
    put(
        repo,
        "notes",
        anchor=anchor,
        scope=["notes/*.md"],
        claim="Notes are kept short; see `notes/caf\u00e9.md` and `notes/my file.md`.",
    )
    put(repo, "refs-gone", anchor=repo.head(), scope=["lib/**"], claim="The old notes were in `notes/gone.md`.")
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("notes", "scope_hit"), ("refs-gone", "ref_missing")]
    assert verdict(data, "notes", "scope_hit")["files"] == ["notes/caf\u00e9.md", "notes/gone.md", "notes/my file.md"]
    assert verdict(data, "refs-gone", "ref_missing")["refs"] == ["notes/gone.md"]


def test_referential_check_is_off_by_default(repo: Repo) -> None:
    head = repo.commit_paths("A", {"other.txt": "x\n"})
    put(repo, "refs-gone", anchor=head, scope=["lib/**"], claim="The old notes were in `notes/gone.md`.")
    code, data = status(repo.root)
    assert (code, data["verdicts"]) == (0, [])


def test_nfd_file_in_history_matches_nfc_scope_and_reference(repo: Repo) -> None:
    repo.write(".memkeep.yml", "referential_check: true\n")
    anchor = repo.commit_paths("A", {"other.txt": "x\n"})
    repo.commit_paths("nfd", {"notes/cafe\u0301.md": "c\n"})  # bytes 63 61 66 65 cc 81
    put(repo, "nfd", anchor=anchor, scope=["notes/caf\u00e9.md"], claim="See `notes/caf\u00e9.md`.")
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("nfd", "scope_hit")]
    assert verdict(data, "nfd", "scope_hit")["files"] == ["notes/caf\u00e9.md"]


def test_ref_missing_with_fenced_block_and_directory(repo: Repo) -> None:
    repo.write(".memkeep.yml", "referential_check: true\n")
    head = repo.commit_paths("A", {"src/pkg/mod.py": "m\n"})
    body = "Modules live under `src/pkg/`.\n\n```\nsrc/pkg/mod.py\nsrc/pkg/removed.py\n```\n"
    put(repo, "fenced", anchor=head, scope=["src/**"], claim=body)
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("fenced", "ref_missing")]
    assert verdict(data, "fenced", "ref_missing")["refs"] == ["src/pkg/removed.py"]


# -------------------------------------------------------------------------------------- explains graph


def test_explains_cycle_terminates_and_both_are_suspect(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/b.py": "b\n"})
    head = repo.commit_paths("edit", {"src/b.py": "b2\n"})
    put(repo, "a", anchor=head, scope=["src/**"], extra="explains:\n  - b")
    put(repo, "b", anchor=base, scope=["src/b.py"], extra="explains:\n  - a")
    code, data = status(repo.root)
    assert code == 1
    assert data["summary"]["suspect"] == 2
    assert pairs(data) == [("a", "dependency_suspect"), ("b", "scope_hit"), ("b", "dependency_suspect")]
    assert verdict(data, "a", "dependency_suspect")["dependencies"] == ["b"]
    assert verdict(data, "b", "dependency_suspect")["dependencies"] == ["a"]


def test_explains_cycle_with_nothing_suspect_is_clean(repo: Repo) -> None:
    head = repo.commit_paths("base", {"src/b.py": "b\n"})
    put(repo, "a", anchor=head, scope=["src/**"], extra="explains:\n  - b")
    put(repo, "b", anchor=head, scope=["src/**"], extra="explains:\n  - c")
    put(repo, "c", anchor=head, scope=["src/**"], extra="explains:\n  - a")
    code, data = status(repo.root)
    assert (code, data["verdicts"]) == (0, [])


def test_dependency_chain_is_transitive(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n"})
    head = repo.commit_paths("edit", {"src/a.py": "a2\n"})
    put(repo, "a", anchor=base, scope=["src/a.py"])
    put(repo, "b", anchor=head, scope=["src/**"], extra="explains:\n  - a")
    put(repo, "c", anchor=head, scope=["src/**"], extra="explains:\n  - b")
    put(repo, "d", anchor=head, scope=["src/**"], extra="explains: [c, unrelated]")
    put(repo, "unrelated", anchor=head, scope=["src/**"])
    code, data = status(repo.root)
    assert code == 1
    assert data["summary"] == {
        "entries": 5,
        "suspect": 4,
        "verdicts": 4,
        "stale": 0,
        "tombstones": 0,
        "unreadable": 0,
    }
    assert pairs(data) == [
        ("a", "scope_hit"),
        ("b", "dependency_suspect"),
        ("c", "dependency_suspect"),
        ("d", "dependency_suspect"),
    ]
    assert verdict(data, "b", "dependency_suspect")["dependencies"] == ["a"]
    assert verdict(data, "c", "dependency_suspect")["dependencies"] == ["b"]
    assert verdict(data, "d", "dependency_suspect")["dependencies"] == ["c"]


def test_dependency_on_stale_entry(repo: Repo) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    put(repo, "old", anchor=head, scope=["src/**"], status="stale")
    put(repo, "user", anchor=head, scope=["src/**"], extra="explains:\n  - old")
    code, data = status(repo.root)
    assert code == 1
    assert data["stale"] == ["old"]
    assert data["summary"]["stale"] == 1
    assert data["summary"]["suspect"] == 1
    assert pairs(data) == [("user", "dependency_suspect")]
    assert verdict(data, "user", "dependency_suspect")["dependencies"] == ["old"]


def test_tombstones_are_never_suspect(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n"})
    head = repo.commit_paths("edit", {"src/a.py": "a2\n"})
    tomb_extra = "tombstone_reason: replaced\nttl_days: 1\nexplains:\n  - hit"
    put(
        repo,
        "grave",
        anchor=base,
        scope=["src/**"],
        status="tombstone",
        extra=tomb_extra,
        verified_at="2020-01-01",
        written_at="2020-01-01",
    )
    put(repo, "grave-unanchored", anchor=None, scope=None, status="tombstone", extra="tombstone_reason: gone")
    put(repo, "hit", anchor=base, scope=["src/**"])
    put(repo, "on-grave", anchor=head, scope=["src/**"], extra="explains:\n  - grave")
    code, data = status(repo.root)
    assert code == 1
    assert data["summary"]["tombstones"] == 2
    assert data["summary"]["entries"] == 4
    assert pairs(data) == [("hit", "scope_hit")]


# ----------------------------------------------------------------------------------------------- ttl


def test_ttl_expired_with_pinned_clock(repo: Repo) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    rel = put(
        repo,
        "cache-policy",
        anchor=head,
        scope=["src/**"],
        written_at="2026-03-16",
        verified_at="2026-03-16",
        extra="ttl_days: 100",
    )
    put(
        repo,
        "boundary",
        anchor=head,
        scope=["src/**"],
        written_at="2026-03-16",
        verified_at="2026-03-16",
        extra="ttl_days: 107",
    )
    before = (repo.root / rel).read_bytes()
    code, data = status(repo.root, env={"MEMZOI_TODAY": "2026-07-01"})
    assert code == 1
    assert data["today"] == "2026-07-01"
    assert pairs(data) == [("cache-policy", "ttl_expired")]
    v = verdict(data, "cache-policy", "ttl_expired")
    assert (v["verified_at"], v["age_days"], v["ttl_days"]) == ("2026-03-16", 107, 100)
    assert (repo.root / rel).read_bytes() == before  # status never writes

    code, data = status(repo.root, env={"MEMZOI_TODAY": "2026-06-24"})  # 100 days: not yet expired
    assert (code, data["verdicts"]) == (0, [])


def test_ttl_uses_verified_at_not_written_at(repo: Repo) -> None:
    head = repo.commit_paths("base", {"src/a.py": "a\n"})
    put(
        repo,
        "reverified",
        anchor=head,
        scope=["src/**"],
        written_at="2025-01-01",
        verified_at="2026-11-20",
        extra="ttl_days: 30",
    )
    code, data = status(repo.root)
    assert (code, data["verdicts"]) == (0, [])


def test_one_verdict_per_reason(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.commit_paths("edit", {"src/a.py": "a2\n"})
    put(
        repo,
        "twice",
        anchor=base,
        scope=["src/**"],
        verified_at="2026-01-01",
        written_at="2026-01-01",
        extra="ttl_days: 30",
    )
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("twice", "scope_hit"), ("twice", "ttl_expired")]
    assert data["summary"]["suspect"] == 1
    assert data["summary"]["verdicts"] == 2


# --------------------------------------------------------------------------------------- broken entries


def test_malformed_entries_do_not_hide_others(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.commit_paths("edit", {"src/a.py": "a2\n"})
    put(repo, "good-hit", anchor=base, scope=["src/**"])
    put(repo, "good-clean", anchor=repo.head(), scope=["src/**"])
    repo.write(f"{STORE}/entries/bad-yaml.md", "---\nschema_version: 1\nid: bad-yaml\nscope: [src/**\n---\nClaim.\n")
    repo.write(f"{STORE}/entries/unclosed.md", "---\nschema_version: 1\nid: unclosed\ntype: fact\n\nClaim.\n")
    repo.write(f"{STORE}/entries/dup-key.md", "---\nid: dup-key\nid: again\n---\nClaim.\n")
    code, data = status(repo.root)
    assert code == 1
    assert data["summary"]["entries"] == 2
    assert data["summary"]["unreadable"] == 3
    assert pairs(data) == [("good-hit", "scope_hit")]
    broken = {u["path"]: u for u in data["unreadable"]}
    assert set(broken) == {f"{STORE}/entries/{n}.md" for n in ("bad-yaml", "unclosed", "dup-key")}
    for item in broken.values():
        assert isinstance(item["line"], int) and item["line"] >= 1, item
        assert item["reason"]
    assert broken[f"{STORE}/entries/bad-yaml.md"]["line"] in (4, 5)
    assert broken[f"{STORE}/entries/dup-key.md"]["line"] == 3
    assert broken[f"{STORE}/entries/unclosed.md"]["line"] == 1

    lint = invoke(repo.root, "lint", "--json")
    assert lint.exit_code == 1
    parse = [v for v in json.loads(lint.stdout)["violations"] if v["rule"] == "parse"]
    assert sorted(v["path"] for v in parse) == sorted(broken)
    assert all(v["line"] for v in parse)


def test_status_only_unreadable_entry_exits_one(repo: Repo) -> None:
    repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.write(f"{STORE}/entries/bad.md", "---\nid: [unclosed\n---\nClaim.\n")
    code, data = status(repo.root)
    assert code == 1
    assert data["verdicts"] == []
    assert [u["path"] for u in data["unreadable"]] == [f"{STORE}/entries/bad.md"]
    text = invoke(repo.root, "status")
    assert f"{STORE}/entries/bad.md:" in text.stdout


def test_crlf_and_bom_entries_are_readable(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.commit_paths("edit", {"src/a.py": "a2\n"})
    text = quoted(entry_text("crlf", anchor=base, scope=["src/**"]), base).replace("\n", "\r\n")
    (repo.root / STORE / "entries").mkdir(parents=True)
    (repo.root / STORE / "entries" / "crlf.md").write_bytes(text.encode())
    bom = b"\xef\xbb\xbf" + quoted(entry_text("bom", anchor=base, scope=["src/**"]), base).encode()
    (repo.root / STORE / "entries" / "bom.md").write_bytes(bom)
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("bom", "scope_hit"), ("crlf", "scope_hit")]


def test_status_twice_uses_parse_cache_consistently(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.commit_paths("edit", {"src/a.py": "a2\n"})
    put(
        repo,
        "dated",
        anchor=base,
        scope=["src/**"],
        verified_at="2026-01-01",
        written_at="2026-01-01",
        extra="ttl_days: 30",
    )
    first = status(repo.root)
    second = status(repo.root)  # served from .git/memzoi/cache
    assert first == second
    assert pairs(second[1]) == [("dated", "scope_hit"), ("dated", "ttl_expired")]


# ------------------------------------------------------------------------------- anchors that are not ids


@pytest.mark.parametrize("anchor", ["HEAD", "main", "HEAD~1", "main@{0}"])
def test_symbolic_anchor_never_silently_follows_the_branch(repo: Repo, anchor: str) -> None:
    """An anchor is a commit id. `HEAD` or a branch name would move with every commit, so the claim could
    never go suspect; it is reported as not naming a commit instead."""
    repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.commit_paths("edit", {"src/a.py": "a2\n"})
    put(repo, "moving", anchor=anchor, scope=["src/**"])
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("moving", "anchor_unreachable")]
    assert verdict(data, "moving", "anchor_unreachable")["state"] == "not_commit"


def test_hex_anchor_that_is_also_a_branch_name_means_the_commit(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.commit_paths("edit", {"src/a.py": "a2\n"})
    short = base[:9]
    repo.git("branch", short, "HEAD")  # a branch named like the old commit, pointing at HEAD
    put(repo, "short", anchor=short, scope=["src/**"])
    code, data = status(repo.root)
    assert code == 1
    v = verdict(data, "short", "scope_hit")
    assert (v["anchor"], v["files"]) == (base, ["src/a.py"])


def test_uppercase_anchor_resolves(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.commit_paths("edit", {"src/a.py": "a2\n"})
    put(repo, "upper", anchor=base.upper(), scope=["src/**"])
    _code, data = status(repo.root)
    assert verdict(data, "upper", "scope_hit")["anchor"] == base


def test_ambiguous_abbreviated_anchor(repo: Repo) -> None:
    import pygit2

    repo.commit_paths("base", {"src/a.py": "a\n"})
    seen: dict[str, bytes] = {}
    for i in range(100_000):  # two blobs whose ids share a 4-digit prefix (birthday bound: a few hundred)
        data = f"blob {i}\n".encode()
        prefix = str(pygit2.hash(data))[:4]
        if prefix in seen and prefix[0] in "abcdef":  # a letter first keeps it a YAML string
            break
        seen.setdefault(prefix, data)
    store = pygit2.Repository(str(repo.root))
    store.create_blob(seen[prefix])
    store.create_blob(data)
    put(repo, "amb", anchor=prefix, scope=["src/**"])
    code, data_ = status(repo.root)
    assert code == 1
    assert verdict(data_, "amb", "anchor_unreachable")["state"] == "ambiguous"


def test_mode_change_is_a_change(repo: Repo) -> None:
    base = repo.commit_paths("base", {"bin/run.sh": "echo hi\n"})
    (repo.root / "bin/run.sh").chmod(0o755)
    repo.commit("chmod")
    put(repo, "script", anchor=base, scope=["bin/"])
    _code, data = status(repo.root)
    assert verdict(data, "script", "scope_hit")["files"] == ["bin/run.sh"]


def test_linked_worktree(repo: Repo, tmp_path: Path) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.commit_paths("edit", {"src/a.py": "a2\n"})
    tree = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "-b", "feat", str(tree))
    rel = f"{STORE}/entries/w.md"
    (tree / rel).parent.mkdir(parents=True)
    (tree / rel).write_text(quoted(entry_text("w", anchor=base, scope=["src/**"]), base))
    code, data = status(tree)
    assert code == 1
    assert verdict(data, "w", "scope_hit")["files"] == ["src/a.py"]
    assert data["head"] == repo.head()


# ----------------------------------------------------------------------------- ref_missing heuristics


def test_ref_missing_ignores_commands_and_line_suffixes(repo: Repo) -> None:
    repo.write(".memkeep.yml", "referential_check: true\n")
    head = repo.commit_paths("A", {"src/app.py": "a\n", "tests/unit/test_app.py": "t\n"})
    body = (
        "The entry point is `src/app.py:12` (see also `src/app.py:3-9`).\n\n"
        "Run `pytest tests/unit` or `python -m pytest tests/unit/test_app.py` to check it; "
        "`cat src/gone.py` fails since the move.\n"
    )
    put(repo, "cmds", anchor=head, scope=["src/**"], claim=body)
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("cmds", "ref_missing")]
    assert verdict(data, "cmds", "ref_missing")["refs"] == ["src/gone.py"]


# -------------------------------------------------------------------------------- unusual YAML values


def test_impossible_timestamp_stays_the_string_it_was_written_as(repo: Repo) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n"})
    put(repo, "odd", anchor=base, scope=["src/**"], extra="weird: 2026-02-30 25:00:00")
    code, data = status(repo.root)
    assert (code, pairs(data), data["unreadable"]) == (0, [], [])


@pytest.mark.parametrize("value", ["!!float abc", "!!int x"])
def test_unconstructible_value_is_unreadable_with_its_line(repo: Repo, value: str) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.commit_paths("edit", {"src/a.py": "a2\n"})
    put(repo, "good", anchor=base, scope=["src/**"])
    put(repo, "odd", anchor=base, scope=["src/**"], extra=f"weird: {value}")
    code, data = status(repo.root)
    assert code == 1
    assert pairs(data) == [("good", "scope_hit")]
    [item] = data["unreadable"]
    assert item["path"] == f"{STORE}/entries/odd.md"
    lines = (repo.root / item["path"]).read_text().splitlines()
    assert item["line"] is not None and lines[item["line"] - 1] == f"weird: {value}"


@pytest.mark.parametrize("value", ["!!binary aGVsbG8=", "!custom tagged", "!!set {a, b}"])
def test_values_the_cache_cannot_hold_are_still_read(repo: Repo, value: str) -> None:
    base = repo.commit_paths("base", {"src/a.py": "a\n"})
    repo.commit_paths("edit", {"src/a.py": "a2\n"})
    put(repo, "odd", anchor=base, scope=["src/**"], extra=f"weird: {value}")
    for _ in range(2):  # the second run reads through the parse cache
        code, data = status(repo.root)
        assert (code, pairs(data), data["unreadable"]) == (1, [("odd", "scope_hit")], [])


def test_entry_file_finds_an_nfd_spelled_file(repo: Repo) -> None:
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView
    from git_memzoi.memkeep import store as store_mod

    repo.commit_paths("base", {"src/a.py": "a\n"})
    text = quoted(entry_text("caf\u00e9", anchor=repo.head(), scope=["src/**"]), repo.head())
    nfd = repo.write(f"{STORE}/entries/cafe\u0301.md", text)
    view = Pygit2RepoView(repo.root)
    located = store_mod.locate(repo.root, view.root)
    [entry] = store_mod.load(located).entries
    assert entry.path == f"{STORE}/entries/caf\u00e9.md"  # NFC, like git's paths
    assert store_mod.entry_file(located, entry.path) == nfd.resolve()
    assert store_mod.entry_file(located, f"{STORE}/entries/none.md") == located.root / STORE / "entries/none.md"
