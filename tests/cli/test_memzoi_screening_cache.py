"""Recall remembers, in the derived index and by content, which returned records hold a credential: a record is
withheld on every call and in every process, an edited record is screened again, a process whose results were all
screened before never imports detect-secrets, and a busy or unwritable index only costs time. The key is built at
test time."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.memzoi.records import secrets
from tests.cli.test_memzoi_recall_withholds_secrets import (
    clean,
    left_out,
    seed,
    withheld,
)
from tests.cli.test_memzoi_write_gate_secrets import _key
from tests.support.repos import NOW_TEXT as NOW
from tests.support.repos import Repo, run

# the console script, run by this interpreter; reports on stderr whether detect-secrets was imported
PROBE = """\
import sys
from git_memzoi.cli.memzoi import main
sys.argv[0] = "git-memzoi"
try:
    main()
finally:
    print("detect_secrets" in sys.modules, file=sys.stderr)
"""


def cli(repo: Repo, *args: str) -> tuple[dict[str, Any], bool]:
    """``git memzoi -C <repo> <args> --json`` in a new process: its JSON and whether it imported detect-secrets."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "-C", str(repo.root), *args, "--json"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "MEMZOI_NOW": NOW},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr.splitlines()[-1] == "True"


def index(repo: Repo) -> Path:
    return repo.root / ".git/memzoi/worktree/index.sqlite"


def remembered(repo: Repo) -> list[tuple[str | None, str | None]]:
    """The screening outcomes in the index: (field, rule), clean ones as (None, None)."""
    with sqlite3.connect(index(repo)) as conn:
        rows = conn.execute("SELECT field, rule FROM screened").fetchall()
    return sorted(rows, key=lambda row: (row[0] is not None, str(row)))


def ids(payload: dict[str, Any]) -> list[str]:
    return [r["record"]["id"] for r in payload["results"]]


HELD = [withheld("deploy-keys", "decision")]


def test_a_record_holding_a_credential_is_withheld_on_every_call_and_in_every_process(repo: Repo) -> None:
    key = _key()
    seed(repo, key, "deploy-keys")
    for _ in range(2):
        payload = json.loads(clean(run(repo, "search", "deploy keys", "--json"), key).stdout)
        assert (ids(payload), payload["withheld"]) == (["deploy-key-scope"], HELD)
        assert remembered(repo) == [(None, None), ("body line 2", "AWS Access Key")]
    for _ in range(2):
        payload, loaded = cli(repo, "search", "deploy keys")
        assert (ids(payload), payload["withheld"], payload["warnings"], loaded) == (
            ["deploy-key-scope"],
            HELD,
            [left_out("deploy-keys")],
            False,
        )
    pack, loaded = cli(repo, "context", "--task", "deploy keys")
    assert ([r["record"]["id"] for r in pack["records"]], pack["omitted"][0]["estimated_size"], loaded) == (
        ["deploy-key-scope"],
        0,
        False,
    )


def test_a_second_process_with_only_screened_results_never_imports_detect_secrets(repo: Repo) -> None:
    seed(repo, _key())
    first, loaded_first = cli(repo, "search", "deploy keys")
    second, loaded_second = cli(repo, "search", "deploy keys")
    assert (loaded_first, loaded_second) == (True, False)
    assert first == second and ids(second) == ["deploy-keys", "deploy-key-scope"]
    assert remembered(repo) == [(None, None), (None, None)]
    assert cli(repo, "precheck", "--path", "deploy/rotate.sh")[1] is False


def test_an_edited_record_is_screened_again(repo: Repo) -> None:
    key = _key()
    seed(repo, key)
    assert ids(cli(repo, "search", "deploy keys")[0]) == ["deploy-keys", "deploy-key-scope"]
    path = repo.root / ".memzoi/records/deploy-keys.md"
    original = path.read_text("utf-8")
    path.write_text(original.replace("every quarter.\n", f"every quarter.\nThe current key is {key}.\n"), "utf-8")
    payload, loaded = cli(repo, "search", "deploy keys")
    assert (ids(payload), payload["withheld"], loaded) == (["deploy-key-scope"], HELD, True)
    assert remembered(repo) == [(None, None), (None, None), ("body line 2", "AWS Access Key")]
    path.write_text(original, "utf-8")  # the credential removed: the content screened first, remembered clean
    payload, loaded = cli(repo, "search", "deploy keys")
    assert (ids(payload), payload["withheld"], loaded) == (["deploy-keys", "deploy-key-scope"], [], False)


def test_a_changed_classifier_screens_again(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    seed(repo, _key())
    fields = {"title": "Deploy keys", "body": "Rotate deploy keys every quarter."}
    before = secrets.screening_key(fields)
    with monkeypatch.context() as patched:  # undone alone: the suite's own patches (lexical recall) stay
        patched.setattr(secrets, "_identity", lambda: "detect-secrets 9.9.9 and other rules")
        assert secrets.screening_key(fields) not in (before, None)
        found = ids(json.loads(run(repo, "search", "deploy keys", "--json").stdout))
        assert found == ["deploy-keys", "deploy-key-scope"]
        assert remembered(repo) == [(None, None), (None, None)]
    assert ids(cli(repo, "search", "deploy keys")[0]) == ["deploy-keys", "deploy-key-scope"]
    assert remembered(repo) == [(None, None)] * 4


def count_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many records each detect-secrets pass of recall screens."""
    scans: list[int] = []
    real = secrets.first_credentials

    def spy(items: Any) -> Any:
        scans.append(len(items))
        return real(items)

    monkeypatch.setattr(secrets, "first_credentials", spy)
    return scans


def test_a_busy_index_only_costs_time(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    key = _key()
    seed(repo, key, "deploy-keys")
    assert run(repo, "search", "no such words").exit_code == 0  # the index is fresh, nothing screened
    scans = count_scans(monkeypatch)
    holder = sqlite3.connect(index(repo), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer: reads go on, no other write can start
    try:
        for _ in range(2):
            payload = json.loads(clean(run(repo, "search", "deploy keys", "--json"), key).stdout)
            assert (ids(payload), payload["withheld"]) == (["deploy-key-scope"], HELD)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert (scans, remembered(repo)) == ([2, 2], [])
    assert json.loads(run(repo, "search", "deploy keys", "--json").stdout)["withheld"] == HELD
    assert (scans, remembered(repo)) == ([2, 2, 2], [(None, None), ("body line 2", "AWS Access Key")])
    assert json.loads(run(repo, "search", "deploy keys", "--json").stdout)["withheld"] == HELD
    assert scans == [2, 2, 2]


def test_an_index_that_cannot_be_written_only_costs_time(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    key = _key()
    seed(repo, key, "deploy-keys")
    assert run(repo, "search", "no such words").exit_code == 0
    with sqlite3.connect(index(repo)) as conn:  # every write fails, as on a read-only file (tests may run as root)
        conn.executescript("DROP TABLE screened; CREATE VIEW screened(key, field, rule) AS SELECT 1, 2, 3 WHERE 0;")
    scans = count_scans(monkeypatch)
    for _ in range(2):
        payload = json.loads(clean(run(repo, "search", "deploy keys", "--json"), key).stdout)
        assert (ids(payload), payload["withheld"]) == (["deploy-key-scope"], HELD)
    assert scans == [2, 2]


def test_deleting_the_index_loses_nothing(repo: Repo) -> None:
    key = _key()
    seed(repo, key, "deploy-keys")
    assert cli(repo, "search", "deploy keys")[0]["withheld"] == HELD
    index(repo).unlink()
    payload, loaded = cli(repo, "search", "deploy keys")
    assert (ids(payload), payload["withheld"], loaded) == (["deploy-key-scope"], HELD, True)
    assert remembered(repo) == [(None, None), ("body line 2", "AWS Access Key")]


def test_texts_classified_before_need_no_detect_secrets_setup(monkeypatch: pytest.MonkeyPatch) -> None:
    import detect_secrets.settings

    texts = [f"The current key is {_key()}.", "Rotate deploy keys every quarter."]
    first = secrets.classify_all(texts, personal=False)

    def refuse(*args: Any) -> Any:
        raise AssertionError("detect-secrets set up for texts classified before")

    monkeypatch.setattr(detect_secrets.settings, "transient_settings", refuse)
    assert secrets.classify_all(texts, personal=False) == first == [[secrets.Finding("AWS Access Key", 1)], []]
