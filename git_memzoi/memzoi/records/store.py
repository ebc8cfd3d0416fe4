"""Canonical record files under ``.memzoi/records/`` (io): scan, load, write new, rewrite fields byte-stably.

Scans skip hidden names, read only ``*.md`` and ignore ``index.md`` and ``log.md`` at any depth (memzoi-spec.md
§1); a symlinked record file is never followed but reported as unreadable (:data:`SYMLINK_REASON`). A record's
identity is its concept id: the path below ``records/`` without ``.md``.
Frontmatter in the record writer's YAML subset is read and rewritten without ruamel (:mod:`okf_subset`): a write
command that reads one record and rewrites its status line never loads the YAML library.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memzoi.core import frontmatter, safe_read
from git_memzoi.errors import InputError
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.records import okf_subset
from git_memzoi.memzoi.records.okf import Record, RecordError, concept_id_problem, record_from_fields, scalar
from git_memzoi.memzoi.records.problem import Problem as Problem  # re-exported

MAX_RECORD_BYTES = safe_read.MAX_FILE_BYTES
_IGNORED = ("index.md", "log.md")
SYMLINK_REASON = "a symlink; records must be regular files"  # the wording of memkeep's entries


class RecordNotFound(InputError):
    """No record with that id (exit 2)."""

    default_code = "unknown_record"


@dataclass(frozen=True)
class Scan:
    """Every readable record (sorted by id) and the files that were not."""

    records: tuple[Record, ...]
    problems: tuple[Problem, ...]

    def by_id(self) -> dict[str, Record]:
        """Records keyed by concept id."""
        return {r.id: r for r in self.records}


def record_path(layout: Layout, concept_id: str) -> Path:
    """The file of ``concept_id``.

    Raises:
        InputError: for an id that is not a safe concept id (traversal, uppercase, ...), code ``bad_id``.
    """
    problem = concept_id_problem(concept_id)
    if problem:
        raise InputError(f"record id {concept_id!r}: {problem}", "bad_id")
    return layout.records / f"{concept_id}.md"


def scan(layout: Layout) -> Scan:
    """Read every record file; a broken or symlinked one becomes a :class:`Problem`, never an exception."""
    records: list[Record] = []
    problems: list[Problem] = []
    links: list[Path] = []
    for file in markdown_files(layout.records, links):
        rel = file.relative_to(layout.root).as_posix()
        try:
            records.append(read(layout, file))
        except RecordNotFound:  # removed since the listing (a concurrent rollback): not there now
            continue
        except InputError as exc:
            problems.append(Problem(rel, exc.message, exc.code))
    for link in links:
        rel = link.relative_to(layout.root).as_posix()
        problems.append(Problem(rel, f"{rel}: {SYMLINK_REASON}", "symlink"))
    return Scan(tuple(sorted(records, key=lambda r: r.id)), tuple(sorted(problems, key=lambda p: p.path)))


def load(layout: Layout, concept_id: str) -> Record:
    """The record ``concept_id``.

    Raises:
        RecordNotFound: no such file (the message names the ids ``concept_id`` begins, :func:`longer_ids_hint`).
        RecordError / FrontmatterError: the file is not a valid record. InputError: the file is a symlink
        (``symlink``); ``concept_id`` is no id (``bad_id``, also naming the ids it begins).
    """
    try:
        path = record_path(layout, concept_id)
    except InputError as exc:  # an id cut short after a '-' ("use-pnpm-") is no id, but may be a copied prefix
        hint = longer_ids_hint(layout, concept_id) if exc.code == "bad_id" else ""
        if not hint:
            raise
        raise InputError(f"{exc.message}{hint}", exc.code) from None
    if not os.path.lexists(path):
        where = layout.records.relative_to(layout.root)
        raise RecordNotFound(f"no record {concept_id!r} in {where}/{longer_ids_hint(layout, concept_id)}")
    return read(layout, path)


MAX_HINTED = 3  # ids a not-found message names


def longer_ids_hint(layout: Layout, prefix: str) -> str:
    """``"; did you mean a? (give the whole id)"`` (``one of a, b`` for several) naming the record files whose id starts with ``prefix``
    (at most :data:`MAX_HINTED`, sorted, then ``...``), or ``""`` when none does: a command that changes a
    record takes its whole id (``show`` alone resolves a prefix), and a short id copied from ``show`` or typed
    from memory should say what it may have meant. Only file names are read."""
    try:
        with os.scandir(layout.records) as listing:
            ids = sorted(e.name[:-3] for e in listing if e.name.endswith(".md") and e.name.startswith(prefix))
    except OSError:
        return ""
    ids = [i for i in ids if i != prefix]
    if not prefix or not ids:
        return ""
    more = ", ..." if len(ids) > MAX_HINTED else ""
    named = ids[0] if len(ids) == 1 else f"one of {', '.join(ids[:MAX_HINTED])}{more}"
    return f"; did you mean {named}? (give the whole id)"


def read(layout: Layout, file: Path) -> Record:
    """Parse and validate one record file.

    Raises:
        RecordError, FrontmatterError: the file is not a valid record (both are InputError, exit 2).
        FileRefused: a symlink (``symlink``), no regular file (``not_a_regular_file``: a FIFO is never opened)
            or over :data:`MAX_RECORD_BYTES` (``file_too_large``); InputError too.
        RecordNotFound: the file went away.
    """
    rel = file.relative_to(layout.root).as_posix()
    try:
        parts, fields = parse_fields(read_bytes(file, rel))
    except frontmatter.FrontmatterError as exc:  # say which file: a command names a record by id
        raise exc.located(rel) from None
    if not parts.has_frontmatter:
        raise RecordError(rel, "frontmatter", "a record starts with a --- frontmatter block")
    concept_id = file.relative_to(layout.records).as_posix()[: -len(".md")]
    return record_from_fields(concept_id, rel, fields, parts.body)


def read_bytes(file: Path, rel: str, max_bytes: int = MAX_RECORD_BYTES) -> bytes:
    """The bytes of the record (or packet) file ``file`` shown as ``rel``, through :mod:`git_memzoi.core.safe_read`.

    Raises:
        FileRefused: see :func:`read`. RecordNotFound: the file went away. InputError: it cannot be read.
    """
    try:
        return safe_read.read_bytes(file, max_bytes)
    except safe_read.FileRefused as exc:
        if exc.code == safe_read.SYMLINK:
            raise safe_read.FileRefused(rel, SYMLINK_REASON, exc.code) from None
        raise exc.renamed(rel) from None
    except FileNotFoundError:
        raise RecordNotFound(f"{rel}: no such file") from None
    except OSError as exc:
        raise InputError(f"{rel}: cannot read ({exc.strerror})", "unreadable") from None


def parse_fields(data: bytes) -> tuple[frontmatter.Split, dict[str, Any]]:
    """``frontmatter.parse`` of ``data`` as (parts, fields): the writer's YAML subset is read without ruamel,
    anything else with it (same values either way); a file without frontmatter has no fields.

    Raises:
        FrontmatterError: the file is not UTF-8, or its YAML does not parse.
    """
    parts = frontmatter.split(data)
    if not parts.has_frontmatter:
        return parts, {}
    fields = okf_subset.load(parts.yaml_text)
    return parts, fields if fields is not None else frontmatter.parse(data).fields


def markdown_files(directory: Path, links: list[Path] | None = None) -> list[Path]:
    """The ``*.md`` files below ``directory``, sorted: hidden names and symlinks skipped, ``index.md`` and
    ``log.md`` ignored at any depth; nothing when the folder is missing (records and proposal packets alike).

    Symlinks that would otherwise count (a ``*.md`` name) are appended to ``links`` when given, never followed.
    """
    found: list[Path] = []
    try:
        items = list(os.scandir(directory))
    except OSError:
        return found
    for item in items:
        if item.name.startswith("."):
            continue
        if item.is_symlink():
            if links is not None and item.name.endswith(".md") and item.name not in _IGNORED:
                links.append(Path(item.path))
            continue
        if item.is_dir():
            found.extend(markdown_files(Path(item.path), links))
        elif item.name.endswith(".md") and item.name not in _IGNORED:
            found.append(Path(item.path))
    return sorted(found)


def signed_markdown_files(directory: str, prefix: str, out: list[tuple[str, str, list[int]]]) -> None:
    """:func:`markdown_files` for change detection: appends ``(prefix + path below directory, path, [size,
    mtime_ns, inode])`` per file to ``out``, unsorted, with one lstat each; a file removed meanwhile is left out."""
    try:
        items = list(os.scandir(directory))
    except OSError:
        return
    for item in items:
        if item.name.startswith(".") or item.is_symlink():
            continue
        if item.is_dir():
            signed_markdown_files(item.path, f"{prefix}{item.name}/", out)
        elif item.name.endswith(".md") and item.name not in _IGNORED:
            with contextlib.suppress(OSError):
                st = item.stat(follow_symlinks=False)
                out.append((prefix + item.name, item.path, [st.st_size, st.st_mtime_ns, st.st_ino]))


def update_fields(layout: Layout, concept_id: str, changes: Mapping[str, Any]) -> tuple[Path, bytes, bytes]:
    """Compute the byte-stable rewrite of a record's fields; returns (path, old bytes, new bytes), writes nothing."""
    path = record_path(layout, concept_id)
    old = read_bytes(path, path.relative_to(layout.root).as_posix())
    return path, old, _update_subset(old, changes) or frontmatter.update(old, changes)


def _update_subset(data: bytes, changes: Mapping[str, Any]) -> bytes | None:
    """``frontmatter.update(data, changes)`` without ruamel, for frontmatter in the writer's YAML subset whose
    changed keys are existing one-line scalars set to plain words (``status: superseded``); the result is the
    same bytes. ``None`` for anything else, which the caller hands to ``frontmatter.update``."""
    try:
        parts = frontmatter.split(data)
    except frontmatter.FrontmatterError:
        return None
    before = okf_subset.load(parts.yaml_text) if parts.has_frontmatter else None
    if before is None:
        return None
    lines = parts.yaml_text.split("\n")
    for key, value in changes.items():
        old = before.get(key)
        if not isinstance(value, str) or scalar(value) != value or isinstance(old, (dict, list)) or key not in before:
            return None
        if type(old) is not str or old != value:  # frontmatter.update leaves a same-typed equal value alone
            # subset keys are unique per level and only top-level lines start unindented
            index = next(i for i, line in enumerate(lines) if line.startswith(f"{key}:"))
            lines[index] = f"{key}: {value}"
    yaml_text = "\n".join(lines)
    if okf_subset.load(yaml_text) != {**before, **changes}:  # a word the subset reads as something else
        return None
    return parts.bom + (parts.opening + yaml_text + parts.closing + parts.body).encode("utf-8")
