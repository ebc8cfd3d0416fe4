#!/usr/bin/env python3
"""Benchmark start-up: what a command costs before it does any work (issue 17, "Start-up").

Measures, as subprocesses of a regular (non-editable) install in ``out/venv``
(``memkeep_status.installed_memkeep()``), in the hermetic environment of ``memkeep_status.hermetic_env()``: the
interpreter alone (the floor), ``git-memzoi --help``, ``git-memkeep --help`` and ``--version`` (answered before
click is imported, ``git_memzoi/cli/entry.py``), and a cold ``git memzoi search`` in an initialised repository
with no records (the fixed cost), with 1,000 records (the store of ``memzoi_store.generate`` at 1,000
canonical records) and with 50,000 (``recall_quality.py``'s benchmark store at that size, built there once).
Beside the 50,000-record search, in this process: the index's walk over those record files
(``recall/index/scan.py``, what every one-shot call pays to know nothing changed) and its floor, one
``os.scandir`` and one ``lstat`` a file with nothing kept. Targets: ``--help`` ≤ 40 ms; search at 1,000 records
≤ 70 ms, at 50,000 ≤ 150 ms (issue 17, "Per-call overhead"). Medians of ``--runs``; the load average is printed
beside them. Always exits 0 (a report) unless set-up fails.

Run: ``make bench`` or ``.venv/bin/python evals/bench/startup.py [--runs 21]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

import memkeep_status
import memzoi_store

TARGETS = {"help_ms": 40.0, "search_1k_ms": 70.0, "search_50k_ms": 150.0}
STORE_1K = memzoi_store.OUT / "memzoi-store-1k"
EMPTY = memzoi_store.OUT / "memzoi-empty"
SEARCH_50K = "signer salt"  # words of the benchmark corpus's titles (recall_corpus.py)


def _median_ms(command: list[str], env: dict[str, str], runs: int) -> float:
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)  # warm
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def _stores() -> Path:
    """The 1,000-record store and an empty initialised one, generated once; the 50,000-record store's root."""
    if not (STORE_1K / ".memzoi" / "records").is_dir():
        memzoi_store.generate(STORE_1K, {"canonical": 1000, "local": 0, "session": 0})
    if not (EMPTY / ".memzoi").is_dir():
        memzoi_store.generate(EMPTY, {"canonical": 0, "local": 0, "session": 0})
    import recall_quality  # imports the package: only once the stores above exist

    return recall_quality.build("bench", 50000)


def _walk_ms(root: Path, runs: int) -> tuple[float, float]:
    """Medians (ms) of the index's walk of ``root``'s record files and of its floor (scandir + lstat a file)."""
    from git_memzoi.memzoi.layout import Layout
    from git_memzoi.memzoi.recall.index.scan import Scan

    layout = Layout(root)

    def floor(folder: str) -> None:
        with os.scandir(folder) as listing:
            for item in listing:
                if item.is_dir(follow_symlinks=False):
                    floor(item.path)
                else:
                    item.stat(follow_symlinks=False)

    walks, floors = [], []
    for _ in range(runs):
        start = time.perf_counter()
        Scan.of(layout)
        walks.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        floor(str(layout.records))
        floors.append((time.perf_counter() - start) * 1000)
    return statistics.median(walks), statistics.median(floors)


def main(argv: list[str] | None = None) -> int:
    started = memkeep_status.cpu_times()  # for the closing line's share of stolen CPU
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args(argv)
    memkeep = memkeep_status.installed_memkeep()
    memzoi = memkeep.replace("git-memkeep", "git-memzoi")
    python = str(Path(memkeep).parent / "python")
    env = memkeep_status.hermetic_env(memzoi_store.OUT / "home")
    env["MEMZOI_NOW"] = memzoi_store.NOW
    store_50k = _stores()
    rows = [
        ("python -c pass (the floor)", [python, "-c", "pass"], None),
        ("git-memzoi --help", [memzoi, "--help"], "help_ms"),
        ("git-memkeep --help", [memkeep, "--help"], "help_ms"),
        ("git-memzoi --version", [memzoi, "--version"], None),
        ("git-memzoi search, no records", [memzoi, "-C", str(EMPTY), "search", "token"], None),
        ("git-memzoi search, 1,000 records", [memzoi, "-C", str(STORE_1K), "search", "token"], "search_1k_ms"),
        ("git-memzoi search, 50,000 records", [memzoi, "-C", str(store_50k), "search", SEARCH_50K], "search_50k_ms"),
    ]
    print(f"\nstart-up, regular install, medians of {args.runs}")
    print(f"  {'measurement':<36}{'ms':>8}  target")
    verdicts = []
    for label, command, target in rows:
        value = _median_ms(command, env, args.runs)
        limit = TARGETS.get(target or "")
        print(f"  {label:<36}{value:>8.1f}  {f'≤ {limit:.0f} ms' if limit else 'info'}")
        if limit:
            verdicts.append((label, value, limit))
    walk, floor = _walk_ms(store_50k, args.runs)
    print(f"  {'  of it: the walk of 50,000 files':<36}{walk:>8.1f}  info (in-process)")
    print(f"  {'  its floor: scandir + lstat a file':<36}{floor:>8.1f}  info (in-process)")
    print()
    for label, value, limit in verdicts:
        print(f"  {'PASS' if value <= limit else 'FAIL'}  {label} = {value:.1f} ms (target ≤ {limit:.0f} ms)")
    print(f"  {memkeep_status.machine_note(started)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
