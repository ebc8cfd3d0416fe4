"""Capture sources (io): the strict request shape, safe reads of named project files, and the profile registry
(memzoi-spec.md §9.2, §9.3).

Each profile module offers ``load(ws, source, supplied) -> Loaded``: it checks the one source of the request
for its profile, reads exactly the bytes the source names (a project file, supplied bytes, a pinned git range)
and runs its extractor. Nothing here writes.
"""

from __future__ import annotations

import importlib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memzoi.core.hashing import content_hash
from git_memzoi.memzoi.capture.profiles import markdown as md
from git_memzoi.memzoi.capture.profiles.markdown import CaptureError, canonical_hash

REQUEST_SCHEMA = "memzoi/capture-request-v1"
# the f0f8412 capture corpus writes the unversioned name; both mean the same request (memzoi-spec.md §9.1)
REQUEST_SCHEMAS = (REQUEST_SCHEMA, "memzoi/capture-request")
# profile → module offering ``load``; a closed set (memzoi-spec.md §9.3)
PROFILES = {
    "markdown-deterministic": "git_memzoi.memzoi.capture.sources",
    "instruction-deterministic": "git_memzoi.memzoi.capture.profiles.instruction",
    "adr-deterministic": "git_memzoi.memzoi.capture.profiles.adr",
    "git-change-deterministic": "git_memzoi.memzoi.capture.profiles.gitchange",
}
# source errors that upstream reports as a blocked plan with ``source_preflight_failed`` (memzoi-spec.md §9.6)
PREFLIGHT_CODES = frozenset(
    {
        "unsafe_source_path",
        "unsupported_media_type",
        "source_not_found",
        "source_too_large",
        "invalid_encoding",
        "prohibited_policy_input",
        "supplied_bytes_mismatch",
    }
)
# the markdown profile's extractor configuration (hashed into ``extractor.configuration_hash``): upstream's 1.0.0,
# and 1.1.0's, which also names what it changed (the table's routes, fenced credentials, generated blocks)
CONFIGURATION = {"prefixes": md.PREFIXES}
CONFIGURATIONS = {
    md.UPSTREAM_V1: CONFIGURATION,
    md.EXTRACTOR["version"]: {
        "prefixes": md.PREFIXES,
        "routing": "heading_table",
        "fenced_credentials": "block_candidate",
        "generated_blocks": "excluded",
    },
}
# profile → the extractor versions a request may pin (``extractor.version``); the first of each is its default
VERSIONS = {
    "markdown-deterministic": (md.EXTRACTOR["version"], md.UPSTREAM_V1),
    "instruction-deterministic": ("1.0.0",),
    "adr-deterministic": ("1.1.0", "1.0.0"),  # adr.VERSIONS (adr imports this module)
    "git-change-deterministic": ("1.0.0",),
}


@dataclass
class Loaded:
    """One source read and extracted: the plan's ``sources`` snapshot, the extraction and the extractor identity
    (``{kind, id, version, configuration_hash}``)."""

    snapshot: dict[str, Any]
    extraction: md.Extraction
    extractor: dict[str, Any]


def strict(
    value: Any, what: str, keys: tuple[str, ...], optional: tuple[str, ...] = (), code: str = "invalid_capture_request"
) -> dict[str, Any]:
    """``value`` when it is a mapping with all of ``keys`` and nothing beyond ``optional``, else CaptureError."""
    if not isinstance(value, dict) or not set(keys) <= set(value) or set(value) - set(keys) - set(optional):
        extra = f" (optional: {', '.join(optional)})" if optional else ""
        raise CaptureError(f"{what}: exactly the keys {', '.join(keys)}{extra}", code)
    return value


def check_request(request: Any) -> tuple[str, dict[str, Any]]:
    """(profile, the one source) of a strict capture request; unknown keys are ``invalid_capture_request``,
    an unknown profile ``unsupported_capture_profile``, a pinned ``extractor.version`` the profile does not have
    ``unsupported_extractor_version``."""
    strict(request, "request", ("schema", "sources", "extractor"))
    if request["schema"] not in REQUEST_SCHEMAS:
        raise CaptureError(f"request.schema must be {REQUEST_SCHEMA}", "invalid_capture_request")
    profile = strict(request["extractor"], "request.extractor", ("profile",), ("version",))["profile"]
    if profile not in PROFILES:
        raise CaptureError(f"unknown capture profile {profile!r}", "unsupported_capture_profile")
    version = request["extractor"].get("version", VERSIONS[profile][0])
    if not isinstance(version, str):
        raise CaptureError("request.extractor.version must be a string", "invalid_capture_request")
    if version not in VERSIONS[profile]:
        raise CaptureError(
            f"{profile} has extractor versions {', '.join(VERSIONS[profile])}", "unsupported_extractor_version"
        )
    if not isinstance(request["sources"], list) or len(request["sources"]) != 1:
        raise CaptureError("request.sources holds exactly one source", "invalid_capture_request")
    source = strict(request["sources"][0], "request.sources[0]", ("source_id", "locator", "media_type"), ("git",))
    if not isinstance(source["source_id"], str):
        raise CaptureError("source_id must be a string", "invalid_source_id")
    md.check_source_id(source["source_id"])
    if not isinstance(source["locator"], dict) or not isinstance(source["locator"].get("kind"), str):
        raise CaptureError("request.sources[0].locator needs a kind", "invalid_capture_request")
    return profile, source


def load_request(ws: Any, request: Any, supplied: Mapping[str, bytes]) -> tuple[str, dict[str, Any], Loaded]:
    """(profile, source, loaded) of a strict request; ``supplied`` maps source ids to ``--source-bytes``."""
    profile, source = check_request(request)
    module = importlib.import_module(PROFILES[profile])
    if len(VERSIONS[profile]) > 1:  # markdown (this module's load) and adr: the version the request pins
        return (
            profile,
            source,
            module.load(ws, source, supplied, request["extractor"].get("version", VERSIONS[profile][0])),
        )
    return profile, source, module.load(ws, source, supplied)


def project_path(source: dict[str, Any], media_type: str = "text/markdown") -> str:
    """The path of a ``project_path`` locator (strict keys) whose media type is ``media_type``, checked by the
    path rules of :func:`~git_memzoi.memzoi.capture.profiles.markdown.check_source_path` (without the suffix rule)."""
    locator = strict(source["locator"], "locator", ("kind", "path"))
    if locator["kind"] != "project_path" or not isinstance(locator["path"], str):
        raise CaptureError("expected a project_path locator", "unsupported_capture_profile")
    if source["media_type"] != media_type:
        raise CaptureError(f"this profile reads {media_type} sources", "unsupported_media_type")
    return md.check_source_path(locator["path"], suffixes=None)


def lstat_chain(root: Path, rel: str) -> tuple[Path, os.stat_result]:
    """(path, lstat) of the project path ``rel`` after checking every component on the way: none may be a
    symbolic link (``unsafe_source_path``) and all must exist (``source_not_found``). Messages never quote content.
    """
    current = root
    for part in rel.split("/"):
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            raise CaptureError(f"{rel}: no such file or directory", "source_not_found") from None
        if stat.S_ISLNK(info.st_mode):
            raise CaptureError(f"{rel}: capture never follows symbolic links", "unsafe_source_path")
    return current, info


def read_source(root: Path, rel: str, limit: int = md.MAX_SOURCE_BYTES) -> bytes:
    """The bytes of the project file ``rel``, refusing symlinks (any component), hard links, non-regular files
    and files over ``limit`` bytes (codes ``unsafe_source_path``, ``source_not_found``, ``source_too_large``)."""
    current, info = lstat_chain(root, rel)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        raise CaptureError(f"{rel}: the source must be a regular file without hard links", "unsafe_source_path")
    if info.st_size > limit:
        raise CaptureError(f"{rel}: the source is larger than {limit} bytes", "source_too_large")
    from git_memzoi.core import safe_read

    try:  # checked again on the open descriptor: a file swapped for a FIFO or a link meanwhile cannot block
        return safe_read.read_bytes(current, limit)
    except safe_read.FileRefused as exc:
        if exc.code == safe_read.TOO_LARGE:
            raise CaptureError(f"{rel}: the source is larger than {limit} bytes", "source_too_large") from None
        raise CaptureError(
            f"{rel}: the source must be a regular file without hard links", "unsafe_source_path"
        ) from None


def snapshot(source: dict[str, Any], data: bytes, **extra: Any) -> dict[str, Any]:
    """The plan's snapshot of one source read as ``data``: locator, media type, length and BLAKE3 hash."""
    return {
        "source_id": source["source_id"],
        "locator": source["locator"],
        "media_type": source["media_type"],
        "byte_length": len(data),
        "source_content_hash": content_hash(data),
        **extra,
    }


def extractor(identity: dict[str, str], configuration: Any) -> dict[str, Any]:
    """The plan's extractor block: the profile's identity plus the BLAKE3 hash of its configuration."""
    return {**identity, "configuration_hash": "blake3:" + canonical_hash(configuration)}


def load(
    ws: Any, source: dict[str, Any], supplied: Mapping[str, bytes], version: str = md.EXTRACTOR["version"]
) -> Loaded:
    """The markdown-deterministic profile: one ``.md`` ``project_path`` (memzoi-spec.md §9.4), extracted by
    ``version`` (one of :data:`~git_memzoi.memzoi.capture.profiles.markdown.VERSIONS`)."""
    path = project_path(source)
    if not path.endswith(".md"):
        raise CaptureError("the markdown profile reads one .md file", "unsupported_media_type")
    data = read_source(ws.layout.root, path)
    return Loaded(
        snapshot(source, data),
        md.extract(source["source_id"], path, data, version),
        extractor({**md.EXTRACTOR, "version": version}, CONFIGURATIONS[version]),
    )


def bind_supplied(request: Any, data: bytes | None) -> dict[str, bytes]:
    """Source id → ``data`` for the request's ``supplied_bytes`` source (``--source-bytes``); ``{}`` without data.

    Raises:
        CaptureError: ``supplied_bytes_unexpected`` when bytes are given for a request with no such source.
    """
    if data is None:
        return {}
    found = (
        [
            s.get("source_id")
            for s in (request.get("sources") or [])
            if isinstance(request, dict)
            and isinstance(s, dict)
            and isinstance(s.get("locator"), dict)
            and s["locator"].get("kind") == "supplied_bytes"
        ]
        if isinstance(request, dict)
        else []
    )
    if len(found) != 1 or not isinstance(found[0], str):
        raise CaptureError(
            "--source-bytes goes with a request whose source is supplied_bytes", "supplied_bytes_unexpected"
        )
    return {found[0]: data}
