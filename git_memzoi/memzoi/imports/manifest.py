"""The ``memzoi/import-v1`` manifest (seed "Manifest (memzoi/import-v1)"): read a manifest file, validate it
strictly and normalize it into a :class:`Manifest` (io: reads the one file it is given).

Unknown keys are rejected at every level and messages name fields, never their values. The plan built from a
manifest is :mod:`~git_memzoi.memzoi.imports.plan`'s, which re-exports the names here.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memzoi.core.hashing import content_hash
from git_memzoi.errors import InputError, MemzoiError
from git_memzoi.memzoi.records import vocab

MANIFEST_VERSION = "memzoi/import-v1"
TOP_KEYS = ("version", "sources", "candidates")
SOURCE_KEYS = ("path", "url", "ref")
CANDIDATE_KEYS = ("destination", "reason", "type", "lane", "title", "body", "sensitivity", "scope", "tags", "watch")
REQUIRED_KEYS = ("destination", "reason", "title", "body")
SCOPE_KEYS = ("kind", "id", "paths")
WATCH_KEYS = ("scope", "anchor", "ttl_days", "check", "check_safe")  # propose's envelope options (records/envelope.py)


class ImportManifestError(InputError):
    """An import that cannot be planned or applied: the code names the rule; the message names fields, never
    their values (exit 2, nothing written). Codes: ``invalid_import_manifest``, ``invalid_actor``,
    ``stale_import_plan``, ``blocked_import_plan``."""

    default_code = "invalid_import_manifest"


@dataclass(frozen=True)
class Candidate:
    """One normalized manifest candidate (trimmed, inferred, sorted; ``content_hash`` of the trimmed body)."""

    index: int
    destination: str
    reason: str
    type: str
    lane: str
    title: str
    body: str
    sensitivity: str
    scope: dict[str, Any]
    tags: list[str]
    content_hash: str
    watch: dict[str, Any] | None = None  # the earned-envelope options, as given (validated)


@dataclass(frozen=True)
class Manifest:
    """A validated ``memzoi/import-v1`` manifest: sources trimmed and sorted, candidates normalized."""

    sources: list[dict[str, str]]
    candidates: list[Candidate]


def read_manifest(path: Path) -> Any:
    """The raw document of a manifest file: JSON for ``.json``, else YAML (a regular, non-symlink UTF-8 file of at
    most 2 MiB, as capture artifacts are read).

    Raises:
        ImportManifestError: missing or unreadable file, not UTF-8, malformed JSON/YAML, duplicate keys, an empty
            document (``invalid_import_manifest``; messages carry line numbers, never text).
    """
    from git_memzoi.core import yamlio
    from git_memzoi.core.safe_read import load_json
    from git_memzoi.memzoi.capture.artifacts import MAX_ARTIFACT_BYTES, small_file

    try:
        data = small_file(path, "manifest", "invalid_import_manifest")
    except MemzoiError as exc:
        raise ImportManifestError(exc.message) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ImportManifestError(f"{path.name}: the manifest is not UTF-8") from None
    if not text.strip():
        raise ImportManifestError(f"{path.name}: the manifest is empty")
    if path.suffix.lower() == ".json":
        try:
            return load_json(text, object_pairs_hook=_unique_pairs)
        except ValueError as exc:
            if getattr(exc, "code", None) == "json_too_complex":
                raise ImportManifestError(f"{path.name}: not valid JSON: {exc}") from None
            line = getattr(exc, "lineno", None)
            raise ImportManifestError(f"{path.name}: not valid JSON" + (f" (line {line})" if line else "")) from None
    try:
        fields, _ = yamlio.load_mapping(text, "the manifest", max_bytes=MAX_ARTIFACT_BYTES, max_nodes=None)
    except yamlio.YamlProblem as exc:
        line = getattr(exc, "line", None)
        where = f" (line {line + 1})" if isinstance(line, int) else ""
        why = f": {exc.reason}" if exc.code == yamlio.TOO_COMPLEX else ""  # anchors, depth: the rule, never text
        raise ImportManifestError(f"{path.name}: not a valid YAML mapping{where}{why}") from None
    return fields


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError("duplicate key")
        out[key] = value
    return out


def parse_manifest(raw: Any) -> Manifest:
    """Validate a raw manifest document strictly and normalize it (seed "Manifest (memzoi/import-v1)").

    Unknown keys are rejected at every level. Sources: at least one, each a non-empty ``path``, ``url`` or
    ``ref`` (a path POSIX project-relative). Candidates: at least one; ``destination``, ``reason``, ``title`` and
    ``body`` required and trimmed; type/lane inferred (:func:`infer_kind`); omitted sensitivity is ``unknown``;
    scope defaults to ``{kind: repo, id: null, paths: []}``; tags and scope paths trimmed, sorted, deduplicated.

    Raises:
        ImportManifestError: the first problem, naming the field (``invalid_import_manifest``).
    """
    _keys(raw, "manifest", TOP_KEYS, TOP_KEYS)
    if raw["version"] != MANIFEST_VERSION:
        raise ImportManifestError(f"manifest: version must be {MANIFEST_VERSION}")
    sources, candidates = raw["sources"], raw["candidates"]
    if not isinstance(sources, list) or not sources:
        raise ImportManifestError("manifest: sources must be a non-empty list")
    if not isinstance(candidates, list) or not candidates:
        raise ImportManifestError("manifest: candidates must be a non-empty list")
    normalized = sorted(
        (_source(i, s) for i, s in enumerate(sources)), key=lambda s: tuple(s.get(k, "") for k in SOURCE_KEYS)
    )
    return Manifest(normalized, [_candidate(i, c) for i, c in enumerate(candidates)])


def _keys(value: Any, where: str, allowed: tuple[str, ...], required: tuple[str, ...]) -> None:
    if not isinstance(value, dict):
        raise ImportManifestError(f"{where}: expected a mapping")
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        shown = _shown_key(unknown[0])
        near = difflib.get_close_matches(str(unknown[0]).lower(), allowed, n=1, cutoff=0.7)
        hint = f" — did you mean {near[0]}?" if near and shown != "(unnamed)" else ""  # as memkeep lint hints
        raise ImportManifestError(f"{where}: unknown field {shown}{hint} (allowed: {', '.join(allowed)})")
    missing = [k for k in required if k not in value]
    if missing:
        raise ImportManifestError(f"{where}: required field {missing[0]} is missing")


def _shown_key(key: Any) -> str:
    """An unknown key as it may be printed: plain short names only, anything else stays unnamed."""
    import re

    from git_memzoi.memzoi.records.secrets import classify

    text = str(key)
    return repr(text) if re.fullmatch(r"[A-Za-z0-9_-]{1,40}", text) and not classify(text) else "(unnamed)"


def _text(where: str, value: Any, *, required: bool = True) -> str | None:
    """A trimmed non-empty string; ``None`` stands for absent when not ``required``."""
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ImportManifestError(f"{where}: must be a non-empty string")
    return value.strip()


def _choice(where: str, value: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value.strip() not in allowed:
        raise ImportManifestError(f"{where}: must be one of {', '.join(allowed)}")
    return value.strip()


def check_path(where: str, value: Any) -> str:
    """A trimmed POSIX project-relative path: not empty, not absolute, no drive prefix, backslash, control
    character, or ``.``/``..`` component.

    Raises:
        ImportManifestError: naming ``where`` (``invalid_import_manifest``).
    """
    path = _text(where, value)
    assert path is not None
    if (
        path.startswith("/")
        or "\\" in path
        or (len(path) >= 2 and path[1] == ":" and path[0].isascii() and path[0].isalpha())
        or any(ord(c) < 32 or ord(c) == 127 for c in path)
        or any(part in (".", "..") for part in path.split("/"))
    ):
        raise ImportManifestError(f"{where}: must be a POSIX project-relative path without . or .. components")
    return path


def _source(index: int, value: Any) -> dict[str, str]:
    where = f"sources[{index}]"
    _keys(value, where, SOURCE_KEYS, ())
    out: dict[str, str] = {}
    for key in SOURCE_KEYS:
        if key in value:
            text = check_path(f"{where}.path", value[key]) if key == "path" else _text(f"{where}.{key}", value[key])
            assert text is not None
            out[key] = text
    if not out:
        raise ImportManifestError(f"{where}: needs a non-empty path, url or ref")
    return out


def _candidate(index: int, value: Any) -> Candidate:
    where = f"candidates[{index}]"
    _keys(value, where, CANDIDATE_KEYS, REQUIRED_KEYS)
    destination = _choice(f"{where}.destination", value["destination"], vocab.DESTINATIONS)
    reason, title, body = (_text(f"{where}.{k}", value[k]) for k in ("reason", "title", "body"))
    assert reason is not None and title is not None and body is not None
    given_type = None if value.get("type") is None else _choice(f"{where}.type", value["type"], vocab.TYPES)
    given_lane = None if value.get("lane") is None else _choice(f"{where}.lane", value["lane"], vocab.LANES)
    kind = infer_kind(destination, given_type, given_lane)
    if kind is None:
        raise ImportManifestError(f"{where}.type: required (it cannot be inferred from the lane)")
    sensitivity = (
        _choice(f"{where}.sensitivity", value["sensitivity"], vocab.SENSITIVITIES)
        if "sensitivity" in value
        else "unknown"
    )
    tags = value.get("tags", [])
    if not isinstance(tags, list):
        raise ImportManifestError(f"{where}.tags: must be a list of non-empty strings")
    clean = sorted({str(_text(f"{where}.tags[{n}]", t)) for n, t in enumerate(tags)})
    return Candidate(
        index,
        destination,
        reason,
        kind[0],
        kind[1],
        title,
        body,
        sensitivity,
        _scope(where, value.get("scope")),
        clean,
        body_hash(body),
        _watch(where, value.get("watch")),
    )


def _watch(where: str, value: Any) -> dict[str, Any] | None:
    """The candidate's ``watch`` options (``propose --scope/--anchor/--ttl-days/--check/--check-safe``), checked
    as propose checks them; a credential in ``check`` is refused without naming it."""
    from git_memzoi.memzoi.records.envelope import make_request

    if value is None:
        return None
    _keys(value, f"{where}.watch", WATCH_KEYS, ())
    scope = value.get("scope")
    if scope is not None and not (isinstance(scope, list) and all(isinstance(p, str) for p in scope)):
        raise ImportManifestError(f"{where}.watch.scope: must be a list of path globs")
    try:
        make_request(**value)
    except (InputError, TypeError) as exc:
        code = exc.code if isinstance(exc, InputError) else "invalid_import_manifest"
        field = {"invalid_scope": "scope", "invalid_anchor": "anchor", "invalid_ttl_days": "ttl_days"}.get(
            code, "check"
        )
        raise ImportManifestError(f"{where}.watch.{field}: not valid ({code})", code) from None
    return dict(value)


def _scope(where: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {"kind": "repo", "id": None, "paths": []}
    _keys(value, f"{where}.scope", SCOPE_KEYS, ())
    kind = "repo" if value.get("kind") is None else _choice(f"{where}.scope.kind", value["kind"], vocab.SCOPE_KINDS)
    paths = value.get("paths", [])
    if paths is None:
        paths = []
    if not isinstance(paths, list):
        raise ImportManifestError(f"{where}.scope.paths: must be a list of project-relative paths")
    clean = sorted({check_path(f"{where}.scope.paths[{n}]", p) for n, p in enumerate(paths)})
    return {"kind": kind, "id": _text(f"{where}.scope.id", value.get("id"), required=False), "paths": clean}


def infer_kind(destination: str, memory_type: str | None, lane: str | None) -> tuple[str, str] | None:
    """``(type, lane)`` by the seed's deliberately narrow inference, or ``None`` when the type cannot be inferred.

    A session destination is always ``(episode, session)``. Without a type: lane ``episodic``/``session`` →
    episode, ``procedural`` → procedure, otherwise ``None``. Without a lane: procedure → procedural, episode →
    episodic, any other type → semantic.
    """
    if destination == "session":
        return "episode", "session"
    if memory_type is None:
        memory_type = {"episodic": "episode", "session": "episode", "procedural": "procedure"}.get(lane or "")
        if memory_type is None:
            return None
    if lane is None:
        lane = {"procedure": "procedural", "episode": "episodic"}.get(memory_type, "semantic")
    return memory_type, lane


def body_hash(body: str) -> str:
    """The import ``content_hash``: lowercase hex BLAKE3 of the trimmed body, no prefix (memzoi-spec.md §2.5)."""
    return content_hash(body.strip().encode("utf-8")).removeprefix("blake3:")
