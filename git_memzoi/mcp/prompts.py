"""The MCP prompts of the memzoi server (issue 18): ready-made user messages built from the project's memory by
the same core functions the CLI uses, read fresh on each request.

- ``resume_work_here`` (optional ``task``): the session-start context (the latest checkpoint, risks bound to
  this branch's changes, suspect claims, the newest decisions, the open review count: ``git memzoi integrate
  session-context``), and with a task its handoff (``git memzoi handoff --task``: the context pack and the
  review counts).
- ``before_editing`` (``path``): the risks, warnings and failed attempts that apply to changing ``path``, each
  with its source and next step (``git memzoi precheck --path``), suspect ones marked.

A refusal (a path outside the repository, a repository without ``.memzoi/`` ...) is a JSON-RPC error ``-32602``
whose ``data`` carries the stable ``code``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any

from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from pydantic import Field

from git_memzoi.errors import MemzoiError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from git_memzoi.mcp.server import _Server

RESUME_LEAD = (
    "Resume work in this repository. Its project memory follows; memories marked suspect may be stale, verify them "
    "before relying on them. Read one whole with the read_memory tool or the memzoi://record/{+id} resource."
)
EDIT_LEAD = (
    "Before editing {path}: these project memories apply to it. Respect the risks and failed attempts, verify the "
    "suspect ones, and tell me if your change contradicts one."
)
NOTHING_APPLIES = "No risk, warning or failed attempt in the project memory applies to {path}."


def _text(name: str, body: Callable[[], str]) -> list[dict[str, Any]]:
    """One user message of ``body()``'s text; a refusal as a JSON-RPC error with the stable code."""
    try:
        text = body()
    except MemzoiError as exc:
        raise MCPError(code=INVALID_PARAMS, message=exc.message, data={"code": exc.code, "prompt": name}) from None
    return [{"role": "user", "content": {"type": "text", "text": text}}]


def warning_lines(warnings: Sequence[Mapping[str, Any]]) -> list[str]:
    """``precheck --json`` warnings as text, one block each: ``- [severity] id (path): message``, its source,
    ``SUSPECT: reason: message`` when suspect, and the suggested next step."""
    lines: list[str] = []
    for warning in warnings:
        cite = warning["citations"][0] if warning["citations"] else {}
        where = f" ({cite['path']})" if cite.get("path") else ""
        first = (str(warning["message"]).splitlines() or [""])[0]
        lines.append(f"- [{warning['severity']}] {warning['store']} {warning['record_id']}{where}: {first}")
        if warning.get("suspect"):
            reasons = warning["suspect"]["reasons"]
            lines.append("  SUSPECT: " + "; ".join(f"{r['reason']}: {r['message']}" for r in reasons))
        lines.append(f"  next: {warning['suggested_next_step']}")
    return lines


# the prompts' arguments, described for a client's prompt form
Task = Annotated[str | None, Field(description="The task to hand over (optional): adds its handoff pack.")]
EditedPath = Annotated[str, Field(description="The file or folder about to change, repository-relative.")]


def register(server: MCPServer[Any], impl: _Server) -> None:
    """Add the prompts above to ``server``, each opening ``impl``'s repository."""

    def resume_work_here(task: Task = None) -> list[dict[str, Any]]:
        """Resume work in this repository: the session-start context of its memory, and the handoff of a task."""
        from git_memzoi.memzoi import handoff_pack
        from git_memzoi.memzoi import session_context as core

        def body() -> str:
            ws = impl.workspace()
            parts = [RESUME_LEAD, core.build(ws).text.rstrip("\n")]
            if task and task.strip():
                parts.append(handoff_pack.handoff(ws, task=task).text().rstrip("\n"))
            return "\n\n".join(parts) + "\n"

        return _text("resume_work_here", body)

    def before_editing(path: EditedPath) -> list[dict[str, Any]]:
        """Before editing a path: the risks, warnings and failed attempts that apply to changing it."""
        from git_memzoi.memzoi import precheck

        def body() -> str:
            found = precheck.precheck(impl.workspace(), path=path).to_json()
            # a record file that cannot be read may be a risk on this path: never "nothing applies" in silence
            notes = [f"Note: {n['message']}" for n in found.get("notes", []) if n["code"] == "unreadable_records"]
            if not found["warnings"]:
                return "\n".join([NOTHING_APPLIES.format(path=path), *notes]) + "\n"
            return "\n".join([EDIT_LEAD.format(path=path), "", *warning_lines(found["warnings"]), *notes]) + "\n"

        return _text("before_editing", body)

    server.prompt(name="resume_work_here", title="Resume work here")(resume_work_here)
    server.prompt(name="before_editing", title="Before editing PATH")(before_editing)
