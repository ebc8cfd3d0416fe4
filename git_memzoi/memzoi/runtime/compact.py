"""The PreCompact checkpoint (io): before Claude Code compacts the conversation, note what the agent was doing so
the next session's context starts with ``Resuming: …`` (issue 15 "Session end and checkpoints").

The note is the branch and working-tree state (:mod:`~git_memzoi.core.gitview_branch`): the branch, what it
changed since the default branch, what the working tree changed, the last commits. Only when the user opted in
(``--from-transcript`` at install, or ``[session] checkpoint_transcript = true``) does it also read the hook input's
``transcript_path``: the last requests the user typed, from the tail of that JSONL file. The checkpoint is a
session runtime record (:func:`~git_memzoi.memzoi.runtime.checkpoint.add_checkpoint`): private, never committed,
screened for credentials; a transcript excerpt holding one is left out (the note says so) and the working-tree
note is written alone.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import InputError

if TYPE_CHECKING:
    from git_memzoi.core.gitview_branch import BranchState
    from git_memzoi.memzoi.runtime.local import Written
    from git_memzoi.memzoi.workspace import Workspace

TRANSCRIPT_TAIL_BYTES = 512 * 1024  # the end of a long conversation: its last requests are there
LAST_REQUESTS = 3
REQUEST_CHARS = 300
TITLE_CHARS = 60  # the checkpoint's title (and so its id) names the last request
LISTED_FILES = 20
RECENT_COMMITS = 5
LEFT_OUT = "Transcript excerpt left out: it holds a credential."


def write(ws: Workspace, hook_input: Mapping[str, Any], *, from_transcript: bool) -> Written:
    """Write the checkpoint for a PreCompact hook input (``trigger``, ``transcript_path``); with the input's
    ``session_id``, keyed (:mod:`~git_memzoi.memzoi.runtime.replay`): the same state noted again in one session
    returns the checkpoint already written (``reused``).

    Args:
        ws: the workspace.
        hook_input: the hook's JSON object (``{}`` when none came).
        from_transcript: read ``hook_input["transcript_path"]`` too (the user opted in).

    Raises:
        InputError: the checkpoint cannot be written (a credential in the branch state itself, an invalid record).
    """
    from git_memzoi.memzoi.runtime.checkpoint import add_checkpoint
    from git_memzoi.memzoi.runtime.replay import ids_from_hook

    session_id, event_id = ids_from_hook(hook_input)  # a retried hook with the same state reuses its checkpoint
    state = _state(ws)
    trigger = str(hook_input.get("trigger") or "")  # Claude Code's "manual" or "auto"; absent: just compaction
    requests = _requests(hook_input.get("transcript_path")) if from_transcript else []
    task = _task(state, requests, trigger)
    tree = _tree_note(state)
    if requests:
        try:
            note = "\n".join(["Last requests:", *(f"- {r}" for r in requests), *tree])  # what to resume comes first
            return add_checkpoint(ws, task=task, note=note, session_id=session_id, event_id=event_id)
        except InputError as exc:
            if exc.code != "prohibited_content_detected":
                raise
            task, tree = _task(state, [], trigger), [*tree, LEFT_OUT]
    return add_checkpoint(ws, task=task, note="\n".join(tree), session_id=session_id, event_id=event_id)


def _state(ws: Workspace) -> BranchState | None:
    from git_memzoi.core.gitview_branch import branch_state

    try:
        return branch_state(ws.layout.root, recent=RECENT_COMMITS)
    except InputError:
        return None


def _task(state: BranchState | None, requests: Sequence[str], trigger: str) -> str:
    where = "this repository" if state is None or not state.branch else f"branch {state.branch}"
    if requests:  # the title (and so the id) names the request alone; the branch state is in the note
        return requests[-1] if len(requests[-1]) <= TITLE_CHARS else requests[-1][: TITLE_CHARS - 1] + "…"
    return f"Work on {where} (before {trigger + ' ' if trigger else ''}compaction)"


def _tree_note(state: BranchState | None) -> list[str]:
    if state is None:
        return ["Not a git working tree: no branch state."]
    if state.head is None:
        lines = [f"Branch: {state.branch or 'none'} (no commit yet)"]
    elif state.branch:
        fork = f", forked from {state.base} at {state.merge_base[:12]}" if state.base and state.merge_base else ""
        lines = [f"Branch: {state.branch}{fork}"]
    else:
        lines = [f"Detached HEAD at {state.head[:12]}"]
    if state.base:
        lines.append(f"Changed on the branch: {_files(state.branch_files)}")
    for label, files in (("Staged", state.staged), ("Unstaged", state.unstaged), ("Untracked", state.untracked)):
        if files:
            lines.append(f"{label}: {_files(files)}")
    if not state.working:
        lines.append("Working tree: clean")
    if state.recent:
        lines.append("Last commits:")
        lines += [f"- {oid} {subject}" for oid, subject in state.recent]
    return lines


def _files(files: Sequence[str]) -> str:
    if not files:
        return "none"
    shown = ", ".join(files[:LISTED_FILES])
    return shown if len(files) <= LISTED_FILES else f"{shown} (+{len(files) - LISTED_FILES} more)"


def _requests(path: Any) -> list[str]:
    """The last :data:`LAST_REQUESTS` prompts the user typed, oldest first, from the tail of a Claude Code
    transcript (JSONL: ``{"type": "user", "message": {"content": str | [{"type": "text", "text": …}]}}``; tool
    results are no requests). A path that is not a readable regular file gives none."""
    from git_memzoi.core import safe_read

    if not isinstance(path, str) or not path:
        return []
    try:
        with safe_read.open_stream(Path(path), follow_symlinks=True) as stream:
            size = os.fstat(stream.fileno()).st_size
            stream.seek(max(0, size - TRANSCRIPT_TAIL_BYTES))
            lines = stream.read(TRANSCRIPT_TAIL_BYTES).split(b"\n")
    except (OSError, InputError):
        return []
    if size > TRANSCRIPT_TAIL_BYTES:
        lines = lines[1:]  # the first line was cut
    found: list[str] = []
    for raw in lines:
        text = _request(raw)
        if text:
            found.append(text)
    return found[-LAST_REQUESTS:]


def _request(raw: bytes) -> str | None:
    from git_memzoi.core import safe_read

    try:
        event = safe_read.load_json(raw) if raw.strip() else None
    except ValueError:
        return None
    if not isinstance(event, dict) or event.get("type") != "user" or event.get("isMeta"):
        return None
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        parts = [c.get("text") for c in content if isinstance(c, dict) and c.get("type") == "text"]
        content = " ".join(p for p in parts if isinstance(p, str))
    if not isinstance(content, str):
        return None
    flat = " ".join(content.split())
    if not flat or flat.startswith("<"):  # command echoes and system reminders, not a request
        return None
    return flat if len(flat) <= REQUEST_CHARS else flat[: REQUEST_CHARS - 1] + "…"
