"""``git memzoi`` against hostile files (issue 13, "Hangs"): an alias bomb, 1,000 levels of nesting, a file over
the cap or a FIFO among the records or the proposal packets is one unreadable item with a stable code while
search, context, precheck, rebuild, doctor and export read the others; a hostile event log, request, manifest,
session-end file or corpus is one line and exit 2, with nothing written.

In-process through CliRunner, and as a subprocess (with a timeout) for the exit codes. Every FIFO has a watchdog
(tests/support/hostile.py): a reader that blocks on it is released and the test fails instead of hanging.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support import hostile, repos
from tests.support.repos import PINNED, Repo, ok_json, run, tree

RECORD = ".memzoi/records/hostile.md"
PACKET = ".memzoi/proposals/pending/hostile.md"


def record(repo: Repo, concept_id: str, title: str, applies_to: tuple[str, ...] = ()) -> None:
    repos.write_record(repo, concept_id, title, f"{title}.", memory_type="risk", source="issue", applies_to=applies_to)


@pytest.fixture
def memory(repo: Repo) -> Repo:
    """An initialised memory with two readable records about releases."""
    assert run(repo, "init").exit_code == 0
    record(repo, "verify-archives", "Verify release archives", ("scripts/release.sh",))
    record(repo, "sign-tags", "Sign release tags")
    repo.commit("memory")
    return repo


@contextlib.contextmanager
def planted(repo: Repo, rel: str, kind: str, head: str = "id: hostile\n") -> Iterator[None]:
    """A hostile file of ``kind`` at ``rel`` for the block (a FIFO with its watchdog)."""
    if kind != "fifo":
        hostile.plant(repo.root / rel, kind, head)
        yield
        return
    with hostile.fifo(repo.root / rel) as made:
        yield
    assert not made.fired, "a reader blocked on the FIFO"


def error(repo: Repo, *args: str) -> dict[str, Any]:
    """The ``--json`` error of a command that must exit 2 with one line."""
    result = run(repo, *args, "--json")
    assert result.exit_code == 2, (result.stdout, result.stderr)
    failure: dict[str, Any] = json.loads(result.stdout)["error"]
    return failure


# ------------------------------------------------------------------------------------------------ records


@pytest.mark.parametrize("kind", sorted(hostile.KINDS))
def test_a_hostile_record_is_unreadable_and_recall_reads_the_others(memory: Repo, kind: str) -> None:
    with planted(memory, RECORD, kind), hostile.hard_deadline():
        rebuilt = ok_json(memory, "rebuild")
        found = ok_json(memory, "search", "release")
        context = ok_json(memory, "context", "--task", "release archives")
        warned = ok_json(memory, "precheck", "--path", "scripts/release.sh")
        doctor = run(memory, "doctor", "--json")
    assert [(u["path"], u["code"]) for u in rebuilt["unreadable"]] == [(RECORD, hostile.KINDS[kind])]
    assert rebuilt["records"]["repo"] == 2
    assert sorted(r["record"]["id"] for r in found["results"]) == ["sign-tags", "verify-archives"]
    assert "verify-archives" in json.dumps(context)
    assert "verify-archives" in json.dumps(warned)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert (doctor.exit_code, checks["records"]["status"]) == (1, "fail")
    assert checks["records"]["message"] == f"1 unreadable record file(s): {RECORD}"


def test_doctor_does_not_scan_a_record_over_the_cap_and_says_so(memory: Repo) -> None:
    hostile.plant(memory.root / RECORD, "huge")
    memory.git("add", "-A")
    doctor = run(memory, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["credentials"]["status"] == "warn"
    assert checks["credentials"]["message"].endswith(
        "1 not scanned (larger than 262144 bytes, or no regular file): .memzoi/records/hostile.md"
    )


def test_export_projects_the_readable_records(memory: Repo) -> None:
    with planted(memory, RECORD, "fifo"):
        exported = ok_json(memory, "export", "agents-md")
    assert exported["record_count"] == 2 and exported["unreadable"] == [RECORD]
    text = (memory.root / exported["files"][0]["path"]).read_text()
    assert "Verify release archives" in text and "Sign release tags" in text


# ------------------------------------------------------------------------------------------------ packets


@pytest.mark.parametrize("kind", sorted(hostile.KINDS))
def test_a_hostile_packet_is_listed_as_unreadable_and_show_is_one_line(memory: Repo, kind: str) -> None:
    code = hostile.KINDS[kind] if kind != "fifo" else "not_a_regular_file"
    with planted(memory, PACKET, kind, head="id: hostile\nsensitivity: repo-safe\n"), hostile.hard_deadline():
        listed = ok_json(memory, "proposal-files", "list")
        shown = error(memory, "proposal-files", "show", "hostile")
        validated = run(memory, "proposal-files", "validate")
        doctor = json.loads(run(memory, "doctor", "--json").stdout)
    [entry] = listed["proposals"]
    assert (entry["path"], entry["problem"]["code"]) == (PACKET, code)
    assert shown["code"] == code and "\n" not in shown["message"]
    assert validated.exit_code == 1
    assert validated.stdout.splitlines()[0].startswith("invalid  hostile  ")  # its file id; `None` before (a walk)
    checks = {c["name"]: c for c in doctor["checks"]}
    assert checks["proposals"]["status"] == "warn" and PACKET in checks["proposals"]["message"]


# ------------------------------------------------------------------------------------------------ the event log


@pytest.mark.parametrize("rel", [".git/memzoi/local/events.jsonl", ".memzoi/local/events.jsonl"])  # and an old one
def test_a_fifo_event_log_is_refused_before_anything_is_written(memory: Repo, rel: str) -> None:
    log = memory.root / rel
    if log.exists():
        log.unlink()
    log.parent.mkdir(parents=True, exist_ok=True)
    with hostile.fifo(log) as made:
        before = tree(memory.root)
        searched = error(memory, "search", "release")
        proposed = error(
            memory,
            "propose",
            "--title",
            "Use uv",
            "--body",
            "Install with uv.",
            "--sensitivity",
            "repo-safe",
            "--apply",
        )
        exported = run(memory, "events", "export", "--jsonl")
        after = tree(memory.root)
    assert not made.fired
    message = f"{rel}: a FIFO, not a regular file; not written"
    assert (searched["code"], searched["message"]) == ("not_a_regular_file", message)
    assert (proposed["code"], proposed["message"]) == ("not_a_regular_file", message)
    # refused where the workspace opens (memzoi/layout.py), before anything is read or written, the index included
    assert exported.exit_code == 2 and exported.stderr.endswith(f" error: {message}\n")
    assert after == before


# ------------------------------------------------------------------------------------------------ requests


def test_hostile_requests_and_manifests_are_one_line_and_exit_2(memory: Repo) -> None:
    memory.write("in/manifest.yml", hostile.bomb())
    memory.write("in/manifest.json", hostile.deep_json())
    memory.write("in/request.yaml", hostile.bomb())
    memory.write("in/request.json", hostile.deep_json())
    memory.write("in/session.yml", "task: t\ncandidates: " + hostile.deep_flow().removeprefix("k: "))
    before = tree(memory.root)
    with hostile.hard_deadline():
        failures = {
            "manifest.yml": error(memory, "import", "plan", "--from-file", "in/manifest.yml"),
            "manifest.json": error(memory, "import", "plan", "--from-file", "in/manifest.json"),
            "request.yaml": error(memory, "capture", "plan", "--request-file", "in/request.yaml"),
            "request.json": error(memory, "capture", "plan", "--request-file", "in/request.json"),
            "session.yml": error(memory, "session-end", "--from-file", str(memory.root / "in/session.yml")),
        }
    assert {name: f["code"] for name, f in failures.items()} == {
        "manifest.yml": "invalid_import_manifest",
        "manifest.json": "invalid_import_manifest",
        "request.yaml": "invalid_capture_request",
        "request.json": "invalid_capture_request",
        "session.yml": "yaml_too_complex",
    }
    assert "uses anchors or aliases" in failures["request.yaml"]["message"]
    assert failures["session.yml"]["message"] == (
        f"{memory.root / 'in/session.yml'}: the session-end YAML is nested deeper than 32 levels (line 2)"
    )
    assert tree(memory.root) == before


def test_a_fifo_request_is_refused_unopened(memory: Repo) -> None:
    with hostile.fifo(memory.root / "in" / "request.yaml") as made:
        failure = error(memory, "capture", "plan", "--request-file", "in/request.yaml")
    assert not made.fired
    assert failure == {
        "code": "invalid_capture_request",
        "message": "request.yaml: a request file is a regular file of at most 2 MiB",
        "exit_code": 2,
    }


@pytest.mark.parametrize(
    ("kind", "code"), [("bomb", "corpus_invalid_yaml"), ("deep", "corpus_invalid_yaml"), ("fifo", "corpus_unreadable")]
)
def test_a_hostile_eval_corpus_is_one_line_and_exit_2(memory: Repo, kind: str, code: str) -> None:
    corpus = memory.root / "evals" / "corpus.yaml"
    with contextlib.ExitStack() as stack:
        if kind == "fifo":
            made = stack.enter_context(hostile.fifo(corpus))
        else:
            corpus.parent.mkdir()
            corpus.write_text(hostile.bomb() if kind == "bomb" else hostile.deep_flow())
        failure = error(memory, "eval", "recall", "--corpus", str(corpus))
    assert failure["code"] == code
    assert kind != "fifo" or not made.fired


def test_a_claude_code_hook_input_nested_100000_deep_is_ignored(memory: Repo) -> None:
    plain = run(memory, "integrate", "session-context", input="{}")
    deep = run(memory, "integrate", "session-context", input=hostile.deep_json())
    assert deep.exit_code == plain.exit_code == 0
    assert deep.stdout == plain.stdout
    assert deep.stderr == "git-memzoi: warning: hook input ignored: nested deeper than 100 levels\n"


# ------------------------------------------------------------------------------------------------ as a subprocess


def test_rebuild_and_search_exit_0_beside_a_bomb_and_a_fifo_in_a_subprocess(memory: Repo) -> None:
    hostile.plant(memory.root / RECORD, "bomb")
    command = [sys.executable, "-m", "git_memzoi", "-C", str(memory.root)]
    with hostile.fifo(memory.root / ".memzoi" / "records" / "fifo.md") as made:
        rebuilt = subprocess.run([*command, "rebuild", "--json"], capture_output=True, text=True, timeout=120)
        found = subprocess.run([*command, "search", "archives"], capture_output=True, text=True, timeout=120, env=None)
    assert not made.fired
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert sorted(u["code"] for u in json.loads(rebuilt.stdout)["unreadable"]) == [
        "not_a_regular_file",
        "yaml_too_complex",
    ]
    assert found.returncode == 0 and "Verify release archives" in found.stdout
    assert PINNED  # the subprocess runs on the wall clock: only the exit codes and ids are compared
