"""``git memzoi show --projection / --heading / --max-chars`` (issue 18, seed vault-memory "Compact v2 context"):
slices with exact byte offsets and line ranges of the file, one budget, ``truncated``, ``excluded``,
``budget_used``; ``invalid_projection``, ``target_not_found`` and ``ambiguous_target`` for selectors. Real
repositories, the CLI in-process and as a subprocess (exit codes)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from tests.support import repos
from tests.support.repos import PINNED, Repo, entry_text, ok_json, run

BODY = (
    "Install with pnpm.\n\n## Context\n\nWhy \U0001f600 pnpm.\n\n### Details\n\n```\n# not a heading\n```\n\n"
    "## Consequences\n\nFaster.\n"
)
FILE = ".memzoi/records/use-pnpm.md"


@pytest.fixture
def record(repo: Repo) -> bytes:
    """The record use-pnpm with sections Context (holding Details and a fenced ``#`` line) and Consequences;
    its file's bytes."""
    assert run(repo, "init").exit_code == 0
    repos.write_record(repo, "use-pnpm", "Use pnpm", BODY, memory_type="decision")
    repo.commit("record")
    return (repo.root / FILE).read_bytes()


def _span(data: bytes, needle: bytes, end: bytes | None = None) -> tuple[int, int]:
    start = data.index(needle)
    return start, (data.index(end) if end else len(data))


def _line(data: bytes, offset: int) -> int:
    return data[:offset].count(b"\n") + 1


def test_sections_carry_offsets_and_lines_of_the_file(repo: Repo, record: bytes) -> None:
    out = ok_json(repo, "show", "use-pnpm", "--heading", "Use pnpm/Context", "--heading", "Use pnpm/Consequences")
    start, end = _span(record, b"## Context", b"## Consequences")
    later = record.index(b"## Consequences")
    assert out["projection"] == "sections" and "body" not in out
    assert (
        out["context"]
        == {
            "projection": "sections",
            "slices": [
                {
                    "heading_path": ["Use pnpm", "Context"],
                    "start_byte": start,
                    "end_byte": end,
                    "start_line": _line(record, start),
                    "end_line": _line(record, end - 1),
                    "original_chars": 64,  # the emoji is two UTF-16 code units
                    "text": record[start:end].decode(),
                    "truncated": False,
                },
                {
                    "heading_path": ["Use pnpm", "Consequences"],
                    "start_byte": later,
                    "end_byte": len(record),
                    "start_line": _line(record, later),
                    "end_line": record.count(b"\n"),
                    "original_chars": 25,
                    "text": "## Consequences\n\nFaster.\n",
                    "truncated": False,
                },
            ],
            "excluded": [],
            "budget_limit": 6000,
            "budget_used": 89,
            "truncated": False,
            "source": {
                "bytes": len(record),
                "lines": record.count(b"\n"),
                "sha256": hashlib.sha256(record).hexdigest(),
            },
        }
    )
    assert (out["id"], out["fields"]["title"], out["lineage"]) == (
        "use-pnpm",
        "Use pnpm",
        {"supersedes": [], "superseded_by": []},
    )


def test_a_nested_section_and_a_fenced_hash_line(repo: Repo, record: bytes) -> None:
    out = ok_json(repo, "show", "use-pnpm", "--heading", "Use pnpm/Context/Details")
    (only,) = out["context"]["slices"]
    assert only["text"] == "### Details\n\n```\n# not a heading\n```\n\n"
    assert record[only["start_byte"] : only["end_byte"]].decode() == only["text"]
    missing = run(repo, "show", "use-pnpm", "--heading", "Use pnpm/Context/Details/not a heading", "--json")
    assert (missing.exit_code, json.loads(missing.stdout)["error"]["code"]) == (2, "target_not_found")


def test_one_budget_across_slices_never_splits_an_emoji(repo: Repo, record: bytes) -> None:
    # "## Context\n\nWhy " is 16 units; the emoji takes 2: a budget of 17 stops before it, 18 takes it whole
    cut = ok_json(repo, "show", "use-pnpm", "--heading", "Use pnpm/Context", "--max-chars", "17")
    assert cut["context"]["slices"][0]["text"] == "## Context\n\nWhy "
    assert (cut["context"]["budget_used"], cut["context"]["truncated"]) == (16, True)
    whole = ok_json(repo, "show", "use-pnpm", "--heading", "Use pnpm/Context", "--max-chars", "18")
    assert whole["context"]["slices"][0]["text"] == "## Context\n\nWhy \U0001f600"
    both = ok_json(
        repo,
        "show",
        "use-pnpm",
        "--heading",
        "Use pnpm/Context",
        "--heading",
        "Use pnpm/Consequences",
        "--max-chars",
        "70",
    )
    first, second = both["context"]["slices"]
    assert (first["truncated"], second["text"], second["truncated"]) == (False, "## Con", True)
    assert (both["context"]["budget_used"], both["context"]["budget_limit"]) == (70, 70)
    assert second["start_byte"] == record.index(b"## Consequences") and second["end_byte"] == len(record)


def test_a_spent_budget_excludes_the_rest(repo: Repo, record: bytes) -> None:
    out = ok_json(
        repo,
        "show",
        "use-pnpm",
        "--heading",
        "Use pnpm/Context",
        "--heading",
        "Use pnpm/Consequences",
        "--max-chars",
        "64",
    )
    assert [s["heading_path"] for s in out["context"]["slices"]] == [["Use pnpm", "Context"]]
    (gone,) = out["context"]["excluded"]
    assert (gone["heading_path"], gone["reason"], gone["original_chars"]) == (
        ["Use pnpm", "Consequences"],
        "budget_exhausted",
        25,
    )
    assert "text" not in gone and out["context"]["truncated"] is True
    zero = ok_json(repo, "show", "use-pnpm", "--heading", "Use pnpm/Context", "--max-chars", "0")
    assert (zero["context"]["slices"], zero["context"]["budget_used"]) == ([], 0)
    assert [e["reason"] for e in zero["context"]["excluded"]] == ["budget_exhausted"]


def test_metadata_and_full(repo: Repo, record: bytes) -> None:
    body_start = record.index(b"\n# Use pnpm")
    meta = ok_json(repo, "show", "use-pnpm", "--projection", "metadata")
    assert meta["context"]["slices"] == [] and meta["context"]["budget_limit"] == 0
    assert meta["context"]["excluded"] == [
        {
            "heading_path": None,
            "start_byte": body_start,
            "end_byte": len(record),
            "start_line": _line(record, body_start),
            "end_line": record.count(b"\n"),
            "original_chars": len(record[body_start:].decode("utf-8").encode("utf-16-le")) // 2,
            "reason": "metadata_projection",
        }
    ]
    assert (meta["context"]["truncated"], meta["fields"]["type"]) == (False, "decision")
    full = ok_json(repo, "show", "use-pnpm", "--projection", "full")
    (body,) = full["context"]["slices"]
    assert (body["text"], body["start_byte"], full["context"]["budget_limit"]) == (
        record[body_start:].decode(),
        body_start,
        None,
    )
    short = ok_json(repo, "show", "use-pnpm", "--projection", "full", "--max-chars", "11")
    assert (short["context"]["slices"][0]["text"], short["context"]["truncated"]) == ("\n# Use pnpm", True)


def test_a_memkeep_entry_has_sections_too(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    anchor = repo.commit("code", **{"src/a.py": "a\n"})
    text = entry_text("http-timeouts", anchor=anchor, claim="Timeouts retry.\n\n## Why\n\nFlaky network.")
    repo.write("agent-memory/entries/http-timeouts.md", text)
    repo.commit("entry")
    data = (repo.root / "agent-memory/entries/http-timeouts.md").read_bytes()
    out = ok_json(repo, "show", "http-timeouts", "--heading", "Why")
    (why,) = out["context"]["slices"]
    assert out["store"] == "entry"
    assert data[why["start_byte"] : why["end_byte"]].decode() == why["text"]
    assert why["text"].startswith("## Why\n\nFlaky network.")


def test_text_output_names_each_slice(repo: Repo, record: bytes) -> None:
    result = run(repo, "show", "use-pnpm", "--heading", "Use pnpm/Consequences", "--max-chars", "6")
    start, last = record.index(b"## Consequences"), record.count(b"\n")
    assert result.exit_code == 0
    assert result.stdout.endswith(
        f"\n--- Use pnpm/Consequences (lines {_line(record, start)}-{last}, "
        f"bytes {start}-{len(record)})\n## Con\n[truncated: 6 of 25 characters]\n[sections: 6 of 6 characters used]\n"
    )


@pytest.mark.parametrize(
    ("args", "code", "line"),
    [
        (["--projection", "sections"], "invalid_projection", "the sections projection needs at least one heading path"),
        (["--projection", "outline"], "invalid_projection", "projection must be one of metadata, sections, full"),
        (
            ["--projection", "metadata", "--heading", "Use pnpm"],
            "invalid_projection",
            "heading paths select sections: use the sections projection, not metadata",
        ),
        (["--heading", "Use pnpm//Context"], "invalid_projection", "heading path 'Use pnpm//Context' has an empty"),
        (
            ["--heading", "Context"],
            "target_not_found",
            "no heading 'Context': give the titles from the outermost heading down (Use pnpm, Use pnpm/Context, "
            "Use pnpm/Context/Details, Use pnpm/Consequences, Use pnpm/Twice)\n",
        ),
        (["--heading", "Use pnpm/Twice"], "ambiguous_target", "heading 'Use pnpm/Twice' names 2 sections"),
    ],
)
def test_selector_refusals_exit_2(repo: Repo, record: bytes, args: list[str], code: str, line: str) -> None:
    repos.write_record(
        repo, "use-pnpm", "Use pnpm", BODY + "\n## Twice\n\na\n\n## Twice\n\nb\n", memory_type="decision"
    )
    result = run(repo, "show", "use-pnpm", *args, "--json", prog_name="git-memzoi")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == code
    assert result.stderr.startswith(f"git-memzoi: error: {line}") and result.stderr.count("\n") == 1
    proc = subprocess.run(
        [sys.executable, "-m", "git_memzoi", "-C", str(repo.root), "show", "use-pnpm", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **PINNED},
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr.count("\n")) == (2, "", 1)


def test_a_slash_inside_a_title(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    repos.write_record(repo, "ci", "CI", "## Build/test\n\nRun make.\n")
    out = ok_json(repo, "show", "ci", "--heading", "CI/Build\\/test")
    assert out["context"]["slices"][0]["heading_path"] == ["CI", "Build/test"]


def test_show_appends_one_read_event_as_search_does(repo: Repo, record: bytes) -> None:
    events = repo.root / ".git/memzoi/local/events.jsonl"
    before = events.read_text().count("\n") if events.exists() else 0
    ok_json(repo, "show", "use-pnpm", "--projection", "metadata")
    lines = events.read_text().splitlines()[before:]
    assert [json.loads(x)["event_type"] for x in lines] == ["memory.shown"]
    assert json.loads(lines[0])["payload"] == {"id": "use-pnpm", "store": "record", "projection": "metadata"}
