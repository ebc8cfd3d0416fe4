#!/usr/bin/env python3
"""Benchmark start-up: what a command costs before it does any work (issue 17, "Start-up").

Measures, as subprocesses of a regular (non-editable) install in ``out/venv``
(``memkeep_status.installed_memkeep()``), in the hermetic environment of ``memkeep_status.hermetic_env()``: the
interpreter alone (the floor), ``git-memzoi --help``, ``git-memkeep --help`` and ``--version`` (answered before
click is imported, ``git_memzoi/cli/entry.py``), and a cold ``git memzoi search`` in an initialised repository
with no records (the fixed cost) and with 1,000 records (the store of ``memzoi_store.generate`` at 1,000
canonical records). Targets: ``--help`` ≤ 40 ms; search at 1,000 records ≤ 70 ms. Medians of ``--runs``; the
load average is printed beside them. Always exits 0 (a report) unless set-up fails.

Run: ``make bench`` or ``.venv/bin/python evals/bench/startup.py [--runs 21]``.
"""

from __future__ import annotations

import argparse
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

TARGETS = {"help_ms": 40.0, "search_1k_ms": 70.0}
STORE_1K = memzoi_store.OUT / "memzoi-store-1k"
EMPTY = memzoi_store.OUT / "memzoi-empty"


def _median_ms(command: list[str], env: dict[str, str], runs: int) -> float:
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)  # warm
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def _stores() -> None:
    """The 1,000-record store and an empty initialised one, generated once."""
    if not (STORE_1K / ".memzoi" / "records").is_dir():
        memzoi_store.generate(STORE_1K, {"canonical": 1000, "local": 0, "session": 0})
    if not (EMPTY / ".memzoi").is_dir():
        memzoi_store.generate(EMPTY, {"canonical": 0, "local": 0, "session": 0})


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
    _stores()
    rows = [
        ("python -c pass (the floor)", [python, "-c", "pass"], None),
        ("git-memzoi --help", [memzoi, "--help"], "help_ms"),
        ("git-memkeep --help", [memkeep, "--help"], "help_ms"),
        ("git-memzoi --version", [memzoi, "--version"], None),
        ("git-memzoi search, no records", [memzoi, "-C", str(EMPTY), "search", "token"], None),
        ("git-memzoi search, 1,000 records", [memzoi, "-C", str(STORE_1K), "search", "token"], "search_1k_ms"),
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
    print()
    for label, value, limit in verdicts:
        print(f"  {'PASS' if value <= limit else 'FAIL'}  {label} = {value:.1f} ms (target ≤ {limit:.0f} ms)")
    print(f"  {memkeep_status.machine_note(started)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
