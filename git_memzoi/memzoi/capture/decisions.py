"""The capture decisions reviewers made, remembered by content identity (io; issue 15).

``capture apply`` records each terminal decision (accept, edit, reject) of the review it applies, keyed by the
BLAKE3 content hash of the original candidate's memory (:func:`memory_hash`: type, title and body, wherever in
the source it sits). The next plan over the same content shows a rejected
candidate as ``previously_rejected`` instead of offering it again; a later ``edit`` of it overrides the rejection.
The file lives in the private plane (:attr:`~git_memzoi.memzoi.layout.Layout.capture_decisions`) and holds hashes,
ids and times only, never memory text. A missing or unreadable file is an empty memory, never an error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout
    from git_memzoi.memzoi.workspace import Workspace

SCHEMA = "memzoi/capture-decisions-v1"
TERMINAL = ("accept", "edit", "reject")
MAX_ENTRIES = 10_000  # the oldest decisions are forgotten first
MAX_BYTES = 4 * 1024 * 1024  # 10,000 entries are about 1.9 MB


def memory_hash(memory_type: str, title: str, body: str) -> str:
    """The content identity of a candidate (duplicate matching and remembered decisions): BLAKE3 of type, title
    and trimmed body (``blake3:<hex>``)."""
    from git_memzoi.core.hashing import content_hash

    return content_hash(f"{memory_type}\0{title.strip()}\0{body.strip()}".encode())


def load(layout: Layout) -> dict[str, dict[str, Any]]:
    """Content hash → ``{outcome, review_id, reviewed_at}`` of every remembered decision (``{}`` when none)."""
    from git_memzoi.core import safe_read
    from git_memzoi.errors import MemzoiError

    try:
        data = json.loads(safe_read.read_bytes(layout.capture_decisions, MAX_BYTES))
    except (OSError, ValueError, MemzoiError):  # missing, refused (a FIFO, a link), too large or corrupt
        return {}
    found = data.get("decisions") if isinstance(data, dict) and data.get("schema") == SCHEMA else None
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, dict)}


def record(ws: Workspace, plan: Mapping[str, Any], review: Mapping[str, Any]) -> int:
    """Remember the terminal decisions of ``review`` over ``plan`` (call inside the apply's lifecycle operation,
    so a failed apply forgets them again). Returns how many decisions were recorded."""
    from git_memzoi.memzoi.proposals import lifecycle

    by_id = {c["candidate_id"]: c for c in plan["candidates"]}
    known = load(ws.layout)
    count = 0
    for d in review["decisions"]:
        candidate = by_id.get(d["candidate_id"])
        if candidate is None or d["outcome"] not in TERMINAL or candidate["action"]["kind"] == "blocked":
            continue
        memory = candidate["memory"]
        key = memory_hash(memory["type"], memory["title"], memory["body"])
        known.pop(key, None)  # re-inserted last: the newest decision is forgotten last
        known[key] = {"outcome": d["outcome"], "review_id": review["review_id"], "reviewed_at": review["reviewed_at"]}
        count += 1
    if count:
        kept = dict(list(known.items())[-MAX_ENTRIES:])
        data = json.dumps({"schema": SCHEMA, "decisions": kept}, separators=(",", ":")).encode("utf-8") + b"\n"
        lifecycle.write_step(ws.layout, lifecycle.Step(ws.layout.capture_decisions, data))
    return count
