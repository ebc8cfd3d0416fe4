"""Capture artifact files (io): reading plan, review and request files, and saving artifacts where their data
class allows (memzoi-spec.md §9.6: regular, non-symlink UTF-8 files of at most 2 MiB, never overwritten)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from git_memzoi.errors import MemzoiError
from git_memzoi.memzoi.capture.profiles.markdown import CaptureError
from git_memzoi.memzoi.workspace import Workspace

MAX_ARTIFACT_BYTES = 2 * 1024 * 1024


def small_file(path: Path, what: str, code: str) -> bytes:
    """The bytes of a regular, non-symlink file of at most 2 MiB (never opened otherwise: a FIFO cannot block);
    else CaptureError ``code``."""
    from git_memzoi.core import safe_read

    try:
        return safe_read.read_bytes(path, MAX_ARTIFACT_BYTES)
    except FileNotFoundError:
        raise CaptureError(f"{path.name}: no such {what}", code) from None
    except safe_read.FileRefused:
        raise CaptureError(f"{path.name}: {_with_article(what)} is a regular file of at most 2 MiB", code) from None
    except OSError as exc:
        raise CaptureError(f"{path.name}: cannot read the {what} ({exc.strerror})", code) from None


def _with_article(what: str) -> str:
    """``an artifact`` / ``a request file``: the noun with its article."""
    return ("an " if what[0] in "aeiou" else "a ") + what


def read_artifact(path: Path, schema: str | None = None) -> dict[str, Any]:
    """A JSON artifact: a regular, non-symlink UTF-8 file ≤ 2 MiB holding one object (``invalid_artifact``).

    A top-level boolean ``ok`` is dropped: it is the ``--json`` envelope's (docs/memzoi.md, "JSON output"), so
    ``capture plan --json > plan.json`` saves a plan that ``capture review --plan-file plan.json`` takes as it is.
    No artifact schema has an ``ok`` of its own."""
    from git_memzoi.core.safe_read import JsonTooComplex, load_json

    data = small_file(path, "artifact", "invalid_artifact")
    try:
        value = load_json(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        why = str(exc) if isinstance(exc, JsonTooComplex) else "not valid UTF-8 JSON"
        raise CaptureError(f"{path.name}: {why}", "invalid_artifact") from None
    if not isinstance(value, dict) or (schema is not None and value.get("schema") != schema):
        raise CaptureError(f"{path.name}: expected a {schema} object", "invalid_artifact")
    if isinstance(value.get("ok"), bool):  # saved from `--json` stdout: the envelope's ok is no part of it
        value = {key: item for key, item in value.items() if key != "ok"}
    return value


def read_request(path: Path) -> dict[str, Any]:
    """A capture request file: JSON, or YAML for ``.yaml``/``.yml`` (same file rules as artifacts; code
    ``invalid_capture_request`` for text that does not parse to one object)."""
    if path.suffix.lower() not in (".yaml", ".yml"):
        try:
            return read_artifact(path)
        except CaptureError as exc:
            raise CaptureError(str(exc), "invalid_capture_request") from None
    from git_memzoi.core import yamlio

    data = small_file(path, "request file", "invalid_capture_request")
    try:
        fields, _ = yamlio.load_mapping(
            data.decode("utf-8"), "the request", max_bytes=MAX_ARTIFACT_BYTES, max_nodes=None
        )
    except yamlio.YamlProblem as exc:
        reason = exc.reason if exc.code == yamlio.TOO_COMPLEX else "not a UTF-8 YAML mapping"  # anchors, depth
        raise CaptureError(f"{path.name}: {reason}", "invalid_capture_request") from None
    except (UnicodeDecodeError, MemzoiError, ValueError):
        raise CaptureError(f"{path.name}: not a UTF-8 YAML mapping", "invalid_capture_request") from None
    return dict(yamlio.plain(fields))


def save_artifact(ws: Workspace, path: Path, artifact: Mapping[str, Any]) -> Path:
    """Install ``artifact`` at ``path`` without replacing anything, where its data class allows.

    blocked → refused (stdout only); private → only under the private folder (:attr:`Layout.private`);
    repo_safe → anywhere in or out of the project except under ``.memzoi/``. Codes ``unsafe_output_path``, ``output_exists``.
    """
    data_class = artifact.get("data_class")
    target = path.parent.resolve() / path.name
    memzoi = ws.layout.base.resolve()
    local = ws.layout.private.resolve()
    if data_class == "blocked":
        raise CaptureError("a blocked plan may only be printed to stdout", "unsafe_output_path")
    if data_class == "private" and not target.is_relative_to(local):
        raise CaptureError(
            f"a private artifact may only be saved under {ws.layout.label(ws.layout.private)}/", "unsafe_output_path"
        )
    if data_class != "private" and target.is_relative_to(memzoi):
        raise CaptureError("a repo-safe artifact is never saved under .memzoi/", "unsafe_output_path")
    if os.path.lexists(target):
        raise CaptureError(f"{path.name}: the output exists; capture never replaces a file", "output_exists")
    from git_memzoi.core.atomic import write_new

    # below the repository, the file stays there through real folders (a committed symlink is refused); a path
    # the user named outside it is theirs, symlinks and all
    lexical = Path(os.path.abspath(path))
    inside = _below(lexical, ws.layout.root) or _below(lexical, ws.layout.private)
    root = ws.layout.root_for(lexical) if inside else lexical.parent
    mode = 0o600 if data_class == "private" else 0o644
    if not write_new(lexical, dump(artifact).encode("utf-8"), root=root, mode=mode, parents=True):
        raise CaptureError(f"{path.name}: the output exists; capture never replaces a file", "output_exists")
    return target


def _below(path: Path, root: Path) -> bool:
    return any(path.is_relative_to(base) for base in (Path(os.path.abspath(root)), root.resolve()))


def dump(artifact: Mapping[str, Any]) -> str:
    """The artifact's file text: sorted-key, indented JSON and a final newline."""
    return json.dumps(artifact, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
