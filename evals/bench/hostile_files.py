#!/usr/bin/env python3
"""Benchmark the cost to refuse a hostile file (issue 13, "Hangs"): each reader family against each hostile kind.

What it does:

1. Writes, in a temporary folder, one hostile file per kind: the 10-line YAML alias bomb, 1,000 levels of flow
   nesting, 1,000 levels of block nesting (1 MB of indentation), a 10 MB file, and a FIFO.
2. Times each reader on it, in-process, as the commands call them (median of ``--runs`` after one warm-up):
   a memkeep entry (``load_store`` on a store holding only that file), a memzoi record (the index's
   ``read_file``) and a proposal packet (``inventory`` of a memory holding only that packet).
3. Prints PASS/FAIL against the target: every refusal within 50 ms. Before issue 13 the bomb never finished,
   the 1,000 levels took 83 s, and the FIFO blocked forever.

Two rows per reader are reported without a target: the bomb after 250 KiB of text (the file cap is 256 KiB) and
after 4,090 values (the value cap is 4,096). The parser refuses at the first anchor, so these cost what parsing
that much legitimate YAML costs (ruamel's pure-Python round-trip loader: about 1.5 µs a character of scalar and
40 µs a value): the caps bound them; the 50 ms budget is for the constructs themselves.

Always exits 0 (a report), except when set-up fails.

Run: ``make bench`` or ``.venv/bin/python evals/bench/hostile_files.py [--runs 21]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
sys.path.insert(0, str(PROJECT))

from git_memzoi.memkeep.store import Store, StoreConfig, load
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.proposals import files as proposal_files
from git_memzoi.memzoi.recall.index import rows, sources
from tests.support import hostile

TARGET_MS = 50.0


def kinds() -> dict[str, bytes | None]:
    """Kind → the bytes of its file (``None``: a FIFO)."""
    head = "id: hostile\nsensitivity: repo-safe\n# hand-written\n"
    return {
        "alias bomb": hostile.frontmatter(head + hostile.bomb()).encode(),
        "1,000 levels (flow)": hostile.frontmatter(head + hostile.deep_flow(1000)).encode(),
        "1,000 levels (block)": hostile.frontmatter(head + hostile.deep_block(1000)).encode(),
        "10 MB file": hostile.frontmatter(head, "x" * 10_000_000).encode(),
        "FIFO": None,
    }


def worst_cases() -> dict[str, bytes]:
    """Hostile files just under the caps: what parsing that much YAML costs before the first anchor."""
    head = "id: hostile\nsensitivity: repo-safe\n# hand-written\n"
    scalar = 'pad: "' + "x" * (250 * 1024) + '"\n'
    values = "list:\n" + "".join(f"- v{n}\n" for n in range(4090))
    return {
        "250 KiB of text, then the bomb": hostile.frontmatter(head + scalar + hostile.bomb(), "").encode(),
        "4,090 values, then the bomb": hostile.frontmatter(head + values + hostile.bomb(), "").encode(),
    }


def place(path: Path, data: bytes | None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    if data is None:
        os.mkfifo(path)
    else:
        path.write_bytes(data)


def readers(root: Path) -> dict[str, tuple[Path, Callable[[], object]]]:
    """Reader family → (where its hostile file goes, one read of it)."""
    store = Store(root, root / "agent-memory", StoreConfig())
    layout = Layout(root)
    record = root / ".memzoi" / "records" / "hostile.md"
    source = sources.SOURCES[0]
    return {
        "entry": (store.entries_dir / "hostile.md", lambda: load(store)),
        "record": (record, lambda: rows.read_file(source, ".memzoi/records/hostile.md", str(record))),
        "packet": (layout.pending / "hostile.md", lambda: proposal_files.inventory(layout)),
    }


def median_ms(call: Callable[[], object], runs: int) -> float:
    call()  # warm-up: imports and first parse
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    rows_out: list[tuple[str, str, float, bool | None]] = []
    with tempfile.TemporaryDirectory(prefix="memzoi-hostile-") as tmp:
        root = Path(tmp)
        for family, (path, read) in readers(root).items():
            for kind, data in kinds().items():
                place(path, data)
                ms = median_ms(read, args.runs)
                rows_out.append((family, kind, ms, ms <= TARGET_MS))
            for kind, data in worst_cases().items():
                place(path, data)
                rows_out.append((family, kind, median_ms(read, max(3, args.runs // 5)), None))
            path.unlink()
    print(f"cost to refuse one hostile file, median of {args.runs} runs (target <= {TARGET_MS:.0f} ms)")
    print(f"{'reader':8} {'hostile file':30} {'ms':>9}  result")
    for family, kind, ms, ok in rows_out:
        verdict = "report (at the caps)" if ok is None else ("PASS" if ok else "FAIL")
        print(f"{family:8} {kind:30} {ms:9.2f}  {verdict}")
    failed = [r for r in rows_out if r[3] is False]
    print(f"{len(rows_out) - len(failed)} of {len(rows_out)} rows within target or reported; {len(failed)} FAIL")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
