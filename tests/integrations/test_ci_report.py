"""`git memkeep status --format github`: the annotation cap, the overflow notice and the workflow-command escaping."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from git_memzoi.integrations import ci_report
from git_memzoi.memkeep.api import StatusResult
from git_memzoi.memkeep.staleness import StalenessReport, Unchecked, Verdict
from git_memzoi.memkeep.store import Unreadable

MORE = (
    "not annotated (GitHub shows at most 10 annotations of a level per step); run `git memkeep status` to see them all"
)


def result(
    verdicts: list[Verdict],
    *,
    entries: int = 30,
    stale: tuple[str, ...] = (),
    unchecked: tuple[Unchecked, ...] = (),
    unreadable: tuple[Unreadable, ...] = (),
) -> StatusResult:
    report = StalenessReport(
        head="0" * 40,
        shallow=False,
        today=dt.date(2026, 11, 2),
        entries=entries,
        verdicts=tuple(verdicts),
        stale=stale,
        tombstones=0,
        unchecked=unchecked,
    )
    store: Any = Path("agent-memory")  # github() never reads the store
    return StatusResult(store, report, unreadable)


def scope_hits(count: int) -> list[Verdict]:
    return [
        Verdict(f"e{i:02}", f"agent-memory/entries/e{i:02}.md", "scope_hit", "src/a.py changed") for i in range(count)
    ]


def warning(i: int) -> str:
    return (
        f"::warning file=agent-memory/entries/e{i:02}.md,line=1,title=memkeep scope_hit::"
        f"e{i:02} is suspect (scope_hit): src/a.py changed"
    )


def test_no_verdict_prints_only_the_summary() -> None:
    assert ci_report.github(result([], entries=3)) == "memkeep: 3 entries, 0 suspect, 0 stale, 0 unreadable"


def test_one_verdict_is_one_warning() -> None:
    assert ci_report.github(result(scope_hits(1))).splitlines() == [
        warning(0),
        "memkeep: 30 entries, 1 suspect, 0 stale, 0 unreadable",
    ]


def test_ten_verdicts_fill_the_cap_without_a_notice() -> None:
    assert ci_report.github(result(scope_hits(10))).splitlines() == [
        *(warning(i) for i in range(10)),
        "memkeep: 30 entries, 10 suspect, 0 stale, 0 unreadable",
    ]


def test_twenty_five_verdicts_print_ten_warnings_and_one_notice() -> None:
    assert ci_report.github(result(scope_hits(25))).splitlines() == [
        *(warning(i) for i in range(10)),
        f"::notice::memkeep: 15 more suspect verdicts (15 entries) {MORE}",
        "memkeep: 30 entries, 25 suspect, 0 stale, 0 unreadable",
    ]


def test_an_entrys_verdicts_share_one_annotation() -> None:
    ttl = Verdict("e10", "agent-memory/entries/e10.md", "ttl_expired", "older than 30 days")
    verdicts = [ttl, *scope_hits(11)]
    lines = ci_report.github(result(verdicts)).splitlines()
    assert lines[:10] == [warning(i) for i in range(10)]
    assert lines[10] == f"::notice::memkeep: 2 more suspect verdicts (1 entry) {MORE}"
    two = ci_report.github(result(verdicts[:1] + scope_hits(11)[10:])).splitlines()[0]
    assert two == (
        "::warning file=agent-memory/entries/e10.md,line=1,title=memkeep scope_hit + ttl_expired::"
        "e10 is suspect (scope_hit): src/a.py changed%0Ae10 is suspect (ttl_expired): older than 30 days"
    )


def test_stale_ids_come_after_the_entries_and_are_counted() -> None:
    lines = ci_report.github(result(scope_hits(10), stale=("old-1", "old-2"))).splitlines()
    assert lines[:10] == [warning(i) for i in range(10)]
    assert lines[10] == f"::notice::memkeep: 2 more stale entries {MORE}"


def test_notices_and_errors_are_capped_too() -> None:
    unchecked = tuple(Unchecked(f"u{i:02}", f"agent-memory/entries/u{i:02}.md", "scope", "no scope") for i in range(12))
    unreadable = tuple(Unreadable(f"agent-memory/entries/x{i:02}.md", 2, "bad yaml", "yaml") for i in range(11))
    lines = ci_report.github(result([], unchecked=unchecked, unreadable=unreadable)).splitlines()
    kinds = [line.split(" ", 1)[0] for line in lines]
    assert kinds == ["::error"] * 10 + ["::notice::memkeep:"] + ["::notice"] * 9 + ["memkeep:"]
    assert lines[0] == (
        "::error file=agent-memory/entries/x00.md,line=2,title=memkeep unreadable/yaml::"
        "agent-memory/entries/x00.md cannot be read: bad yaml"
    )
    assert lines[10] == f"::notice::memkeep: 1 more unreadable file, 3 more unchecked fields {MORE}"
    assert lines[11] == (
        "::notice file=agent-memory/entries/u00.md,line=1,title=memkeep unchecked/scope::"
        "u00 is not watched: scope: no scope"
    )


def test_messages_and_properties_are_escaped() -> None:
    odd = Verdict("e1", "agent-memory/entries/a,b:c%.md", "scope_hit", "100% sure:\r\nsrc/a,b.py changed")
    assert ci_report.github(result([odd])).splitlines()[0] == (
        "::warning file=agent-memory/entries/a%2Cb%3Ac%25.md,line=1,title=memkeep scope_hit::"
        "e1 is suspect (scope_hit): 100%25 sure:%0D%0Asrc/a,b.py changed"
    )
    assert ci_report.escape_property("a:b,c%\r\n") == "a%3Ab%2Cc%25%0D%0A"
    assert ci_report.escape_data("50%\r\n: ,") == "50%25%0D%0A: ,"
    row = "| warning | agent-memory/entries/a,b:c%.md | scope_hit | e1 is suspect (scope_hit): 100% sure:  src/a,b.py"
    assert row in ci_report.summary_markdown(result([odd]))  # one table row: no line break inside


def test_one_entry_is_singular() -> None:
    assert ci_report.github(result([], entries=1)) == "memkeep: 1 entry, 0 suspect, 0 stale, 0 unreadable"
