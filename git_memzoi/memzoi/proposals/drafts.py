"""Proposal drafts (pure): validating ``propose`` input, the deterministic inbox id, and the create packet.

Split from :mod:`git_memzoi.memzoi.proposals.inbox`, which stores and moves proposals; see it for the id scheme.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from git_memzoi.core.hashing import short_hash
from git_memzoi.core.patterns import lazy
from git_memzoi.errors import InputError
from git_memzoi.memzoi.records import vocab
from git_memzoi.memzoi.records.okf import format_timestamp

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from git_memzoi.memzoi.proposals.packets import Packet
    from git_memzoi.memzoi.records.relations import Relation

REPO_SAFE = "repo-safe"
ID_PATTERN = lazy(r"^prop_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
MAX_TITLE, MAX_BODY, MAX_SHORT, MAX_REF = 300, 200 * 1024, 200, 2048
_CONTROL = lazy(r"[\x00-\x08\x0b-\x1f\x7f]")
_SOURCE_KIND = lazy(r"^[a-z][a-z0-9_-]{0,63}$")
_TAG = lazy(r"[\w][\w.:/-]{0,63}")
CONTENT_CLASS = {
    "repo-safe": "general_repo_knowledge",
    "local-only": "local_only_state",
    "raw-transcript": "raw_transcript",
    "private-personal-data": "private_personal_data",
    "temporary-state": "temporary_task_state",
}


@dataclass(frozen=True)
class Draft:
    """A validated, normalized proposal: what ``propose`` was asked to record."""

    type: str
    lane: str
    title: str
    body: str
    scope_kind: str
    visibility: str
    sensitivity: str
    source_kind: str | None
    source_ref: str | None
    actor: str
    applies_to: tuple[str, ...] = ()
    validity: tuple[tuple[str, str], ...] = ()  # (valid_from|valid_to, bound) pairs (records/validity.py)
    relations: tuple[Relation, ...] = ()  # records/relations.py
    tags: tuple[str, ...] = ()  # the record's tags, matched by search (index/schema.py's records_meta)
    scope_id: str | None = None  # which project, team ... of scope_kind (search --scope-id filters by it)

    @property
    def repo_safe(self) -> bool:
        """Whether the draft may ever reach git-visible files: repo-safe, and not marked ``visibility: private``
        (private-marked content is never written as repo memory, issue 20)."""
        return self.sensitivity == REPO_SAFE and self.visibility != "private"

    def identity(self) -> bytes:
        """The canonical bytes the id's hash bits come from (sorted-key compact JSON, domain-tagged)."""
        data = asdict(self)
        for key in ("applies_to", "relations", "validity", "tags", "scope_id"):  # absent when empty: ids kept
            if not data[key]:
                del data[key]
        text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return b"memzoi/inbox-proposal-id\0" + text.encode("utf-8")


def make_draft(
    *,
    title: str | None,
    body: str | None,
    type: str | None = None,
    lane: str | None = None,
    scope_kind: str | None = None,
    visibility: str | None = None,
    sensitivity: str | None = None,
    source_kind: str | None = None,
    source_ref: str | None = None,
    actor: str | None = None,
    applies_to: Sequence[str] = (),
    valid_from: str | None = None,
    valid_to: str | None = None,
    relations: Sequence[Relation] = (),
    tags: Sequence[str] = (),
    scope_id: str | None = None,
) -> Draft:
    """Validate ``propose`` input, or raise InputError with a stable code (``invalid_type``, ``empty_title`` ...).

    Defaults: type ``fact``, scope and visibility ``repo``, sensitivity ``unknown``, actor ``cli``; the lane
    follows the type (procedure → procedural, episode → episodic, else semantic). ``applies_to`` (the packet's
    ``scope.paths``, the record's ``applies_to``) is trimmed, sorted and deduplicated (``invalid_applies_to``).
    ``valid_from`` / ``valid_to`` (``--valid-from`` / ``--valid-to``) are checked first (``invalid_validity``,
    :func:`git_memzoi.memzoi.records.validity.options`).
    ``relations`` (validated by :func:`~git_memzoi.memzoi.records.relations.from_options`) are kept in order.
    ``tags``: each one word of at most 64 letters, digits and ``-_.:/`` (``invalid_tag``), deduplicated in order.
    ``scope_id``: one line of at most 200 characters (``empty_scope_id``, ``invalid_scope_id``).
    """
    from git_memzoi.memzoi.records.validity import options

    bounds = tuple(options(valid_from, valid_to).items())
    memory_type = _choice("type", type or "fact", vocab.TYPES)
    inferred = {"procedure": "procedural", "episode": "episodic"}.get(memory_type, "semantic")
    return Draft(
        type=memory_type,
        lane=_choice("lane", lane or inferred, vocab.LANES),
        title=_line("title", title, MAX_TITLE),
        body=_body(body),
        scope_kind=_choice("scope_kind", scope_kind or "repo", vocab.SCOPE_KINDS),
        visibility=_choice("visibility", visibility or "repo", vocab.VISIBILITIES),
        sensitivity=_choice("sensitivity", sensitivity or "unknown", vocab.SENSITIVITIES),
        source_kind=_source_kind(source_kind),
        source_ref=None if source_ref is None else _line("source_ref", source_ref, MAX_REF),
        actor=_line("actor", actor if actor is not None else "cli", MAX_SHORT),
        applies_to=tuple(sorted({_applies_to(item) for item in applies_to})),
        validity=bounds,
        relations=tuple(relations),
        tags=tuple(dict.fromkeys(_tag(item) for item in tags)),
        scope_id=None if scope_id is None else _line("scope_id", scope_id, MAX_SHORT),
    )


def _tag(value: str) -> str:
    clean = value.strip()
    if not _TAG.fullmatch(clean):
        raise InputError(f"tag {clean[:64]!r} must be one word of at most 64 letters, digits and -_.:/", "invalid_tag")
    return clean


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value.strip() not in allowed:
        raise InputError(f"{name} {value!r} is not one of {', '.join(allowed)}", f"invalid_{name}")
    return value.strip()


def _line(name: str, value: str | None, limit: int) -> str:
    clean = (value or "").strip()
    if not clean:
        raise InputError(f"{name} must not be empty", f"empty_{name}")
    if "\n" in clean or "\r" in clean or _CONTROL.search(clean) or len(clean) > limit:
        raise InputError(
            f"{name} must be one line of at most {limit} characters, without control characters", f"invalid_{name}"
        )
    return clean


def _body(value: str | None) -> str:
    clean = (value or "").strip()
    if not clean:
        raise InputError("body must not be empty", "empty_body")
    if len(clean.encode("utf-8")) > MAX_BODY or "\x00" in clean:
        raise InputError(f"body must be text of at most {MAX_BODY} bytes", "invalid_body")
    return clean


def _source_kind(value: str | None) -> str | None:
    if value is not None and not _SOURCE_KIND.match(value.strip()):
        raise InputError(
            f"source kind {value!r} must be a short lowercase word such as path, url or issue", "invalid_source_kind"
        )
    return None if value is None else value.strip()


def _applies_to(value: str) -> str:
    clean = value.strip().rstrip("/") if isinstance(value, str) else ""  # a folder may be written folder/
    if (
        not clean
        or len(clean) > MAX_REF
        or clean.startswith("/")
        or "\\" in clean
        or _CONTROL.search(clean)
        or re.match(r"^[A-Za-z]:", clean)
        or {"", ".", ".."} & set(clean.split("/"))
    ):
        raise InputError(
            f"applies_to {value!r} must be a repository-relative path (or prefix/**) without . or .. components",
            "invalid_applies_to",
        )
    return clean


def proposal_id(now: dt.datetime, content: bytes) -> str:
    """``prop_<uuidv7-shaped>``: 48-bit Unix milliseconds of ``now``, version 7, variant ``10``, and in place of
    the 12 + 62 random bits the leading bits of BLAKE3(``content``): reproducible, still sorted by creation time.
    Raises InputError (``bad_clock``) for an instant a UUIDv7 cannot hold.
    """
    millis = (now - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(milliseconds=1)
    if not 0 <= millis < 1 << 48:
        raise InputError(f"clock instant {now.isoformat()} cannot be encoded in a UUIDv7", "bad_clock")
    bits = int(short_hash(content, 32), 16)
    value = millis << 80 | 0x7 << 76 | (bits >> 116) << 64 | 0b10 << 62 | bits & ((1 << 62) - 1)
    h = f"{value:032x}"
    return f"prop_{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def check_id(value: str) -> str:
    """``value`` when it is a well-formed inbox id; else InputError ``bad_proposal_id`` (traversal included)."""
    if not ID_PATTERN.match(value):
        raise InputError(f"{value!r} is not a proposal id (prop_<uuidv7>)", "bad_proposal_id")
    return value


def build_packet(draft: Draft, prop_id: str, now: dt.datetime, *, memkeep: Mapping[str, Any] | None = None) -> Packet:
    """The create packet that carries ``draft`` (origin ``owner-command:<id>``, lane-appropriate retention) and
    the earned envelope ``memkeep`` the record is written with (see :mod:`~git_memzoi.memzoi.records.envelope`).

    A ``path`` or ``url`` source becomes that kind of ``sources`` entry; any other kind becomes a ``ref`` entry
    (packets have no source-kind field; the inbox state keeps the kind).
    """
    from git_memzoi.memzoi.proposals.packets import Packet, Source
    from git_memzoi.memzoi.records.relations import items

    stamp = format_timestamp(now)
    kind = draft.source_kind if draft.source_kind in ("path", "url") else "ref"
    sources = (Source(**{kind: draft.source_ref}),) if draft.source_ref else ()
    retention = {"episodic": {"occurred_at": stamp}, "session": {"started_at": stamp}}.get(draft.lane, {})
    return Packet(
        id=prop_id,
        file_id=prop_id,
        type=draft.type,
        lane=draft.lane,
        title=draft.title,
        body=draft.body,
        action="create",
        proposed_by=draft.actor,
        proposed_at=stamp,
        timestamp=stamp,
        created_by=draft.actor,
        origin={"origin_key": f"owner-command:{prop_id}", "route": "owner_command"},
        scope_kind=draft.scope_kind,
        paths=draft.applies_to,
        sources=sources,
        sensitivity=draft.sensitivity,
        retention=retention,
        content_class=CONTENT_CLASS.get(draft.sensitivity, "unknown"),
        memkeep=memkeep,
        validity=dict(draft.validity) or None,
        relations=items(draft.relations),
        tags=draft.tags,
        scope_id=draft.scope_id,
    )
