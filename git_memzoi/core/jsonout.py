"""The one JSON encoder of every ``--json`` object and MCP tool result (DESIGN.md "Exit codes": one object on stdout).

Keys keep the payload's order (builders order them), text stays UTF-8 rather than ASCII escapes, and no option
here changes the bytes of a value: the CLI and the MCP server print the same object the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def dumps(
    payload: Mapping[str, Any], *, indent: int | None = None, ascii_only: bool = False, fresh: bool = False
) -> str:
    """``payload`` as JSON text.

    Args:
        payload: a JSON-safe mapping (str keys; str, int, float, bool, None, lists and mappings as values).
        indent: spaces per level for a human-readable document (``None``: one line).
        ascii_only: escape non-ASCII characters (the error object keeps the form it always had).
        fresh: the payload is a tree built for this call, so the cycle check is skipped (faster, same bytes).

    Raises:
        TypeError: a value JSON cannot encode; ValueError: a cycle (unless ``fresh``).
    """
    return json.dumps(payload, ensure_ascii=ascii_only, indent=indent, check_circular=not fresh)
