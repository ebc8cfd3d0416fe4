"""Reading one memory by id (issue 18, "Reading memory"): ``git memzoi show <id>`` (io).

A record of the repository (``.memzoi/records/``) or a memkeep entry (the store's ``entries/`` folder, located
as recall locates it: :func:`git_memzoi.memzoi.recall.index.sources.sources`) is shown whole. A record: its frontmatter fields as written, its body,
its lineage (the ``supersedes`` chain both ways), its ``memkeep`` envelope and its suspect reasons, computed by
the same core as ``search`` and ``precheck`` (:func:`git_memzoi.memzoi.recall.suspect.assess`). Only repository
records are read, as ``search`` reads them: private local records and session checkpoints (in the git dir) are
never shown here, so an id naming only one of them is ``target_not_found``. A record holding a credential is
refused (``content_withheld``) the way ``search`` withholds it, never echoed. An entry is shown the same way:
its frontmatter, body, lineage (``superseded_by`` both ways: the entries it replaced, the ones replacing it),
its envelope fields (anchor, scope, verified_at, ttl_days, explains, check) and memkeep's own suspect reasons
(:func:`~git_memzoi.memzoi.recall.suspect.assess_entries`, as ``git memkeep status`` gives them).

The target is an id or an unambiguous prefix of one (ids may end in a ``-<6hex>`` content suffix), in the stores
``store`` allows: an exact id wins; otherwise the single id starting with the target is shown, and when the ids
starting with it are one lineage (each but one replaced by another of them), its newest record: a supersede keeps
the title's words in the id, so the short id a user learnt goes on naming the memory that now holds the claim (a
fresh user's walk). Several others (a record and an entry of one id, or a prefix of unrelated ids) are
``ambiguous_target``, none is
``target_not_found``, unless a file of that id exists that cannot be read: then its own refusal, as every other
command naming it gives it (``symlink``, ``not_a_regular_file``, ``file_too_large``, ``bad_frontmatter``, ...).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import InputError

if TYPE_CHECKING:
    from git_memzoi.memzoi.recall.slices import Compact
    from git_memzoi.memzoi.records.okf import Record
    from git_memzoi.memzoi.workspace import Workspace

MAX_CANDIDATES = 10  # ids named in an ambiguous_target message


class TargetNotFound(InputError):
    """No repository record or memkeep entry has that id or an id starting with it (exit 2)."""

    default_code = "target_not_found"


class AmbiguousTarget(InputError):
    """The target names several memories (exit 2); the message names them (at most ten)."""

    default_code = "ambiguous_target"


@dataclass(frozen=True)
class Shown:
    """One record or entry (``store``: ``record`` / ``entry``) as ``show`` prints it.

    ``fields``: the frontmatter as written (timestamps as strings). ``body``: the body after the frontmatter,
    cut to ``max_chars`` UTF-16 code units when given (``truncated`` then says whether anything was cut);
    ``budget_used``: UTF-16 code units of body shown. ``supersedes``: older ids, nearest first; ``superseded_by``:
    newer ids, nearest first (for an entry, through its ``superseded_by`` field). ``suspect``: ``{"reasons":
    [{reason, message, evidence}, ...]}`` or ``None``. ``compact``: the projection asked for (``--projection`` /
    ``--heading``, :mod:`~git_memzoi.memzoi.recall.slices`); with it the JSON carries ``projection`` and
    ``context`` instead of ``body``.
    ``valid_at``: whether the as-of instant (:meth:`Workspace.recall_at`) lies in its ``[valid_from, valid_to)``;
    a direct read shows the memory either way (vault-memory F07).
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
    store: str = "record"
    compact: Compact | None = None
    valid_at: bool = True  # inside its business validity at the as-of instant (records/validity.py)
    statements: Mapping[str, Any] | None = None  # a record's categorized statements (recall/statements.py)

    @property
    def budget_used(self) -> int:
        """UTF-16 code units of body shown."""
        from git_memzoi.memzoi.recall.slices import units

        return units(self.body)

    def to_json(self) -> dict[str, Any]:
        """The ``show --json`` object."""
        head: dict[str, Any] = {"id": self.id, "store": self.store, "path": self.path, "fields": dict(self.fields)}
        tail: dict[str, Any] = {
            "lineage": {"supersedes": list(self.supersedes), "superseded_by": list(self.superseded_by)},
            "envelope": None if self.envelope is None else dict(self.envelope),
            "suspect": None if self.suspect is None else dict(self.suspect),
            "valid_at": self.valid_at,
        }
        if self.statements is not None:  # a record's (an entry has none)
            tail["statements"] = dict(self.statements)
        if self.compact is not None:
            return {**head, "projection": self.compact.projection, "context": self.compact.to_json(), **tail}
        body = {
            "body": self.body,
            "body_chars": self.body_chars,
            "truncated": self.truncated,
            "max_chars": self.max_chars,
            "budget_used": self.budget_used,
        }
        return {**head, **body, **tail}


@dataclass(frozen=True)
class Request:
    """What to show of the memory: ``max_chars`` (the one budget, UTF-16 code units, ``None``: the default),
    ``projection`` (``None``: the whole body, the plain ``show``; ``metadata``, ``sections`` or ``full``) and
    ``heading_paths`` (for ``sections``; given alone they imply it)."""

    max_chars: int | None = None
    projection: str | None = None
    heading_paths: tuple[tuple[str, ...], ...] = ()

    def checked(self) -> Request:
        """This request with its projection settled, validated before anything is read.

        Raises:
            InputError: a negative ``max_chars`` (``bad_max_chars``); ``invalid_projection``
                (:func:`git_memzoi.memzoi.recall.slices.project`'s rules).
        """
        from git_memzoi.memzoi.recall import slices

        if self.max_chars is not None and self.max_chars < 0:
            raise InputError("max_chars must be 0 or more", "bad_max_chars")
        projection = self.projection or ("sections" if self.heading_paths else None)
        if projection is not None:
            slices.validate(projection, self.heading_paths, self.max_chars)
        return Request(self.max_chars, projection, self.heading_paths)


def show(
    ws: Workspace,
    target: str,
    *,
    max_chars: int | None = None,
    store: str = "all",
    projection: str | None = None,
    heading_paths: Sequence[Sequence[str]] = (),
    log: bool = True,
) -> Shown:
    """The repository record or memkeep entry ``target`` names (an id or a unique prefix of one).

    Args:
        target: a record or entry id, or a prefix of one.
        max_chars: the one budget, in UTF-16 code units (``None``: the whole body, or the projection's default;
            must be >= 0).
        store: ``records``, ``entries`` or ``all`` (where to look).
        projection: ``metadata``, ``sections`` or ``full`` (``None``: the plain response with ``body``);
            heading_paths: the sections to return (titles from the outermost heading down; imply ``sections``).
        log: append a ``memory.shown`` read event (ids only), as ``search`` appends ``memory.searched``.

    Raises:
        InputError: a negative ``max_chars`` (``bad_max_chars``), a bad ``store`` (``invalid_store``), a bad
            selection (``invalid_projection``), a heading path naming no section (``target_not_found``) or several
            (``ambiguous_target``).
        TargetNotFound, AmbiguousTarget: see the module docstring.
        InputError: the memory holds a credential (``content_withheld``); the file is not a valid record, or
            the file of that id cannot be read (its own refusal code: ``symlink``, ``not_a_regular_file``, ...).
    """
    from git_memzoi.memzoi.recall.index import db, select
    from git_memzoi.memzoi.recall.search import log_event, store_filter

    ask = Request(max_chars, projection, tuple(tuple(p) for p in heading_paths)).checked()
    wanted = store_filter(store)
    with db.read_session(ws.layout):  # the index names the records (one refresh): only the one shown is parsed
        records = select.supersedes(ws.layout, "repo") if wanted in (None, "record") else {}
        entries = _entry_files(ws) if wanted in (None, "entry") else {}
        try:
            kind, found = _resolve(target, records, entries)
        except TargetNotFound:
            refused = _refusal(ws, target, wanted)
            if refused is not None:
                raise refused from None
            raise
        if kind == "record":
            shown = _show_record(ws, found, records, ask)
        else:
            shown = _show_entry(ws, found, entries, ask)
    if log:
        log_event(ws, "memory.shown", {"id": shown.id, "store": shown.store, "projection": ask.projection})
    return shown


def parse_heading_path(text: str) -> tuple[str, ...]:
    """A ``--heading`` value as a heading path: :func:`git_memzoi.memzoi.recall.slices.parse_heading_path`."""
    from git_memzoi.memzoi.recall import slices

    return slices.parse_heading_path(text)


def _show_record(ws: Workspace, record_id: str, records: Mapping[str, str | None], ask: Request) -> Shown:
    from git_memzoi.memzoi.recall import statements, suspect
    from git_memzoi.memzoi.records import store

    record = store.load(ws.layout, record_id)
    file = store.record_path(ws.layout, record.id)
    rel = file.relative_to(ws.layout.root).as_posix()
    row = _row(record, rel)
    _refuse_withheld(ws, row)
    data = store.read_bytes(file, rel)
    parts, fields = store.parse_fields(data)
    older, newer = lineage(record.id, records)
    shown = _shown(
        ("record", record.id, rel),
        fields,
        (data, parts.body),
        ask,
        (older, newer),
        None if record.memkeep is None else dict(record.memkeep),
        suspect.assess(ws, [row]).get(record.id),
        _valid_at(ws, fields),
    )
    return replace(shown, statements=statements.of_file(ws.layout, rel))
    return replace(shown, statements=statements.of_file(ws.layout, rel))


def _valid_at(ws: Workspace, fields: Mapping[str, Any]) -> bool:
    """Whether :meth:`Workspace.recall_at` lies in the interval of ``fields`` (validated when it was read)."""
    from git_memzoi.memzoi.records import validity

    return validity.interval(fields).contains(ws.recall_at())


ENTRY_ENVELOPE = ("anchor", "scope", "verified_at", "ttl_days", "explains", "check")


def _show_entry(ws: Workspace, entry_id: str, files: Mapping[str, tuple[Any, str]], ask: Request) -> Shown:
    from git_memzoi.core import frontmatter
    from git_memzoi.memzoi.recall import suspect
    from git_memzoi.memzoi.recall.index import rows
    from git_memzoi.memzoi.recall.index.schema import COLUMNS
    from git_memzoi.memzoi.records.problem import Problem

    source, rel = files[entry_id]
    data = _entry_bytes(ws, rel)
    values = rows.entry_values(source, rel, data)
    if isinstance(values, Problem):
        raise InputError(values.reason, values.code)
    _refuse_withheld(ws, dict(zip(COLUMNS, values, strict=False)))
    doc = frontmatter.parse(data)
    envelope = {key: doc.fields[key] for key in ENTRY_ENVELOPE if key in doc.fields}
    return _shown(
        ("entry", entry_id, rel),
        doc.fields,
        (data, doc.body),
        ask,
        entry_lineage(entry_id, _successors(ws, files)),
        envelope or None,
        suspect.assess_entries(ws, [entry_id]).get(entry_id),
        _valid_at(ws, doc.fields),
    )


def _shown(
    where: tuple[str, str, str],
    fields: Mapping[str, Any],
    content: tuple[bytes, str],
    ask: Request,
    chain: tuple[tuple[str, ...], tuple[str, ...]],
    envelope: Mapping[str, Any] | None,
    mark: Mapping[str, Any] | None,
    valid_at: bool = True,
) -> Shown:
    """``where``: (store, id, repository-relative path); ``content``: the file's bytes and its body text."""
    from git_memzoi.memzoi.recall import slices

    kind, memory_id, rel = where
    data, body = content
    compact = None
    if ask.projection is not None:
        body_start = len(data) - len(body.encode("utf-8"))  # the body is the file's tail, byte for byte
        compact = slices.project(data, body_start, ask.projection, ask.heading_paths, ask.max_chars)
    shown = body if ask.max_chars is None else slices.clip(body, ask.max_chars)
    return Shown(
        id=memory_id,
        path=rel,
        fields=_plain(fields),
        body=shown,
        body_chars=slices.units(body),
        truncated=shown != body,
        max_chars=ask.max_chars,
        supersedes=chain[0],
        superseded_by=chain[1],
        envelope=None if envelope is None else _plain(envelope),
        suspect=mark,
        store=kind,
        compact=compact,
        valid_at=valid_at,
    )


def lineage(record_id: str, records: Mapping[str, str | None]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ``supersedes`` chain of ``record_id`` both ways: ``(older, newer)``, each nearest first. ``records``
    maps every record id to its ``supersedes`` (``None``: none).

    Older follows each record's ``supersedes`` (an id naming no record ends the chain, but is listed); newer
    lists the records superseding it, breadth first, several successors in id order. A cycle stops each walk.
    """
    step = {rid: older for rid, older in records.items() if older}
    older = _follow(record_id, step)
    return older, _breadth(record_id, _inverse(step), older)


def entry_lineage(entry_id: str, successor: Mapping[str, str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """An entry's ``superseded_by`` chain both ways: ``(older, newer)``, each nearest first. ``successor`` maps
    an entry id to its ``superseded_by``; newer follows it, older lists the entries it replaced, breadth first."""
    newer = _follow(entry_id, successor)
    return _breadth(entry_id, _inverse(successor), newer), newer


def _follow(start: str, step: Mapping[str, str]) -> tuple[str, ...]:
    """``start``'s chain through ``step`` (without ``start``), stopping at an id without a step or a cycle."""
    seen, out = {start}, []
    current = step.get(start)
    while current and current not in seen:
        seen.add(current)
        out.append(current)
        current = step.get(current)
    return tuple(out)


def _inverse(step: Mapping[str, str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for child in sorted(step):
        out.setdefault(step[child], []).append(child)
    return out


def _breadth(start: str, children: Mapping[str, list[str]], exclude: tuple[str, ...]) -> tuple[str, ...]:
    """Every id reachable from ``start`` through ``children``, breadth first, children in id order."""
    out: list[str] = []
    queue, seen = [start], {start, *exclude}
    while queue:
        for child in children.get(queue.pop(0), []):
            if child not in seen:
                seen.add(child)
                out.append(child)
                queue.append(child)
    return tuple(out)


def _resolve(target: str, records: Mapping[str, Any], entries: Mapping[str, Any]) -> tuple[str, str]:
    """``(store, id)`` of the one memory ``target`` names (exact ids first, then prefixes)."""
    exact = [(kind, target) for kind, ids in (("record", records), ("entry", entries)) if target in ids]
    matches = exact or sorted(
        (kind, mid)
        for kind, ids in (("record", records), ("entry", entries))
        for mid in ids
        if target and mid.startswith(target)
    )
    if not matches:
        raise TargetNotFound(f"no record or entry {target!r}")
    replaced = {records[mid] for kind, mid in matches if kind == "record" and records[mid]}
    newest = [(kind, mid) for kind, mid in matches if kind != "record" or mid not in replaced]
    if not exact and len(newest) == 1:  # a prefix naming one lineage names its newest record (module rule)
        return newest[0]
    if len(matches) > 1:
        named = ", ".join(f"{kind} {mid}" for kind, mid in matches[:MAX_CANDIDATES])
        more = ", ..." if len(matches) > MAX_CANDIDATES else ""
        raise AmbiguousTarget(
            f"{target!r} names {len(matches)} memories: {named}{more} (give more of the id or --store)"
        )
    return matches[0]


def _refusal(ws: Workspace, target: str, wanted: str | None) -> InputError | None:
    """Why the file ``target`` names cannot be shown, when one exists that the index could not read (a symlink, a
    FIFO, an oversized or malformed file): the refusal every command naming it by id gives, never a plain
    ``target_not_found``. ``None`` when no such file exists (or it reads well but is no current memory)."""
    from git_memzoi.memkeep.store import Unreadable, read_entry_file
    from git_memzoi.memzoi.recall.index.sources import sources
    from git_memzoi.memzoi.records import store

    if wanted in (None, "record"):
        try:
            store.load(ws.layout, target)
        except store.RecordNotFound:
            pass
        except InputError as exc:
            if exc.code != "bad_id":  # not an id at all: nothing by that name, as a prefix of none
                return exc
    if wanted in (None, "entry") and "/" not in target and target not in ("", ".", ".."):
        for source in sources(ws.layout):
            file = ws.layout.root / source.prefix / f"{target}.md"
            if source.store == "entry" and os.path.lexists(file):
                read = read_entry_file(file, f"{source.prefix}{file.name}")  # as the store lists it unreadable
                if isinstance(read, Unreadable):
                    return InputError(f"{read.path}: {read.reason}", read.code)
    return None


def _entry_files(ws: Workspace) -> dict[str, tuple[Any, str]]:
    """The memkeep entry files of the repository: ``{entry id: (index source, repository-relative path)}``;
    ``{}`` without a store. Symlinks and hidden names are left out, as the index leaves them."""
    from git_memzoi.memzoi.recall.index.sources import sources

    out: dict[str, tuple[Any, str]] = {}
    for source in sources(ws.layout):
        if source.store != "entry":
            continue
        folder = ws.layout.root / source.prefix
        for file in sorted(folder.glob("*.md")) if folder.is_dir() else ():
            if not file.name.startswith(".") and not file.is_symlink() and file.is_file():
                out[file.name[: -len(".md")]] = (source, f"{source.prefix}{file.name}")
    return out


def _entry_bytes(ws: Workspace, rel: str) -> bytes:
    from git_memzoi.core import safe_read

    try:
        return safe_read.read_bytes(ws.layout.root / rel)
    except safe_read.FileRefused as exc:
        raise exc.renamed(rel) from None
    except OSError as exc:
        raise InputError(f"{rel}: cannot read ({exc.strerror})", "unreadable") from None


def _successors(ws: Workspace, files: Mapping[str, tuple[Any, str]]) -> dict[str, str]:
    """Each readable entry's ``superseded_by`` (a string naming another id), keyed by entry id."""
    from git_memzoi.core import frontmatter

    out: dict[str, str] = {}
    for entry_id, (_source, rel) in files.items():
        try:
            data = _entry_bytes(ws, rel)
            if b"superseded_by" not in data:  # most entries: no field to read, no YAML to parse
                continue
            value = frontmatter.parse(data).fields.get("superseded_by")
        except (InputError, frontmatter.FrontmatterError):
            continue
        if isinstance(value, str) and value and value != entry_id:
            out[entry_id] = value
    return out


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
