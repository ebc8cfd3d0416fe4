"""The derived caches of the pygit2 view (io): ancestry answers and tree-diff segments, kept as JSON under
``<git dir>/memzoi/cache/``.

Both hold facts that never change once true (a commit an ancestor of another, the diff between two trees), so a
cache written by an earlier HEAD stays valid; one that cannot be read, or was written by another version of the
tool, is ignored and rewritten. Writing is best effort: a cache not written only costs time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from git_memzoi import __version__

# the segment cache's format: 2 spells each side as ``<blob>:<mode>`` (1 kept blob ids only and missed a mode
# change when the chain passed through a commit without the file)
SEGMENTS_VERSION = 2


def read_segments(path: Path) -> dict[str, list[str]]:
    """The cached segment diffs, ``"older newer" → [path, old blob, new blob, ...]``; nothing when unreadable or
    written by another version of the tool (which may spell paths differently)."""
    try:
        data = _load(path)
        segments = data["segments"] if data["version"] == SEGMENTS_VERSION and data["tool"] == __version__ else {}
        kept = {k: v for k, v in segments.items() if type(v) is list and len(v) % 3 == 0}
    except (OSError, ValueError, LookupError, TypeError, AttributeError):
        return {}
    if not all(isinstance(item, str) for flat in kept.values() for item in flat):
        return {}  # a non-string inside: the whole file is foreign
    return kept


def write_segments(path: Path, segments: dict[str, list[str]]) -> None:
    """Replace the segment cache ``path`` with ``segments``, stamped with this tool's version."""
    write_cache(path, {"version": SEGMENTS_VERSION, "tool": __version__, "segments": segments})


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
