"""What each MCP tool does to the repository, as MCP tool annotations declare it (issue 18; SDK-free).

:data:`TOOL_HINTS` has one row per tool of :data:`git_memzoi.mcp.TOOL_NAMES` (``build_server`` refuses to
register a tool without one). No tool reaches outside the repository (``openWorldHint`` is false for all). The
read tools change no memory: their one write is the read event ``search``, ``context``, ``precheck`` and
``show`` append to the private event log (``.git/memzoi/local/events.jsonl``), bookkeeping rather than a change
to the project, so they are read-only and idempotent. ``propose_memory`` only adds a pending proposal; its id is
made from its content and the instant, so the same call within one instant is one proposal but a retry a second
later is a second one: not idempotent; ``submit_capture_decisions_v1`` adds
pending packets and private runtime records (additive, never destructive) and remembers rejections, so a
second call is not promised to be a no-op.
"""

from __future__ import annotations

from typing import NamedTuple


class Hints(NamedTuple):
    """One tool's annotations: a human ``title``, then ``readOnlyHint``, ``destructiveHint``, ``idempotentHint``
    (``openWorldHint`` is false for every tool)."""

    title: str
    read_only: bool
    destructive: bool
    idempotent: bool


def _reads(title: str) -> Hints:
    return Hints(title, read_only=True, destructive=False, idempotent=True)


TOOL_HINTS: dict[str, Hints] = {
    "search_memory": _reads("Search project memory"),
    "inspect_memory_expiry": _reads("Explain a record's expiry"),
    "build_context_pack": _reads("Build a context pack for a task"),
    "propose_memory": Hints("Propose a memory for review", read_only=False, destructive=False, idempotent=False),
    "precheck_path": _reads("Warnings before changing a path"),
    "precheck_action": _reads("Warnings before an action"),
    "precheck_command": _reads("Warnings before a command"),
    "plan_capture_v1": _reads("Plan a capture of a Markdown file"),
    "submit_capture_decisions_v1": Hints(
        "Submit capture decisions", read_only=False, destructive=False, idempotent=False
    ),
    "memory_status": _reads("Memkeep suspect set"),
    "review_inbox": _reads("List the review inbox"),
    "read_memory": _reads("Read one memory by id"),
    "related_memory": _reads("Follow the relations of one record"),
}
