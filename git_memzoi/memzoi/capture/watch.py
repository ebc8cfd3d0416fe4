"""The earned envelope of a captured proposal: what its evidence came from, watched (io: checks the tree).

Issue 14 §1: a candidate captured from a git range or a diff is anchored at the range's head and scoped to the
paths its evidence changed (the ``git_change`` location's ``new_path``/``old_path``); a Markdown, ADR or
instruction candidate is anchored at HEAD and scoped to the paths it names — the code spans of its body and
evidence that are files or folders of the working tree, and its ``applies_to`` paths — never to the notes file
itself, whose edits say nothing about the code. A candidate that names no path gets no envelope. The plan and
its ids are untouched: the envelope is built when the proposal is written (:func:`envelope_for`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from git_memzoi.core.patterns import lazy
from git_memzoi.errors import InputError

_CODE_SPAN = lazy(r"`([^`\n]{1,300})`")
_PATHLIKE = lazy(r"^[A-Za-z0-9_][A-Za-z0-9._/-]*$")
_HEAD = lazy(r"^(?:sha1|sha256):([0-9a-f]{40}|[0-9a-f]{64})$")


def envelope_for(root: Path, candidate: Mapping[str, Any], today: Any) -> Mapping[str, Any] | None:
    """The ``memkeep`` envelope of the proposal ``candidate`` (a capture plan candidate) becomes, or ``None``.

    Args:
        root: the repository root (named paths must exist there; HEAD is read from it).
        candidate: ``{"memory": {"scope": {"paths"}, "body"}, "evidence": [{"locator", "text", ...}]}``.
        today: the day the proposal is written (``verified_at``).

    A git range or supplied diff whose head is not a commit of this repository gets no envelope (nothing could
    watch it). Never raises for the candidate's content.
    """
    from git_memzoi.memzoi.records.envelope import WatchRequest, seal

    evidence = [e for e in candidate.get("evidence", []) if isinstance(e, Mapping)]
    sources = {str(e.get("locator", {}).get("path")) for e in evidence if isinstance(e.get("locator"), Mapping)}
    changes = [e["semantic_location"] for e in evidence if _is_change(e.get("semantic_location"))]
    if changes:
        head = _head(changes[0].get("head"))
        paths = sorted({p for c in changes for p in (c.get("new_path"), c.get("old_path")) if isinstance(p, str)})
        if not head or not paths:
            return None
        try:
            return seal(root, WatchRequest(tuple(paths), head), (), today).envelope
        except InputError:  # a supplied diff whose head is not a commit here: no anchor can be recorded
            return None
    memory = candidate.get("memory", {})
    named = [p for p in memory.get("scope", {}).get("paths", []) if isinstance(p, str) and p not in sources]
    texts = [str(memory.get("body", "")), *(str(e.get("text", "")) for e in evidence)]
    named += [p for t in texts for p in _code_paths(t) if p not in sources and _present(root, p)]
    scope = tuple(dict.fromkeys(named))
    return seal(root, WatchRequest(scope), (), today).envelope if scope else None


def _is_change(location: Any) -> bool:
    return isinstance(location, Mapping) and location.get("kind") == "git_change"


def _head(value: Any) -> str | None:
    match = _HEAD.match(value) if isinstance(value, str) else None
    return match.group(1) if match else None


def _code_paths(text: str) -> list[str]:
    """Code spans that read as repository paths: ``src/signer.py``, ``scripts/``, ``Makefile.am``."""
    found = []
    for span in _CODE_SPAN.findall(text):
        clean = span.strip().rstrip("/")
        if _PATHLIKE.match(clean) and ("/" in clean or "." in clean) and ".." not in clean.split("/"):
            found.append(clean)
    return found


def _present(root: Path, path: str) -> bool:
    target = root / path
    return (target.is_file() or target.is_dir()) and not target.is_symlink()
