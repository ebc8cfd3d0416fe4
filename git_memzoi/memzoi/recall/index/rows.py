"""Record files as rows of the derived index (io: reads one file; no SQL): the column values of one record file.

Split from :mod:`git_memzoi.memzoi.recall.index.db`, which owns the SQLite file and re-exports these names; the
sources are in :mod:`~git_memzoi.memzoi.recall.index.sources`, what a row reads back as (the record JSON of
memzoi-spec.md §4) in :mod:`~git_memzoi.memzoi.recall.index.row_json`, so that reading the index needs no parser. A record
that cannot be read or validated becomes a :class:`~git_memzoi.memzoi.records.store.Problem`, never an exception.
"""

from __future__ import annotations

import errno
import json
import os
from stat import S_ISLNK, S_ISREG
from typing import Any

from git_memzoi.core import frontmatter, safe_read
from git_memzoi.core.hashing import content_hash
from git_memzoi.core.safe_read import NOT_REGULAR, TOO_LARGE
from git_memzoi.errors import InputError
from git_memzoi.memzoi.recall.index.row_json import EPOCH as _EPOCH
from git_memzoi.memzoi.recall.index.row_json import micros
from git_memzoi.memzoi.recall.index.schema import COLUMNS
from git_memzoi.memzoi.recall.index.sources import SOURCES, Signature, Source
from git_memzoi.memzoi.records import okf, okf_subset, validity
from git_memzoi.memzoi.records.retention import decide
from git_memzoi.memzoi.records.store import MAX_RECORD_BYTES, SYMLINK_REASON, Problem


def read_file(source: Source, rel: str, absolute: str) -> tuple[Signature, tuple[Any, ...] | Problem]:
    """Read one record file: its signature (from the open file) and its row values, or why it is unreadable (a
    symlink is never followed: ``symlink``, with the link's own signature; the open never blocks and anything
    but a regular file is ``not_a_regular_file``: a file swapped for a FIFO since the walk's lstat)."""
    try:
        st = os.lstat(absolute)
        if not S_ISREG(st.st_mode):  # never opened: its own signature, so an unchanged one is not looked at again
            return (st.st_size, st.st_mtime_ns, st.st_ino), _not_regular(rel, st.st_mode)
        fd = os.open(absolute, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symlink since the lstat
            st = os.lstat(absolute)
            return (st.st_size, st.st_mtime_ns, st.st_ino), _not_regular(rel, st.st_mode)
        return (0, 0, 0), Problem(rel, f"cannot read: {exc.strerror}", "unreadable")
    try:
        st = os.fstat(fd)
        signature = (st.st_size, st.st_mtime_ns, st.st_ino)
        if not S_ISREG(st.st_mode):
            return signature, _not_regular(rel, st.st_mode)
        if st.st_size > MAX_RECORD_BYTES:
            return signature, Problem(rel, f"{rel}: larger than {MAX_RECORD_BYTES} bytes; not read", TOO_LARGE)
        data = _read_capped(fd, st.st_size, MAX_RECORD_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_RECORD_BYTES:  # it grew since the fstat
        return signature, Problem(rel, f"{rel}: larger than {MAX_RECORD_BYTES} bytes; not read", TOO_LARGE)
    if source.store == "entry":
        return signature, entry_values(source, rel, data)
    concept_id = rel[len(source.prefix) : -len(".md")]
    try:
        record, parts = parse_record_at(concept_id, rel, data)
        if source.plane == "git" and record.content_class == "unknown":
            raise InputError(
                f"{rel}: content_class: canonical records need an explicit classification", "unclassified_record"
            )
        decision = decide(record, _EPOCH)
    except InputError as exc:
        return signature, Problem(rel, exc.message, exc.code)
    except (ValueError, TypeError, KeyError) as exc:  # a value the validators did not foresee: never a crash
        return signature, Problem(rel, f"{rel}: unreadable record ({type(exc).__name__})", "invalid_record")
    from git_memzoi.memzoi.recall.index import links

    values = row_values(source, rel, record, decision.effective_boundary, decision.reason, parts.body_start_line)
    return signature, links.with_links(values, links.extract(record, data, parts))


def _read_capped(fd: int, size: int, cap: int) -> bytes:
    """The file's bytes up to its end or ``cap``: first its ``size`` and one byte more (to see that it grew), then
    small chunks. Asking for the whole cap at once allocated (and unmapped) 256 KiB a file, which cost a
    50,000-record rebuild more than all its parsing."""
    chunks, total, ask = [], 0, size + 1
    while total < cap:
        want = min(ask, cap - total)
        chunk = os.read(fd, want)
        chunks.append(chunk)
        total += len(chunk)
        if len(chunk) < want:  # a regular file reads short only at its end: no second call to learn it
            break
        ask = ask - len(chunk) or 1 << 16
    return b"".join(chunks)


def entry_values(source: Source, rel: str, data: bytes) -> tuple[Any, ...] | Problem:
    """The records-table values of one memkeep entry file (store ``entry``), or why it cannot be read.

    The entry is parsed as memkeep parses it (:class:`~git_memzoi.memkeep.entries.Entry`): ``id`` is the file
    name, ``title`` the claim (the body's first non-empty line) and ``line`` that claim's file line, ``type`` the
    entry's type, ``applies_to`` its ``scope`` globs, ``memkeep`` its envelope fields. A tombstone is kept with
    status ``tombstone``, so it is never a current assertion; every other entry is ``active`` (whether it is
    suspect is memkeep's report's to say, at recall time).
    """
    from git_memzoi.memkeep.entries import Entry

    try:
        doc = frontmatter.parse(data)
    except frontmatter.FrontmatterError as exc:
        return Problem(rel, f"{rel}: {exc.reason}", exc.code)
    if not doc.split.has_frontmatter:
        return Problem(rel, f"{rel}: no frontmatter block", "no_frontmatter")
    start = doc.split.body_start_line
    entry = Entry(rel, doc.fields, doc.body, start, rel.rsplit("/", 1)[-1][: -len(".md")])
    claim = entry.claim
    lines = doc.body.splitlines()
    line = start + next((n for n, text in enumerate(lines) if text.strip()), 0)
    written, verified = entry.written_at, entry.verified_at
    created = f"{written.isoformat()}T00:00:00Z" if written else "1970-01-01T00:00:00Z"
    updated = f"{verified.isoformat()}T00:00:00Z" if verified else created
    envelope = {k: doc.fields[k] for k in _ENVELOPE if k in doc.fields}
    body = doc.body.strip()
    try:
        span = validity.interval(doc.fields, rel)
    except validity.ValidityError as exc:
        return Problem(rel, exc.message, exc.code)
    return (
        rel,
        entry.id,
        source.plane,
        source.destination,
        entry.type or "fact",
        "semantic",
        claim,
        body,
        None,
        "repo",
        None,
        "repo",
        "general_repo_knowledge",
        "active" if entry.is_live else "tombstone",
        1.0,
        _json(list(entry.scope)),
        "[]",
        "memkeep",
        rel,
        None,
        None,
        created,
        updated,
        micros(updated),
        "{}",
        None,
        "",
        "{}",
        None,
        None,
        _json(envelope),
        content_hash(body.encode("utf-8")).removeprefix("blake3:"),
        source.store,
        line,
        *_validity_values(doc.fields.get("valid_from"), doc.fields.get("valid_to"), span),
        0,
    )


_ENVELOPE = ("status", "anchor", "scope", "verified_at", "written_at", "ttl_days", "explains", "check")


def _not_regular(rel: str, mode: int) -> Problem:
    if S_ISLNK(mode):
        return Problem(rel, f"{rel}: {SYMLINK_REASON}", "symlink")
    return Problem(rel, f"{rel}: {safe_read.kind(mode)}, not a regular file; not read", NOT_REGULAR)


def parse_record(concept_id: str, rel: str, data: bytes) -> okf.Record:
    """Parse and validate one record file; its ``id`` must equal the concept id of its path (spec §13.2).

    Raises:
        RecordError, FrontmatterError: the file is not a valid record.
    """
    return parse_record_at(concept_id, rel, data)[0]


def parse_record_at(concept_id: str, rel: str, data: bytes) -> tuple[okf.Record, frontmatter.Split]:
    """:func:`parse_record` and the file's frontmatter split (``parts.body_start_line``: the file line its body
    starts at; the link extraction reads ``parts`` too), one split for all.

    Raises:
        RecordError, FrontmatterError: as :func:`parse_record`.
    """
    parts = frontmatter.split(data)
    if not parts.has_frontmatter:
        raise okf.RecordError(rel, "frontmatter", "a record starts with a --- frontmatter block")
    fields = okf_subset.load(parts.yaml_text)
    if fields is None:
        fields = frontmatter.parse(data).fields
    return okf.record_from_fields(concept_id, rel, fields, parts.body), parts


def row_values(
    source: Source, rel: str, r: okf.Record, boundary: str | None, reason: str, line: int | None = None
) -> tuple[Any, ...]:
    """The values of the records table for one record, in :data:`COLUMNS` order (``line``: where its body starts)."""
    return (
        rel,
        r.id,
        source.plane,
        source.destination,
        r.type,
        r.lane,
        r.title,
        r.body,
        r.description,
        r.scope,
        r.scope_id,
        r.visibility,
        r.content_class,
        r.status,
        r.confidence,
        _json(list(r.applies_to)),
        _json(list(r.tags)),
        r.source,
        r.source_ref,
        r.proposal_id,
        r.supersedes,
        r.timestamp,
        r.updated_at,
        micros(r.updated_at),
        _json(r.retention),
        None if boundary is None else micros(boundary),
        reason,
        _json(r.origin),
        _json(r.lineage),
        _json(r.capture),
        _json(r.memkeep),
        content_hash(r.body.strip().encode("utf-8")).removeprefix("blake3:"),
        source.store,
        line,
        *_validity_values(
            r.valid_from, r.valid_to, validity.interval({"valid_from": r.valid_from, "valid_to": r.valid_to})
        ),
        1 if r.locked else 0,
    )


def _validity_values(start: Any, end: Any, span: validity.Interval) -> tuple[Any, ...]:
    """The four validity columns: both bounds as written (normalized text) and in microseconds."""
    return (validity.normalized(start), validity.normalized(end), *span.micros())


def record_row(destination: str, rel: str, record: okf.Record) -> dict[str, Any]:
    """The index row ``record`` would have (for :func:`record_json` before the index has seen the file)."""
    source = next(s for s in SOURCES if s.destination == destination)
    decision = decide(record, _EPOCH)
    return dict(
        zip(COLUMNS, row_values(source, rel, record, decision.effective_boundary, decision.reason), strict=False)
    )


def _json(value: Any) -> str | None:
    if value is None:
        return None
    if not value and type(value) in (dict, list):  # most retention, tags, lineage: skip the encoder
        return "{}" if type(value) is dict else "[]"
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
