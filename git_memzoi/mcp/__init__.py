"""The Model Context Protocol surface of git-memzoi: a stdio server (:mod:`git_memzoi.mcp.server`).

Only the server modules import the ``mcp`` SDK (:mod:`~git_memzoi.mcp.server` with its tools,
:mod:`~git_memzoi.mcp.arguments` (schema errors), :mod:`~git_memzoi.mcp.resources` and
:mod:`~git_memzoi.mcp.prompts`); this module, :mod:`~git_memzoi.mcp.hints` (tool annotations) and
:mod:`~git_memzoi.mcp.load` stay SDK-free, so the tool list below can be read (``integrate prompt``) without
loading the SDK. The SDK is the ``mcp`` extra
(``pip install 'git-memzoi[mcp]'``): a hook-only install goes without it (issue 17, "Dependencies"), and
:func:`git_memzoi.mcp.load.server_module` says so.
"""

# The tools the server registers, in order: build_server registers exactly these (one method each).
TOOL_NAMES = (
    "search_memory",
    "inspect_memory_expiry",
    "build_context_pack",
    "propose_memory",
    "precheck_path",
    "precheck_action",
    "precheck_command",
    "plan_capture_v1",
    "submit_capture_decisions_v1",
    "memory_status",
    "review_inbox",
    "read_memory",
)
