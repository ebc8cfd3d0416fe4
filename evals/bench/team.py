#!/usr/bin/env python3
"""Benchmark memory at team scale: 20 branches of agents' memory work, merged in a random order (issue 16).

What it does:

1. Builds a fresh repository under ``evals/bench/out/team/`` (removed and rebuilt on every run): ``git memzoi
   init``, a memkeep store with 10 entries and its INDEX.md, 20 canonical records, the merge driver registered
   (``merge_config.install``: git config plus ``.gitattributes``, as ``git memzoi hooks install`` does), one
   base commit.
2. Forks 20 branches from that base. On each, seeded random operations as agents perform them, each committed:
   propose-and-apply a new record (a title from a shared pool now and then, so two branches record the same
   decision differently), supersede a base record (now and then the same one as another branch), tombstone a
   record the branch made, add a memkeep entry and run ``git memkeep index``, re-word one of the branch's own
   entries and re-index. Records go through the real core functions in-process (``inbox.propose``,
   ``lifecycle.supersede``/``tombstone``), entries through ``api.index``. No branch edits what another branch
   may edit: the histories are non-contradictory, so every text conflict would be a tool failure.
3. Merges the branches into ``main`` in a seeded random order with ``git merge --no-edit`` (the driver runs as
   git runs it: a subprocess per derived file), timing each merge.
4. Reports: merges that stopped for a human (target 0), conflicting claims the op log predicts and how many
   ``find_conflicts`` surfaced (target all), records lost (a record some branch created that is missing from
   ``main`` or differs from that branch's last version; target 0), record ids created twice for different content
   (target 0), INDEX.md drift after the merges (target none), time per merge (median and max), and the cost at 100
   branches on paper: the per-merge time fitted against the merge's position, summed to 100.

Run: ``make bench`` or ``.venv/bin/python evals/bench/team.py [--branches 20] [--ops 15] [--seed N]``.
About a minute on a 2-core machine. Always exits 0 (a report), except when the set-up fails.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
PROJECT = HERE.parents[1]
sys.path.insert(0, str(PROJECT))

REPO = OUT / "team"
BASE_RECORDS = 20
BASE_ENTRIES = 10
SHARED_TITLES = ("Use Postgres for the event store", "Release every Tuesday", "Pin Node 22 in CI")
NOW = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)


def git(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc


def hermetic() -> None:
    home = OUT / "team-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    os.environ.update(
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.invalid",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.invalid",
        MEMZOI_HOME=str(home / ".memzoi"),
    )


def commit(message: str) -> None:
    git("add", "-A")
    git("commit", "-q", "--no-verify", "-m", message)


def entry_text(entry_id: str, anchor: str, claim: str) -> str:
    return (
        f"---\nschema_version: 1\nid: {entry_id}\ntype: fact\nstatus: verified\nwritten_at: 2026-11-01\n"
        f"verified_at: 2026-11-01\nanchor: {anchor}\nscope:\n  - src/app.py\nevidence: |\n  Seen in the code.\n"
        f"---\n{claim}\n"
    )


class Agent:
    """The in-process memory operations of one branch (a workspace whose clock moves a minute per operation)."""

    def __init__(self, name: str, tick: int) -> None:
        from git_memzoi.core.clock import FixedClock
        from git_memzoi.memzoi import workspace

        now = NOW + dt.timedelta(minutes=tick)
        self.ws = workspace.open_workspace(REPO, clock=FixedClock(now.date(), now), actor=name)

    def propose(self, title: str, body: str, kind: str = "decision") -> str:
        from git_memzoi.memzoi import inbox

        draft = inbox.make_draft(title=title, body=body, type=kind, sensitivity="repo-safe", actor=self.ws.actor)
        result = inbox.propose(self.ws, draft, memzoi_home=None, override="auto", apply=True)
        assert result.applied is not None
        return result.applied.record_id

    def supersede(self, target: str, title: str, body: str) -> str:
        from git_memzoi.memzoi import lifecycle

        return lifecycle.supersede(
            self.ws, target, title=title, body=body, actor=self.ws.actor, sensitivity="repo-safe"
        ).record_id

    def tombstone(self, target: str) -> None:
        from git_memzoi.memzoi import lifecycle

        lifecycle.tombstone(self.ws, target, reason="no longer true", actor=self.ws.actor)


def index_entries() -> None:
    from git_memzoi.memkeep import api

    api.index(api.Options(start=REPO))


def build_base(anchor_holder: list[str]) -> list[str]:
    from git_memzoi.integrations import merge_config
    from git_memzoi.memzoi import workspace

    shutil.rmtree(REPO, ignore_errors=True)
    REPO.mkdir(parents=True)
    git("init", "-q", "-b", "main")
    (REPO / "src").mkdir()
    (REPO / "src" / "app.py").write_text("print('hi')\n")
    commit("code")
    anchor = git("rev-parse", "HEAD").stdout.strip()
    anchor_holder.append(anchor)
    workspace.init(REPO)
    entries = REPO / "agent-memory" / "entries"
    entries.mkdir(parents=True)
    for n in range(BASE_ENTRIES):
        (entries / f"base-{n:02d}.md").write_text(entry_text(f"base-{n:02d}", anchor, f"Base fact {n}."))
    index_entries()
    agent = Agent("base", 0)
    base = [agent.propose(f"Base decision {n}", f"We decided thing {n}.") for n in range(BASE_RECORDS)]
    merge_config.install(REPO)
    commit("base memory")
    return base


def work_branch(name: str, number: int, rng: random.Random, ops: int, base: list[str], anchor: str, log: dict) -> None:
    git("checkout", "-q", "-b", name, "main")
    mine: list[str] = []  # records this branch created and may tombstone
    entries: list[str] = []
    for op in range(ops):
        agent = Agent(name, number * 100 + op + 1)
        choice = rng.random()
        if choice < 0.35:
            if rng.random() < 0.15:  # a decision another branch may record too, in its own words
                title = rng.choice(SHARED_TITLES)
            else:
                title = f"{name} decision {op}"
            record = agent.propose(title, f"{name} says: {title.lower()} (op {op}).")
            mine.append(record)
            log["created"][record] = name
            if title in SHARED_TITLES:
                log["claims"][record] = ("title", title)
        elif choice < 0.5 and base:
            target = rng.choice(base)
            record = agent.supersede(target, f"{name} replaces {target}", f"{name} revises {target}.")
            base.remove(target)  # this branch will not touch it again
            log["created"][record] = name
            log["claims"][record] = ("supersede", target)
            mine.append(record)
        elif choice < 0.6 and mine:
            gone = mine.pop(rng.randrange(len(mine)))
            agent.tombstone(gone)
            log["tombstoned"].add(gone)
        elif choice < 0.85 or not entries:
            entry = f"{name}-e{op:02d}"
            path = REPO / "agent-memory" / "entries" / f"{entry}.md"
            path.write_text(entry_text(entry, anchor, f"{name} learned fact {op}."))
            entries.append(entry)
            index_entries()
        else:
            entry = rng.choice(entries)
            path = REPO / "agent-memory" / "entries" / f"{entry}.md"
            path.write_text(entry_text(entry, anchor, f"{name} re-worded fact {entry} at op {op}."))
            index_entries()
        commit(f"{name}: op {op}")
        log["ops"] += 1
    git("checkout", "-q", "main")


def tip_records(ref: str) -> dict[str, str]:
    """record id → blob id in ``ref``'s tree."""
    out = git("ls-tree", "-r", ref, "--", ".memzoi/records/").stdout
    found = {}
    for line in out.splitlines():
        meta, path = line.split("\t", 1)
        found[path.removeprefix(".memzoi/records/").removesuffix(".md")] = meta.split()[2]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--branches", type=int, default=20)
    parser.add_argument("--ops", type=int, default=15)
    parser.add_argument("--seed", type=int, default=20261120)
    args = parser.parse_args()
    hermetic()
    rng = random.Random(args.seed)
    anchor: list[str] = []
    started = time.perf_counter()
    base = build_base(anchor)
    log: dict = {"created": {}, "claims": {}, "tombstoned": set(), "ops": 0}
    names = [f"agent-{n:02d}" for n in range(args.branches)]
    for number, name in enumerate(names):
        work_branch(name, number, rng, args.ops, list(base), anchor[0], log)
    built = time.perf_counter() - started

    tips = {name: tip_records(name) for name in names}
    order = names[:]
    rng.shuffle(order)
    human, times = [], []
    for name in order:
        t0 = time.perf_counter()
        proc = git("merge", "--no-edit", "--no-verify", "-q", name, check=False)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            human.append(name)
            git("merge", "--abort", check=False)

    report(args, log, tips, human, times, built)


def report(args: argparse.Namespace, log: dict, tips: dict, human: list[str], times: list[float], built: float) -> None:
    from git_memzoi.memkeep import api
    from git_memzoi.memzoi import Layout, Workspace, conflicts

    merged = tip_records("HEAD")
    lost = sorted(
        record
        for record, branch in log["created"].items()
        if branch not in human and merged.get(record) != tips[branch].get(record)
    )
    by_id: dict[str, set[str]] = {}
    for branch, records in tips.items():
        for record, blob in records.items():
            if log["created"].get(record) == branch:
                by_id.setdefault(record, set()).add(blob)
    duplicated = sorted(r for r, blobs in by_id.items() if len(blobs) > 1)

    claims: dict[tuple[str, str], set[str]] = {}  # (kind, target or title) → branches whose claim is still active
    for record, claim in log["claims"].items():
        if record not in log["tombstoned"] and log["created"][record] not in human:
            claims.setdefault(claim, set()).add(log["created"][record])
    expected_double = {key for (kind, key), who in claims.items() if kind == "supersede" and len(who) > 1}
    expected_titles = {key for (kind, key), who in claims.items() if kind == "title" and len(who) > 1}
    t0 = time.perf_counter()
    found = conflicts.find_conflicts(Workspace(Layout(REPO)))
    find_ms = (time.perf_counter() - t0) * 1000
    surfaced_double = {c.target for c in found if c.kind == "double_supersede"}
    titles = {
        t
        for t in expected_titles
        for c in found
        if c.kind in ("diverging_claims", "contradictory_types") and repr(t) in c.message
    }
    loaded = api.load_store(api.locate_store(REPO, REPO))
    drift = api.index_drift(loaded.entries, (REPO / "agent-memory" / "INDEX.md").read_text())

    expected = len(expected_double) + len(expected_titles)
    surfaced = len(surfaced_double & expected_double) + len(titles)
    per_merge = statistics.median(times) * 1000
    slope = _slope(times)
    at_100 = sum(statistics.mean(times) + slope * (n - (len(times) - 1) / 2) for n in range(100))
    rows = [
        ("operations (records and entries, committed)", f"{log['ops']} on {args.branches} branches", ""),
        ("merges needing a human", f"{len(human)} of {len(times)}", _verdict(not human)),
        (
            "conflicting claims surfaced as review items",
            f"{surfaced} of {expected} expected",
            _verdict(surfaced == expected),
        ),
        ("review items find_conflicts listed", f"{len(found)} ({find_ms:.0f} ms)", ""),
        ("records lost", str(len(lost)), _verdict(not lost)),
        ("record ids created twice for different content", str(len(duplicated)), _verdict(not duplicated)),
        ("INDEX.md drift after the merges", drift or "none", _verdict(not drift)),
        ("time per merge (median / max)", f"{per_merge:.0f} ms / {max(times) * 1000:.0f} ms", ""),
        ("growth of merge time per merged branch", f"{slope * 1000:+.1f} ms", ""),
        ("estimated total for 100 branches", f"{at_100:.1f} s ({at_100 / 100 * 1000:.0f} ms per merge)", ""),
        ("building the branches", f"{built:.1f} s", ""),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"team merge bench: {args.branches} branches × {args.ops} operations, seed {args.seed}")
    for label, value, verdict in rows:
        print(f"  {label:<{width}}  {value:<40} {verdict}")
    if lost or duplicated or human:
        print(f"  lost: {lost[:5]} duplicated: {duplicated[:5]} needing a human: {human[:5]}")
    print(
        "  on paper at 100 branches: each merge reads the changed files only; the driver parses the three INDEX.md\n"
        "  versions (linear in entries) in one python start (~100 ms, the constant that dominates); find_conflicts\n"
        "  is one scan of the records (linear). Conflicting claims grow with the square of the branches sharing a\n"
        "  topic, and each is one review item."
    )


def _slope(times: list[float]) -> float:
    n = len(times)
    if n < 2:
        return 0.0
    xs = range(n)
    mean_x, mean_y = (n - 1) / 2, statistics.mean(times)
    var = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, times, strict=True)) / var


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


if __name__ == "__main__":
    main()
