"""Canonical Memzoi records: the OKF ``memzoi`` profile, generation D (pure).

memzoi-spec.md §2: the fields, value sets and body rules of a record, validated with unknown keys rejected;
the concept id and its slug rules; the writer's key order and quoting. This project adds one optional key,
``memkeep``, that upstream records do not have: the Earned Memory envelope (``anchor``, ``scope``,
``verified_at``, ``ttl_days``, ``explains``, ``evidence``, ``check``, and ``status: stale`` once a check failed
at ``git memzoi verify``) that makes a record staleness-aware (DESIGN.md "One model, two surfaces").
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from git_memzoi.core import clock
from git_memzoi.core.markdown import atx_heading
from git_memzoi.core.patterns import lazy
from git_memzoi.errors import InputError
from git_memzoi.memzoi.records import relations, vocab
from git_memzoi.memzoi.records.relations import Relation

EXTENSION_KEY = "memkeep"
REQUIRED = (
    "id",
    "kind",
    "profile",
    "type",
    "lane",
    "title",
    "scope",
    "visibility",
    "content_class",
    "status",
    "confidence",
    "timestamp",
    "retention",
    "origin",
)
OPTIONAL = (
    "description",
    "scope_id",
    "updated",
    "source",
    "source_ref",
    "proposal_id",
    "supersedes",
    "applies_to",
    "tags",
    "lineage",
    "capture",
    "materialization",
    "relations",
    EXTENSION_KEY,
    "valid_from",  # records/validity.py
    "valid_to",
    "locked",  # records/lock.py
)
_KNOWN_FIELDS = frozenset(REQUIRED) | frozenset(OPTIONAL)
RETENTION_KEYS = (
    "occurred_at",
    "started_at",
    "last_continued_at",
    "closed_at",
    "explicit_expires_at",
    "episodic_extension",
)
MEMKEEP_KEYS = ("anchor", "scope", "verified_at", "ttl_days", "explains", "evidence", "check", "status")
MAX_SEGMENT_CHARS = 200  # one file or folder name, with room for ``.md`` and a temporary file's affixes
MAX_ID_CHARS = 400
MAX_SLUG_CHARS = 120  # an id made from a title, below the segment bound so a "-<n>" suffix still fits
_SEGMENT = lazy(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")
_PLAIN = lazy(r"^[A-Za-z0-9._/-]+$")
_YAML_UNSAFE = lazy("[\x7f-\x9f\u2028\u2029\ufeff]")
_YAML_NON_STRING = lazy(
    r"^(?:true|false|True|False|TRUE|FALSE|null|Null|NULL|~|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|0x[0-9a-fA-F]+|0o[0-7]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|\d{4}-\d\d?-\d\d?.*)$"
)


class RecordError(InputError):
    """A record file that does not follow the profile: names the file and the field (exit 2)."""

    default_code = "invalid_record"

    def __init__(self, path: str, field_name: str, reason: str) -> None:
        super().__init__(f"{path}: {field_name}: {reason}")
        self.path, self.field, self.reason = path, field_name, reason


@dataclass(frozen=True)
class Record:
    """One canonical record. Timestamps are RFC 3339 strings as written; ``body`` has no H1 and is trimmed."""

    id: str
    type: str
    lane: str
    title: str
    scope: str
    visibility: str
    content_class: str
    status: str
    confidence: float
    timestamp: str
    body: str
    retention: Mapping[str, Any] = field(default_factory=dict)
    origin: Mapping[str, Any] = field(default_factory=dict)
    description: str | None = None
    scope_id: str | None = None
    updated: str | None = None
    source: str | None = None
    source_ref: str | None = None
    proposal_id: str | None = None
    supersedes: str | None = None
    applies_to: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    lineage: Mapping[str, Any] | None = None
    capture: Mapping[str, Any] | None = None
    materialization: Mapping[str, Any] | None = None
    memkeep: Mapping[str, Any] | None = None
    valid_from: str | None = None  # business validity [valid_from, valid_to), records/validity.py
    valid_to: str | None = None
    locked: bool = False  # records/lock.py
    relations: tuple[Relation, ...] = ()  # records/relations.py

    @property
    def updated_at(self) -> str:
        """``updated``, defaulting to ``timestamp``."""
        return self.updated or self.timestamp


def concept_id_problem(concept_id: str) -> str | None:
    """Why ``concept_id`` is not a valid concept id (``/``-separated lowercase segments of at most
    :data:`MAX_SEGMENT_CHARS`, :data:`MAX_ID_CHARS` in all), or ``None``.

    The bounds keep every file named after an id (``<segment>.md``, and its temporary sibling) inside the 255
    bytes a file name may have: a longer one failed with ``ENAMETOOLONG`` after the proposal was written."""
    if not concept_id:
        return "empty id"
    if len(concept_id) > MAX_ID_CHARS:
        return f"longer than {MAX_ID_CHARS} characters"
    for segment in concept_id.split("/"):
        if len(segment) > MAX_SEGMENT_CHARS:
            return f"a segment is longer than {MAX_SEGMENT_CHARS} characters"
        if not _SEGMENT.match(segment):
            return (
                f"segment {segment!r} must be lowercase ASCII letters, digits and '-', starting and ending alphanumeric"
            )
    return None


def concept_slug(title: str) -> str:
    """A concept id from a title: accents dropped, lowercase ASCII, each run of other characters one ``-``."""
    ascii_text = title if title.isascii() else _folded(title)
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:MAX_SLUG_CHARS].rstrip("-")  # a 300-character title still names a file (with room for "-2")


def parse_timestamp(value: Any) -> dt.datetime | None:
    """An RFC 3339 instant with a zone (string or YAML timestamp) as an aware datetime; else ``None``, also for an
    instant outside the supported years (:func:`git_memzoi.core.clock.parse_instant`: 9999-12-31T23:59:59Z plus a
    retention window overflowed)."""
    if isinstance(value, dt.datetime):
        return value if clock.in_range(value) else None
    if not isinstance(value, str):
        return None
    return clock.parse_instant(value)


format_timestamp = clock.format_instant  # how a record writes an instant


def record_from_fields(concept_id: str, path: str, fields: Mapping[str, Any], body: str) -> Record:
    """Validate a record's frontmatter and body (memzoi-spec.md §2.1) and build the :class:`Record`; its ``id``
    must be ``concept_id``, the file's path below ``records/`` without ``.md``.

    Raises:
        RecordError: the first problem found, naming ``path`` and the field.
    """
    unknown = sorted(key for key in fields if key not in _KNOWN_FIELDS)
    if unknown:
        raise RecordError(path, unknown[0], "unknown field (the memzoi profile rejects unknown keys)")
    for key in REQUIRED:
        if key not in fields:
            raise RecordError(path, key, "required field is missing")
    f = dict(fields)
    _expect(path, f, "kind", ("memory",))
    if f["profile"] != "memzoi":
        raise RecordError(path, "profile", "must be 'memzoi'; pre-1.0 artifacts must be upgraded or removed")
    _expect(path, f, "type", vocab.TYPES)
    _expect(path, f, "lane", vocab.LANES)
    _expect(path, f, "scope", vocab.SCOPE_KINDS)
    _expect(path, f, "visibility", vocab.VISIBILITIES)
    _expect(path, f, "status", vocab.RECORD_STATUSES)
    content_class = str(f["content_class"]).replace("-", "_")
    if content_class not in vocab.CONTENT_CLASSES:
        raise RecordError(path, "content_class", f"must be one of {', '.join(vocab.CONTENT_CLASSES)}")
    record_id = _text(path, f, "id")
    problem = concept_id_problem(record_id.replace("_", "-"))
    if problem:
        raise RecordError(path, "id", problem)
    if record_id != concept_id:  # a file renamed by hand: every reader (recall, doctor, the guard) refuses it
        raise RecordError(path, "id", f"must equal the file's concept id {concept_id!r}")
    title = _text(path, f, "title")
    confidence = f["confidence"]
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 <= confidence <= 1:
        raise RecordError(path, "confidence", "must be a number from 0 to 1")
    timestamp = _timestamp(path, f, "timestamp")
    updated = _timestamp(path, f, "updated") if f.get("updated") is not None else None
    return Record(
        id=record_id,
        type=f["type"],
        lane=f["lane"],
        title=title,
        scope=f["scope"],
        visibility=f["visibility"],
        content_class=content_class,
        status=f["status"],
        confidence=float(confidence),
        timestamp=timestamp,
        body=_body(path, title, body),
        retention=_retention(path, f["retention"]),
        origin=_origin(path, f["origin"]),
        description=_optional_text(path, f, "description"),
        scope_id=_optional_text(path, f, "scope_id", non_empty=True),
        updated=updated,
        source=_optional_text(path, f, "source"),
        source_ref=_optional_text(path, f, "source_ref"),
        proposal_id=_optional_text(path, f, "proposal_id"),
        supersedes=_optional_text(path, f, "supersedes", non_empty=True),
        applies_to=_paths(path, f.get("applies_to")),
        tags=_strings(path, "tags", f.get("tags")),
        lineage=_lineage(path, record_id, f.get("lineage")),
        capture=_mapping(path, "capture", f.get("capture")),
        materialization=_mapping(path, "materialization", f.get("materialization")),
        memkeep=_memkeep(path, f.get(EXTENSION_KEY)),
        **_validity_and_lock(path, f),
        relations=_relations(path, f.get("relations")),
    )


def _validity_and_lock(path: str, f: Mapping[str, Any]) -> dict[str, Any]:
    """The ``valid_from`` / ``valid_to`` / ``locked`` fields (records/validity.py, records/lock.py).

    Raises:
        ValidityError: a bad interval (``invalid_validity``). RecordError: ``locked`` not a boolean.
    """
    from git_memzoi.memzoi.records import validity

    validity.interval(f, path)
    locked = f.get("locked", False)
    if locked is not True and locked is not False:  # only the boolean locks; "true", null, 1 are mistakes
        raise RecordError(path, "locked", "must be the boolean true or false")
    return {
        "valid_from": validity.normalized(f.get("valid_from")),
        "valid_to": validity.normalized(f.get("valid_to")),
        "locked": locked,
    }


def _expect(path: str, f: Mapping[str, Any], key: str, allowed: Sequence[str]) -> None:
    if f[key] not in allowed:
        raise RecordError(path, key, f"must be one of {', '.join(allowed)}")


def _text(path: str, f: Mapping[str, Any], key: str) -> str:
    value = f[key]
    if not isinstance(value, str) or not value.strip():
        raise RecordError(path, key, "must be a non-empty string")
    return value.strip()


def _optional_text(path: str, f: Mapping[str, Any], key: str, *, non_empty: bool = False) -> str | None:
    value = f.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or (non_empty and not value.strip()):
        raise RecordError(path, key, "must be a string" + (" that is not empty" if non_empty else ""))
    return value


def _timestamp(path: str, f: Mapping[str, Any], key: str) -> str:
    value = f[key]
    parsed = parse_timestamp(value)
    if parsed is None:
        raise RecordError(path, key, "must be an RFC 3339 timestamp with a zone, e.g. 2026-07-01T00:00:00Z")
    return value if isinstance(value, str) else format_timestamp(parsed)


def _body(path: str, title: str, body: str) -> str:
    text = body_without_heading(title, body)
    if text is None:
        raise RecordError(path, "body", "the H1 heading must equal the title")
    return text


def body_without_heading(title: str, body: str) -> str | None:
    """``body`` trimmed, without a leading ``# <title>`` heading; ``None`` when its H1 names another title
    (memzoi-spec.md §2.1; packets follow the same rule)."""
    text = body.lstrip("\r\n")
    if text.startswith("# "):
        first, _, rest = text.partition("\n")
        if first[2:].strip() != title:
            return None
        text = rest
    return text.strip()


def _retention(path: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise RecordError(path, "retention", "must be a mapping (it may be {})")
    for key, item in value.items():
        if key not in RETENTION_KEYS:
            raise RecordError(path, f"retention.{key}", "unknown retention fact")
        if key != "episodic_extension" and parse_timestamp(item) is None:
            raise RecordError(path, f"retention.{key}", "must be an RFC 3339 timestamp with a zone")
    return dict(value)


def _origin(path: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, dict) or set(value) - {"origin_key", "route"}:
        raise RecordError(path, "origin", "must be a mapping of origin_key and route")
    key = value.get("origin_key")
    if not isinstance(key, str) or not key.strip() or key.strip() == "owner-command:":
        raise RecordError(path, "origin.origin_key", "must be a non-empty string")
    if value.get("route") not in vocab.ORIGIN_ROUTES:
        raise RecordError(path, "origin.route", f"must be one of {', '.join(vocab.ORIGIN_ROUTES)}")
    return dict(value)


def _paths(path: str, value: Any) -> tuple[str, ...]:
    items = _strings(path, "applies_to", value)
    for item in items:
        clean = item.strip()
        if not clean or clean.startswith("/") or ".." in clean.split("/") or re.match(r"^[A-Za-z]:", clean):
            raise RecordError(path, "applies_to", f"{item!r} must be a relative path inside the repository")
    return tuple(i.strip() for i in items)


def _strings(path: str, key: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RecordError(path, key, "must be a list of strings")
    return tuple(value)


def _lineage(path: str, record_id: str, value: Any) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or value.get("kind") not in ("renewal", "session_successor"):
        raise RecordError(path, "lineage", "must be {kind: renewal|session_successor, predecessor_id}")
    if not isinstance(value.get("predecessor_id"), str) or value["predecessor_id"] == record_id:
        raise RecordError(path, "lineage.predecessor_id", "must name another record")
    return dict(value)


def _mapping(path: str, key: str, value: Any) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise RecordError(path, key, "must be a mapping")
    return dict(value)


def _relations(path: str, value: Any) -> tuple[Relation, ...]:
    try:
        return relations.parse(value)
    except relations.RelationError as exc:
        raise RelationFieldError(path, "relations", exc.message.removeprefix("relations: ")) from None


class RelationFieldError(RecordError):
    """A record whose ``relations:`` list has an invalid shape (records/relations.py; code ``invalid_relation``)."""

    default_code = relations.CODE


def _memkeep(path: str, value: Any) -> Mapping[str, Any] | None:
    envelope = _mapping(path, EXTENSION_KEY, value)
    if envelope is None:
        return None
    unknown = sorted(set(envelope) - set(MEMKEEP_KEYS))
    if unknown:
        raise RecordError(path, f"{EXTENSION_KEY}.{unknown[0]}", f"unknown key; allowed: {', '.join(MEMKEEP_KEYS)}")
    return envelope


# ------------------------------------------------------------------------------------------------ writer


def render(record: Record) -> str:
    """The file text of a new record in the writer's key order (memzoi-spec.md §2.5)."""
    lines = [
        "---",
        _kv("id", record.id),
        _kv("kind", "memory"),
        _kv("profile", "memzoi"),
        _kv("type", record.type),
        _kv("lane", record.lane),
        _kv("title", record.title),
        _kv("description", record.description if record.description is not None else summary(record.body)),
        _kv("timestamp", record.timestamp),
        _kv("updated", record.updated_at),
        _kv("status", record.status),
        _kv("scope", record.scope),
    ]
    if record.scope_id:
        lines.append(_kv("scope_id", record.scope_id))
    lines += [
        _kv("visibility", record.visibility),
        _kv("content_class", record.content_class),
        f"confidence: {format_confidence(record.confidence)}",
    ]
    for key in ("source", "source_ref", "proposal_id"):
        if getattr(record, key) is not None:
            lines.append(_kv(key, getattr(record, key)))
    if record.capture is not None:
        lines += yaml_lines("capture", record.capture)
    for key in ("tags", "applies_to"):
        items = getattr(record, key)
        if items:
            lines += [f"{key}:", *(f"  - {scalar(i)}" for i in items)]
    if record.supersedes:
        lines.append(_kv("supersedes", record.supersedes))
    for key in ("valid_from", "valid_to"):
        if getattr(record, key) is not None:
            lines.append(_kv(key, getattr(record, key)))
    if record.locked:
        lines.append("locked: true")
    if record.relations:
        lines += yaml_lines("relations", relations.items(record.relations))
    lines += yaml_lines("retention", record.retention)
    lines += yaml_lines("origin", record.origin)
    for key in ("lineage", "materialization", EXTENSION_KEY):
        value = getattr(record, key)
        if value is not None:
            lines += yaml_lines(key, value)
    lines += ["---", "", f"# {record.title}", "", record.body.strip(), ""]
    return "\n".join(lines)


def first_line(text: str) -> str:
    """The first non-empty line of ``text`` that is no Markdown ATX heading (``## Context``), stripped; when every
    line is a heading, the first one's title (:func:`~git_memzoi.core.markdown.atx_heading`); ``""`` for blank
    text. A body that opens with a section heading gave the description ``## Context``, not its first sentence."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if atx_heading(line) is None:
            return line
    first = atx_heading(lines[0]) if lines else None
    return first[1] if first is not None else ""


SUMMARY_CHARS = 200  # a written description's most characters: a summary, not the body again


def summary(text: str) -> str:
    """The description written when none is given: :func:`first_line` of ``text``, cut to at most
    :data:`SUMMARY_CHARS` characters at a word boundary with ``…`` (a body of one long paragraph was copied
    whole into ``description``, so ``show --projection metadata`` printed the body it leaves out)."""
    line = first_line(text)
    if len(line) <= SUMMARY_CHARS:
        return line
    cut = line[: SUMMARY_CHARS - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > SUMMARY_CHARS // 2 else cut).rstrip() + "…"


def format_confidence(value: float) -> str:
    """Shortest form: ``1`` for 1.0, ``0.75`` for 0.75."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def scalar(value: Any) -> str:
    """A scalar as the writer quotes it: plain when safe ``[A-Za-z0-9._/-]`` text, else a JSON string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return format_confidence(value) if isinstance(value, float) else str(value)
    if value is None:
        return "null"
    if isinstance(value, dt.datetime):
        value = format_timestamp(value)
    elif isinstance(value, dt.date):
        value = value.isoformat()
    text = str(value)
    if _PLAIN.match(text) and not _YAML_NON_STRING.match(text):
        return text
    # JSON escapes C0 controls; YAML also refuses or folds DEL, C1 controls, NEL, LS/PS and the BOM when raw.
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def _kv(key: str, value: Any) -> str:
    return f"{key}: {scalar(value)}"


def yaml_lines(key: str, value: Any, indent: int = 0) -> list[str]:
    """``key: value`` as block-style YAML lines, ``indent`` spaces deep (the one emitter of records and packets).

    Mappings nest by two spaces, lists are ``- item`` lines (a non-empty mapping item opens on the dash line, an
    empty or nested collection item is written in flow style as JSON), empty collections are ``{}`` / ``[]``,
    and every scalar goes through :func:`scalar`, so the output parses back to the same values (YAML 1.2).
    """
    pad = " " * indent
    if isinstance(value, Mapping):
        if not value:
            return [f"{pad}{key}: {{}}"]
        return [f"{pad}{key}:"] + [line for k, v in value.items() for line in yaml_lines(str(k), v, indent + 2)]
    if isinstance(value, (list, tuple)):
        if not value:
            return [f"{pad}{key}: []"]
        out = [f"{pad}{key}:"]
        for item in value:
            if isinstance(item, Mapping) and item:
                inner = [line for k, v in item.items() for line in yaml_lines(str(k), v, indent + 4)]
                out += [f"{pad}  - {inner[0].lstrip()}", *inner[1:]]
            elif isinstance(item, (Mapping, list, tuple)):
                out.append(f"{pad}  - {json.dumps(item, default=str, ensure_ascii=False)}")
            else:
                out.append(f"{pad}  - {scalar(item)}")
        return out
    return [f"{pad}{key}: {scalar(value)}"]


def _folded(text: str) -> str:
    """``text`` decomposed (NFKD) with what is not ASCII dropped: ``Café`` → ``Cafe`` (imported on first use)."""
    import unicodedata

    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
