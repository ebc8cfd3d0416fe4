"""The MCP resources of the memzoi server (issue 18, "Reading memory"): each memory by id, and the state an agent
reads before working. Every resource is JSON (``application/json``), the object the matching CLI ``--json``
prints, read fresh from the repository on each read:

- ``memzoi://record/{+id}``: a repository record (``git memzoi show <id> --store records --json``); a reserved
  expansion (RFC 6570), so an id in a subfolder reads as written, ``memzoi://record/team/nested``;
- ``memzoi://entry/{id}``: a memkeep entry (``git memzoi show <id> --store entries --json``);
- ``memzoi://status``: the memkeep status summary and suspect set (``git memkeep status --json``, the
  ``memory_status`` tool);
- ``memzoi://review-inbox``: what waits for review (``git memzoi review --json``, the ``review_inbox`` tool);
- ``memzoi://session-context``: what an agent resuming work here should see first (the session-start context).

An id may be a prefix naming one memory. A refusal (``target_not_found``, ``ambiguous_target``,
``content_withheld``, ``store_not_found`` ...) is a JSON-RPC error ``-32602`` whose ``data`` carries the stable
``code`` and the ``uri``, the same code the CLI gives; a URI no resource matches is ``unknown_resource``
(:class:`~git_memzoi.mcp.arguments.MemzoiServer`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from git_memzoi.core import jsonout
from git_memzoi.errors import MemzoiError
from git_memzoi.mcp.arguments import plain

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from git_memzoi.mcp.server import _Server

JSON = "application/json"
RECORD = "memzoi://record/{+id}"  # a record id may hold `/` (a subfolder of records/)
ENTRY = "memzoi://entry/{id}"
STATUS = "memzoi://status"
REVIEW = "memzoi://review-inbox"
SESSION = "memzoi://session-context"


def _read(uri: str, body: Callable[[], Mapping[str, Any]]) -> str:
    """``body()`` as JSON text; its refusal as a JSON-RPC error carrying the stable code."""
    try:
        return jsonout.dumps(plain(body()))
    except MemzoiError as exc:
        raise MCPError(code=INVALID_PARAMS, message=exc.message, data={"code": exc.code, "uri": uri}) from None


def register(server: MCPServer[Any], impl: _Server) -> None:
    """Add the resource templates and fixed resources above to ``server``, each opening ``impl``'s repository."""
    from git_memzoi.memzoi import record_show

    def memory(store: str, template: str) -> Callable[[str], str]:
        prefix = template[: template.index("{")]

        def read(id: str) -> str:
            return _read(prefix + id, lambda: record_show.show(impl.workspace(), id, store=store).to_json())

        return read

    server.resource(
        RECORD,
        name="record",
        title="Memzoi record",
        description="One repository record by id (or a prefix naming one): fields, body, lineage, envelope, suspect.",
        mime_type=JSON,
    )(memory("records", RECORD))
    server.resource(
        ENTRY,
        name="entry",
        title="Memkeep entry",
        description="One memkeep entry by id (or a prefix naming one): fields, body, lineage, envelope, suspect.",
        mime_type=JSON,
    )(memory("entries", ENTRY))

    def status() -> str:
        return _read(STATUS, impl.status_json)

    def review_inbox() -> str:
        from git_memzoi.memzoi import review

        return _read(REVIEW, lambda: review.list_items(impl.workspace().layout, "open").as_json())

    def session_context() -> str:
        from git_memzoi.memzoi import session_context as core

        return _read(SESSION, lambda: core.build(impl.workspace()).to_json())

    for uri, name, title, about, read in (
        (STATUS, "status", "Memory status", "The memkeep status summary and suspect set.", status),
        (REVIEW, "review-inbox", "Review inbox", "What waits for review, oldest first.", review_inbox),
        (SESSION, "session-context", "Session context", "What to see first when resuming work.", session_context),
    ):
        server.resource(uri, name=name, title=title, description=about, mime_type=JSON)(read)
