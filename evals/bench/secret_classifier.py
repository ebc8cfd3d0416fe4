#!/usr/bin/env python3
"""Benchmark the credential classifier (``git_memzoi.core.secret_scan``): how much it catches, how often it cries
wolf, and what it costs per KB, since every write, read and hook calls it.

What it does:

1. Runs the labelled secret set of ``tests/support/secret_corpus.py`` (realistic-format fake credentials and
   their look-alikes, generated from a seeded RNG) and prints recall (positives with a credential finding) and the
   false-positive rate (look-alikes with any finding), with the labels of each miss and false positive (never the
   text). ``tests/core/test_secret_labelled_set.py`` asserts the same lists exactly.
2. Times ``classify_all`` in-process, its per-process cache cleared before each run, over memory-like prose (this
   repository's ``docs/*.md`` and ``agent-memory/entries/*.md``) and over the labelled set; median of ``--runs``,
   reported as milliseconds per KB.
3. Times three hostile 256 KiB single-line texts (a run of identifier characters, of base64, and of repeated
   ``password=`` assignments): linear-time rules keep each far below a hook's budget.
4. Times the first ``classify`` of a clean text in a fresh process whose derived file
   (``secret-shapes.json``: detect-secrets' shapes and the rule pack's data) was written by an earlier one: the
   import and set-up a hook pays, interpreter start-up excluded.

Targets: recall ≥ 0.98, false positives ≤ 0.03, prose ≤ 1 ms/KB, each hostile text < 250 ms, the fresh process's
first call < 100 ms. Always exits 0 (a report), except when set-up fails.

Run: ``make bench`` or ``.venv/bin/python evals/bench/secret_classifier.py [--runs 7]``. Only the standard library and the
package are used.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
sys.path.insert(0, str(PROJECT))

from git_memzoi.core import secret_scan
from tests.support.secret_corpus import negatives, positives

TARGETS = {"recall": 0.98, "false_positives": 0.03, "prose_ms_per_kb": 1.0, "hostile_ms": 250.0, "fresh_ms": 100.0}
HOSTILE = 256 * 1024
FRESH = """
import sys, time
from pathlib import Path
from git_memzoi.core import secret_scan
secret_scan.remember_shapes_in(Path(sys.argv[1]))
start = time.perf_counter()
found = secret_scan.classify(sys.argv[2])
print((time.perf_counter() - start) * 1000, "detect_secrets" in sys.modules, len(found))
"""


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def labelled() -> tuple[float, float, list[str], list[str], int, int]:
    pos, neg = positives(), negatives()
    missed = [label for label, text in pos if not secret_scan.classify(text, personal=False)]
    flagged = [label for label, text in neg if secret_scan.classify(text)]
    return 1 - len(missed) / len(pos), len(flagged) / len(neg), missed, flagged, len(pos), len(neg)


def timed(call: Callable[[], object], runs: int) -> float:
    """Median seconds of ``call`` over ``runs``, the classifier's per-process cache cleared before each."""
    samples = []
    for _ in range(runs):
        secret_scan._classify_cached.cache_clear()
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def per_kb(texts: Sequence[str], runs: int) -> tuple[float, int]:
    size = sum(len(t.encode("utf-8")) for t in texts)
    seconds = timed(lambda: secret_scan.classify_all(list(texts)), runs)
    return seconds * 1000 / (size / 1024), size


def memory_prose() -> list[str]:
    files = sorted((PROJECT / "docs").glob("*.md")) + sorted((PROJECT / "agent-memory" / "entries").glob("*.md"))
    return [f.read_text("utf-8") for f in files]


def hostile() -> dict[str, str]:
    return {
        "identifier run": ("a_" * HOSTILE)[:HOSTILE],
        "base64 run": ("Qk9vW3xYz09+/" * HOSTILE)[:HOSTILE],
        "assignments": ("password=" * HOSTILE)[:HOSTILE],
    }


def fresh_process(clean: str) -> tuple[float, bool]:
    """The first classify of ``clean`` in a new process with a written derived file: (ms, detect-secrets loaded)."""
    with tempfile.TemporaryDirectory() as cache:
        for _ in range(2):  # the first fills the derived file
            out = subprocess.run(
                [sys.executable, "-c", FRESH, cache, clean], capture_output=True, text=True, check=True, cwd=PROJECT
            ).stdout.split()
    return float(out[0]), out[1] == "True"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    secret_scan.classify("warm-up: import the rule engines once")
    recall, fp_rate, missed, flagged, n_pos, n_neg = labelled()
    prose_ms, prose_bytes = per_kb(memory_prose(), args.runs)
    labelled_ms, labelled_bytes = per_kb([t for _, t in positives() + negatives()], args.runs)
    hostile_ms = {name: timed(lambda t=text: secret_scan.classify(t), 3) * 1000 for name, text in hostile().items()}
    fresh_ms, fresh_loaded = fresh_process("Install dependencies with pnpm, never npm; the cache key is per branch.")
    print("secret classifier (git_memzoi.core.secret_scan)")
    print(f"  labelled set:  {n_pos} secrets, {n_neg} look-alikes")
    print(f"  recall:        {recall:.3f}  (target >= {TARGETS['recall']})  {verdict(recall >= TARGETS['recall'])}")
    print(f"    missed:      {missed}")
    fp_ok = fp_rate <= TARGETS["false_positives"]
    print(f"  false pos.:    {fp_rate:.3f}  (target <= {TARGETS['false_positives']})  {verdict(fp_ok)}")
    print(f"    flagged:     {flagged}")
    prose_ok = prose_ms <= TARGETS["prose_ms_per_kb"]
    print(f"  prose:         {prose_ms:.3f} ms/KB over {prose_bytes / 1024:,.0f} KB  {verdict(prose_ok)}")
    print(f"  labelled set:  {labelled_ms:.3f} ms/KB over {labelled_bytes / 1024:,.0f} KB (information)")
    for name, ms in hostile_ms.items():
        print(f"  hostile:       {name:<15} {ms:7.1f} ms / 256 KiB  {verdict(ms < TARGETS['hostile_ms'])}")
    fresh_ok = fresh_ms < TARGETS["fresh_ms"] and not fresh_loaded
    print(f"  fresh process: {fresh_ms:.1f} ms first call, detect-secrets loaded: {fresh_loaded}  {verdict(fresh_ok)}")
    results = {
        "recall": recall,
        "false_positive_rate": fp_rate,
        "missed": missed,
        "flagged": flagged,
        "prose_ms_per_kb": prose_ms,
        "labelled_ms_per_kb": labelled_ms,
        "hostile_ms": hostile_ms,
        "fresh_ms": fresh_ms,
    }
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "secrets.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
