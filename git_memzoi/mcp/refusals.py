"""What a tool refuses before it calls the core (SDK-free): :class:`ToolFailure`, and the one capture request MCP
takes (:func:`capture_source`: a Markdown file of the project, the current markdown-deterministic extractor;
every other request is the CLI's, ``git memzoi capture``)."""

from __future__ import annotations

from typing import Any

from git_memzoi.errors import MemzoiError

CAPTURE_PROFILE = "markdown-deterministic"


class ToolFailure(MemzoiError):
    """A tool refused its input before calling the core (an alias clash, a mutating argument)."""

    default_code = "bad_arguments"


def capture_source(schema: str, sources: list[dict[str, Any]], extractor: dict[str, Any]) -> tuple[str, str]:
    """(path, source id) of the one Markdown ``project_path`` source MCP capture accepts; other requests are
    CLI-only (``invalid_schema``, ``unsupported_profile``, ``unsupported_locator``, ``invalid_request``)."""
    if schema not in ("memzoi/capture-request-v1", "memzoi/capture-request"):
        raise ToolFailure("schema must be memzoi/capture-request-v1", "invalid_schema")
    if extractor.get("profile") != CAPTURE_PROFILE:
        raise ToolFailure(f"MCP capture accepts only the {CAPTURE_PROFILE} profile", "unsupported_profile")
    from git_memzoi.memzoi import capture_sources

    if set(extractor) - {"profile", "version"}:
        raise ToolFailure("extractor holds profile and, optionally, version", "invalid_request")
    current = capture_sources.VERSIONS[CAPTURE_PROFILE][0]
    if extractor.get("version", current) != current:  # the CLI runs a pinned older version; MCP only this one
        raise ToolFailure(
            f"MCP capture runs {CAPTURE_PROFILE} {current}; pin another version with git memzoi capture",
            "unsupported_extractor_version",
        )
    kinds = [s.get("locator", {}).get("kind") if isinstance(s.get("locator"), dict) else None for s in sources]
    if kinds != ["project_path"]:
        raise ToolFailure(
            'MCP capture accepts exactly one source, {"locator": {"kind": "project_path", "path": "<file>"}}',
            "unsupported_locator",
        )
    path, source_id = sources[0]["locator"].get("path"), sources[0].get("source_id") or "source-1"
    if not isinstance(path, str) or not isinstance(source_id, str):
        raise ToolFailure("a project_path locator needs a path string", "invalid_request")
    return path, source_id
