"""The memkeep status an agent reads over MCP (the ``memory_status`` tool, the ``memzoi://status`` resource):
the repository's store and every store in a subfolder (SDK-free).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def status_json(root: Path) -> Mapping[str, Any]:
    """``git memkeep status --json`` of the store at ``root`` (``MEMKEEP_STORE`` when set), plus
    ``other_stores``: the same object for each store in a subfolder holding a tracked entry
    (``svc/agent-memory``; :func:`~git_memzoi.integrations.guard.stores_below`), so an agent sees their suspects
    too (a fresh user's walk found them in no MCP answer).

    Raises:
        StoreNotFound: no store at ``root``; its message names the server's ``MEMKEEP_STORE``, not the CLI's
            ``--store`` flags. What ``git memkeep status`` raises otherwise.
    """
    from git_memzoi.core import clock as clocks
    from git_memzoi.integrations.guard import stores_below_root
    from git_memzoi.memkeep import api

    store = os.environ.get("MEMKEEP_STORE") or None
    clock = clocks.from_environment(os.environ, instant=False)
    try:
        result = api.status(api.Options(start=root, store=store, clock=clock))
    except api.StoreNotFound as exc:
        hint = "or start the server with MEMKEEP_STORE=<store folder>"
        raise api.StoreNotFound(exc.message.replace(api.STORE_CLI_HINT, hint)) from None
    others = [
        api.schema.status_json(api.status(api.Options(start=root, store=str(s.path), clock=clock)))
        for s in stores_below_root(root, result.store)
    ]
    return {**api.schema.status_json(result), "other_stores": others}
