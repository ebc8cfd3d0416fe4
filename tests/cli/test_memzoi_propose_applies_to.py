"""``git memzoi propose --applies-to``: the paths a proposal is about reach the record, and ``precheck`` finds it.

The README's flow, end to end on a real repository through the command line: propose a risk bound to a path,
approve and apply it, then ``precheck --path`` warns with that record. Without ``--applies-to`` (a path given only
as evidence, ``--source-ref``) the record is bound to no path and precheck stays silent. Bad paths exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests.support import repos
from tests.support.repos import Repo, spec_ids

NOW = "2026-07-10T12:00:00Z"
TITLE = "Release script deletes dist"
BODY = "scripts/release.sh wipes dist/ before building; never run it with uncommitted artifacts."
RISK = ("propose", "--type", "risk", "--sensitivity", "repo-safe", "--title", TITLE, "--body", BODY, "--manual")
WARNING = (
    "[high] release-script-deletes-dist (scripts/release.sh): "
    f"{TITLE}: {BODY}\n"
    "  source: path scripts/release.sh\n"
    "  next: Review the cited risk before editing and consider a targeted test.\n"
)


@pytest.fixture
def root(repo: Repo, tmp_path: Path) -> Repo:
    (tmp_path / "home").mkdir()
    repo.write("scripts/release.sh", "rm -rf dist\n")
    assert run(repo, tmp_path, "init").exit_code == 0
    spec_ids(repo.root)  # records named by their bare slugs (memzoi-spec v0 ids) below
    repo.commit("release script")
    return repo


def run(repo: Repo, tmp_path: Path, *args: str) -> Result:
    env = {"MEMZOI_NOW": NOW, "MEMZOI_HOME": str(tmp_path / "home")}
    return repos.run(repo, *args, env=env, prog_name="git-memzoi")


def propose_id(repo: Repo, tmp_path: Path, *extra: str) -> str:
    result = run(repo, tmp_path, *RISK, *extra, "--json")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    proposal: dict[str, Any] = json.loads(result.stdout)["proposal"]
    assert proposal["status"] == "pending"
    return str(proposal["id"])


def accept(repo: Repo, tmp_path: Path, prop_id: str) -> None:
    assert run(repo, tmp_path, "approve", prop_id).stdout == f"approved {prop_id}\n"
    applied = run(repo, tmp_path, "apply", prop_id)
    assert applied.stdout == f"applied {prop_id} as record release-script-deletes-dist\n"


def test_applies_to_reaches_the_record_and_precheck_warns(root: Repo, tmp_path: Path) -> None:
    prop_id = propose_id(
        root,
        tmp_path,
        "--applies-to",
        "scripts/release.sh",
        "--source-kind",
        "path",
        "--source-ref",
        "scripts/release.sh",
    )
    packet = (root.root / ".memzoi/proposals/pending" / f"{prop_id}.md").read_text("utf-8")
    assert "scope:\n  kind: repo\n  paths:\n    - scripts/release.sh\n" in packet
    accept(root, tmp_path, prop_id)

    record = (root.root / ".memzoi/records/release-script-deletes-dist.md").read_text("utf-8")
    assert "applies_to:\n  - scripts/release.sh\n" in record
    shown = run(root, tmp_path, "precheck", "--path", "scripts/release.sh")
    assert (shown.exit_code, shown.stdout) == (0, WARNING)
    as_json = json.loads(run(root, tmp_path, "precheck", "--path", "scripts/release.sh", "--json").stdout)
    assert (
        as_json
        == {
            "ok": True,
            "warnings": [
                {
                    "id": "warn_release-script-deletes-dist",
                    "record_id": "release-script-deletes-dist",
                    "message": f"{TITLE}: {BODY}",
                    "severity": "high",
                    "citations": [
                        {
                            "record_id": "release-script-deletes-dist",
                            "memory_type": "risk",
                            "scope_kind": "repo",
                            "provenance": "git",
                            "plane": "git",
                            "destination": "repo",
                            "visibility": "repo",
                            "source_kind": "path",
                            "source_ref": "scripts/release.sh",
                            "path": "scripts/release.sh",
                            "store": "record",  # wave 2: where the cited memory lives, file and body line
                            "file": ".memzoi/records/release-script-deletes-dist.md",
                            "line": 1 + record[: record.index("\n---\n", 3) + 5].count("\n"),
                        }
                    ],
                    "suggested_next_step": "Review the cited risk before editing and consider a targeted test.",
                    "suspect": None,
                    "store": "record",
                    "claim": TITLE,
                    "superseded": False,
                }
            ],
        }
    )
    folder = run(root, tmp_path, "precheck", "--path", "scripts", "--json")
    assert [w["record_id"] for w in json.loads(folder.stdout)["warnings"]] == ["release-script-deletes-dist"]
    assert run(root, tmp_path, "precheck", "--path", "src/app.py").stdout == "No memory warnings.\n"


def test_a_source_path_alone_binds_no_path(root: Repo, tmp_path: Path) -> None:
    accept(root, tmp_path, propose_id(root, tmp_path, "--source-kind", "path", "--source-ref", "scripts/release.sh"))
    record = (root.root / ".memzoi/records/release-script-deletes-dist.md").read_text("utf-8")
    assert "applies_to" not in record
    assert run(root, tmp_path, "precheck", "--path", "scripts/release.sh").stdout == "No memory warnings.\n"


def test_applies_to_is_trimmed_sorted_and_deduplicated(root: Repo, tmp_path: Path) -> None:
    prop_id = propose_id(
        root, tmp_path, "--applies-to", " scripts/ ", "--applies-to", "docs/**", "--applies-to", "scripts"
    )
    packet = (root.root / ".memzoi/proposals/pending" / f"{prop_id}.md").read_text("utf-8")
    assert '  paths:\n    - "docs/**"\n    - scripts\n' in packet


@pytest.mark.parametrize("bad", ["../outside.sh", "/etc/passwd", "scripts/../x", "./scripts", "C:/x", "a\\b", " "])
def test_bad_applies_to_exits_2_and_writes_nothing(root: Repo, tmp_path: Path, bad: str) -> None:
    before = sorted(p.relative_to(root.root).as_posix() for p in (root.root / ".memzoi").rglob("*"))
    result = run(root, tmp_path, *RISK, "--applies-to", bad, "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "ok": False,
        "error": {
            "code": "invalid_applies_to",
            "exit_code": 2,
            "message": f"applies_to {bad!r} must be a repository-relative path (or prefix/**) without . or .. "
            "components",
        },
    }
    assert sorted(p.relative_to(root.root).as_posix() for p in (root.root / ".memzoi").rglob("*")) == before


def test_a_record_without_a_source_is_cited_by_its_file_never_dashes(root: Repo, tmp_path: Path) -> None:
    proposed = run(root, tmp_path, *RISK[:-1], "--applies-to", "scripts/release.sh", "--apply")
    assert proposed.exit_code == 0, proposed.output
    text = run(root, tmp_path, "precheck", "--path", "scripts/release.sh").stdout
    line = text.splitlines()[1]
    assert line.startswith("  source: record .memzoi/records/release-script-deletes-dist.md:"), text
    assert int(line.rsplit(":", 1)[1]) > 1 and "- -" not in text
