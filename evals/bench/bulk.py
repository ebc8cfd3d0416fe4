#!/usr/bin/env python3
"""Benchmark the bulk paths (issue 17, "Bulk paths"): a 1,000-note import applied into records, and ``rebuild`` of
the derived index at 50,000 records.

What it does:

1. **Bulk import.** For each size (1,000 notes; also 10,000 when ``MEMZOI_BENCH_BULK_10K=1``) a fresh git
   repository under ``evals/bench/out/bulk-<n>/`` gets ``git memzoi init`` and a ``memzoi/import-v1`` manifest of
   ``n`` repo-safe notes (deterministic: seeded words, 20 to 60 a body, a scope path and a tag each). It runs the
   documented bulk route, ``git memzoi import plan --json`` then ``git memzoi import apply --plan-id … --approve
   --json``, as subprocesses of the regular install (``memzoi_store.installed_memzoi``) in the hermetic environment
   (``memzoi_store.write_env``), and sums their CPU (user + system, ``resource.getrusage(RUSAGE_CHILDREN)``) and
   wall time. It checks the outcome: ``n`` records, ``n`` packets in ``resolved/applied/``, none pending, ``2n`` events
   (one ``proposal_file_written`` and one ``proposal_file_applied`` a note) and one ``import_applied`` a manifest.
   A manifest is at most 2 MiB: 10,000 notes are imported as five manifests of 2,000.
   Beside it, the route before: on a copy imported without ``--approve``, one ``proposal-files apply`` a packet for
   20 packets, its CPU median times ``n``; and basic-memory's whole ingest of 1,000 notes (118 s, measured for
   issue 17, quoted).
2. **Rebuild.** A repository of 50,000 canonical record files (``out/bulk-rebuild/``, cached with a stamp of the
   generator's parameters) is rebuilt in-process with ``index_db.rebuild`` (median of 3, wall, and CPU with the
   forked reader's), beside
   the floor of reading every file's bytes once (one walk, no parsing), and ``git memzoi rebuild --json`` once as
   a subprocess (interpreter start-up included).
3. Prints the load average with each measurement, a table, and PASS/FAIL per target: bulk apply CPU ≤ 5 s at
   1,000 and ≤ 50 s at 10,000; rebuild ≤ 5 s at 50,000. Always exits 0 (a report), except when set-up fails.

Run: ``make bench`` or ``.venv/bin/python evals/bench/bulk.py [--regenerate] [--sizes 1000] [--rebuild-records
50000] [--editable]``. Only the standard library and the package are used.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
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
sys.path.insert(0, str(HERE))  # memzoi_store / memkeep_status: the installed venv and the hermetic environment

import memzoi_store
from memzoi_store import WORDS, installed_memzoi, write_env

from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.recall.index import db as index_db

TARGETS = {1000: 5.0, 10000: 50.0, "rebuild_s": 5.0}
PEER_BASIC_MEMORY_1K_S = 118.0  # basic-memory's whole ingest of 1,000 notes (issue 17), quoted, not re-measured
ONE_BY_ONE_SAMPLE = 20
PER_MANIFEST = 2000  # notes a manifest holds (a manifest is at most 2 MiB)
REBUILD = {"version": 2, "seed": 20261202, "folders": 50, "body_words": (20, 80)}


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def _words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def manifest(n: int, start: int = 0) -> dict[str, object]:
    """A ``memzoi/import-v1`` manifest of notes ``start`` … ``start + n - 1``, distinct and repo-safe
    (deterministic)."""
    rng = random.Random(17 + start)
    candidates = [
        {
            "destination": "repo",
            "reason": "imported handbook note",
            "type": ("decision", "fact", "procedure", "warning")[i % 4],
            "title": f"{_words(rng, 3, 5).capitalize()} note {i}",
            "body": f"{_words(rng, 20, 60)} (note {i}).",
            "sensitivity": "repo-safe",
            "scope": {"kind": "repo", "paths": [f"src/mod_{i % 50:02d}/file.py"]},
            "tags": [rng.choice(WORDS)],
        }
        for i in range(start, start + n)
    ]
    return {"version": "memzoi/import-v1", "sources": [{"path": "docs/handbook.md"}], "candidates": candidates}


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, dict[str, object]]:
    """(CPU s, wall s, the JSON output) of one subprocess; a failure stops the benchmark."""
    cpu, start = _cpu_children(), time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    wall, used = time.perf_counter() - start, _cpu_children() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"bench: {' '.join(cmd[1:3])} failed ({proc.returncode}): {proc.stderr.strip()[:300]}")
    return used, wall, json.loads(proc.stdout or "{}")


def fresh_repo(root: Path, n: int, env: dict[str, str], exe: str) -> list[str]:
    """``git init`` + ``git memzoi init`` + the manifests of ``n`` notes (``manifest-<k>.json``, at most
    :data:`PER_MANIFEST` notes each: a manifest is at most 2 MiB); their names."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=env)
    subprocess.run([exe, "-C", str(root), "init"], check=True, env=env, capture_output=True)
    names = []
    for start in range(0, n, PER_MANIFEST):
        names.append(f"manifest-{start // PER_MANIFEST}.json")
        (root / names[-1]).write_text(json.dumps(manifest(min(PER_MANIFEST, n - start), start)), "utf-8")
    return names


def bulk_import(n: int, env: dict[str, str], exe: str) -> dict[str, object]:
    """Plan + ``apply --approve`` of ``n`` notes in a fresh repository (one manifest per :data:`PER_MANIFEST`
    notes); CPU, wall, checks."""
    root = OUT / f"bulk-{n}"
    plan_cpu = apply_cpu = wall = 0.0
    loads = []
    for name in fresh_repo(root, n, env, exe):
        args = ["--from-file", name, "--json"]
        cpu, spent, plan = _run([exe, "import", "plan", *args], env, root)
        plan_cpu, wall = plan_cpu + cpu, wall + spent
        loads.append(_load())
        cpu, spent, applied = _run(
            [exe, "import", "apply", *args, "--plan-id", str(plan["plan_id"]), "--approve"], env, root
        )
        apply_cpu, wall = apply_cpu + cpu, wall + spent
    layout = Layout(root)
    events = (layout.events.read_text("utf-8").splitlines()) if layout.events.exists() else []
    return {
        "notes": n,
        "manifests": len(loads),
        "cpu_s": plan_cpu + apply_cpu,
        "plan_cpu_s": plan_cpu,
        "apply_cpu_s": apply_cpu,
        "wall_s": wall,
        "load": loads[-1],
        "records": len(list(layout.records.rglob("*.md"))),
        "resolved": len(list(layout.resolved("applied").glob("*.md"))),
        "pending": len(list(layout.pending.glob("*.md"))),
        "events": len(events),
        "approval": applied.get("approval"),
    }


def one_by_one(n: int, env: dict[str, str], exe: str) -> dict[str, object]:
    """The route before: ``import apply`` without ``--approve``, then ``proposal-files apply`` a packet, for
    :data:`ONE_BY_ONE_SAMPLE` packets; the median CPU a packet times ``n``."""
    root = OUT / f"bulk-{n}-one-by-one"
    (name,) = fresh_repo(root, n, env, exe)
    args = ["--from-file", name, "--json"]
    _, _, plan = _run([exe, "import", "plan", *args], env, root)
    _, _, applied = _run([exe, "import", "apply", *args, "--plan-id", str(plan["plan_id"])], env, root)
    ids = [str(w["proposal_id"]) for w in applied["writes"]][:ONE_BY_ONE_SAMPLE]  # type: ignore[attr-defined]
    load = _load()
    samples = [_run([exe, "proposal-files", "apply", pid, "--json"], env, root)[0] for pid in ids]
    return {
        "per_packet_cpu_s": statistics.median(samples),
        "extrapolated_cpu_s": statistics.median(samples) * n,
        "load": load,
    }


def rebuild_store(count: int, regenerate: bool) -> Path:
    """``out/bulk-rebuild/``: ``count`` canonical record files in 50 folders (cached by a stamp)."""
    root = OUT / "bulk-rebuild"
    meta = OUT / "bulk-rebuild.json"
    stamp = json.loads(json.dumps({**REBUILD, "records": count}))
    if not regenerate and meta.exists() and json.loads(meta.read_text()) == stamp and (root / ".memzoi").is_dir():
        return root
    print(f"bench: generating {count:,} records (once; cached in evals/bench/out/) ...", flush=True)
    params = {"seed": REBUILD["seed"], "canonical": count, "folders": REBUILD["folders"], "local": 0, "session": 0}
    memzoi_store.generate(root, params)  # the 10,000-record store's writer, at this size
    meta.write_text(json.dumps(stamp))
    return root


def _cpu_self() -> float:
    """This process's CPU and its reaped children's (the rebuild's forked reader): user + system seconds."""
    return sum(
        u.ru_utime + u.ru_stime for u in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    )


def rebuild(root: Path, runs: int, env: dict[str, str], exe: str) -> dict[str, object]:
    """In-process rebuild (median of ``runs``: wall and CPU), the read-every-file floor, and the CLI once."""
    layout = Layout(root)
    walls, cpus, loads = [], [], []
    for _ in range(runs):
        loads.append(_load())
        cpu, start = _cpu_self(), time.perf_counter()
        result = index_db.rebuild(layout)
        walls.append(time.perf_counter() - start)
        cpus.append(_cpu_self() - cpu)
    start = time.perf_counter()
    size = 0
    for folder, _dirs, names in os.walk(layout.records):
        for name in names:
            with open(os.path.join(folder, name), "rb") as handle:
                size += len(handle.read())
    floor = time.perf_counter() - start
    cli_cpu, cli_wall, _ = _run([exe, "rebuild", "--json"], env, root)
    return {
        "records": dict(result.records),
        "wall_s": statistics.median(walls),
        "cpu_s": statistics.median(cpus),
        "samples_s": walls,
        "loads": loads,
        "floor_read_s": floor,
        "bytes": size,
        "cli_wall_s": cli_wall,
        "cli_cpu_s": cli_cpu,
        "cli_load": _load(),
    }


def report(bulk: list[dict[str, object]], before: dict[str, object] | None, built: dict[str, object]) -> None:
    """The table and PASS/FAIL per target."""
    verdict = {True: "PASS", False: "FAIL"}
    print(f"\n  {'measurement':<58} {'value':>10}  {'target':<10} peer / floor")
    for row in bulk:
        n = int(row["notes"])  # type: ignore[call-overload]
        peer = f"basic-memory {PEER_BASIC_MEMORY_1K_S:.0f} s (1,000 notes, quoted)" if n == 1000 else ""
        if before is not None and n == 1000:
            peer = f"one by one {before['extrapolated_cpu_s']:.0f} s CPU; " + peer
        print(
            f"  {f'import plan + apply --approve, {n:,} notes (CPU)':<58} {row['cpu_s']:>8.2f} s  ≤ {TARGETS[n]:<6.0f} s {peer}"
        )
        print(f"  {'  of which plan / apply (CPU)':<58} {row['plan_cpu_s']:>5.2f}/{row['apply_cpu_s']:.2f}")
        print(f"  {'  wall (' + str(row['load']) + ')':<58} {row['wall_s']:>8.2f} s")
        print(
            f"  {'  records / resolved / pending / events':<58} {row['records']}/{row['resolved']}/{row['pending']}/{row['events']}"
        )
    if before is not None:
        print(
            f"  {'one proposal-files apply a packet (CPU, median of ' + str(ONE_BY_ONE_SAMPLE) + ')':<58} "
            f"{float(before['per_packet_cpu_s']) * 1000:>7.0f} ms  info       ({before['load']})"  # type: ignore[arg-type]
        )
    records = sum(built["records"].values())  # type: ignore[attr-defined]
    print(
        f"  {f'rebuild, {records:,} records (in-process, median)':<58} {built['wall_s']:>8.2f} s  ≤ {TARGETS['rebuild_s']:<6.0f} s floor: read every file {built['floor_read_s']:.2f} s"
    )
    print(f"  {'  CPU / load of each run':<58} {built['cpu_s']:>8.2f} s  {'; '.join(built['loads'])}")  # type: ignore[arg-type]
    print(
        f"  {'git memzoi rebuild --json (subprocess, wall / CPU)':<58} {built['cli_wall_s']:>8.2f} s  info       {built['cli_cpu_s']:.2f} s CPU ({built['cli_load']})"
    )
    print()
    for row in bulk:
        n = int(row["notes"])  # type: ignore[call-overload]
        ok = float(row["cpu_s"]) <= TARGETS[n]  # type: ignore[arg-type]
        sane = row["records"] == row["resolved"] == n and row["pending"] == 0
        sane = sane and row["events"] == 2 * n + int(row["manifests"])  # type: ignore[call-overload]
        print(f"  {verdict[ok]}  bulk apply of {n:,} notes: {row['cpu_s']:.2f} s CPU (target ≤ {TARGETS[n]:.0f} s)")
        print(
            f"  {verdict[bool(sane)]}  sanity: {n:,} records, {n:,} resolved packets, none pending, "
            f"{2 * n + int(row['manifests']):,} events"  # type: ignore[call-overload]
        )
    wall = float(built["wall_s"])  # type: ignore[arg-type]
    print(
        f"  {verdict[wall <= TARGETS['rebuild_s']]}  rebuild of {records:,} records: {wall:.2f} s (target ≤ {TARGETS['rebuild_s']:.0f} s)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1] if __doc__ else None)
    parser.add_argument("--regenerate", action="store_true", help="Rebuild the cached rebuild store.")
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="*",
        default=None,
        help="Import sizes (default 1000; 10000 too with MEMZOI_BENCH_BULK_10K=1).",
    )
    parser.add_argument("--rebuild-records", type=int, default=50000, help="Records of the rebuild store.")
    parser.add_argument("--rebuild-runs", type=int, default=3, help="Samples of the in-process rebuild.")
    parser.add_argument("--editable", action="store_true", help="Time the development venv's git-memzoi.")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([1000, 10000] if os.environ.get("MEMZOI_BENCH_BULK_10K") == "1" else [1000])
    OUT.mkdir(parents=True, exist_ok=True)
    exe = installed_memzoi(args.editable)
    env = write_env()
    print(f"bench: bulk paths with {exe} ({_load()})", flush=True)
    bulk = [bulk_import(n, env, exe) for n in sizes]
    before = one_by_one(1000, env, exe) if 1000 in sizes else None
    built = rebuild(rebuild_store(args.rebuild_records, args.regenerate), args.rebuild_runs, env, exe)
    report(bulk, before, built)
    (OUT / "bulk_results.json").write_text(json.dumps({"bulk": bulk, "one_by_one": before, "rebuild": built}, indent=2))
    print(f"\nbench: results written to {OUT / 'bulk_results.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
