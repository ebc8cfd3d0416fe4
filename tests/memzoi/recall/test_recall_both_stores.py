"""Recall over both stores (issue 14, section 2): memkeep entries beside memzoi records in search, context,
handoff, precheck and the MCP tools; ``--store``; suspect marks from the one staleness core; ``--path`` as a git
pathspec; ``path_not_in_tree``. Real repositories, the CLI in-process and as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.memzoi.recall.index import db as index_db
from git_memzoi.memzoi.recall.pathmatch import scope_score
from tests.support import repos
from tests.support.repos import Repo, entry_text, ok_json, run

SIGNER = "src/signer.py"


def write_record(repo: Repo, concept_id: str, title: str, body: str, memory_type: str, **extra: Any) -> None:
    """A canonical record file; ``memkeep`` (the envelope) and ``applies_to`` as given."""
    repos.write_record(
        repo,
        concept_id,
        title,
        body,
        memory_type=memory_type,
        source="test",
        applies_to=extra.get("applies_to", ()),
        memkeep=extra.get("memkeep"),
    )


@pytest.fixture
def both(repo: Repo) -> dict[str, str]:
    """A risk record bound to src/signer.py with an envelope, and a memkeep entry scoped to src/http/**, both
    anchored at the first commit; then src/signer.py changes in a second commit (the record becomes suspect)."""
    assert run(repo, "init").exit_code == 0
    anchor = repo.commit("code", **{SIGNER: "sign()\n", "src/http/client.py": "get()\n", "README.md": "x\n"})
    envelope = {"anchor": anchor, "scope": [SIGNER], "verified_at": "2026-07-01"}
    write_record(
        repo,
        "signer-risk",
        "Signer nonce reuse",
        "Reusing a nonce in the signer leaks the key.",
        "risk",
        applies_to=(SIGNER,),
        memkeep=envelope,
    )
    repo.write(
        "agent-memory/entries/http-timeouts.md",
        entry_text(
            "http-timeouts",
            anchor=anchor,
            scope=["src/http/**"],
            claim="The http client retries a timeout three times.",
            verified_at="2026-07-01",
            written_at="2026-07-01",
        ),
    )
    changed = repo.commit("change the signer", **{SIGNER: "sign(nonce)\n"})
    return {"anchor": anchor, "head": changed}


def _scope_hit(suspect: Any) -> tuple[str, list[str]]:
    reason = suspect["reasons"][0]
    return reason["reason"], reason["evidence"]["files"]


def test_a_changed_file_makes_its_record_suspect_in_every_recall_path(repo: Repo, both: dict[str, str]) -> None:
    found = ok_json(repo, "search", "signer nonce")["results"]
    assert [(r["store"], r["record"]["id"]) for r in found] == [("record", "signer-risk")]
    assert _scope_hit(found[0]["suspect"]) == ("scope_hit", [SIGNER])
    cite = found[0]["citations"][0]
    assert (cite["store"], cite["file"], cite["path"]) == ("record", ".memzoi/records/signer-risk.md", SIGNER)
    assert isinstance(cite["line"], int) and cite["line"] > 1
    checked = ok_json(repo, "precheck", "--path", SIGNER)
    assert [(w["store"], w["record_id"]) for w in checked["warnings"]] == [("record", "signer-risk")]
    assert _scope_hit(checked["warnings"][0]["suspect"]) == ("scope_hit", [SIGNER])
    assert "notes" not in checked
    pack = ok_json(repo, "context", "--task", "signer nonce")
    assert [i["record_id"] for i in pack["included"]] == ["signer-risk"]
    assert _scope_hit(pack["included"][0]["suspect"]) == ("scope_hit", [SIGNER])
    assert pack["warnings"][0].startswith("suspect memory signer-risk is ranked below current records: scope_hit")
    assert "\n  Suspect: scope_hit; re-verify before relying on it" in pack["prompt"]

    from git_memzoi.mcp.server import _Server

    served = _Server(repo.root).search_memory("signer nonce")
    assert served.structured_content is not None
    assert _scope_hit(served.structured_content["results"][0]["suspect"]) == ("scope_hit", [SIGNER])


def test_an_entry_appears_in_precheck_for_its_scope_with_its_file_and_line(repo: Repo, both: dict[str, str]) -> None:
    checked = ok_json(repo, "precheck", "--path", "src/http/client.py")
    assert [(w["store"], w["record_id"], w["suspect"]) for w in checked["warnings"]] == [
        ("entry", "http-timeouts", None)
    ]
    warning = checked["warnings"][0]
    assert warning["claim"] == "The http client retries a timeout three times."
    assert warning["severity"] == "info"
    cite = warning["citations"][0]
    assert (cite["store"], cite["file"], cite["path"], cite["source_kind"]) == (
        "entry",
        "agent-memory/entries/http-timeouts.md",
        "src/http/**",
        "memkeep",
    )
    lines = (repo.root / cite["file"]).read_text("utf-8").splitlines()
    assert lines[cite["line"] - 1] == warning["claim"]
    text = run(repo, "precheck", "--path", "src/http/client.py")
    assert "[info] http-timeouts (src/http/**): The http client retries a timeout three times." in text.stdout
    assert "  source: memkeep entry agent-memory/entries/http-timeouts.md:" in text.stdout
    # a folder above the scope covers it too; --store narrows
    assert [w["record_id"] for w in ok_json(repo, "precheck", "--path", "src/")["warnings"]] == [
        "signer-risk",
        "http-timeouts",
    ]
    assert [w["record_id"] for w in ok_json(repo, "precheck", "--path", "src/", "--store", "records")["warnings"]] == [
        "signer-risk"
    ]
    assert [w["record_id"] for w in ok_json(repo, "precheck", "--path", "src/", "--store", "entries")["warnings"]] == [
        "http-timeouts"
    ]


def test_a_suspect_entry_is_marked_by_memkeeps_report_and_listed_first(repo: Repo, both: dict[str, str]) -> None:
    repo.commit("change the client", **{"src/http/client.py": "get(timeout)\n"})
    warnings = ok_json(repo, "precheck", "--path", "src/")["warnings"]
    assert [(w["record_id"], bool(w["suspect"])) for w in warnings] == [("signer-risk", True), ("http-timeouts", True)]
    assert _scope_hit(warnings[1]["suspect"]) == ("scope_hit", ["src/http/client.py"])
    status = json.loads(_memkeep_status(repo))
    core = [v for v in status["verdicts"] if v["id"] == "http-timeouts"]  # the one core, as memkeep prints it
    assert [(v["reason"], v["message"], v["files"]) for v in core] == [
        (r["reason"], r["message"], r["evidence"]["files"]) for r in warnings[1]["suspect"]["reasons"]
    ]
    found = ok_json(repo, "search", "http client timeout", "--store", "entries")
    assert [(r["store"], r["record"]["id"]) for r in found["results"]] == [("entry", "http-timeouts")]
    assert found["filters"] == {"store": "entry"} and found["store"] == "entries"
    assert _scope_hit(found["results"][0]["suspect"]) == ("scope_hit", ["src/http/client.py"])


def test_an_entry_whose_check_failed_is_suspect_stale_in_every_recall_path(repo: Repo, both: dict[str, str]) -> None:
    path = repo.root / "agent-memory/entries/http-timeouts.md"
    ok_json(repo, "search", "http client timeout")  # a verdict cache from before the failed check
    path.write_text(path.read_text().replace("status: verified", "status: stale"))  # what a failed verify writes
    stale = {
        "reasons": [
            {
                "reason": "stale",
                "message": "its check failed at git memkeep verify: fix the claim, supersede it, or verify it again",
                "evidence": {"status": "stale"},
            }
        ]
    }
    found = ok_json(repo, "search", "http client timeout", "--store", "entries")["results"]
    assert [(r["record"]["id"], r["suspect"]) for r in found] == [("http-timeouts", stale)]
    warnings = ok_json(repo, "precheck", "--path", "src/http/client.py", "--store", "entries")["warnings"]
    assert [(w["record_id"], w["suspect"]) for w in warnings] == [("http-timeouts", stale)]
    included = ok_json(repo, "context", "--task", "http client timeout", "--store", "entries")["included"]
    assert [(i["record_id"], i["suspect"]) for i in included] == [("http-timeouts", stale)]
    assert "SUSPECT" in run(repo, "precheck", "--path", "src/http/client.py").stdout


def _memkeep_status(repo: Repo) -> str:
    from git_memzoi.cli.memkeep import cli
    from tests.support.repos import invoke

    result = invoke(cli, ["-C", str(repo.root), "status", "--json"], env={"MEMZOI_TODAY": "2026-07-10"})
    return result.stdout


def test_a_trusted_memory_ranks_before_a_suspect_one_of_equal_text_relevance(repo: Repo, both: dict[str, str]) -> None:
    write_record(
        repo,
        "kestrel-a",
        "Kestrel quota is fifty.",
        "Kestrel quota is fifty.",  # the entry's title is its claim, its body the same line: equal bm25
        "fact",
        memkeep={"anchor": both["anchor"], "scope": [SIGNER], "verified_at": "2026-07-01"},
    )
    repo.write(
        "agent-memory/entries/kestrel-b.md",
        entry_text("kestrel-b", anchor=both["head"], scope=["README.md"], claim="Kestrel quota is fifty."),
    )
    found = ok_json(repo, "search", "kestrel")["results"]
    assert found[0]["score"] == found[1]["score"]
    assert [(r["store"], r["record"]["id"], bool(r["suspect"])) for r in found] == [
        ("entry", "kestrel-b", False),
        ("record", "kestrel-a", True),
    ]
    assert [r["record"]["id"] for r in ok_json(repo, "search", "kestrel", "--store", "records")["results"]] == [
        "kestrel-a"
    ]
    pack = ok_json(repo, "context", "--task", "kestrel")
    # the same text twice is one memory in a pack: the better-ranked (trusted) copy is kept
    assert [(i["store"], i["record_id"]) for i in pack["included"]] == [("entry", "kestrel-b")]
    assert "/store=entry) Kestrel quota is fifty.\n  Source: agent-memory/entries/kestrel-b.md:" in pack["prompt"]
    handoff = ok_json(repo, "handoff", "--task", "kestrel", "--store", "entries")
    assert [i["record_id"] for i in handoff["context"]["included"]] == ["kestrel-b"]


def test_paths_resolve_from_the_current_directory_like_git_pathspecs(repo: Repo, both: dict[str, str]) -> None:
    from git_memzoi.cli.memzoi import cli
    from tests.support.repos import PINNED, invoke

    inside = invoke(cli, ["-C", str(repo.root / "src"), "precheck", "--path", "signer.py", "--json"], env=PINNED)
    assert [w["record_id"] for w in json.loads(inside.stdout)["warnings"]] == ["signer-risk"]
    up = invoke(cli, ["-C", str(repo.root / "src/http"), "precheck", "--path", "../signer.py", "--json"], env=PINNED)
    assert [w["record_id"] for w in json.loads(up.stdout)["warnings"]] == ["signer-risk"]
    above = invoke(cli, ["-C", str(repo.root / "src"), "precheck", "--path", "../../x", "--json"], env=PINNED)
    assert above.exit_code == 2 and json.loads(above.stdout)["error"]["code"] == "path_outside_repo"
    env = {**os.environ, **PINNED}
    done = subprocess.run(
        [sys.executable, "-m", "git_memzoi", "precheck", "--path", "signer.py"],
        cwd=repo.root / "src",
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("[high] signer-risk (src/signer.py): Signer nonce reuse")


def test_a_path_in_no_tree_gets_a_warning_not_silence(repo: Repo, both: dict[str, str]) -> None:
    result = run(repo, "precheck", "--path", "src/singer.py")
    assert result.stdout == "No memory warnings.\n"
    assert result.stderr == (
        "warning: path src/singer.py (from the repository root) is neither tracked nor present in the working tree; "
        "no memory can be bound to it (path_not_in_tree)\n"
    )
    assert ok_json(repo, "precheck", "--path", "src/singer.py")["notes"] == [
        {
            "code": "path_not_in_tree",
            "path": "src/singer.py",
            "message": "path src/singer.py (from the repository root) is neither tracked nor present in the working "
            "tree; no memory can be bound to it",
        }
    ]
    assert ok_json(repo, "search", "signer", "--path", "nowhere/")["notes"][0]["code"] == "path_not_in_tree"
    assert ok_json(repo, "context", "--task", "signer", "--path", SIGNER)["notes"] == []
    (repo.root / "README.md").unlink()  # tracked, deleted in the working tree: still in the tree
    assert "notes" not in ok_json(repo, "precheck", "--path", "README.md")


def test_the_index_covers_entries_incrementally_and_deleting_it_loses_nothing(repo: Repo, both: dict[str, str]) -> None:
    from git_memzoi.memzoi.layout import Layout

    layout = Layout(repo.root)
    first = ok_json(repo, "search", "http client")["results"]
    assert [r["record"]["id"] for r in first] == ["http-timeouts"]
    entry = repo.root / "agent-memory/entries/http-timeouts.md"
    entry.write_text(entry.read_text("utf-8").replace("three times", "five times"), "utf-8")
    refreshed = index_db.refresh(layout)
    assert refreshed.read == ("agent-memory/entries/http-timeouts.md",) and not refreshed.rebuilt
    assert (
        ok_json(repo, "search", "five times")["results"][0]["claim"] == "The http client retries a timeout five times."
    )
    before = ok_json(repo, "search", "http client")
    index_db.index_path(layout).unlink()
    assert ok_json(repo, "search", "http client") == before
    rebuilt = ok_json(repo, "rebuild")
    assert rebuilt["records"] == {"repo": 1, "local": 0, "session": 0}  # records only: entries are another store
    entry.write_text(entry.read_text("utf-8").replace("status: verified", "status: tombstone"), "utf-8")
    assert ok_json(repo, "search", "http client")["results"] == []


def test_an_unknown_store_is_a_usage_error(repo: Repo, both: dict[str, str]) -> None:
    result = run(repo, "search", "x", "--store", "both")
    assert result.exit_code == 2 and "--store" in result.stderr
    from git_memzoi.mcp.server import _Server

    failed = _Server(repo.root).precheck_path(SIGNER, store="both")
    assert failed.is_error and failed.structured_content == {
        "error": {"code": "invalid_store", "message": "store must be one of records, entries, all"}
    }


@pytest.mark.parametrize(
    ("patterns", "requested", "expected"),
    [
        (["src/http/**"], "src/http/client.py", (4, "src/http/**")),
        (["src/http/client.py"], "src/http/client.py", (5, "src/http/client.py")),
        (["src/http/**"], "src/", (2, "src/http/**")),
        (["src/http/**"], "src/**", (2, "src/http/**")),
        (["*.py"], "src/a.py", (4, "*.py")),
        (["src/**", "!src/gen/**"], "src/gen/x.py", (0, None)),
        (["src/http/**"], "docs/a.md", (0, None)),
        (["src/http/**"], ".", (0, None)),
    ],
)
def test_scope_score(patterns: list[str], requested: str, expected: tuple[int, str | None]) -> None:
    assert scope_score(patterns, requested) == expected


def test_request_path_from_cwd(tmp_path: Path) -> None:
    from git_memzoi.core.paths import request_path
    from git_memzoi.errors import InputError

    (tmp_path / "src" / "a").mkdir(parents=True)
    assert request_path("x.py", tmp_path, tmp_path / "src") == "src/x.py"
    assert request_path("./", tmp_path, tmp_path / "src") == "src/"
    assert request_path(".", tmp_path, tmp_path / "src") == "src"
    assert request_path("b/", tmp_path, tmp_path / "src") == "src/b/"
    assert request_path("../y", tmp_path, tmp_path / "src/a") == "src/y"
    assert request_path("x.py", tmp_path, tmp_path) == "x.py"
    assert request_path("x.py", tmp_path) == "x.py"
    with pytest.raises(InputError):
        request_path("../../y", tmp_path, tmp_path / "src")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("./src/signer.py", "src/signer.py"),
        ("src/./signer.py", "src/signer.py"),
        ("src//signer.py", "src/signer.py"),
        ("src/../src/signer.py", "src/signer.py"),
        ("./src/", "src/"),
        ("src/./**", "src/**"),
        ("./", "."),
        ("{root}/./src/signer.py", "src/signer.py"),
        ("{root}/src/../src/signer.py", "src/signer.py"),
        ("{root}/", "."),
        ("../x", "path_outside_repo"),
        ("src/../../x", "path_outside_repo"),
        ("{root}/../x", "path_outside_repo"),
        ("C:/x", "path_outside_repo"),
        ("src/\0x", "invalid_argument"),
    ],
)
def test_a_path_without_cwd_is_normalised_as_written(tmp_path: Path, given: str, expected: str) -> None:
    """An MCP tool's path (no cwd: relative to the root) is normalised as the CLI's is: an agent's
    ``./src/signer.py`` was told that no risk applied."""
    from git_memzoi.core.paths import request_path
    from git_memzoi.errors import InputError

    text = given.replace("{root}", tmp_path.as_posix())
    try:
        assert request_path(text, tmp_path) == expected
    except InputError as exc:
        assert exc.code == expected


def test_the_remembered_report_follows_entry_edits_and_new_commits(repo: Repo, both: dict[str, str]) -> None:
    from git_memzoi.memzoi.recall import suspect

    def marks() -> list[Any]:
        return [w["suspect"] for w in ok_json(repo, "precheck", "--path", "src/http/client.py")["warnings"]]

    assert marks() == [None]
    cache = repo.root / ".git/memzoi/cache" / suspect.CACHE_NAME
    assert json.loads(cache.read_text("utf-8"))["verdicts"] == {}  # no entry is suspect yet
    suspect._REPORTS.clear()  # as a new process: the saved report answers while nothing changed
    assert marks() == [None]
    entry = repo.root / "agent-memory/entries/http-timeouts.md"
    entry.write_text(
        entry.read_text("utf-8").replace("verified_at: 2026-07-01", "verified_at: 2026-01-01\nttl_days: 30")
    )
    assert [m["reasons"][0]["reason"] for m in marks()] == ["ttl_expired"]  # an edited entry: judged again
    entry.write_text(entry.read_text("utf-8").replace("ttl_days: 30", "ttl_days: 3000"))
    assert marks() == [None]
    repo.commit("change the client", **{"src/http/client.py": "get(timeout)\n"})
    assert [m["reasons"][0]["reason"] for m in marks()] == ["scope_hit"]  # a new commit: judged again
