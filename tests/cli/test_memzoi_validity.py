"""Business validity and ``--as-of`` over real repositories (issue 19, vault-memory F07; records/validity.py).

The one rule: a memory is recalled at instant t iff ``valid_from <= t < valid_to`` and ``t <`` its retention
boundary. Every boundary is held here: a ``valid_to`` of today's midnight, an expiry equal to the as-of instant,
a ``valid_from`` equal to it, the filter applied before the limit, superseded and tombstoned records in a
historical query, the write-time refusal (exit 2, nothing written), a hand-edited file left out of recall and
named by doctor, memkeep entries, ``show``, and a freeze whose end passes on a pinned clock without an edit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.support import repos
from tests.support.repos import NOW_TEXT, Repo, entry_text, ok_json, refused, run

MIDNIGHT = "2026-07-10T00:00:00Z"  # today's midnight at the pinned NOW (2026-07-10T12:00:00Z)


@pytest.fixture
def root(repo: Repo) -> Repo:
    assert run(repo, "init").exit_code == 0
    repos.spec_ids(repo.root)
    repo.commit("init")
    return repo


def ids(repo: Repo, *args: str, env: dict[str, str] | None = repos.PINNED) -> list[str]:
    out = ok_json(repo, "search", "release", *args, env=env)
    return sorted(r["record"]["id"] for r in out["results"])


def test_the_boundaries_of_valid_to_valid_from_and_expires(root: Repo) -> None:
    repos.write_record(root, "release-always", "Release checklist", "Tag, build, publish.")
    repos.write_record(root, "release-freeze", "Release freeze", "No release this week.", valid_to=MIDNIGHT)
    repos.write_record(
        root, "release-expiring", "Release note", "Ends now.", retention={"explicit_expires_at": NOW_TEXT}
    )
    repos.write_record(root, "release-embargo", "Release embargo lifted", "Ship it.", valid_from="2026-07-11")
    assert ids(root) == ["release-always"]  # now: the freeze ended at midnight, the expiry is now, the embargo later
    assert ids(root, "--as-of", "2026-07-09T23:59:59.999Z") == ["release-always", "release-expiring", "release-freeze"]
    assert ids(root, "--as-of", MIDNIGHT) == ["release-always", "release-expiring"]  # valid_to is exclusive
    assert ids(root, "--as-of", "2026-07-10") == ["release-always", "release-expiring"]  # a date is 00:00Z
    assert ids(root, "--as-of", "2026-07-10T11:59:59.999Z") == ["release-always", "release-expiring"]
    assert ids(root, "--as-of", NOW_TEXT) == ["release-always"]  # an expiry equal to the as-of instant: out
    assert ids(root, "--as-of", "2026-07-10T23:59:59.999Z") == ["release-always"]
    assert ids(root, "--as-of", "2026-07-11T00:00:00Z") == ["release-always", "release-embargo"]  # from: inclusive
    assert ids(root, "--as-of", "2026-07-11T02:00:00+02:00") == ["release-always", "release-embargo"]


def test_the_filter_applies_before_the_limit(root: Repo) -> None:
    for n in range(5):  # the best matches by far, none valid now
        repos.write_record(root, f"old-{n}", "Release release release", "release release", valid_to="2026-07-01")
    repos.write_record(root, "current", "Release", "The one that holds now.", applies_to=["scripts/release.sh"])
    out = ok_json(root, "search", "release", "--limit", "1")
    assert [r["record"]["id"] for r in out["results"]] == ["current"]
    pack = ok_json(root, "context", "--task", "release", "--path", "scripts/release.sh")
    assert "old-" not in json.dumps(pack) and "current" in json.dumps(pack)


def test_precheck_and_context_take_as_of(root: Repo) -> None:
    fields: dict[str, Any] = {"applies_to": ["scripts/release.sh"], "memory_type": "warning"}
    repos.write_record(root, "freeze", "Release freeze", "Do not release.", valid_to="2026-07-11", **fields)
    path = ("--path", "scripts/release.sh")
    assert [w["record_id"] for w in ok_json(root, "precheck", *path)["warnings"]] == ["freeze"]
    assert ok_json(root, "precheck", *path, "--as-of", "2026-07-11")["warnings"] == []
    later = ok_json(root, "context", "--task", "release", *path, "--as-of", "2026-07-11")
    assert "freeze" not in json.dumps(later)
    handoff = ok_json(root, "handoff", *path, "--as-of", "2026-07-10T23:59:59Z")
    assert "freeze" in json.dumps(handoff["context"])


def test_historical_queries_hide_superseded_unless_asked_and_tombstoned_always(root: Repo) -> None:
    repos.write_record(root, "release-old", "Release by hand", "Run the script.", status="superseded")
    repos.write_record(root, "release-gone", "Release retracted", "Never true.", status="tombstoned")
    repos.write_record(root, "release-new", "Release in CI", "CI publishes.", supersedes="release-old")
    assert ids(root, "--as-of", "2026-07-01") == ["release-new"]
    assert ids(root, "--as-of", "2026-07-01", "--include-superseded") == ["release-new", "release-old"]
    assert ids(root, "--include-superseded") == ["release-new", "release-old"]
    text = run(root, "search", "release", "--include-superseded", env=repos.PINNED).stdout.splitlines()
    assert sorted(line.split("\t")[0] + ("\tSUPERSEDED" if "\tSUPERSEDED" in line else "") for line in text) == [
        "release-new",
        "release-old\tSUPERSEDED",
    ]  # the text output says which one is history


def test_precheck_marks_a_superseded_risk_it_brings_back_as_history(root: Repo) -> None:
    """``precheck --include-superseded`` listed a retired risk exactly like a current one (a fresh user's walk)."""
    risk = {"memory_type": "risk", "applies_to": ("deploy.sh",)}
    repos.write_record(root, "deploy-old", "Deploy by hand", "Run deploy.sh twice.", status="superseded", **risk)
    repos.write_record(root, "deploy-new", "Deploy in CI", "CI runs deploy.sh.", supersedes="deploy-old", **risk)
    assert [w["record_id"] for w in ok_json(root, "precheck", "--path", "deploy.sh", env=repos.PINNED)["warnings"]] == [
        "deploy-new"
    ]
    out = ok_json(root, "precheck", "--path", "deploy.sh", "--include-superseded", env=repos.PINNED)
    assert sorted((w["record_id"], w["superseded"]) for w in out["warnings"]) == [
        ("deploy-new", False),
        ("deploy-old", True),
    ]
    text = run(root, "precheck", "--path", "deploy.sh", "--include-superseded", env=repos.PINNED).stdout
    old = text[text.index("deploy-old") :]
    assert "\n  SUPERSEDED: replaced by a newer record; read it as history\n" in old
    assert text.count("SUPERSEDED") == 1


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--valid-to", "2026-07-11T00:00:00"), "--valid-to: '2026-07-11T00:00:00' has no zone; add Z or ±hh:mm"),
        (("--valid-from", "2026-02-30"), "--valid-from: '2026-02-30' is not a calendar date"),
        (("--valid-to", "2026-07-11T00:00:00.0001Z"), "--valid-to: '2026-07-11T00:00:00.0001Z' has more than"),
        (("--valid-from", "2026-07-11", "--valid-to", "2026-07-11"), "--valid-from must be before --valid-to"),
        (("--valid-from", "2026-07-12", "--valid-to", "2026-07-11"), "--valid-from must be before --valid-to"),
    ],
)
def test_propose_and_supersede_refuse_invalid_validity(root: Repo, flags: tuple[str, ...], message: str) -> None:
    repos.write_record(root, "target", "Release target", "Body.")
    common = ("--sensitivity", "repo-safe", *flags)
    error = refused(root, "propose", "--title", "Release freeze", "--body", "No release.", "--apply", *common)
    assert error["code"] == "invalid_validity" and error["message"].startswith(message)
    error = refused(root, "supersede", "target", "--title", "Release freeze", "--body", "No.", *common)
    assert error["code"] == "invalid_validity" and error["message"].startswith(message)


def test_invalid_validity_exits_2_in_a_process(root: Repo) -> None:
    command = [sys.executable, "-m", "git_memzoi", "-C", str(root.root), "propose", "--title", "T", "--body", "B"]
    done = subprocess.run([*command, "--valid-to", "2026-07-11T00:00"], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip().endswith("--valid-to: '2026-07-11T00:00' has no zone; add Z or ±hh:mm")
    bad = subprocess.run([*command[:5], "search", "x", "--as-of", "soon"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "--as-of: 'soon' must be" in bad.stderr


def test_a_freeze_with_an_end_date_drops_out_when_it_ends_without_edits(root: Repo) -> None:
    args = ("propose", "--title", "Release freeze", "--body", "No release until the audit ends.", "--apply")
    out = ok_json(root, *args, "--sensitivity", "repo-safe", "--valid-to", "2026-07-11")
    record_id = out["applied"]["record_id"]
    path = root.root / ".memzoi" / "records" / f"{record_id}.md"
    written = path.read_bytes()
    assert b'valid_to: "2026-07-11"\n' in written
    assert ids(root) == [record_id]
    assert ids(root, env={"MEMZOI_NOW": "2026-07-10T23:59:59.999Z"}) == [record_id]
    assert ids(root, env={"MEMZOI_NOW": "2026-07-11T00:00:00Z"}) == []  # the freeze ended; nobody edited it
    assert path.read_bytes() == written
    shown = ok_json(root, "show", record_id, env={"MEMZOI_NOW": "2026-07-11T00:00:00Z"})
    assert (shown["valid_at"], shown["fields"]["valid_to"]) == (False, "2026-07-11")  # read directly: still shown
    assert ok_json(root, "show", record_id, "--as-of", "2026-07-10")["valid_at"] is True


def test_supersede_gives_the_replacement_its_own_validity(root: Repo) -> None:
    repos.write_record(root, "release-manual", "Release by hand", "Run the script.")
    out = ok_json(
        root, "supersede", "release-manual", "--title", "Release in CI", "--body", "CI publishes.",
        "--sensitivity", "repo-safe", "--valid-from", "2026-07-11T09:00:00+02:00",
    )  # fmt: skip
    new = out["record_id"]
    assert ids(root) == []  # the old one is superseded, the new one not valid yet
    assert ids(root, "--as-of", "2026-07-11T07:00:00Z") == [new]
    assert ids(root, "--as-of", "2026-07-11T06:59:59.999Z", "--include-superseded") == ["release-manual"]


def test_a_hand_edited_invalid_interval_is_left_out_and_named(root: Repo) -> None:
    repos.write_record(root, "release-ok", "Release checklist", "Tag, build, publish.")
    repos.write_record(root, "release-bad", "Release freeze", "No release.", valid_to="2026-07-11")
    path = root.root / ".memzoi" / "records" / "release-bad.md"
    path.write_text(path.read_text().replace('valid_to: "2026-07-11"', 'valid_to: "2026-07-11T00:00:00"'))
    assert ids(root) == ["release-ok"]
    rebuilt = ok_json(root, "rebuild")
    assert rebuilt["unreadable"] == [
        {
            "path": ".memzoi/records/release-bad.md",
            "code": "invalid_validity",
            "reason": ".memzoi/records/release-bad.md: valid_to: '2026-07-11T00:00:00' has no zone; add Z or ±hh:mm",
        }
    ]
    doctor = run(root, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert (doctor.exit_code, checks["records"]["status"]) == (1, "fail")
    assert checks["records"]["message"] == (
        "1 unreadable record file(s): .memzoi/records/release-bad.md; invalid validity, left out of recall: "
        ".memzoi/records/release-bad.md: valid_to: '2026-07-11T00:00:00' has no zone; add Z or ±hh:mm"
    )


def test_memkeep_entries_take_the_same_interval(root: Repo) -> None:
    entries = root.root / "agent-memory" / "entries"
    entries.mkdir(parents=True)
    head = root.head()
    (entries / "release-window.md").write_text(
        entry_text("release-window", anchor=head, claim="Release window is Tuesday.", extra='valid_to: "2026-07-10"')
    )
    (entries / "release-cadence.md").write_text(
        entry_text("release-cadence", anchor=head, claim="Release every week.", extra='valid_from: "2026-07-01"')
    )
    (entries / "release-broken.md").write_text(
        entry_text("release-broken", anchor=head, claim="Release broken.", extra='valid_to: "2026-02-30"')
    )
    found = ok_json(root, "search", "release", "--store", "entries")
    assert [r["record"]["id"] for r in found["results"]] == ["release-cadence"]
    older = ok_json(root, "search", "release", "--store", "entries", "--as-of", "2026-07-09")
    assert sorted(r["record"]["id"] for r in older["results"]) == ["release-cadence", "release-window"]
    lint = repos.memkeep("-C", str(root.root), "lint", "--json")
    violations = [v for v in json.loads(lint.stdout)["violations"] if v["rule"] == "invalid_validity"]
    assert [(v["id"], v["field"]) for v in violations] == [("release-broken", "valid_to")]
    assert violations[0]["message"] == "valid_to: '2026-02-30' is not a calendar date; recall leaves the entry out"


def test_expiry_names_the_validity_exclusion(root: Repo) -> None:
    repos.write_record(root, "release-freeze", "Release freeze", "No release.", valid_to=MIDNIGHT)
    out = ok_json(root, "expiry", "release-freeze")
    assert (out["current_assertion"], out["exclusions"]) == (False, [{"kind": "validity", "state": "no_longer_valid"}])
    later = ok_json(root, "expiry", "release-freeze", env={"MEMZOI_NOW": "2026-07-09T23:59:59.999Z"})
    assert (later["current_assertion"], later["exclusions"]) == (True, [])
