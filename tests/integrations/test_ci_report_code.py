"""``git memkeep status --format github`` on a real repository: the suspect entry's warning sits on its ``scope:``
line, and each changed line range of code that hits the scope gets a notice naming the entry."""

from __future__ import annotations

from click.testing import CliRunner

from git_memzoi.cli.memkeep import cli as memkeep_cli
from git_memzoi.integrations import ci_report
from tests.support.repos import Repo, entry_text

NOTE = (
    "this change is in the scope of memkeep entry {i} (agent-memory/entries/{i}.md), now suspect: check that it "
    "still holds, then run `git memkeep verify {i}`"
)


def test_changed_code_lines_in_a_scope_get_notices(repo: Repo) -> None:
    base = repo.commit("base", **{"src/a.py": "one\ntwo\nthree\nfour\nfive\n", "docs/x.md": "x\n"})
    repo.commit(
        "entries",
        **{
            "agent-memory/entries/api.md": entry_text("api", anchor=base, scope=["src/**"]),
            "agent-memory/entries/doc.md": entry_text("doc", anchor=base, scope=["docs/**"]),
        },
    )
    repo.commit("change", **{"src/a.py": "one\nTWO\nthree\nfour\nfive\nsix\nseven\n", "src/new.py": "n\n"})
    result = CliRunner().invoke(memkeep_cli, ["-C", str(repo.root), "status", "--format", "github"])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "::warning file=agent-memory/entries/api.md,line=9,title=memkeep scope_hit::api is suspect (scope_hit): "
        + result.output.splitlines()[0].split("api is suspect (scope_hit): ", 1)[1],
        "::notice file=src/a.py,line=2,title=memkeep scope_hit/code::" + NOTE.format(i="api"),
        "::notice file=src/a.py,line=6,endLine=7,title=memkeep scope_hit/code::" + NOTE.format(i="api"),
        "::notice file=src/new.py,line=1,title=memkeep scope_hit/code::" + NOTE.format(i="api"),
        "memkeep: 2 entries, 1 suspect, 0 stale, 0 unreadable",
    ]
    assert "src/a.py" in result.output.splitlines()[0] and "src/new.py" in result.output.splitlines()[0]


def test_changed_ranges() -> None:
    assert ci_report.changed_ranges("a\nb\nc\n", "a\nB\nc\n") == [(2, 2)]
    assert ci_report.changed_ranges("a\nb\nc\n", "a\nc\n") == [(2, 2)]  # a deletion marks the line after it
    assert ci_report.changed_ranges("a\nb\n", "a\n") == [(1, 1)]  # at the end: the last line
    assert ci_report.changed_ranges(None, "x\ny\n") == [(1, 2)]
    assert ci_report.changed_ranges("a\n", "") == []
