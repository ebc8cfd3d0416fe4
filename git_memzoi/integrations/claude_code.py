"""Claude Code hook output envelopes (pure).

The forms follow the hook output schema of Claude Code 2.1.197 (its zod schema; a copy with its source is
``tests/integrations/data/claude_code_hook_output.schema.json``): the events in :data:`CONTEXT_EVENTS`, Stop and
SubagentStop included, accept ``hookSpecificOutput`` with ``hookEventName`` equal to the event and
``additionalContext``; PreCompact reads its stdout verbatim as custom compaction instructions, so it gets plain
text; any other event gets the common ``systemMessage`` field, which every event accepts. Context above ~10 KB
is replaced by a preview, so text is cut to :data:`MAX_CONTEXT_CHARS`.
"""

from __future__ import annotations

import difflib
from typing import Any

CONTEXT_EVENTS = frozenset(
    {
        "SessionStart",
        "Setup",
        "UserPromptSubmit",
        "UserPromptExpansion",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "SubagentStart",
        "Notification",
        "Stop",
        "SubagentStop",
    }
)
PLAIN_TEXT_EVENTS = frozenset({"PreCompact"})
# Stop and SubagentStop: additionalContext makes the turn go on, so a hook answers once and stays silent while
# the input's stop_hook_active is true (the turn was already continued by a Stop hook).
LOOPING_EVENTS = frozenset({"Stop", "SubagentStop"})
# Every hook event name Claude Code documents (hooks reference, 2026); anything else is most likely a typo.
KNOWN_EVENTS = (
    CONTEXT_EVENTS
    | PLAIN_TEXT_EVENTS
    | frozenset(
        {
            "PermissionRequest",
            "PermissionDenied",
            "TaskCreated",
            "TaskCompleted",
            "StopFailure",
            "TeammateIdle",
            "PostCompact",
            "SessionEnd",
            "Elicitation",
            "ElicitationResult",
            "WorktreeCreate",
            "WorktreeRemove",
            "ConfigChange",
            "InstructionsLoaded",
            "CwdChanged",
            "FileChanged",
        }
    )
)
MAX_CONTEXT_CHARS = 4000
_CUT_MARK = "\n… (cut; run `git memkeep status` for the full list)"


def envelope(event: str, text: str) -> dict[str, Any] | None:
    """Return the JSON object to print for ``event`` carrying ``text``, or ``None`` when ``text`` is empty.

    Args:
        event: the hook event name exactly as Claude Code sends it (``hook_event_name``).
        text: the message; cut to at most :data:`MAX_CONTEXT_CHARS` characters, marker included.
    """
    if not text.strip():
        return None
    text = clip(text, MAX_CONTEXT_CHARS)
    if event in CONTEXT_EVENTS:
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    return {"systemMessage": text}


def hook_output(event: str, text: str, hook_input: dict[str, Any] | None = None) -> str | None:
    """What a command hook for ``event`` prints on stdout to carry ``text``, or ``None`` to print nothing.

    PreCompact gets ``text`` itself (its stdout becomes the compaction instructions); every other event the
    JSON of :func:`envelope`. Stop and SubagentStop print nothing while ``hook_input["stop_hook_active"]`` is true.
    """
    import json

    if event in LOOPING_EVENTS and (hook_input or {}).get("stop_hook_active") is True:
        return None
    payload = envelope(event, text)
    if payload is None:
        return None
    if event in PLAIN_TEXT_EVENTS:
        return clip(text, MAX_CONTEXT_CHARS)
    return json.dumps(payload, ensure_ascii=False)


def unknown_event_warning(event: str) -> str | None:
    """One line saying ``event`` is not a Claude Code event name (and which one it may mean), or ``None``.

    An unknown name still gets a valid ``systemMessage`` envelope: a hook must never fail the session.
    """
    if event in KNOWN_EVENTS:
        return None
    lowered = {e.lower(): e for e in KNOWN_EVENTS}
    near = difflib.get_close_matches(event.lower(), sorted(lowered), n=1, cutoff=0.75)
    if event.lower() in lowered:
        why = f"event names are case-sensitive: did you mean {lowered[event.lower()]}?"
    elif near:
        why = f"did you mean {lowered[near[0]]}?"
    else:
        why = "not a Claude Code event such as SessionStart, PreCompact or Stop"
    return f"unknown hook event {event!r} ({why}); printing a systemMessage, which every event accepts"


def clip(text: str, limit: int) -> str:
    """Cut ``text`` at a line boundary so that it and the cut marker fit in ``limit`` characters."""
    if len(text) <= limit:
        return text
    room = limit - len(_CUT_MARK)
    head = text[:room]
    if "\n" in head:
        head = head[: head.rindex("\n")]
    return head + _CUT_MARK
