#!/usr/bin/env python3
"""Benchmark ``git-memkeep status --json`` against the git CLI on a large synthetic repository.

What it does (see evals/bench/README.md):

1. Generates, once, a deterministic repository under ``evals/bench/out/`` (git-ignored): 5,000 commits over
   ~2,100 files in 100 ``src/mod_NN/`` directories plus docs and root config, written with one
   ``git fast-import`` stream. Two clones of that history get a memkeep store in a final commit: ``repo-1k``
   (1,000 entries) and ``repo-2k`` (2,000 entries, a superset), both anchored at the same 50 commits.
   The repositories are rebuilt when missing, when the generator's parameters change, or with ``--regenerate``.
2. Times the real command as a subprocess, warm (the last answer served by the status result cache: nothing
   changed), recomputed (parse cache filled, result cache deleted: as after a commit) and cold (caches deleted),
   the git CLI doing the same history work (``git diff --name-only <anchor> HEAD`` once per distinct anchor),
   and ``git-memkeep --help``.
3. Prints a table, PASS/FAIL per target, and writes ``evals/bench/out/results.json``. Always exits 0 (it is
   a report), except when the set-up itself fails.

Run: ``make bench`` (or ``.venv/bin/python evals/bench/memkeep_status.py [--regenerate] [--profile]``).
Only the standard library is used; ``git`` and ``git-memkeep`` are run as subprocesses.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
PROJECT = HERE.parents[1]

# Everything the generated repositories depend on; changing any value (or GENERATOR_VERSION) regenerates them.
GENERATOR_VERSION = 1
PARAMS = {
    "seed": 20260701,
    "commits": 5000,  # history commits, before the store commit
    "modules": 100,  # src/mod_NN/
    "files_per_module": 20,  # src/mod_NN/file_MMM.py at the start; a few more are added over time
    "anchors": 50,
    "entries_small": 1000,
    "entries_large": 2000,
    "start_epoch": 1719792000,  # 2024-07-01T00:00:00Z
    "commit_spacing_s": 12600,  # 3.5 h: 5,000 commits span ~2 years
}
TODAY = "2026-07-01"  # MEMZOI_TODAY for every run: ttl_expired is reproducible
STORE_DIR = "agent-memory"

TARGETS = {
    "warm_over_baseline": 0.40,  # warm status ≤ 0.40 × the git CLI baseline (issue 17)
    "cold_over_baseline": 1.0,  # cold status (parse cache deleted) ≤ 1.0 × the baseline (issue 17, "Cold status")
    "doubling_increase": 0.20,  # 2,000 entries vs 1,000 at fixed anchors: < 20 % more wall time
    "help_ms": 40.0,  # git-memkeep --help (issue 17, "Start-up")
    "warm_1k_ms": 100.0,  # warm status at 1,000 entries, absolute (issue 17, "Start-up")
}

ROOT_FILES = (
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "Makefile",
    "README.md",
    "config/app.toml",
    "config/db.toml",
    "config/logging.toml",
    ".github/workflows/ci.yml",
)


# --------------------------------------------------------------------------------------------------------------
# Environment


def hermetic_env(home: Path) -> dict[str, str]:
    """The environment every git / git-memkeep subprocess gets: no user or system git config, pinned today."""
    drop = ("GIT_", "MEMKEEP_", "MEMZOI_", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "PYTHONPROFILEIMPORTTIME")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    home.mkdir(parents=True, exist_ok=True)
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n"
        "[advice]\n\tdetachedHead = false\n[gc]\n\tauto = 0\n"
    )
    venv_bin = str(Path(sys.executable).parent)
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": str(gitconfig),
            "MEMZOI_TODAY": TODAY,
            "PATH": venv_bin + os.pathsep + env.get("PATH", ""),
            "LC_ALL": "C",
            # Installed packages run from bytecode; keep the .pyc files of this run out of the source tree.
            "PYTHONPYCACHEPREFIX": str(home.parent / "pycache"),
        }
    )
    return env


def git(env: dict[str, str], cwd: Path, *args: str, stdin: bytes | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, input=stdin, capture_output=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"bench: git {' '.join(args[:3])} failed in {cwd}:\n{proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode()


def cpu_times() -> list[int] | None:
    """The machine's CPU time counters since boot (``/proc/stat``'s first line: user, nice, system, idle, iowait,
    irq, softirq, steal, in clock ticks), or ``None`` where there is no such file."""
    try:
        first = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    return [int(x) for x in first[1:9]] if len(first) >= 9 and first[0] == "cpu" else None


def machine_note(start: list[int] | None) -> str:
    """The closing line of a bench: the load average, and the share of CPU time the hypervisor took from this
    virtual machine since ``start`` (:func:`cpu_times`). At 30 % stolen, every timing above is slower by about
    as much, whatever the load average says."""
    note = f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores; quiet is < 0.5)"
    end = cpu_times()
    if start is not None and end is not None and (total := sum(end) - sum(start)) > 0:
        note += f"; CPU stolen by the hypervisor during the run: {100 * (end[7] - start[7]) / total:.0f} %"
    return note


def installed_memkeep() -> str:
    """``git-memkeep`` from a regular (non-editable) install in ``out/venv`` with the ``mcp`` extra: what a user runs.

    The development venv's editable install adds an import finder that costs ~12 ms at every start, which
    no user pays. The copy is refreshed from the working tree on every bench run.
    """
    project = Path(__file__).resolve().parents[2]
    venv = OUT / "venv"
    python = venv / "bin" / "python"
    quiet = {"stdout": subprocess.DEVNULL, "check": True}
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], **quiet)  # type: ignore[arg-type]
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"{project}[mcp]"], **quiet)  # type: ignore[arg-type]
    else:
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(project)], **quiet
        )  # type: ignore[arg-type]
        # a dependency added since the venv was made (installed once; a satisfied one costs a resolve only); the
        # mcp extra for mcp_server.py, which a hook-only install leaves out
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"{project}[mcp]"], **quiet)  # type: ignore[arg-type]
    return str(venv / "bin" / "git-memkeep")


def find_memkeep() -> str:
    """``git-memkeep`` next to this interpreter (the project venv), else on PATH."""
    local = Path(sys.executable).parent / "git-memkeep"
    if local.exists():
        return str(local)
    found = shutil.which("git-memkeep")
    if not found:
        raise SystemExit("bench: git-memkeep not found; run `make .venv/.installed` first")
    return found


# --------------------------------------------------------------------------------------------------------------
# Repository generation


def _stamp() -> str:
    source = json.dumps({"v": GENERATOR_VERSION, **PARAMS}, sort_keys=True).encode()
    return hashlib.sha256(source).hexdigest()[:16]


def _file_text(path: str, rev: int) -> bytes:
    """Deterministic content of ``path`` at its ``rev``-th version (~20 lines, a few hundred bytes)."""
    seed = int.from_bytes(hashlib.blake2b(f"{path}:{rev}".encode(), digest_size=4).digest(), "big")
    if path.endswith(".py"):
        name = path.rsplit("/", 1)[-1][:-3]
        lines = [f'"""{path} (revision {rev})."""', "", "from __future__ import annotations", ""]
        for k in range(4):
            lines += [f"def {name}_{k}(x: int) -> int:", f"    return x * {(seed >> k) % 97 + k} + {rev}", ""]
        return ("\n".join(lines) + "\n").encode()
    if path.endswith(".md"):
        return f"# {path}\n\nRevision {rev}. Notes {seed % 10007}.\n\n- item {seed % 13}\n- item {rev % 7}\n".encode()
    return f'# {path}\n# revision {rev}\nkey_{seed % 17} = {rev}\nvalue = "{seed:08x}"\n'.encode()


class History:
    """The plan of the 5,000-commit history: which files each commit touches (seeded, pure Python)."""

    def __init__(self, rng: random.Random) -> None:
        n, mods, per = PARAMS["commits"], PARAMS["modules"], PARAMS["files_per_module"]
        self.module_files: list[list[str]] = [
            [f"src/mod_{m:02d}/file_{f:03d}.py" for f in range(per)] for m in range(mods)
        ]
        self.initial = [p for files in self.module_files for p in files]
        self.initial += [f"docs/mod_{m:02d}.md" for m in range(mods)] + ["docs/index.md", *ROOT_FILES]
        # Each module is worked on during a window of the history (a few "core" modules all along), so a
        # claim anchored after a module went quiet holds: the suspect set is a realistic mix, not everything.
        self.windows = []
        for m in range(mods):
            if m < 8:
                self.windows.append((0, n, 3.0))
            else:
                start = rng.randint(0, int(n * 0.75))
                end = min(n, start + int(n * rng.uniform(0.05, 0.45)))
                self.windows.append((start, end, rng.uniform(0.5, 2.0)))
        self.commits: list[tuple[str, list[str]]] = []  # (message, paths written) for commits 1..n-1
        for i in range(1, n):
            active = [m for m, (s, e, _) in enumerate(self.windows) if s <= i < e] or list(range(8))
            m = rng.choices(active, weights=[self.windows[a][2] for a in active])[0]
            files = self.module_files[m]
            touched: set[str] = set()
            for _ in range(rng.choice((1, 1, 2, 2, 2, 3, 3, 4, 5))):
                touched.add(files[min(len(files) - 1, int(len(files) * rng.random() ** 2.2))])
            if rng.random() < 0.15:
                touched.add(f"docs/mod_{m:02d}.md")
            if rng.random() < 0.01:  # a new file in the module
                new = f"src/mod_{m:02d}/file_{len(files):03d}.py"
                files.append(new)
                touched.add(new)
            if rng.random() < 0.02:  # root config
                touched.add(rng.choice(ROOT_FILES))
            if rng.random() < 0.03:  # a cross-cutting fix anywhere
                touched.add(rng.choice(self.module_files[rng.randrange(mods)]))
            self.commits.append((f"mod_{m:02d}: change {i}", sorted(touched)))


def _fast_import_stream(history: History) -> bytes:
    """One ``git fast-import`` stream: commit 1 adds every file, commits 2..n modify a few (marks :1..:n)."""
    revs: dict[str, int] = {}
    chunks: list[bytes] = []
    t0, step = PARAMS["start_epoch"], PARAMS["commit_spacing_s"]

    def commit(mark: int, message: str, paths: list[str]) -> None:
        when = t0 + (mark - 1) * step
        msg = message.encode()
        chunks.append(b"commit refs/heads/main\nmark :%d\n" % mark)
        chunks.append(b"author Bench <bench@example.com> %d +0000\n" % when)
        chunks.append(b"committer Bench <bench@example.com> %d +0000\n" % when)
        chunks.append(b"data %d\n%s\n" % (len(msg), msg))
        if mark > 1:
            chunks.append(b"from :%d\n" % (mark - 1))
        for path in paths:
            revs[path] = revs.get(path, -1) + 1
            data = _file_text(path, revs[path])
            chunks.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))

    commit(1, "initial import", history.initial)
    for i, (message, paths) in enumerate(history.commits, start=2):
        commit(i, message, paths)
    chunks.append(b"done\n")
    return b"".join(chunks)


_NUMERIC = re.compile(r"^[0-9]+([eE][0-9]+)?$")


def _entry_text(n: int, rng: random.Random, anchor: tuple[str, dt.date], history: History, prior: int) -> str:
    """One realistic, lint-clean entry: 1–3 scope globs, evidence, sometimes ttl_days / explains / check."""
    sha, day = anchor
    mods = PARAMS["modules"]
    m = rng.randrange(mods)
    mod = f"mod_{m:02d}"
    files = history.module_files[m]
    target = files[min(len(files) - 1, int(len(files) * rng.random() ** 1.5))]
    kind = rng.random()
    if kind < 0.35:
        scope = [target]
    elif kind < 0.65:
        scope = [f"src/{mod}/**"]
    elif kind < 0.75:
        scope = [f"src/{mod}/file_00*.py"]
    elif kind < 0.85:
        scope = [f"src/{mod}/", f"!src/{mod}/file_019.py"]
    else:
        other = rng.randrange(mods)
        scope = [target, f"src/mod_{other:02d}/file_{rng.randrange(20):03d}.py"]
    if rng.random() < 0.3 and len(scope) < 3:
        scope.append(f"docs/{mod}.md")
    if rng.random() < 0.08 and len(scope) < 3:  # unanchored: matches at any depth
        scope.append(rng.choice(("*.toml", "Makefile", "*.cfg", "tox.ini")))
    entry_type = rng.choices(("fact", "gotcha", "recipe", "topology"), weights=(50, 20, 15, 15))[0]
    status = rng.choices(("verified", "observed", "inferred", "stale"), weights=(70, 20, 8, 2))[0]
    written = day - dt.timedelta(days=rng.randrange(0, 40))
    entry_id = f"bench-{n:04d}-{mod.replace('_', '')}-{entry_type}"
    anchor_text = sha if rng.random() < 0.9 else sha[:12]
    if _NUMERIC.match(anchor_text):
        anchor_text = f'"{anchor_text}"'
    lines = [
        "---",
        "schema_version: 1",
        f"id: {entry_id}",
        f"type: {entry_type}",
        f"status: {status}",
        f"written_at: {written.isoformat()}",
        f"verified_at: {day.isoformat()}",
        f"anchor: {anchor_text}",
        "scope:",
        *(f"  - {s!r}" if s.startswith(("!", "*")) else f"  - {s}" for s in scope),
        "evidence: |",
        f"  Read {target} at {sha[:12]}: the behaviour is encoded in {target.rsplit('/', 1)[-1]}",
        f"  and exercised by tests/{mod}/test_{rng.randrange(20):03d}.py (ran green on {day.isoformat()}).",
    ]
    if status == "inferred":
        lines.append(f"ttl_days: {rng.choice((14, 30))}")
    elif rng.random() < 0.1:
        lines.append(f"ttl_days: {rng.choice((30, 90, 180))}")
    if prior and rng.random() < 0.1:
        deps = sorted({rng.randrange(1, prior + 1) for _ in range(rng.choice((1, 2)))})
        lines.append("explains:")
        lines += [f"  - {{{d}}}" for d in deps]  # placeholders: resolved to ids by the caller
    if rng.random() < 0.2:
        lines += ["check:", f"  run: python -m pytest tests/{mod} -q", "  safe: true", "  timeout_s: 300"]
    claim = (
        f"{mod} {rng.choice(('keeps', 'caches', 'validates', 'retries', 'serialises'))} "
        f"{rng.choice(('requests', 'tokens', 'rows', 'events', 'paths'))} in {target.rsplit('/', 1)[-1]} "
        f"before returning (rule {n})."
    )
    body = [
        "---",
        claim,
        "",
        f"Context: `{target}` is the entry point; callers in `src/{mod}/` rely on it. The behaviour was",
        "confirmed by reading the code and running the module's tests. If the function signature or the",
        "ordering of its side effects changes, this claim needs re-verification.",
        "",
        f"Related: docs/{mod}.md, the module README, and the incident notes from {day.strftime('%B %Y')}.",
        "",
    ]
    return "\n".join(lines + body)


def _entries(history: History, anchors: list[tuple[str, dt.date]], count: int, seed: int) -> dict[str, str]:
    """``count`` entries as {file name: text}; entries 1..k are identical for every ``count`` (superset)."""
    out: dict[str, str] = {}
    ids: list[str] = []
    for n in range(1, count + 1):
        rng = random.Random(seed * 100_003 + n)
        text = _entry_text(n, rng, anchors[rng.randrange(len(anchors))], history, n - 1)
        entry_id = re.search(r"^id: (.+)$", text, re.M).group(1)  # type: ignore[union-attr]
        text = re.sub(r"\{(\d+)\}", lambda m: ids[int(m.group(1)) - 1], text)
        ids.append(entry_id)
        out[f"{entry_id}.md"] = text
    return out


def generate(env: dict[str, str], memkeep: str) -> dict[str, object]:
    """Build ``out/repo-1k`` and ``out/repo-2k``; returns the metadata written to ``out/meta.json``."""
    started = time.perf_counter()
    rng = random.Random(PARAMS["seed"])
    history = History(rng)
    for name in ("repo-base", "repo-1k", "repo-2k", "meta.json", "results.json"):
        target = OUT / name
        shutil.rmtree(target, ignore_errors=True) if target.is_dir() else target.unlink(missing_ok=True)
    base = OUT / "repo-base"
    base.mkdir(parents=True)
    git(env, base, "init", "-q", "-b", "main")
    marks = OUT / "marks.txt"
    git(env, base, "fast-import", "--quiet", f"--export-marks={marks}", stdin=_fast_import_stream(history))
    mark_to_sha = dict(line.split() for line in marks.read_text().splitlines())
    marks.unlink()
    git(env, base, "gc", "-q")  # one pack + commit-graph, as a maintained repository has
    n = PARAMS["commits"]
    t0, step = PARAMS["start_epoch"], PARAMS["commit_spacing_s"]
    # 50 anchors spread over the history: one per stratum of 100 commits, at a seeded position inside it.
    stride = (n - 1) / PARAMS["anchors"]
    positions = sorted({2 + int((k + rng.random()) * stride) for k in range(PARAMS["anchors"])})
    positions = [min(p, n) for p in positions]
    anchors = [(mark_to_sha[f":{p}"], dt.datetime.fromtimestamp(t0 + (p - 1) * step, dt.UTC).date()) for p in positions]
    assert len({a for a, _ in anchors}) == PARAMS["anchors"], "anchors must be distinct"
    store_time = t0 + n * step
    for name, count in (("repo-1k", PARAMS["entries_small"]), ("repo-2k", PARAMS["entries_large"])):
        repo = OUT / name
        git(env, OUT, "clone", "-q", "--no-hardlinks", str(base), str(repo))
        git(env, repo, "remote", "remove", "origin")
        entries_dir = repo / STORE_DIR / "entries"
        entries_dir.mkdir(parents=True)
        for file_name, text in _entries(history, anchors, count, PARAMS["seed"]).items():
            (entries_dir / file_name).write_text(text, encoding="utf-8")
        subprocess.run([memkeep, "-C", str(repo), "index"], env=env, capture_output=True, check=True)
        git(env, repo, "add", STORE_DIR)
        commit_env = {**env, "GIT_AUTHOR_DATE": f"@{store_time} +0000", "GIT_COMMITTER_DATE": f"@{store_time} +0000"}
        git(commit_env, repo, "commit", "-q", "-m", f"memory: add {count} entries")
        git(env, repo, "gc", "-q")
    shutil.rmtree(base)
    files_at_head = len(git(env, OUT / "repo-1k", "ls-files").splitlines())
    meta = {
        "stamp": _stamp(),
        "params": PARAMS,
        "commits": int(git(env, OUT / "repo-1k", "rev-list", "--count", "HEAD")),
        "files_at_head": files_at_head,
        "source_files": files_at_head - PARAMS["entries_small"] - 1,
        "anchors": [a for a, _ in anchors],
        "anchor_positions": positions,
        "heads": {name: git(env, OUT / name, "rev-parse", "HEAD").strip() for name in ("repo-1k", "repo-2k")},
        "generate_s": round(time.perf_counter() - started, 2),
    }
    (OUT / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def ensure_repos(env: dict[str, str], memkeep: str, regenerate: bool) -> tuple[dict[str, object], bool]:
    meta_path = OUT / "meta.json"
    if not regenerate and meta_path.is_file() and all((OUT / r / ".git").is_dir() for r in ("repo-1k", "repo-2k")):
        try:
            meta = json.loads(meta_path.read_text())
        except ValueError:
            meta = {}
        if meta.get("stamp") == _stamp():
            return meta, False
    print("bench: generating the benchmark repositories (once; cached in evals/bench/out/) ...", flush=True)
    return generate(env, memkeep), True


# --------------------------------------------------------------------------------------------------------------
# Measurement


def timed(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - start, proc


def status_cmd(memkeep: str, repo: Path) -> list[str]:
    return [memkeep, "-C", str(repo), "status", "--json"]


def check_status(proc: subprocess.CompletedProcess) -> dict:
    if proc.returncode not in (0, 1):
        raise SystemExit(f"bench: status exited {proc.returncode}:\n{proc.stderr.decode(errors='replace')}")
    return json.loads(proc.stdout)


def run_status(
    memkeep: str, repo: Path, env: dict[str, str], *, cold: bool, recompute: bool = False
) -> tuple[float, dict]:
    """One ``status --json`` run; ``cold`` deletes the derived caches first, ``recompute`` only the status result
    cache (git_memzoi/memkeep/status_cache.py): the parse cache serves every entry, the suspect set is computed
    again, as after a commit."""
    cache = repo / ".git" / "memzoi" / "cache"
    if cold:
        shutil.rmtree(cache, ignore_errors=True)
    elif recompute:
        for answer in cache.glob("status-*.pickle"):
            answer.unlink()
    elapsed, proc = timed(status_cmd(memkeep, repo), env)
    return elapsed, check_status(proc)


def run_baseline(repo: Path, anchors: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Total wall time of ``git diff --name-only <anchor> HEAD`` for every distinct anchor, sequentially."""
    start = time.perf_counter()
    paths = 0
    for anchor in anchors:
        proc = subprocess.run(
            ["git", "diff", "--name-only", anchor, "HEAD"], cwd=repo, env=env, capture_output=True, check=True
        )
        paths += proc.stdout.count(b"\n")
    return time.perf_counter() - start, paths


def measure(
    memkeep: str, repos: dict[str, Path], anchors: list[str], env: dict[str, str], runs: dict[str, int]
) -> tuple[dict[str, list[float]], dict[str, dict], int]:
    """Interleave the measurements round by round, so drift in machine load hits every series alike.

    A cold run rewrites the parse cache, so the warm run of the next round is warm again. Each round's two warm
    runs are a pair taken seconds apart: their ratio cancels the load of that moment (see :func:`paired`).
    """
    names = ("warm_1k", "warm_2k", "recompute_1k", "cold_1k", "cold_2k", "baseline", "help", "floor")
    series: dict[str, list[float]] = {k: [] for k in names}
    payloads: dict[str, dict] = {}
    for _name, repo in repos.items():  # warm-up: fills parse caches, bytecode caches and the page cache
        run_status(memkeep, repo, env, cold=False)
    run_baseline(repos["1k"], anchors, env)
    timed([memkeep, "--help"], env)
    wanted = {"warm": runs["warm"], "cold": runs["cold"], "baseline": runs["baseline"], "help": runs["help"]}
    for round_no in range(max(wanted.values())):
        # the two stores in alternating order (ABBA...), so neither always runs right after the other's output
        for size, repo in repos.items() if round_no % 2 == 0 else reversed(repos.items()):
            if round_no < wanted["warm"]:
                elapsed, payloads[size] = run_status(memkeep, repo, env, cold=False)
                series[f"warm_{size}"].append(elapsed)
            if round_no < wanted["cold"]:
                elapsed, _ = run_status(memkeep, repo, env, cold=True)
                series[f"cold_{size}"].append(elapsed)
            if round_no < wanted["cold"] and size == "1k":
                elapsed, _ = run_status(memkeep, repo, env, cold=False, recompute=True)
                series["recompute_1k"].append(elapsed)
        if round_no < wanted["baseline"]:
            elapsed, paths = run_baseline(repos["1k"], anchors, env)
            series["baseline"].append(elapsed)
        if round_no < wanted["help"]:
            series["help"].append(timed([memkeep, "--help"], env)[0])
            series["floor"].append(timed([str(Path(memkeep).parent / "python"), "-c", "pass"], env)[0])
    return series, payloads, paths


def paired(small: list[float], large: list[float]) -> float:
    """The median over rounds of ``large[i] / small[i] - 1``: the doubling figure with each round's machine load
    cancelled, which a ratio of two medians does not do when the load drifts between rounds."""
    return statistics.median(b / a - 1 for a, b in zip(small, large, strict=True))


def summary(payload: dict) -> dict:
    s = payload.get("summary", {})
    return {"entries": s.get("entries"), "suspect": s.get("suspect"), "verdicts": s.get("verdicts")}


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def profile_warm(repo: Path, env: dict[str, str]) -> None:
    """cProfile one warm ``status --json`` in-process; prints the top of the cumulative-time table."""
    prof = OUT / "status.prof"
    code = (
        "import sys, cProfile, pstats, io\n"
        "from git_memzoi.cli.memkeep import cli\n"
        f"sys.argv = ['git-memkeep', '-C', {str(repo)!r}, 'status', '--json']\n"
        "p = cProfile.Profile(); p.enable()\n"
        "try:\n    cli(prog_name='git-memkeep', standalone_mode=False)\nexcept SystemExit: pass\n"
        "p.disable()\n"
        f"p.dump_stats({str(prof)!r})\n"
    )
    subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=False)
    import pstats

    stats = pstats.Stats(str(prof))
    stats.sort_stats("cumulative").print_stats(30)
    print(f"bench: profile written to {prof} (open with `python -m pstats` or snakeviz)")


def main(argv: list[str] | None = None) -> int:
    started = cpu_times()  # for the closing line's share of stolen CPU
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--regenerate", action="store_true", help="rebuild the benchmark repositories")
    parser.add_argument("--runs-warm", type=int, default=31)
    parser.add_argument("--runs-cold", type=int, default=5)
    parser.add_argument("--runs-baseline", type=int, default=5)
    parser.add_argument("--runs-help", type=int, default=7)
    parser.add_argument("--profile", action="store_true", help="also cProfile one warm status run")
    parser.add_argument("--editable", action="store_true", help="measure the development venv's editable install")
    args = parser.parse_args(argv)

    OUT.mkdir(parents=True, exist_ok=True)
    env = hermetic_env(OUT / "home")
    memkeep = find_memkeep() if args.editable else installed_memkeep()
    print(f"bench: measuring {memkeep}")
    meta, generated = ensure_repos(env, memkeep, args.regenerate)
    repo1, repo2 = OUT / "repo-1k", OUT / "repo-2k"
    anchors = list(meta["anchors"])  # type: ignore[arg-type]
    if generated:
        print(
            f"bench: generated {meta['commits']} commits, {meta['files_at_head']} files at HEAD "
            f"in {meta['generate_s']} s"
        )

    runs = {"warm": args.runs_warm, "cold": args.runs_cold, "baseline": args.runs_baseline, "help": args.runs_help}
    series, payloads, base_paths = measure(memkeep, {"1k": repo1, "2k": repo2}, anchors, env, runs)
    warm1, cold1, warm2, cold2 = (series[k] for k in ("warm_1k", "cold_1k", "warm_2k", "cold_2k"))
    base, helps = series["baseline"], series["help"]
    pay1, pay2 = payloads["1k"], payloads["2k"]

    med = statistics.median
    s1, s2 = summary(pay1), summary(pay2)
    results = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "git": subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip(),
        },
        "repo": {k: meta[k] for k in ("commits", "files_at_head", "source_files")} | {"anchors": len(anchors)},
        "memkeep": memkeep,
        "runs": runs,
        "ms": {
            "status_warm_1k": ms(med(warm1)),
            "status_cold_1k": ms(med(cold1)),
            "status_warm_2k": ms(med(warm2)),
            "status_cold_2k": ms(med(cold2)),
            "status_recompute_1k": ms(med(series["recompute_1k"])),
            "baseline_git_diff_50": ms(med(base)),
            "help": ms(med(helps)),
            "python_floor": ms(med(series["floor"])),
        },
        "samples_ms": {
            "status_warm_1k": [ms(t) for t in warm1],
            "status_cold_1k": [ms(t) for t in cold1],
            "status_warm_2k": [ms(t) for t in warm2],
            "status_cold_2k": [ms(t) for t in cold2],
            "status_recompute_1k": [ms(t) for t in series["recompute_1k"]],
            "baseline_git_diff_50": [ms(t) for t in base],
            "help": [ms(t) for t in helps],
            "python_floor": [ms(t) for t in series["floor"]],
        },
        "status_1k": s1,
        "status_2k": s2,
        "baseline_paths_listed": base_paths,
    }
    ratios = {
        "warm_over_baseline": med(warm1) / med(base),
        "cold_over_baseline": med(cold1) / med(base),
        "doubling_increase_warm": paired(warm1, warm2),
        "doubling_increase_warm_of_medians": med(warm2) / med(warm1) - 1,
        "doubling_increase_warm_of_minimums": min(warm2) / min(warm1) - 1,
        "doubling_increase_cold": paired(cold1, cold2),
    }
    results["ratios"] = {k: round(v, 3) for k, v in ratios.items()}
    sane = isinstance(s1["suspect"], int) and 0 < s1["suspect"] < s1["entries"]
    checks = {
        "warm_over_baseline": ratios["warm_over_baseline"] <= TARGETS["warm_over_baseline"],
        "cold_over_baseline": ratios["cold_over_baseline"] <= TARGETS["cold_over_baseline"],
        "doubling_increase": ratios["doubling_increase_warm"] < TARGETS["doubling_increase"],
        "help_ms": results["ms"]["help"] < TARGETS["help_ms"],
        "warm_1k_ms": results["ms"]["status_warm_1k"] <= TARGETS["warm_1k_ms"],
        "suspect_sanity": sane,
    }
    results["targets"] = TARGETS
    results["pass"] = checks
    (OUT / "results.json").write_text(json.dumps(results, indent=2) + "\n")

    r = results["ms"]
    low = {k: min(v) for k, v in results["samples_ms"].items()}
    rows = [
        ("status --json, warm, 1,000 entries", "status_warm_1k", f"{s1['suspect']} suspect / {s1['entries']}"),
        ("status --json, cold, 1,000 entries", "status_cold_1k", "parse cache deleted before each run"),
        ("status --json, warm, 2,000 entries", "status_warm_2k", f"{s2['suspect']} suspect / {s2['entries']}"),
        ("status --json, cold, 2,000 entries", "status_cold_2k", ""),
        ("status --json, recomputed, 1,000", "status_recompute_1k", "parse cache warm, result cache deleted"),
        (f"git diff --name-only × {len(anchors)} anchors", "baseline_git_diff_50", f"{base_paths} paths listed"),
        ("git-memkeep --help", "help", ""),
        ("python -c pass (the floor)", "python_floor", "this machine's interpreter start"),
    ]
    print(
        f"\nrepo: {meta['commits']} commits, {meta['files_at_head']} files at HEAD, {len(anchors)} anchors "
        f"(medians; warm n={args.runs_warm}, cold n={args.runs_cold}, baseline n={args.runs_baseline})\n"
    )
    print(f"  {'measurement':<38} {'median ms':>10} {'min ms':>8}  note")
    for label, key, note in rows:
        print(f"  {label:<38} {r[key]:>10.1f} {low[key]:>8.1f}  {note}")
    print()
    verdict = {True: "PASS", False: "FAIL"}
    print(
        f"  {verdict[checks['warm_over_baseline']]}  warm / baseline = {ratios['warm_over_baseline']:.2f}"
        f"  (target ≤ {TARGETS['warm_over_baseline']})"
    )
    print(
        f"  {verdict[checks['cold_over_baseline']]}  cold / baseline = {ratios['cold_over_baseline']:.2f}"
        f"  (target ≤ {TARGETS['cold_over_baseline']})"
    )
    print(
        f"  {verdict[checks['doubling_increase']]}  2,000 vs 1,000 entries (warm, median of paired rounds) = "
        f"{ratios['doubling_increase_warm']:+.1%}  (target < +{TARGETS['doubling_increase']:.0%})"
    )
    print(
        f"  info  2,000 vs 1,000 entries: ratio of medians {ratios['doubling_increase_warm_of_medians']:+.1%}, "
        f"of minimums {ratios['doubling_increase_warm_of_minimums']:+.1%}; cold (paired) "
        f"{ratios['doubling_increase_cold']:+.1%}"
    )
    # the doubling ratio alone hides a large fixed cost: the two sizes give both parts of a line
    per_entry = (r["status_warm_2k"] - r["status_warm_1k"]) / 1000
    fixed = r["status_warm_1k"] - 1000 * per_entry
    print(
        f"  {verdict[checks['warm_1k_ms']]}  warm status at 1,000 entries = {r['status_warm_1k']:.1f} ms"
        f"  (target ≤ {TARGETS['warm_1k_ms']:.0f} ms): fixed ≈ {fixed:.1f} ms + {per_entry * 1000:.1f} µs an entry"
    )
    print(f"  {verdict[checks['help_ms']]}  --help = {r['help']:.1f} ms  (target < {TARGETS['help_ms']:.0f} ms)")
    print(f"  {verdict[sane]}  suspect sanity: 0 < {s1['suspect']} < {s1['entries']}")
    print(f"  {machine_note(started)}")
    print(f"\nbench: results written to {OUT / 'results.json'}")
    if args.profile:
        profile_warm(repo1, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
