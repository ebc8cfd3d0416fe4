#!/usr/bin/env python3
"""Benchmark the installed pre-commit hook: what it adds to ``git commit`` on a big repository.

What it does:

1. Builds, once, ``evals/bench/out/hooks-repo/`` (git-ignored): a copy of ``out/repo-1k`` from
   ``memkeep_status.py`` (5,000 commits, a 1,000-entry memkeep store) plus ``.memzoi/`` holding 5,000 records
   written with the package's record writer (``okf.render``), committed. A stamp in ``out/hooks-repo.json``
   rebuilds it when the parameters change (or with ``--regenerate``).
2. Installs the hooks with the regular (non-editable) install's ``git-memzoi hooks install`` (``out/venv``,
   ``memkeep_status.installed_memkeep()``), in the hermetic environment of ``memkeep_status.hermetic_env()``.
3. Times ``git commit`` of the same small change (one source file, alternating between two contents) with the
   hooks on, and ``git -c core.hooksPath=/dev/null commit`` (hooks off), interleaved; the median difference is
   what the hook adds. As information it also times a commit that stages one record and one memkeep entry (the
   secret scan and the entry lint run).
4. Prints PASS/FAIL against the target: the pre-commit hook adds under 250 ms. Always exits 0 (a report),
   except when the set-up fails.

Run: ``make bench`` or ``.venv/bin/python evals/bench/hooks.py [--regenerate] [--runs 15] [--profile]``.
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
sys.path.insert(0, str(HERE))

import memkeep_status as mk

GENERATOR_VERSION = 1
PARAMS = {"seed": 20260720, "records": 5000, "folders": 25}
TARGET_MS = 250.0
REPO = OUT / "hooks-repo"
STAMP = OUT / "hooks-repo.json"
CHANGED = "src/mod_03/file_004.py"  # inside the scope of a few entries: the "verify these" report runs
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


def _stamp() -> dict[str, object]:
    return json.loads(json.dumps({"version": GENERATOR_VERSION, **PARAMS, "base": mk._stamp()}))


def _records(root: Path) -> None:
    """5,000 repo-safe records under ``.memzoi/records/`` written by the package's writer."""
    from git_memzoi.memzoi import workspace
    from git_memzoi.memzoi.layout import Layout
    from git_memzoi.memzoi.records import okf

    workspace.init(root)
    layout = Layout(root)
    rng = random.Random(PARAMS["seed"])
    for n in range(int(PARAMS["records"])):  # type: ignore[call-overload]
        concept = f"area-{n % int(PARAMS['folders']):02d}/record-{n:05d}"  # type: ignore[call-overload]
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60)))
        record = okf.Record(
            id=concept,
            type="decision",
            lane="semantic",
            title=f"{rng.choice(WORDS).capitalize()} rule {n}",
            scope="repo",
            visibility="repo",
            content_class="general_repo_knowledge",
            status="active",
            confidence=1.0,
            timestamp="2026-06-01T00:00:00Z",
            updated="2026-06-01T00:00:00Z",
            body=words,
            retention={},
            origin={"origin_key": f"repository-record:{concept}", "route": "repository_materialization"},
            source="test",
            source_ref=f"fixture://{n}",
            applies_to=(f"src/mod_{n % 100:02d}/**",),
        )
        path = layout.records / f"{concept}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(okf.render(record), "utf-8")


def ensure_repo(env: dict[str, str], memkeep: str, regenerate: bool) -> bool:
    if not regenerate and (REPO / ".git").is_dir() and STAMP.is_file():
        try:
            if json.loads(STAMP.read_text()) == _stamp():
                return False
        except ValueError:
            pass
    print("bench: building evals/bench/out/hooks-repo (once) ...", flush=True)
    mk.ensure_repos(env, memkeep, False)
    shutil.rmtree(REPO, ignore_errors=True)
    STAMP.unlink(missing_ok=True)
    mk.git(env, OUT, "clone", "-q", "--no-hardlinks", str(OUT / "repo-1k"), str(REPO))
    mk.git(env, REPO, "remote", "remove", "origin")
    _records(REPO)
    mk.git(env, REPO, "add", "-A")
    mk.git(env, REPO, "commit", "-q", "-m", "memory: 5,000 records")
    mk.git(env, REPO, "gc", "-q")
    STAMP.write_text(json.dumps(_stamp(), indent=2) + "\n")
    return True


def _commit(env: dict[str, str], hooks: bool, paths: dict[str, str], tag: str) -> tuple[float, str]:
    for rel, text in paths.items():
        (REPO / rel).write_text(text, "utf-8")
    mk.git(env, REPO, "add", *paths)
    cmd = ["git"] + ([] if hooks else ["-c", "core.hooksPath=/dev/null"]) + ["commit", "-q", "-m", f"bench {tag}"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"bench: commit failed (hooks={hooks}):\n{proc.stderr.decode(errors='replace')}")
    return elapsed, proc.stderr.decode(errors="replace")


def _series(env: dict[str, str], runs: int, variants: list[dict[str, str]]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"on": [], "off": []}
    k = 0
    for i in range(runs + 1):  # the first pair warms the caches and is dropped
        for mode in ("on", "off") if i % 2 == 0 else ("off", "on"):
            elapsed, _ = _commit(env, mode == "on", variants[k % 2], f"{mode} {i}")
            k += 1
            if i:
                times[mode].append(elapsed)
    return times


def memory_variants() -> list[dict[str, str]]:
    entry = min((REPO / mk.STORE_DIR / "entries").glob("*.md"))
    record = REPO / ".memzoi/records/area-03/record-00003.md"
    out = []
    for flip in ("A", "B"):
        texts = {CHANGED: f"# bench change {flip}\n"}
        texts[str(entry.relative_to(REPO))] = entry.read_text("utf-8").rstrip("\n") + f"\n\nBench note {flip}.\n"
        texts[str(record.relative_to(REPO))] = record.read_text("utf-8").rstrip("\n") + f"\n\nBench note {flip}.\n"
        out.append(texts)
    return out


def profile(env: dict[str, str], python: str) -> None:
    (REPO / CHANGED).write_text("# bench profile\n", "utf-8")
    mk.git(env, REPO, "add", CHANGED)
    prof = OUT / "hooks_pre_commit.prof"
    subprocess.run(
        [
            python,
            "-X",
            "importtime",
            "-m",
            "cProfile",
            "-o",
            str(prof),
            "-m",
            "git_memzoi",
            "hook",
            "run",
            "pre-commit",
            "--",
        ],
        cwd=REPO,
        env=env,
        check=False,
    )
    import pstats

    pstats.Stats(str(prof)).sort_stats("cumulative").print_stats(25)
    mk.git(env, REPO, "reset", "-q", "--hard", "HEAD")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--regenerate", action="store_true")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)

    env = mk.hermetic_env(OUT / "home")
    memkeep = mk.installed_memkeep()
    venv_bin = Path(memkeep).parent
    python = str(venv_bin / "python")
    deps = subprocess.run([python, "-c", "import detect_secrets, yaml"], capture_output=True, check=False)
    if deps.returncode != 0:  # out/venv predates a dependency (installed_memkeep() refreshes with --no-deps)
        subprocess.run([python, "-m", "pip", "install", "-q", str(PROJECT)], capture_output=True, check=True)
    env["PATH"] = str(venv_bin) + os.pathsep + env["PATH"]  # the shims find the regular install's git-memzoi
    ensure_repo(env, memkeep, args.regenerate)
    mk.git(env, REPO, "reset", "-q", "--hard", "HEAD")
    installed = subprocess.run(
        [str(venv_bin / "git-memzoi"), "-C", str(REPO), "hooks", "install", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if installed.returncode != 0:
        raise SystemExit(f"bench: hooks install failed:\n{installed.stdout}{installed.stderr}")
    if args.profile:
        profile(env, str(venv_bin / "python"))
        return 0

    small = [{CHANGED: "# bench change A\n"}, {CHANGED: "# bench change B\n"}]
    plain = _series(env, args.runs, small)
    memory = _series(env, max(5, args.runs // 2), memory_variants())
    mk.git(env, REPO, "reset", "-q", "--hard", "HEAD")

    def med(values: list[float]) -> float:
        return statistics.median(values) * 1000.0

    added = med(plain["on"]) - med(plain["off"])
    added_memory = med(memory["on"]) - med(memory["off"])
    results = {
        "runs": args.runs,
        "records": PARAMS["records"],
        "entries": mk.PARAMS["entries_small"],
        "commit_hooks_on_ms": round(med(plain["on"]), 1),
        "commit_hooks_off_ms": round(med(plain["off"]), 1),
        "added_ms": round(added, 1),
        "memory_commit_added_ms": round(added_memory, 1),
        "target_ms": TARGET_MS,
        "pass": added < TARGET_MS,
    }
    (OUT / "hooks_results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"git commit, 1 source file staged ({args.runs} runs, 1,000 entries, 5,000 records):")
    print(f"  hooks off  median {med(plain['off']):7.1f} ms")
    print(f"  hooks on   median {med(plain['on']):7.1f} ms")
    print(
        f"  added by the pre-commit hook {added:7.1f} ms  (target < {TARGET_MS:.0f} ms)  "
        f"{'PASS' if added < TARGET_MS else 'FAIL'}"
    )
    print(f"  info: a commit staging 1 record + 1 entry + 1 source file: hook adds {added_memory:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
