"""The pre-commit hook reports a watched memzoi record whose scope the staged change hits, as it reports a memkeep
entry (a claim whose code changed is flagged the moment it changes; a fresh user's walk found records silent)."""

from __future__ import annotations

from tests.support.repos import Repo, ok_json, run

RULE = ("--type", "risk", "--title", "Release wipes dist", "--body", "scripts/release.sh wipes dist/.")


def test_a_staged_change_in_a_records_scope_is_reported(repo: Repo) -> None:
    repo.commit("code", **{"scripts/release.sh": "rm -rf dist\n", "docs/x.md": "x\n"})
    assert run(repo, "init").exit_code == 0
    made = ok_json(repo, "propose", *RULE, "--scope", "scripts/release.sh", "--sensitivity", "repo-safe", "--apply")
    record_id = made["applied"]["record_id"]
    repo.commit("the record")
    repo.write("docs/x.md", "y\n")
    repo.git("add", "docs/x.md")
    quiet = run(repo, "hook", "run", "pre-commit")
    assert (quiet.exit_code, record_id in quiet.stderr) == (0, False)  # outside its scope: nothing said
    repo.write("scripts/release.sh", "rm -rf dist build\n")
    repo.git("add", "scripts/release.sh")
    hit = run(repo, "hook", "run", "pre-commit")
    assert hit.exit_code == 0, hit.stderr  # reported, never blocked
    assert f"  {record_id}  (.memzoi/records/{record_id}.md)\n" in hit.stderr
    assert "(a record's claim: git memzoi verify <id>; an entry's: git memkeep verify <id>)" in hit.stderr
