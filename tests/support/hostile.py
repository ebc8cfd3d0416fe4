"""Hostile inputs of issue 13 ("Hangs"), shared by the tests of every reader: the YAML alias bomb, deep nesting,
oversized texts, and FIFOs that cannot hang a test.

A FIFO is only ever made in ``tmp_path``. :func:`fifo` arms a watchdog that opens the other end after
:data:`FIFO_GRACE_S`: a reader (or writer) that blocked on it is released and the test fails on ``fired``, instead
of hanging. :func:`hard_deadline` is the last resort for code that could spin without a FIFO (an expanding alias
bomb): faulthandler prints every thread's stack and ends the process.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

FIFO_GRACE_S = 20.0
HARD_DEADLINE_S = 240.0


def bomb() -> str:
    """The 10-line "billion laughs" YAML of the drill: nine references per level, 9**9 values once expanded."""
    lines = ["lol0: &a0 [l, l, l, l, l, l, l, l, l]"]
    lines += [f"lol{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 10)]
    return "\n".join(lines) + "\n"


def deep_flow(levels: int = 1000) -> str:
    """``k: [[[…]]]``: ``levels`` nested flow sequences on one line (1,000 took the drill 83 s)."""
    return "k: " + "[" * levels + "]" * levels + "\n"


def deep_block(levels: int = 200) -> str:
    """``levels`` nested block mappings, two spaces deeper each."""
    return "".join("  " * n + f"k{n}:\n" for n in range(levels)) + "  " * levels + "v: 1\n"


def frontmatter(yaml: str, body: str = "A claim.\n") -> str:
    """A Markdown file whose frontmatter block is ``yaml``."""
    return f"---\n{yaml}---\n{body}"


# kind of hostile file → (what to write under a file's own first frontmatter line, the code it is refused with)
KINDS = {
    "bomb": "yaml_too_complex",
    "deep": "yaml_too_complex",
    "huge": "file_too_large",
    "fifo": "not_a_regular_file",
}


def plant(path: Path, kind: str, head: str = "id: hostile\n") -> None:
    """Write a hostile memory file of ``kind`` (a key of :data:`KINDS` but ``fifo``) at ``path``: ``head`` then
    the bomb or the nesting in its frontmatter, or a 300 KB body (over every 256 KiB cap)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    yaml = {"bomb": head + "# hand-written\n" + bomb(), "deep": head + deep_flow(), "huge": head}[kind]
    path.write_text(frontmatter(yaml, "x" * 300_000 + "\n" if kind == "huge" else "A claim.\n"), encoding="utf-8")


def deep_json(levels: int = 100_000) -> str:
    """A JSON array nested ``levels`` deep."""
    return "[" * levels + "]" * levels


@dataclass
class Fifo:
    """A FIFO at ``path`` and whether its watchdog had to release a blocked end (the test then failed)."""

    path: Path
    fired: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        """Open both ends without blocking, once, so a blocked open() or read() returns."""
        self.fired = True
        for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
            with contextlib.suppress(OSError):
                os.close(os.open(self.path, flags))


@contextlib.contextmanager
def fifo(path: Path, grace_s: float = FIFO_GRACE_S) -> Iterator[Fifo]:
    """Make a FIFO at ``path`` (inside ``tmp_path``) with a watchdog; yields it, removes it afterwards."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    made = Fifo(path)

    def watch() -> None:
        if not made._stop.wait(grace_s):
            made.release()

    watchdog = threading.Thread(target=watch, daemon=True)
    watchdog.start()
    try:
        yield made
    finally:
        made._stop.set()
        watchdog.join()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


@contextlib.contextmanager
def hard_deadline(seconds: float = HARD_DEADLINE_S) -> Iterator[None]:
    """End the whole test process, stacks printed, if the block runs longer than ``seconds``."""
    faulthandler.dump_traceback_later(seconds, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
