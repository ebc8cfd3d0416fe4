"""post-checkout / post-merge list the entries that became suspect with the move, not those already suspect."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from git_memzoi.cli.memzoi import cli
from git_memzoi.integrations import git_hooks
from tests.support.repos import Repo, entry_text

BIN = Path(sys.executable).parent
FOOTER = "Re-check with `git memkeep verify <id>` (or --all-safe), or edit the claim."


def git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=False)


@pytest.fixture
def moved(repo: Repo) -> tuple[Repo, str, str]:
    """main has `already` suspect (src/a.py changed after its anchor); branch feature changes src/b.py, the scope
    of `fresh`, which `depends` explains from. Returns the repo (on main) and the main and feature commits."""
    repo.write("src/a.py", "a = 1\n")
    repo.write("src/b.py", "b = 1\n")
    repo.write("docs/x.md", "x\n")
    base = repo.commit("base")
    repo.write("agent-memory/entries/already.md", entry_text("already", anchor=base, scope=["src/a.py"]))
    repo.write("agent-memory/entries/fresh.md", entry_text("fresh", anchor=base, scope=["src/b.py"]))
    repo.write(
        "agent-memory/entries/depends.md",
        entry_text("depends", anchor=base, scope=["docs/x.md"], extra="explains: [fresh]"),
    )
    repo.commit("entries")
    main = repo.commit("a changes", **{"src/a.py": "a = 2\n"})
    repo.git("checkout", "-q", "-b", "feature")
    feature = repo.commit("b changes", **{"src/b.py": "b = 2\n"})
    repo.git("checkout", "-q", "main")
    return repo, main, feature


def base_of(repo: Repo) -> str:
    return repo.git("rev-parse", "main~2")


def expected(repo: Repo, hook: str, old: str, new: str) -> str:
    return "\n".join(
        [
            f"memkeep: after {hook} ({old[:12]}..{new[:12]}) these entries became suspect:",
            "  suspect    depends  dependency_suspect: depends on fresh (suspect)",
            f"  suspect    fresh  scope_hit: src/b.py changed since {base_of(repo)[:12]}",
            FOOTER,
            "",
        ]
    )


def hook(repo: Repo, *args: str) -> object:
    result = CliRunner().invoke(cli, ["-C", str(repo.root), "hook", "run", *args])
    assert result.exit_code == 0 and result.stdout == ""
    return result


def test_post_checkout_lists_only_newly_suspect_entries_and_their_dependents(moved: tuple[Repo, str, str]) -> None:
    repo, main, feature = moved
    repo.git("checkout", "-q", "feature")
    result = hook(repo, "post-checkout", "--", main, feature, "1")
    assert result.stderr == expected(repo, "post-checkout", main, feature)  # `already` was suspect before: left out
    repo.git("checkout", "-q", "main")  # back: nothing became suspect (fresh and depends are fine on main)
    assert hook(repo, "post-checkout", "--", feature, main, "1").stderr == ""


def test_a_merge_that_brings_a_teammates_failed_verify_lists_the_entry_stale(moved: tuple[Repo, str, str]) -> None:
    """A teammate's verify proved ``fresh`` wrong (status ``stale``); the merge that brings it said nothing of it,
    only of what became suspect (a fresh user's walk)."""
    repo, main, _ = moved
    repo.git("checkout", "-q", "-b", "teammate", main)
    entry = repo.root / "agent-memory/entries/fresh.md"
    entry.write_text(entry.read_text().replace("status: verified", "status: stale"))
    stale = repo.commit("verify: fresh failed")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--ff-only", "teammate")
    assert hook(repo, "post-checkout", "--", main, stale, "1").stderr == "\n".join(
        [
            f"memkeep: after post-checkout ({main[:12]}..{stale[:12]}) these entries became suspect:",
            "  stale      fresh  failed its last verify; fix the claim or tombstone it",
            "  suspect    depends  dependency_suspect: depends on fresh (stale)",
            FOOTER,
            "",
        ]
    )
    assert hook(repo, "post-checkout", "--", stale, stale, "1").stderr == ""  # nothing moved: nothing new


def test_after_a_clone_the_message_says_suspect_now(moved: tuple[Repo, str, str]) -> None:
    repo, main, _ = moved
    result = hook(repo, "post-checkout", "--", "0" * 40, main, "1")
    assert result.stderr == "\n".join(
        [
            f"memkeep: after post-checkout ({main[:12]}) these entries are suspect now:",
            f"  suspect    already  scope_hit: src/a.py changed since {base_of(repo)[:12]}",
            FOOTER,
            "",
        ]
    )


def test_real_checkout_and_merge_report_through_the_installed_hooks(moved: tuple[Repo, str, str]) -> None:
    repo, main, feature = moved
    git_hooks.install(repo.root)
    proc = git(repo.root, "checkout", "-q", "feature")
    assert (proc.returncode, proc.stdout) == (0, "")
    assert proc.stderr == expected(repo, "post-checkout", main, feature)
    assert git(repo.root, "checkout", "-q", "main").stderr == ""
    want = expected(repo, "post-merge", main, feature)
    merge = git(repo.root, "merge", "-q", "--ff-only", "feature")
    assert merge.returncode == 0
    assert merge.stderr == want


def test_a_subfolder_store_reports_its_newly_suspect_entries_under_its_name(repo: Repo) -> None:
    """A store in a subfolder (``svc/agent-memory/``, what ``git memkeep`` started in ``svc/`` reads) is judged
    after the move as the root's is, each under its own heading; it was once left out (only the root's store)."""
    repo.write("a.py", "a = 1\n")
    repo.write("svc/s.py", "s = 1\n")
    base = repo.commit("base")
    repo.write("agent-memory/entries/top.md", entry_text("top", anchor=base, scope=["a.py"]))
    repo.write("svc/agent-memory/entries/sub.md", entry_text("sub", anchor=base, scope=["svc/s.py"]))
    main = repo.commit("entries")
    repo.git("checkout", "-q", "-b", "feature")
    feature = repo.commit("both change", **{"a.py": "a = 2\n", "svc/s.py": "s = 2\n"})
    result = hook(repo, "post-checkout", "--", main, feature, "1")
    span = f"{main[:12]}..{feature[:12]}"
    assert result.stderr == "\n".join(
        [
            f"memkeep: after post-checkout ({span}) these entries became suspect:",
            f"  suspect    top  scope_hit: a.py changed since {base[:12]}",
            FOOTER,
            f"memkeep (svc/agent-memory): after post-checkout ({span}) these entries became suspect:",
            f"  suspect    sub  scope_hit: svc/s.py changed since {base[:12]}",
            FOOTER,
            "",
        ]
    )
    repo.git("checkout", "-q", "main")
    assert hook(repo, "post-checkout", "--", feature, main, "1").stderr == ""


def test_a_subfolder_store_alone_is_reported_after_a_merge(repo: Repo) -> None:
    repo.write("svc/s.py", "s = 1\n")
    base = repo.commit("base")
    repo.write("svc/agent-memory/entries/sub.md", entry_text("sub", anchor=base, scope=["svc/s.py"]))
    repo.commit("entries")
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("s changes", **{"svc/s.py": "s = 2\n"})
    repo.git("checkout", "-q", "main")
    before = repo.git("rev-parse", "HEAD")
    repo.git("merge", "-q", "--no-edit", "--no-ff", "feature")
    head = repo.git("rev-parse", "HEAD")
    result = hook(repo, "post-merge", "--", "0")
    assert result.stderr == "\n".join(
        [
            f"memkeep (svc/agent-memory): after post-merge ({before[:12]}..{head[:12]}) these entries became suspect:",
            f"  suspect    sub  scope_hit: svc/s.py changed since {base[:12]}",
            FOOTER,
            "",
        ]
    )
