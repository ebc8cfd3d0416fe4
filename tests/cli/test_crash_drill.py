"""Issue 13, crash leftovers: the kill -9 drill, bounded. ``propose --apply`` and ``import apply`` run as real
processes killed at random points of their run; then the next command (the same one again) completes or rolls back
what was interrupted, exactly once: one record per proposal, one packet or runtime record per imported candidate,
no journal left, no temporary file git would see, and ``doctor`` names what a kill left before the next command.

The runs are few (a dozen of each) and seeded, so the drill takes seconds; the kill points spread over the whole
run because the delay is drawn between the process start and the end of a calibrated, uninterrupted run.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import signal
import subprocess
import sys
import time
from typing import Any

import pytest

from git_memzoi.memzoi.layout import Layout
from tests.support import repos
from tests.support.repos import Repo

RUNS = 12
SEED = 13
CLI = "import sys; from git_memzoi.cli.memzoi import cli; cli(sys.argv[1:], prog_name='git-memzoi')"


def command(repo: Repo) -> list[str]:
    return [sys.executable, "-c", CLI, "-C", str(repo.root)]


def at(n: int, seconds: int = 0) -> dict[str, str]:
    """MEMZOI_NOW of run ``n`` (a minute apart), ``seconds`` later: a re-run happens later than the killed run, so
    its proposal id (drawn from the clock) differs, as in real life."""
    return {"MEMZOI_NOW": (repos.NOW + dt.timedelta(minutes=n, seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")}


def killed(args: list[str], delay: float, now: dict[str, str]) -> int:
    """Start ``args``, SIGKILL it after ``delay`` seconds unless it ended; its return code (-9 when killed)."""
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **now})
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
    return proc.wait()  # reaped: a zombie would still count as a live writer


def calibrated(*runs: list[str]) -> float:
    """The shortest uninterrupted run of ``runs`` (the first one also builds caches and the index)."""
    spans = []
    for args in runs:
        started = time.monotonic()
        assert subprocess.run(args, capture_output=True, env={**os.environ, **at(0)}, check=False).returncode == 0
        spans.append(time.monotonic() - started)
    return min(spans)


def git_visible_temp_files(repo: Repo) -> list[str]:
    listed = repo.git("ls-files", "--others", "--exclude-standard", "--cached").splitlines()
    return [p for p in listed if p.endswith(".tmp")]


def doctor(repo: Repo) -> dict[str, str]:
    data = json.loads(repos.run(repo, "doctor", "--json").stdout)
    return {c["name"]: c["status"] for c in data["checks"]}


def left_behind(repo: Repo) -> tuple[int, int]:
    """(interrupted operations, temporary files of dead writers) on disk now."""
    from git_memzoi.core import scratch
    from git_memzoi.memzoi.layout import Layout
    from git_memzoi.memzoi.proposals import lifecycle

    layout = Layout(repo.root)
    temps = scratch.leftovers(repo.root.resolve(), layout.temp_folders())
    return len(lifecycle.pending_transactions(layout)), len(temps)


def check_doctor_names(repo: Repo, left: tuple[int, int]) -> None:
    checks = doctor(repo)
    assert checks["transactions"] == ("warn" if left[0] else "ok")
    assert checks["leftovers"] == ("warn" if left[1] else "ok")


def records(repo: Repo) -> list[dict[str, Any]]:
    return [
        {"id": p.stem, "text": p.read_text("utf-8")} for p in sorted((repo.root / ".memzoi" / "records").glob("*.md"))
    ]


@pytest.fixture
def project(repo: Repo) -> Repo:
    repo.commit("start", **{"README.md": "x\n"})
    assert repos.run(repo, "init").exit_code == 0
    return repo


def next_command(project: Repo, n: int) -> None:
    """The next command after a kill: a read (``proposals list``) or an unrelated write (``local add``)."""
    if n % 2:
        assert repos.run(project, "proposals", "list", "--status", "all", env=at(n, 20)).exit_code == 0
    else:
        args = ["local", "add", "--type", "fact", "--title", f"Note {n}", "--body", "A note."]
        assert repos.run(project, *args, env=at(n, 20)).exit_code == 0
    assert left_behind(project)[0] == 0  # nothing half-done is left for any later command to see


def proposals_of(project: Repo, title: str) -> list[tuple[str, str]]:
    """(proposal id, status) of every inbox proposal titled ``title``."""
    listing = json.loads(repos.run(project, "proposals", "list", "--status", "all", "--json").stdout)
    return [(p["id"], p["status"]) for p in listing["proposals"] if p["title"] == title]


def test_propose_apply_killed_anywhere_is_applied_exactly_once(project: Repo) -> None:
    rng = random.Random(SEED)
    base = command(project)

    def propose(n: int) -> list[str]:
        title = ["--title", f"Rule number {n}", "--body", f"Body of rule {n}.", "--type", "decision"]
        return ["propose", *title, "--sensitivity", "repo-safe", "--apply"]

    span = calibrated([*base, *propose(0)], [*base, *propose(100)])
    outcomes = {"completed": 0, "rolled back": 0, "mid-write": 0}
    for n in range(1, RUNS + 1):
        code = killed([*base, *propose(n)], rng.uniform(0.4 * span, 1.1 * span), at(n))
        assert git_visible_temp_files(project) == []
        left = left_behind(project)
        outcomes["mid-write"] += left[0] > 0
        check_doctor_names(project, left)
        next_command(project, n)
        mine = [r["text"] for r in records(project) if f"Rule number {n}\n" in r["text"]]
        if proposals_of(project, f"Rule number {n}"):
            outcomes["completed"] += 1
        else:  # rolled back as a whole: no record, no packet; the same command again applies it once
            assert mine == [], code
            outcomes["rolled back"] += 1
            assert repos.run(project, *propose(n), env=at(n, 30)).exit_code == 0
            mine = [r["text"] for r in records(project) if f"Rule number {n}\n" in r["text"]]
        ((prop_id, status),) = proposals_of(project, f"Rule number {n}")
        assert status == "applied" and len(mine) == 1 and f"proposal_id: {prop_id}" in mine[0], (code, mine)
        assert os.listdir(project.root / ".memzoi" / "proposals" / "pending") == []
    assert len(records(project)) == RUNS + 2
    assert doctor(project)["transactions"] == "ok"
    print(outcomes)
    assert outcomes["rolled back"] > 0, outcomes  # the drill did kill runs part-way


def manifest(n: int, size: int) -> str:
    lines = ["version: memzoi/import-v1", "sources:", "  - path: imports/source.yml", "candidates:"]
    for k in range(size):
        lines += [
            "  - destination: repo" if k % 2 == 0 else "  - destination: local",
            "    reason: durable project convention",
            f"    title: Import {n} item {k}",
            f"    body: Imported fact {n}.{k}.",
        ]
        lines += ["    type: decision", "    sensitivity: repo-safe"] if k % 2 == 0 else ["    lane: procedural"]
    return "\n".join(lines) + "\n"


def test_import_apply_killed_anywhere_is_applied_exactly_once(project: Repo) -> None:
    rng = random.Random(SEED + 1)
    base = command(project)
    size = 8

    def plan(n: int) -> list[str]:
        project.write(f"imports/m{n}.yml", manifest(n, size))
        planned = repos.run(project, "import", "plan", "--from-file", f"imports/m{n}.yml", "--json", env=at(n))
        return [
            "import",
            "apply",
            "--from-file",
            f"imports/m{n}.yml",
            "--plan-id",
            json.loads(planned.stdout)["plan_id"],
        ]

    layout = Layout(project.root)

    def written(n: int) -> list[str]:
        return [
            p.name
            for folder in (layout.pending, layout.runtime("local"))
            for p in folder.glob("*.md")
            if f"Import {n} item " in p.read_text("utf-8")
        ]

    span = calibrated([*base, *plan(0)], [*base, *plan(100)])
    outcomes = {"completed": 0, "rolled back": 0, "mid-write": 0}
    for n in range(1, RUNS + 1):
        apply = plan(n)
        code = killed([*base, *apply], rng.uniform(0.4 * span, 1.1 * span), at(n))
        assert git_visible_temp_files(project) == []
        left = left_behind(project)
        outcomes["mid-write"] += left[0] > 0
        check_doctor_names(project, left)
        next_command(project, n)
        if written(n):
            outcomes["completed"] += 1
        else:  # rolled back as a whole: the same plan applies again (the inventory is the planned one)
            outcomes["rolled back"] += 1
            again = repos.run(project, *apply, "--json", env=at(n, 30))
            assert again.exit_code == 0, (code, again.stdout)
        assert len(written(n)) == size, (code, written(n))
    assert doctor(project)["transactions"] == "ok"
    print(outcomes)
    assert outcomes["rolled back"] > 0, outcomes
