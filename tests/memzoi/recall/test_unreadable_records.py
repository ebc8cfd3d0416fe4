"""A record file recall cannot read is said, never silently dropped: a file renamed by hand (its name no longer
its ``id``) is refused alike by every reader, and search, context and doctor say how many files they left out,
naming canonical files only (a private file's name is its title's slug)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.repos import Repo, run

REPO_SAFE = ("--sensitivity", "repo-safe", "--apply")


@pytest.fixture
def root(repo: Repo) -> Repo:
    repo.commit("code", **{"src/app.py": "x\n"})
    assert run(repo, "init").exit_code == 0
    assert (
        run(repo, "propose", "--type", "fact", "--title", "Top fact", "--body", "top beaver", *REPO_SAFE).exit_code == 0
    )
    return repo


def renamed(repo: Repo) -> Path:
    """Rename the one canonical record by hand: its frontmatter ``id`` stays the old name."""
    (old,) = (repo.root / ".memzoi" / "records").glob("top-fact-*.md")
    new = old.with_name("renamed-fact.md")
    old.rename(new)
    return new


def notes(repo: Repo, *args: str) -> list[dict[str, object]]:
    result = run(repo, *args, "--json")
    assert result.exit_code == 0, result.stderr
    return list(json.loads(result.stdout)["notes"])


def test_a_renamed_record_is_named_by_search_context_doctor_and_refused_by_writes(root: Repo) -> None:
    renamed(root)
    message = "1 record file(s) cannot be read and are left out: .memzoi/records/renamed-fact.md (`git memzoi doctor` says why)"
    note = {"code": "unreadable_records", "path": ".memzoi/records/renamed-fact.md", "message": message}
    assert notes(root, "search", "beaver") == [note]
    assert notes(root, "context", "--task", "beaver") == [note]
    text = run(root, "search", "beaver")
    assert (text.stdout, text.stderr) == ("No matching memories.\n", f"warning: {message} (unreadable_records)\n")
    doctor = [line for line in run(root, "doctor").stdout.splitlines() if " records:" in line]
    assert doctor == [
        "fail  records: 1 unreadable record file(s): .memzoi/records/renamed-fact.md -> fix or remove them; "
        "`git memzoi rebuild --json` lists the reasons"
    ]
    refused = run(root, "tombstone", "renamed-fact", "--reason", "gone", "--json")
    assert refused.exit_code == 2
    assert json.loads(refused.stdout)["error"] == {
        "code": "invalid_record",
        "message": ".memzoi/records/renamed-fact.md: id: must equal the file's concept id 'renamed-fact'",
        "exit_code": 2,
    }


def test_an_unreadable_private_record_is_counted_never_named(root: Repo) -> None:
    assert (
        run(root, "local", "add", "--type", "preference", "--title", "Secret plan", "--body", "beaver").exit_code == 0
    )
    (private,) = root.root.glob(".git/memzoi/local/runtime/local/*.md")
    private.write_text(private.read_text().replace("id: local-secret-plan", "id: other"))
    message = "1 private local record file(s) cannot be read and are left out (`git memzoi rebuild --json` names each and why)"
    assert notes(root, "context", "--task", "beaver", "--include-local") == [
        {"code": "unreadable_records", "path": None, "message": message}
    ]
    assert notes(root, "search", "beaver") == []  # a repo search says nothing of private files
    doctor = run(root, "doctor").stdout
    assert "fail  records: 1 private record file(s) in .git/memzoi/local/runtime/ cannot be read" in doctor
    assert "secret-plan" not in doctor
