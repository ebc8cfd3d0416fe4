"""The derived caches of the pygit2 view (io): ancestry answers (JSON) and tree-diff segments (marshal), kept
under ``<git dir>/memzoi/cache/``.

Both hold facts that never change once true (a commit an ancestor of another, the diff between two trees), so a
cache written by an earlier HEAD stays valid; one that cannot be read, or was written by another version of the
tool, is ignored and rewritten. Writing is best effort: a cache not written only costs time.
"""

from __future__ import annotations

import contextlib
import marshal
from pathlib import Path
from typing import Any

from git_memzoi import __version__
from git_memzoi.errors import MemzoiError

# the segment cache's format: 2 spells each side as ``<blob>:<mode>`` (1 kept blob ids only and missed a mode
# change when the chain passed through a commit without the file); 3 is marshal, not JSON: reading 1.3 MB of
# JSON and checking its depth took 23 ms of every status after a commit (issue 17), its marshal 2 ms
SEGMENTS_VERSION = 3
SEGMENTS_MAGIC = f"memzoi segments {SEGMENTS_VERSION}\n".encode()
LEGACY_SEGMENTS = "segments.json"  # version 2's file, removed when version 3's is written beside it


def read_segments(path: Path) -> dict[str, list[str]]:
    """The cached segment diffs, ``"older newer" → [path, old blob, new blob, ...]``; nothing when unreadable or
    written by another version of the tool (which may spell paths differently). Like the parse cache, the file is
    trusted as much as the git directory's hooks, and one without :data:`SEGMENTS_MAGIC` is never decoded."""
    from git_memzoi.core import safe_read

    try:
        data = safe_read.read_bytes(path, None)
        if not data.startswith(SEGMENTS_MAGIC):
            return {}
        payload = marshal.loads(memoryview(data)[len(SEGMENTS_MAGIC) :])
        segments = payload["segments"] if payload["tool"] == __version__ else {}
        kept = {k: v for k, v in segments.items() if type(k) is str and type(v) is list and len(v) % 3 == 0}
    except (OSError, ValueError, EOFError, LookupError, TypeError, AttributeError, safe_read.FileRefused):
        return {}
    if not all(type(item) is str for flat in kept.values() for item in flat):
        return {}  # a non-string inside: the whole file is foreign
    return kept


def write_segments(path: Path, segments: dict[str, list[str]]) -> None:
    """Replace the segment cache ``path`` with ``segments``, stamped with this tool's version (equal strings
    shared, so each path is written once however many segments name it)."""
    from git_memzoi.core import atomic
    from git_memzoi.core.parse_cache import share_strings

    data = SEGMENTS_MAGIC + marshal.dumps(share_strings({"tool": __version__, "segments": segments}, {}))
    atomic.write_cache(path, data)
    with contextlib.suppress(OSError, MemzoiError):  # best effort, as the write itself
        atomic.remove_file(path.parent / LEGACY_SEGMENTS, root=path.parent.parent)


def read_ancestry(path: Path) -> tuple[str, set[str]] | None:
    """The ancestry cache ``path``: (the HEAD it was written for, the commit ids known to be its ancestors);
    ``None`` when it cannot be read."""
    try:
        data = _load(path)
        return data["head"], set(data["ancestors"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save_ancestry(path: Path, head: str, ancestors: set[str]) -> None:
    """Write the ancestry cache ``path`` unless it already says exactly this."""
    try:
        data = _load(path)
        if data.get("head") == head and set(data.get("ancestors", ())) == ancestors:
            return
    except (OSError, ValueError, AttributeError):
        pass
    write_cache(path, {"head": head, "ancestors": sorted(ancestors)})


def _load(path: Path) -> Any:
    """The JSON in the cache file ``path``; ``ValueError`` when it is no regular file (a FIFO is never opened) or
    no JSON, ``OSError`` when it cannot be read."""
    from git_memzoi.core import safe_read

    try:
        return safe_read.load_json(safe_read.read_bytes(path, None))
    except safe_read.FileRefused as exc:
        raise ValueError(exc.message) from None


def write_cache(path: Path, data: object) -> None:
    """Replace the derived cache ``path`` with ``data`` as JSON (best effort: a cache not written only costs time)."""
    import json

    from git_memzoi.core import atomic

    atomic.write_cache(path, json.dumps(data).encode("utf-8"))
