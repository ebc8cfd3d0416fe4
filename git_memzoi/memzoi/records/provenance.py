"""Capture provenance as a record keeps it (pure): the compact form (every evidence item without its text) and
the durable ``source_ref`` it names (memzoi-spec.md §9.7). Applying a captured packet and writing a captured
runtime record both use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def capture_ref(capture: Mapping[str, Any]) -> str | None:
    """The durable ``source_ref`` of captured memory: its first evidence item's reference (memzoi-spec.md §9.7):
    the project path, ``supplied:<display_name>@<hash>``, ``git:<repo>@<base>..<head>``, or for git-change
    evidence ``git:<repo>@<base>..<head>:<path>#<hunk>``; ``None`` without evidence."""
    evidence = capture.get("evidence")
    first = evidence[0] if isinstance(evidence, list) and evidence and isinstance(evidence[0], dict) else None
    locator = first.get("locator") if first else None
    if first is None or not isinstance(locator, dict):
        return None
    semantic = first.get("semantic_location")
    where = semantic if isinstance(semantic, dict) else {}
    if where.get("kind") == "git_change":
        path = where.get("new_path") or where.get("old_path")
        return f"git:{where.get('repository')}@{where.get('base')}..{where.get('head')}:{path}#{where.get('hunk')}"
    if locator.get("kind") == "supplied_bytes":
        return f"supplied:{locator.get('display_name')}@{first.get('source_content_hash')}"
    if locator.get("kind") == "git_range":
        return f"git:{locator.get('repository')}@{locator.get('base')}..{locator.get('head')}"
    return str(locator.get("path")) if locator.get("path") else None


def compact_capture(capture: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Capture provenance as a record keeps it: every evidence item without its ``text``."""
    if capture is None:
        return None
    compact = dict(capture)
    evidence = compact.get("evidence")
    if isinstance(evidence, list):
        compact["evidence"] = [
            {k: v for k, v in e.items() if k != "text"} if isinstance(e, dict) else e for e in evidence
        ]
    return compact
