"""The Model Context Protocol surface of git-memzoi: a stdio server (:mod:`git_memzoi.mcp.server`).

Only :mod:`git_memzoi.mcp.server` imports the ``mcp`` SDK; everything else here stays SDK-free, so the tool list
below can be read (``integrate prompt``) without loading the SDK.
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
)
