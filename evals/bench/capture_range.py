#!/usr/bin/env python3
"""Benchmark ``capture.plan_request`` on a large pinned ``git_range`` (git-change-deterministic profile).

What it does:

1. Builds, once, ``evals/bench/out/capture-range/`` (git-ignored): a repository whose base commit holds 500
   Markdown files with typed sections (``## Decision:``, ``## Procedure:``, …) and whose head commit changes
   every file in 8 places far enough apart to be 8 hunks: 4,000 hunks in all, within the profile's caps (512
   files, 4,096 hunks, 2 MiB of diff). 90 of the hunks add a new typed section (the profile caps a plan at 100
   candidates); the others add plain lines to existing sections. A stamp in ``out/capture-range.json`` rebuilds
   it when the parameters change (or with ``--regenerate``).
2. Times ``capture.plan_request`` in-process (render the range with pygit2, scan, parse, extract, classify)
   ``--runs`` times after one warm-up, and reports the median.
3. Prints PASS/FAIL against the target: under 3 s. Always exits 0 (a report), except when set-up fails.

Run: ``make bench`` or ``.venv/bin/python evals/bench/capture_range.py [--regenerate] [--runs 5]``.
"""

from __future__ import annotations

import argparse
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

GENERATOR_VERSION = 2
PARAMS = {"seed": 20260711, "files": 500, "hunks_per_file": 8, "typed_additions": 90}
TARGET_S = 3.0
REPO = OUT / "capture-range"
STAMP = OUT / "capture-range.json"
TYPES = ("Decision", "Procedure", "Warning", "Risk", "Failed attempt", "Fact")
WORDS = (
    "auth",
    "session",
    "cache",
    "index",
    "record",
    "proposal",
    "search",
    "release",
    "schema",
    "migration",
    "deploy",
    "build",
    "test",
    "hook",
    "commit",
    "branch",
    "review",
    "privacy",
    "scope",
    "budget",
)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.invalid",
            "GIT_AUTHOR_DATE": "2026-07-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2026-07-01T00:00:00Z",
        }
    )
    return env


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=REPO, env=_env(), check=True, capture_output=True, text=True
    ).stdout.strip()


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(7)).capitalize() + "."


def _generate() -> tuple[str, str]:
    """(base, head) full commit ids of the generated range."""
    rng = random.Random(PARAMS["seed"])
    shutil.rmtree(REPO, ignore_errors=True)
    REPO.mkdir(parents=True)
    _git("init", "-q", "-b", "main")
    blocks = PARAMS["hunks_per_file"]
    bases: dict[str, list[list[str]]] = {}
    for n in range(PARAMS["files"]):
        path = f"docs/area_{n % 20:02d}/note_{n:03d}.md"
        bases[path] = [
            [f"## {rng.choice(TYPES)}: {rng.choice(WORDS)} {n} {b}", *(_sentence(rng) for _ in range(9))]
            for b in range(blocks)
        ]
    _write(bases)
    _git("add", "-A")
    _git("commit", "-q", "-m", "base")
    base = _git("rev-parse", "HEAD")
    typed = set(rng.sample(range(PARAMS["files"] * blocks), PARAMS["typed_additions"]))
    heads = {}
    for i, (path, sections) in enumerate(sorted(bases.items())):
        changed = []
        for b, section in enumerate(sections):
            extra = [_sentence(rng)]
            if i * blocks + b in typed:
                extra += ["", f"## {rng.choice(TYPES[:5])}: added {i} {b}", _sentence(rng)]
            changed.append([*section[:5], *extra, *section[5:]])
        heads[path] = changed
    _write(heads)
    _git("add", "-A")
    _git("commit", "-q", "-m", "head")
    return base, _git("rev-parse", "HEAD")


def _write(files: dict[str, list[list[str]]]) -> None:
    for path, sections in files.items():
        target = REPO / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("# Notes\n\n" + "\n\n".join("\n".join(s) for s in sections) + "\n", encoding="utf-8")


def _ensure(regenerate: bool) -> tuple[str, str]:
    stamp = {"version": GENERATOR_VERSION, **PARAMS}
    if not regenerate and STAMP.is_file() and (REPO / ".git").is_dir():
        saved = json.loads(STAMP.read_text())
        if saved.get("stamp") == stamp:
            return saved["base"], saved["head"]
    base, head = _generate()
    STAMP.write_text(json.dumps({"stamp": stamp, "base": base, "head": head}))
    return base, head


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regenerate", action="store_true")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    base, head = _ensure(args.regenerate)
    for key in [k for k in os.environ if k.startswith("GIT_")]:
        del os.environ[key]
    from git_memzoi.memzoi import workspace
    from git_memzoi.memzoi.capture import plan as capture
    from tests.support.repos import git_range_request

    ctx = workspace.open_workspace(REPO, initialized=False, actor="bench")
    request = git_range_request(base, head)  # the request the capture tests send
    plan = capture.plan_request(ctx, request)  # warm-up, and the sanity figures
    samples = []
    for _ in range(args.runs):
        start = time.perf_counter()
        capture.plan_request(ctx, request)
        samples.append(time.perf_counter() - start)
    median = statistics.median(samples)
    hunks = _git("diff", "--full-index", "-M", base, head).count("\n@@ ")
    print("capture plan over a git_range (git-change-deterministic)")
    print(f"  range:       {PARAMS['files']} files, {hunks} hunks, {plan['sources'][0]['byte_length']:,} bytes of diff")
    print(
        f"  plan:        {plan['status']}, {len(plan['candidates'])} candidates, {len(plan['diagnostics'])} diagnostics"
    )
    print(f"  median:      {median:.3f} s over {args.runs} runs (min {min(samples):.3f}, max {max(samples):.3f})")
    verdict = "PASS" if median < TARGET_S and plan["status"] == "ready" else "FAIL"
    print(f"  target:      < {TARGET_S:.1f} s  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
