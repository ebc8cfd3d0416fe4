"""The ``instruction-deterministic``  capture profile (memzoi-spec.md §9.5) — not built yet."""

from __future__ import annotations

from typing import Any

from git_memzoi.memzoi.capture_markdown import CaptureError


def load(ctx: Any, source: dict[str, Any], supplied: Any) -> Any:
    """Not supported yet: always ``unsupported_capture_profile``."""
    raise CaptureError("the instruction profile is not supported yet", "unsupported_capture_profile")
