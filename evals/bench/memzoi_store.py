#!/usr/bin/env python3
"""Benchmark the derived memzoi index (``.memzoi/local/index.sqlite``) on a 10,000-record store.

What it does:

1. Generates, once, a git repository under ``evals/bench/out/memzoi-store/`` (git-ignored) holding 10,000 record
   files written by the package's own record writer: 9,000 canonical records in 30 concept folders under
   ``.memzoi/records/``, 800 private local records and 200 session checkpoints under ``.memzoi/local/runtime/``.
   A stamp of the generator's parameters in ``out/memzoi-store.json`` regenerates it when they change (or with
   ``--regenerate``).
2. Times, in-process: a full ``rebuild`` (temp file + rename), a ``refresh`` of the unchanged store (the cost every
   command pays first), a ``refresh`` after one record changed, and one FTS query. As information it also times the
   real ``git-memzoi local list --json`` as a subprocess (interpreter start-up included).
3. Prints a table and PASS/FAIL per target: rebuild < 5 s, unchanged refresh < 50 ms. Always exits 0 (it is a
   report), except when the set-up itself fails.

Run: ``make bench`` or ``.venv/bin/python evals/bench/memzoi_store.py [--regenerate] [--runs 15]``.
Only the standard library and the package are used.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
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

from git_memzoi.memzoi import api, index_db, okf
from git_memzoi.memzoi.layout import Layout

GENERATOR_VERSION = 1
PARAMS = {"seed": 20260710, "canonical": 9000, "folders": 30, "local": 800, "session": 200, "body_words": (20, 80)}
NOW = "2026-07-10T12:00:00Z"
TARGETS = {"rebuild_s": 5.0, "refresh_ms": 50.0}
WORDS = ("auth", "session", "middleware", "token", "cache", "index", "record", "proposal", "rebuild", "search",
         "recall", "package", "manager", "lockfile", "pnpm", "cargo", "release", "binary", "schema", "migration",
         "retention", "expiry", "scope", "path", "sentinel", "quartz", "onyx", "amber", "cerulean", "deploy",
         "build", "test", "fixture", "hook", "commit", "branch", "review", "apply", "reject", "supersede",
         "tombstone", "privacy", "local", "checkpoint", "context", "budget", "ranking", "citation", "provenance")
TYPES = ("fact", "decision", "procedure", "warning", "preference", "risk")


def _stamp() -> dict[str, object]:
    return json.loads(json.dumps({"version": GENERATOR_VERSION, **PARAMS}))  # as it reads back from the file


def _text(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def generate(root: Path) -> None:
    """Write the repository: ``git init``, ``.memzoi/`` and 10,000 record files (deterministic)."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    api.init(root)
    layout = Layout(root)
    rng = random.Random(PARAMS["seed"])
    low, high = PARAMS["body_words"]  # type: ignore[misc]
    for n in range(int(PARAMS["canonical"])):  # type: ignore[call-overload]
        folder = f"area-{n % int(PARAMS['folders']):02d}"  # type: ignore[call-overload]
        concept = f"{folder}/record-{n:05d}"
        kind = TYPES[n % len(TYPES)]
        record = okf.Record(
            id=concept, type=kind, lane="procedural" if kind == "procedure" else "semantic",
            title=f"{_text(rng, 3, 7).capitalize()} {n}", scope="repo", visibility="repo",
            content_class="general_repo_knowledge", status="superseded" if n % 97 == 0 else "active", confidence=1.0,
            timestamp="2026-06-01T00:00:00Z", updated=f"2026-06-{1 + n % 28:02d}T00:00:00Z", body=_text(rng, low, high),
            retention={}, origin={"origin_key": f"repository-record:{concept}", "route": "repository_materialization"},
            source="test", source_ref=f"fixture://{n}", tags=(rng.choice(WORDS), rng.choice(WORDS)),
            applies_to=(f"src/mod_{n % 100:02d}/**",),
        )  # fmt: skip
        path = layout.records / f"{concept}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(okf.render(record), "utf-8")
    for destination in ("local", "session"):
        directory = index_db.runtime_dir(layout, destination)
        directory.mkdir(parents=True, exist_ok=True)
        for n in range(int(PARAMS[destination])):  # type: ignore[call-overload]
            record_id = f"{destination}-note-{n:04d}"
            session = destination == "session"
            record = okf.Record(
                id=record_id, type="episode" if session else "preference", lane="session" if session else "semantic",
                title=f"{_text(rng, 3, 6).capitalize()} {n}", scope="repo", visibility="private",
                content_class="temporary_task_state" if session else "local_only_state", status="active",
                confidence=1.0, timestamp=NOW, updated=NOW, body=_text(rng, low, high),
                retention={"started_at": NOW} if session else {},
                origin={"origin_key": f"bench:{record_id}", "route": "checkpoint_create" if session else "local_memory"},
                source="memzoi-checkpoint" if session else "memzoi-local",
            )  # fmt: skip
            (directory / f"{record_id}.md").write_text(okf.render(record), "utf-8")


def _ms(seconds: float) -> float:
    return seconds * 1000.0


def _time(func: object, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        func()  # type: ignore[operator]
        samples.append(time.perf_counter() - start)
    return samples


def measure(root: Path, runs: int) -> dict[str, object]:
    layout = Layout(root)
    now = dt.datetime(2026, 7, 10, 12, tzinfo=dt.UTC)
    rebuilds = _time(lambda: index_db.rebuild(layout), 3)
    result = index_db.rebuild(layout)
    os.sync()  # flush the rebuild's dirty pages first: background write-back would time the disk, not the refresh
    index_db.refresh(layout)  # warm: the page cache holds the files and the index
    unchanged = _time(lambda: index_db.refresh(layout), runs)
    assert index_db.refresh(layout).read == (), "an unchanged store must read no file"
    target = layout.records / "area-01" / "record-00001.md"
    original = target.read_bytes()
    changed: list[float] = []
    for n in range(5):
        target.write_bytes(original.replace(b"\n---\n", f"\nconfidence_note_{n}: x\n---\n".encode(), 0) + b" ")
        start = time.perf_counter()
        read = index_db.refresh(layout).read
        changed.append(time.perf_counter() - start)
        assert read == (".memzoi/records/area-01/record-00001.md",), read
    target.write_bytes(original)
    index_db.refresh(layout)
    os.sync()
    query = index_db.fts_query("quartz sentinel cerulean")
    assert query is not None
    searches = _time(lambda: index_db.search_rows(layout, query, now=now, limit=10), runs)
    cli = _cli_list(root, max(3, runs // 3))
    return {
        "records": dict(result.records), "unreadable": len(result.unreadable),
        "rebuild_s": rebuilds, "refresh_unchanged_ms": [_ms(s) for s in unchanged],
        "refresh_one_changed_ms": [_ms(s) for s in changed], "search_ms": [_ms(s) for s in searches],
        "cli_local_list_ms": cli,
    }  # fmt: skip


def _cli_list(root: Path, runs: int) -> list[float]:
    exe = Path(sys.executable).parent / "git-memzoi"
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "git_memzoi"]
    env = {**os.environ, "MEMZOI_NOW": NOW}
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run([*command, "-C", str(root), "local", "list", "--json"], env=env, capture_output=True,
                              check=False)  # fmt: skip
        samples.append(_ms(time.perf_counter() - start))
        if proc.returncode != 0:
            raise SystemExit(f"bench: git-memzoi local list failed: {proc.stderr.decode(errors='replace')}")
    return samples


def report(results: dict[str, object]) -> None:
    def med(key: str) -> float:
        return statistics.median(results[key])  # type: ignore[arg-type]

    def low(key: str) -> float:
        return min(results[key])  # type: ignore[type-var,arg-type]

    records = results["records"]
    print(f"\nstore: {sum(records.values())} records {records}, unreadable {results['unreadable']}")  # type: ignore[attr-defined]
    print(f"  {'measurement':<44} {'median':>10} {'min':>10}  target")
    rows = [("rebuild (temp file + rename)", "rebuild_s", "s", f"< {TARGETS['rebuild_s']:.0f} s"),
            ("refresh, unchanged store", "refresh_unchanged_ms", "ms", f"< {TARGETS['refresh_ms']:.0f} ms"),
            ("refresh, one record changed", "refresh_one_changed_ms", "ms", "info"),
            ("FTS search, 3 OR terms, limit 10", "search_ms", "ms", "info"),
            ("git-memzoi local list --json (subprocess)", "cli_local_list_ms", "ms", "info")]  # fmt: skip
    for label, key, unit, target in rows:
        print(f"  {label:<44} {med(key):>8.3f}{unit:>2} {low(key):>8.3f}{unit:>2}  {target}")
    verdict = {True: "PASS", False: "FAIL"}
    print()
    print(f"  {verdict[med('rebuild_s') < TARGETS['rebuild_s']]}  rebuild median {med('rebuild_s'):.2f} s")
    print(f"  {verdict[med('refresh_unchanged_ms') < TARGETS['refresh_ms']]}  unchanged refresh median "
          f"{med('refresh_unchanged_ms'):.1f} ms")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1] if __doc__ else None)
    parser.add_argument("--regenerate", action="store_true", help="Rebuild the benchmark repository.")
    parser.add_argument("--runs", type=int, default=15, help="Samples per refresh/search series.")
    args = parser.parse_args(argv)
    root = OUT / "memzoi-store"
    meta = OUT / "memzoi-store.json"
    OUT.mkdir(parents=True, exist_ok=True)
    stamp = _stamp()
    current = json.loads(meta.read_text()) if meta.exists() else None
    if args.regenerate or current != stamp or not (root / ".memzoi" / "records").is_dir():
        print("bench: generating the 10,000-record store (once; cached in evals/bench/out/) ...", flush=True)
        start = time.perf_counter()
        generate(root)
        meta.write_text(json.dumps(stamp))
        print(f"bench: generated in {time.perf_counter() - start:.1f} s")
    results = measure(root, args.runs)
    report(results)
    (OUT / "memzoi_store_results.json").write_text(json.dumps(results, indent=2))
    print(f"\nbench: results written to {OUT / 'memzoi_store_results.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
