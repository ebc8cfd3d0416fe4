"""The pure staleness core against a fake repository view and a fixed clock."""

from __future__ import annotations

import datetime as dt

import pytest

from git_memzoi.core.clock import FixedClock
from git_memzoi.core.gitview_fake import FakeRepoView, linear_history
from git_memzoi.memkeep.entries import Entry
from git_memzoi.memkeep.refs import path_refs
from git_memzoi.memkeep.staleness import StalenessReport, compute

TODAY = FixedClock(dt.date(2026, 11, 30))


def entry(entry_id: str, **fields: object) -> Entry:
    base: dict[str, object] = {"id": entry_id, "status": "verified", "anchor": "c1", "scope": ["src/**"]}
    base.update(fields)
    body = str(base.pop("body", "A claim."))
    return Entry(f"agent-memory/entries/{entry_id}.md", base, body, 1, entry_id)


def reasons(report: StalenessReport) -> list[tuple[str, str]]:
    return [(v.id, v.reason) for v in report.verdicts]


HISTORY = linear_history(
    {"src/a.py": "1", "docs/x.md": "1", "agent-memory/entries/own.md": "1"},
    {"src/a.py": "2", "docs/x.md": "1", "agent-memory/entries/own.md": "2"},
)


def test_scope_hit_names_the_changed_files_in_scope() -> None:
    report = compute([entry("a"), entry("b", scope=["docs/**"])], HISTORY, TODAY)
    assert reasons(report) == [("a", "scope_hit")]
    assert report.verdicts[0].evidence == {"anchor": "c1", "files": ["src/a.py"]}
    assert report.suspect_ids == ("a",)


def test_the_entry_own_file_never_hits_its_scope() -> None:
    report = compute([entry("own", scope=["agent-memory/**"])], HISTORY, TODAY)
    assert reasons(report) == []


def test_history_is_diffed_once_per_distinct_anchor() -> None:
    view = linear_history({"src/a.py": "1"}, {"src/a.py": "2"}, {"src/a.py": "3"})
    entries = [entry(f"e{i}", anchor="c1" if i % 2 else "c2") for i in range(40)]
    compute(entries, view, TODAY)
    assert sorted(view.calls) == [("c1", "c3"), ("c2", "c3")]


def test_ttl_expired_counts_whole_days_after_verified_at() -> None:
    view = linear_history({"x": "1"})
    fresh = entry("fresh", verified_at=dt.date(2026, 11, 20), ttl_days=10)
    old = entry("old", verified_at=dt.date(2026, 11, 19), ttl_days=10)
    report = compute([fresh, old], view, TODAY)
    assert reasons(report) == [("old", "ttl_expired")]
    assert report.verdicts[0].evidence == {"verified_at": "2026-11-19", "age_days": 11, "ttl_days": 10}


def test_ttl_uses_written_at_when_never_verified() -> None:
    report = compute([entry("w", written_at=dt.date(2026, 3, 16), ttl_days=90)], linear_history({}), TODAY)
    assert reasons(report) == [("w", "ttl_expired")]
    assert report.verdicts[0].evidence == {"written_at": "2026-03-16", "age_days": 259, "ttl_days": 90}
    assert report.verdicts[0].message == "written 2026-03-16, never verified, 259 days ago; ttl_days is 90"


def test_ttl_of_an_impossible_verified_at_is_counted_from_written_at_and_says_so() -> None:
    e = entry("w", written_at=dt.date(2026, 3, 16), verified_at="2026-02-30", ttl_days=90)
    report = compute([e], linear_history({}), TODAY)
    assert report.verdicts[0].evidence == {"written_at": "2026-03-16", "age_days": 259, "ttl_days": 90}
    assert (
        report.verdicts[0].message == "written 2026-03-16 (verified_at is no valid date), 259 days ago; ttl_days is 90"
    )


def test_dependency_suspect_is_transitive_and_names_direct_dependencies() -> None:
    entries = [
        entry("a"),  # scope hit
        entry("b", scope=["docs/**"], explains=["a"]),
        entry("c", scope=["docs/**"], explains=["b"]),
        entry("d", scope=["docs/**"]),
    ]
    report = compute(entries, HISTORY, TODAY)
    assert reasons(report) == [("a", "scope_hit"), ("b", "dependency_suspect"), ("c", "dependency_suspect")]
    assert [v.evidence for v in report.verdicts[1:]] == [{"dependencies": ["a"]}, {"dependencies": ["b"]}]


def test_cycles_terminate_and_spread_suspicion() -> None:
    entries = [entry("a", explains=["b"]), entry("b", scope=["docs/**"], explains=["a"])]
    report = compute(entries, HISTORY, TODAY)
    # b is suspect through a, so a (which explains from b) is dependency-suspect too: one verdict per reason
    assert reasons(report) == [("a", "scope_hit"), ("a", "dependency_suspect"), ("b", "dependency_suspect")]


def test_a_clean_cycle_stays_clean() -> None:
    entries = [entry("a", scope=["docs/**"], explains=["b"]), entry("b", scope=["docs/**"], explains=["a", "b"])]
    assert reasons(compute(entries, HISTORY, TODAY)) == []


def test_a_stale_dependency_makes_dependents_suspect_but_is_not_itself_suspect() -> None:
    entries = [entry("s", status="stale", scope=["docs/**"]), entry("e", scope=["docs/**"], explains=["s"])]
    report = compute(entries, HISTORY, TODAY)
    assert reasons(report) == [("e", "dependency_suspect")]
    assert report.stale == ("s",)
    assert report.verdicts[0].message == "depends on s (stale)"


def test_tombstones_never_take_part() -> None:
    entries = [entry("t", status="tombstone", anchor=None), entry("e", scope=["docs/**"], explains=["t"])]
    report = compute(entries, HISTORY, TODAY)
    assert reasons(report) == []
    assert report.tombstones == 1


def test_anchor_states_each_get_their_own_verdict() -> None:
    view = FakeRepoView(
        {
            "c1": ([], {"a": "1"}),
            "c2": (["c1"], {"a": "2"}),
            "side": (["c1"], {"a": "3"}),
            "abc1": ([], {}),
            "abc2": ([], {}),
        },
        "c2",
    )
    entries = [
        entry("absent", anchor=None),
        entry("gone", anchor="ffff"),
        entry("side", anchor="side"),
        entry("amb", anchor="abc"),
    ]
    report = compute(entries, view, TODAY)
    states = {v.id: v.evidence["state"] for v in report.verdicts}
    assert states == {"absent": "absent", "gone": "missing", "side": "not_ancestor", "amb": "ambiguous"}


def test_shallow_clone_says_how_to_deepen() -> None:
    view = linear_history({"a": "1"})
    view.shallow = True
    report = compute([entry("e", anchor="c0ffee")], view, TODAY)
    assert report.verdicts[0].evidence["state"] == "shallow_missing"
    assert "git fetch --unshallow" in report.verdicts[0].message


def test_no_commits_yet() -> None:
    report = compute([entry("e")], FakeRepoView(), TODAY)
    assert report.head is None
    assert [(v.reason, v.evidence["state"]) for v in report.verdicts] == [("anchor_unreachable", "no_head")]


def test_ref_missing_only_when_opted_in() -> None:
    view = linear_history({"src/a.py": "1", "src/b.py": "1"}, {"src/a.py": "1"})
    e = entry("r", anchor="c2", body="Uses `src/a.py` and `src/b.py`.")
    assert reasons(compute([e], view, TODAY)) == []
    report = compute([e], view, TODAY, referential_check=True, path_refs=path_refs)
    assert reasons(report) == [("r", "ref_missing")]
    assert report.verdicts[0].evidence == {"refs": ["src/b.py"]}


def test_one_verdict_per_entry_and_reason() -> None:
    e = entry("e", ttl_days=1, verified_at=dt.date(2026, 1, 1))
    report = compute([e], HISTORY, TODAY)
    assert reasons(report) == [("e", "scope_hit"), ("e", "ttl_expired")]
    assert report.suspect_ids == ("e",)


def test_invalid_scope_patterns_are_skipped_not_fatal() -> None:
    report = compute([entry("e", scope=["", "../x", "src/**"])], HISTORY, TODAY)
    assert reasons(report) == [("e", "scope_hit")]


def test_an_entry_served_from_the_parse_cache_equals_one_built_by_its_constructor() -> None:
    from dataclasses import FrozenInstanceError, fields

    from git_memzoi.memkeep.entries import served

    values = {
        "path": "agent-memory/entries/a.md",
        "fields": {"id": "a", "status": "stale"},
        "body": "Claim.\n",
        "body_line": 9,
        "stem": "a",
    }
    assert [f.name for f in fields(Entry)] == list(values)  # a new field must be set by served() too
    entry = served(*values.values())
    assert entry == Entry(**values) and (entry.id, entry.status, entry.is_live) == ("a", "stale", True)
    with pytest.raises(FrozenInstanceError):
        entry.path = "b.md"
