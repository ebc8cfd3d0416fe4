"""Locked records: ``locked: true`` protects a human-reviewed record from every governed change (io: reads one file).

vault-memory README "Document locks": only the boolean ``true`` locks; ``false`` or an absent field do not, and
any other value makes the record invalid (:func:`~git_memzoi.memzoi.records.okf.record_from_fields`). The lock
is read from the record file as it is on disk when the change starts - never from the derived index, never from
the incoming change, so nothing a caller sends gets past it. ``supersede``, ``tombstone``, ``verify`` (heal or
mark stale) and the apply of a packet that would change the record (``proposal-files apply``: what capture,
import and session-end queue) refuse with ``record_locked`` and write nothing; the direct commands and a named
``verify`` check it before any other check. Unlocking is a human edit of the file (the pre-commit hook warns
when a commit does it, :mod:`git_memzoi.integrations.guard`). Locked records stay readable and searchable.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import InputError

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout

KEY = "locked"


class RecordLocked(InputError):
    """A change to a record whose stored file says ``locked: true`` (exit 2, ``record_locked``)."""

    default_code = "record_locked"


def stored_fields(layout: Layout, record_id: str) -> dict[str, Any] | None:
    """The frontmatter of ``record_id``'s file as stored on disk, or ``None`` when there is no such file (or it
    cannot be read or parsed: the ordinary checks after this one report that)."""
    from git_memzoi.memzoi.records import store

    try:
        path = store.record_path(layout, record_id)
    except InputError:
        return None
    if not os.path.lexists(path):
        return None
    try:
        _parts, fields = store.parse_fields(store.read_bytes(path, path.relative_to(layout.root).as_posix()))
    except InputError:
        return None
    return fields


def is_locked(layout: Layout, record_id: str) -> bool:
    """Whether the stored file of ``record_id`` has ``locked: true`` (a missing or unreadable file: no)."""
    fields = stored_fields(layout, record_id)
    return fields is not None and fields.get(KEY) is True


def require_unlocked(layout: Layout, record_id: str, action: str) -> None:
    """Refuse ``action`` (``supersede``, ``tombstone``, ``verify``, ``apply`` ...) on a locked record.

    Raises:
        RecordLocked: the record's stored file has ``locked: true`` (``record_locked``); nothing was written.
    """
    if is_locked(layout, record_id):
        raise RecordLocked(
            f"record {record_id} is locked (locked: true in its file); {action} is refused. Unlocking is a human "
            "edit of the file"
        )
