"""Canonical record files under ``.memzoi/records/`` (io): scan, load, write new, rewrite fields byte-stably.

Scans skip hidden names and symlinks, read only ``*.md`` and ignore ``index.md`` and ``log.md`` at any depth
(memzoi-spec.md §1). A record's identity is its concept id: the path below ``records/`` without ``.md``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memzoi.core import frontmatter
from git_memzoi.errors import InputError
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.okf import Record, RecordError, concept_id_problem, record_from_fields

MAX_RECORD_BYTES = 256 * 1024
_IGNORED = ("index.md", "log.md")


class RecordNotFound(InputError):
    """No record with that id (exit 2)."""

    default_code = "unknown_record"


@dataclass(frozen=True)
class Problem:
    """A record file that could not be read; the others are still served."""

    path: str
    reason: str
    code: str


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
    """Read every record file; a broken one becomes a :class:`Problem`, never an exception."""
    records: list[Record] = []
    problems: list[Problem] = []
    for file in _files(layout.records):
        rel = file.relative_to(layout.root).as_posix()
        try:
            records.append(read(layout, file))
        except InputError as exc:
            problems.append(Problem(rel, exc.message, exc.code))
    return Scan(tuple(sorted(records, key=lambda r: r.id)), tuple(problems))


def load(layout: Layout, concept_id: str) -> Record:
    """The record ``concept_id``.

    Raises:
        RecordNotFound: no such file. RecordError / FrontmatterError: the file is not a valid record.
    """
    path = record_path(layout, concept_id)
    if not path.is_file() or path.is_symlink():
        raise RecordNotFound(f"no record {concept_id!r} in {layout.records.relative_to(layout.root)}/")
    return read(layout, path)


def read(layout: Layout, file: Path) -> Record:
    """Parse and validate one record file.

    Raises:
        RecordError, FrontmatterError: the file is not a valid record (both are InputError, exit 2).
    """
    rel = file.relative_to(layout.root).as_posix()
    if file.stat().st_size > MAX_RECORD_BYTES:
        raise RecordError(rel, "file", f"larger than {MAX_RECORD_BYTES} bytes")
    doc = frontmatter.parse(file.read_bytes())
    if not doc.split.has_frontmatter:
        raise RecordError(rel, "frontmatter", "a record starts with a --- frontmatter block")
    concept_id = file.relative_to(layout.records).as_posix()[: -len(".md")]
    return record_from_fields(concept_id, rel, doc.fields, doc.body)


def _files(directory: Path) -> list[Path]:
    found: list[Path] = []
    try:
        items = list(os.scandir(directory))
    except OSError:
        return found
    for item in items:
        if item.name.startswith(".") or item.is_symlink():
            continue
        if item.is_dir():
            found.extend(_files(Path(item.path)))
        elif item.name.endswith(".md") and item.name not in _IGNORED:
            found.append(Path(item.path))
    return sorted(found)


def update_fields(layout: Layout, concept_id: str, changes: Mapping[str, Any]) -> tuple[Path, bytes, bytes]:
    """Compute the byte-stable rewrite of a record's fields; returns (path, old bytes, new bytes), writes nothing."""
    path = record_path(layout, concept_id)
    old = path.read_bytes()
    return path, old, frontmatter.update(old, changes)
