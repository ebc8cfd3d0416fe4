"""The Model Context Protocol surface of git-memzoi: a stdio server (:mod:`git_memzoi.mcp.server`).

Only :mod:`git_memzoi.mcp.server` imports the ``mcp`` SDK; everything else here stays SDK-free.
"""
