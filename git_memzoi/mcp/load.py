"""Load the MCP server only where the ``mcp`` extra is installed (issue 17, "Dependencies")."""

from __future__ import annotations

import importlib.util
from types import ModuleType

INSTALL_HINT = "pip install 'git-memzoi[mcp]'"


def server_module() -> ModuleType:
    """:mod:`git_memzoi.mcp.server`, loaded only when the MCP SDK is installed.

    Raises:
        ToolError: ``mcp_not_installed`` when the ``mcp`` package is missing (the install has no ``mcp`` extra);
            the message names the command that adds it.
    """
    from git_memzoi.errors import ToolError

    if importlib.util.find_spec("mcp") is None:
        raise ToolError(
            f"the MCP server needs the mcp extra, which is not installed: {INSTALL_HINT}", "mcp_not_installed"
        )
    from git_memzoi.mcp import server

    return server
