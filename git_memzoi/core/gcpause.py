"""Pausing the cyclic garbage collector around bulk work (pure: no IO).

A command that builds many long-lived, acyclic objects (parsed entries, changed-path sets, verdicts, a
rebuild's rows) makes every collector pass walk them all again, for nothing: reference counting frees them, and
they hold no cycles. Measured: about a fifth of ``git memkeep status``'s per-entry time, and about 0.5 s of a
50,000-record index rebuild (issue 17).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector inside the block and restore it as it was, whatever happens (a caller
    that had it off keeps it off). Cycles made meanwhile are collected after, by the next pass."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
