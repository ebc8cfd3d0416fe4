"""Reading one record by id (issue 18, "Reading memory"): ``git memzoi show <id>`` (io).

A record of the repository (``.memzoi/records/``) is shown whole: its frontmatter fields as written, its body,
its lineage (the ``supersedes`` chain both ways), its ``memkeep`` envelope and its suspect reasons, computed by
the same core as ``search`` and ``precheck`` (:func:`git_memzoi.memzoi.recall.suspect.assess`). Only repository
records are read, as ``search`` reads them: private local records and session checkpoints (in the git dir) are
never shown here, so an id naming only one of them is ``target_not_found``. A record holding a credential is
refused (``content_withheld``) the way ``search`` withholds it, never echoed.

The target is an id or an unambiguous prefix of one (ids may end in a ``-<6hex>`` content suffix): an exact id
wins; otherwise the single id starting with the target is shown, several are ``ambiguous_target``, none is
``target_not_found``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import InputError

if TYPE_CHECKING:
    from git_memzoi.memzoi.records.okf import Record
    from git_memzoi.memzoi.workspace import Workspace

MAX_CANDIDATES = 10  # ids named in an ambiguous_target message


class TargetNotFound(InputError):
    """No repository record has that id or an id starting with it (exit 2)."""

    default_code = "target_not_found"


class AmbiguousTarget(InputError):
    """The target is a prefix of several record ids (exit 2); the message names them (at most ten)."""

    default_code = "ambiguous_target"


@dataclass(frozen=True)
class Shown:
    """One record as ``show`` prints it.

    ``fields``: the frontmatter as written (timestamps as strings). ``body``: the body after the frontmatter,
    cut to ``max_chars`` characters when given (``truncated`` then says whether anything was cut);
    ``budget_used``: characters of body shown. ``supersedes``: older ids, nearest first; ``superseded_by``: newer
    ids, nearest first. ``suspect``: ``{"reasons": [{reason, message, evidence}, ...]}`` or ``None``.
    """

    id: str
    path: str
    fields: Mapping[str, Any]
    body: str
    body_chars: int
    truncated: bool
    max_chars: int | None
    supersedes: tuple[str, ...]
    superseded_by: tuple[str, ...]
    envelope: Mapping[str, Any] | None
    suspect: Mapping[str, Any] | None

    @property
    def budget_used(self) -> int:
        """Characters of body shown."""
        return len(self.body)

    def to_json(self) -> dict[str, Any]:
        """The ``show --json`` object."""
        return {
            "id": self.id,
            "store": "record",
            "path": self.path,
            "fields": dict(self.fields),
            "body": self.body,
            "body_chars": self.body_chars,
            "truncated": self.truncated,
            "max_chars": self.max_chars,
            "budget_used": self.budget_used,
            "lineage": {"supersedes": list(self.supersedes), "superseded_by": list(self.superseded_by)},
            "envelope": None if self.envelope is None else dict(self.envelope),
            "suspect": None if self.suspect is None else dict(self.suspect),
        }


def show(ws: Workspace, target: str, *, max_chars: int | None = None) -> Shown:
    """The repository record ``target`` names (an id or a unique prefix of one).

    Args:
        target: a record id or a prefix of one.
        max_chars: cut the body to this many characters (``None``: whole; must be >= 0).

    Raises:
        InputError: an empty target (``target_not_found``) or a negative ``max_chars`` (``bad_max_chars``).
        TargetNotFound, AmbiguousTarget: see the module docstring.
        InputError: the record holds a credential (``content_withheld``); the file is not a valid record.
    """
    from git_memzoi.memzoi.records import store

    if max_chars is not None and max_chars < 0:
        raise InputError("max_chars must be 0 or more", "bad_max_chars")
    scan = store.scan(ws.layout)
    records = scan.by_id()
    record = records.get(target) or _by_prefix(target, records)
    file = store.record_path(ws.layout, record.id)
    rel = file.relative_to(ws.layout.root).as_posix()
    row = _row(record, rel)
    _refuse_withheld(ws, row)
    raw = store.read_bytes(file, rel)
    parts, fields = store.parse_fields(raw)
    body = parts.body
    shown = body if max_chars is None else body[:max_chars]
    older, newer = lineage(record.id, records)
    from git_memzoi.memzoi.recall import suspect

    return Shown(
        id=record.id,
        path=rel,
        fields=_plain(fields),
        body=shown,
        body_chars=len(body),
        truncated=len(shown) < len(body),
        max_chars=max_chars,
        supersedes=older,
        superseded_by=newer,
        envelope=None if record.memkeep is None else _plain(dict(record.memkeep)),
        suspect=suspect.assess(ws, [row]).get(record.id),
    )


def lineage(record_id: str, records: Mapping[str, Record]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ``supersedes`` chain of ``record_id`` both ways: ``(older, newer)``, each nearest first.

    Older follows each record's ``supersedes`` (an id naming no record ends the chain, but is listed); newer
    lists the records superseding it, breadth first, several successors in id order. A cycle stops each walk.
    """
    seen = {record_id}
    older: list[str] = []
    current = records[record_id].supersedes
    while current and current not in seen:
        seen.add(current)
        older.append(current)
        found = records.get(current)
        current = found.supersedes if found is not None else None
    successors: dict[str, list[str]] = {}
    for rid in sorted(records):
        parent = records[rid].supersedes
        if parent:
            successors.setdefault(parent, []).append(rid)
    newer: list[str] = []
    queue, seen = [record_id], {record_id, *older}
    while queue:
        for child in successors.get(queue.pop(0), []):
            if child not in seen:
                seen.add(child)
                newer.append(child)
                queue.append(child)
    return tuple(older), tuple(newer)


def _by_prefix(target: str, records: Mapping[str, Record]) -> Record:
    matches = sorted(rid for rid in records if target and rid.startswith(target))
    if not matches:
        raise TargetNotFound(f"no record {target!r} in .memzoi/records/")
    if len(matches) > 1:
        named = ", ".join(matches[:MAX_CANDIDATES]) + (", ..." if len(matches) > MAX_CANDIDATES else "")
        raise AmbiguousTarget(f"{target!r} names {len(matches)} records: {named}")
    return records[matches[0]]


def _row(record: Record, rel: str) -> dict[str, Any]:
    from git_memzoi.memzoi.recall.index.rows import record_row

    return record_row("repo", rel, record)


def _refuse_withheld(ws: Workspace, row: Mapping[str, Any]) -> None:
    from git_memzoi.memzoi.recall.search import withhold

    _kept, withheld = withhold(ws.layout, [row])
    if withheld:
        hit = withheld[0]
        raise InputError(
            f"record {row['id']!r} withheld: its {hit['field']} holds a credential ({hit['rule']})",
            "content_withheld",
        )


def _plain(value: Any) -> Any:
    """``value`` as JSON values: timestamps and dates as ISO strings, mappings and lists recursively."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    return value
