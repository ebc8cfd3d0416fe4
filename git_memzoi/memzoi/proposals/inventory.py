"""The inventory of file-backed proposal packets under ``.memzoi/proposals/`` (io, read-only): every packet with its
state and identities, and the identity lookups that read only files changed since the derived identity cache.

memzoi-spec.md §3: symlinked proposal roots are refused before anything is read, hidden and symlinked files are
skipped, ``*.md`` only; packet and file identities are unique across ``pending/`` and ``resolved/*``. A
non-repo-safe packet is only ever seen as its redacted receipt.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from git_memzoi.core.atomic import write_bytes_atomic
from git_memzoi.core.hashing import short_hash
from git_memzoi.errors import InputError, MemzoiError
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.proposals.packets import (
    Packet,
    PacketError,
    identity_token,
    parse,
)
from git_memzoi.memzoi.proposals.receipts import Preflight, preflight, receipt
from git_memzoi.memzoi.records import store as record_store

if TYPE_CHECKING:
    pass


MAX_PACKET_BYTES = 256 * 1024
STATES = ("pending", "applied", "rejected")
IDENTITY_CACHE = "packet-identities.json"
NOT_FOUND = "no proposal packet has that id (see `git memzoi proposal-files list`)"


class ProposalNotFound(InputError):
    """No packet has that identity (the lookup is never echoed: it may be a redacted alias)."""

    default_code = "unknown_proposal"


class DuplicateIdentity(InputError):
    """Two packets share a packet or file identity across pending and resolved."""

    default_code = "duplicate_identity"


@dataclass(frozen=True)
class Entry:
    """One packet file. ``packet`` is the parsed packet (the receipt stand-in when ``redacted``), or ``None``
    with ``problem`` set when a repo-safe file does not parse. ``rel`` is the repository-relative path."""

    state: str
    path: Path
    rel: str
    pre: Preflight
    packet: Packet | None
    problem: InputError | None
    tokens: frozenset[str]

    @property
    def redacted(self) -> bool:
        """Whether the file is not repo-safe and is shown only as its redacted receipt."""
        return not self.pre.repo_safe

    @property
    def shown_path(self) -> str | None:
        """The path people may see: ``None`` for a redacted file (its name is part of its identity)."""
        return None if self.redacted else self.rel

    @property
    def shown_id(self) -> str | None:
        """The id people may see: the packet id, the receipt id when redacted, the raw id of a broken file."""
        return self.packet.id if self.packet is not None else self.pre.raw_id

    @property
    def shown_file_id(self) -> str:
        """The file id people may see (the receipt's when redacted)."""
        return self.packet.file_id if self.packet is not None else self.pre.file_id


@dataclass(frozen=True)
class Inventory:
    """Every packet file under pending/ and resolved/, identities checked unique."""

    entries: tuple[Entry, ...]

    def pending(self) -> tuple[Entry, ...]:
        """The pending inbox, in file order."""
        return tuple(e for e in self.entries if e.state == "pending")

    def find(self, identity: str) -> Entry:
        """The packet whose id, file id or redacted alias is ``identity`` (compared by identity token).

        Raises:
            ProposalNotFound: no packet matches.
        """
        token = identity_token(identity.strip())
        for entry in self.entries:
            if token in entry.tokens:
                return entry
        raise ProposalNotFound(NOT_FOUND)

    def taken(self) -> frozenset[str]:
        """Every identity token in use."""
        return frozenset(t for e in self.entries for t in e.tokens)


def inventory(layout: Layout) -> Inventory:
    """Read every packet under ``.memzoi/proposals/`` (read-only).

    Raises:
        InputError: a proposal root is a symlink or not a folder (``symlinked_root``, ``bad_layout``).
        DuplicateIdentity: two packets share an identity.
    """
    entries = [
        _entry(layout, state, root, file)
        for state, root in _roots(layout)
        for file in record_store.markdown_files(root)
    ]
    _check_unique(entries)
    return Inventory(tuple(entries))


def _roots(layout: Layout) -> list[tuple[str, Path]]:
    proposals = layout.base / "proposals"
    for folder in (
        layout.base,
        proposals,
        layout.pending,
        proposals / "resolved",
        layout.resolved("applied"),
        layout.resolved("rejected"),
    ):
        if folder.is_symlink():
            rel = folder.relative_to(layout.root).as_posix()
            raise InputError(f"{rel} is a symlink; proposal roots must be real folders", "symlinked_root")
        if folder.exists() and not folder.is_dir():
            raise InputError(f"{folder.relative_to(layout.root).as_posix()} is not a folder", "bad_layout")
    return [
        ("pending", layout.pending),
        ("applied", layout.resolved("applied")),
        ("rejected", layout.resolved("rejected")),
    ]


def _entry(layout: Layout, state: str, root: Path, file: Path) -> Entry:
    rel = file.relative_to(layout.root).as_posix()
    data = file.read_bytes()
    pre = preflight(file.relative_to(root).as_posix()[: -len(".md")], data)
    if not pre.repo_safe:
        stand_in = receipt(pre)
        return Entry(state, file, rel, pre, stand_in, None, frozenset({stand_in.id, stand_in.file_id}))
    tokens = {identity_token(pre.file_id)} | ({identity_token(pre.raw_id)} if pre.raw_id else set())
    try:
        if len(data) > MAX_PACKET_BYTES:
            raise PacketError(rel, "file", f"larger than {MAX_PACKET_BYTES} bytes")
        packet = parse(pre.file_id, rel, data)
    except InputError as exc:
        return Entry(state, file, rel, pre, None, exc, frozenset(tokens))
    return Entry(state, file, rel, pre, packet, None, packet.tokens)


def _check_unique(entries: list[Entry]) -> None:
    owner: dict[str, Entry] = {}
    for entry in entries:
        for token in sorted(entry.tokens):
            other = owner.setdefault(token, entry)
            if other is not entry:
                raise DuplicateIdentity(
                    f"proposal identity is not unique: {_describe(other)} and {_describe(entry)} "
                    "share a packet or file id; a resolved identity cannot return to pending"
                )


def _describe(entry: Entry) -> str:
    return entry.shown_path or f"a redacted {entry.state} packet ({entry.shown_file_id})"


class _Known(NamedTuple):
    """One packet file's identity tokens; ``entry`` is set when this call read the file (it changed)."""

    state: str
    root: Path
    path: str
    tokens: Collection[str]
    entry: Entry | None


@dataclass(frozen=True)
class Identities:
    """Every packet file's identity tokens, checked unique (see :func:`identities`)."""

    layout: Layout
    known: tuple[_Known, ...]
    cache: dict[str, list[object]]
    stale: bool

    def save(self) -> None:
        """Rewrite the cache if a file was read or removed (after a successful write, holding the lock)."""
        if self.stale:
            _write_cache(self.layout.local / IDENTITY_CACHE, self.cache)

    def find(self, identity: str) -> Entry:
        """:meth:`Inventory.find`, parsing only the packet found. Raises ProposalNotFound."""
        token = identity_token(identity.strip())
        for k in self.known:
            if token in k.tokens:
                return k.entry or _entry(self.layout, k.state, k.root, Path(k.path))
        raise ProposalNotFound(NOT_FOUND)

    def taken(self) -> frozenset[str]:
        """Every identity token in use (as :meth:`Inventory.taken`)."""
        return frozenset(t for k in self.known for t in k.tokens)


def identities(layout: Layout) -> Identities:
    """Every packet file's identity tokens as :func:`inventory` computes them, re-reading only files changed since
    the derived cache (keyed by path hashes: a redacted file name is part of an identity) was written: same size,
    mtime_ns and inode, and older than the cache (git's racily-clean rule). Writers :meth:`~Identities.save` it.

    Raises:
        InputError, DuplicateIdentity: as :func:`inventory` (which raises the duplicate, with its message).
    """
    roots = _roots(layout)  # refused before anything is read
    cached, cache_mtime = _read_cache(layout.local / IDENTITY_CACHE)
    known: list[_Known] = []
    fresh: dict[str, list[object]] = {}
    for state, root in roots:
        files: list[tuple[str, str, list[int]]] = []
        record_store.signed_markdown_files(str(root), f"{rel_path(layout, root)}/", files)
        for rel, path, signature in files:
            key = short_hash(rel.encode("utf-8"), 32)
            hit = cached.pop(key, None)
            if (
                type(hit) is list
                and hit[:3] == signature
                and signature[1] < cache_mtime
                and all(type(t) is str for t in hit[3:])
            ):
                known.append(_Known(state, root, path, hit[3:], None))  # type: ignore[arg-type]
                fresh[key] = hit
            else:
                entry = _entry(layout, state, root, Path(path))
                known.append(_Known(state, root, path, entry.tokens, entry))
                fresh[key] = [*signature, *sorted(entry.tokens)]
    tokens = [t for k in known for t in k.tokens]  # each entry's tokens are a set: repeats are across files
    if len(tokens) != len(set(tokens)):
        inventory(layout)  # raises DuplicateIdentity, naming both files exactly as every other command does
    return Identities(layout, tuple(known), fresh, bool(cached) or any(k.entry is not None for k in known))


def _read_cache(path: Path) -> tuple[dict[str, list[object]], int]:
    """(files, the cache's own mtime_ns); nothing when missing, unreadable or of another shape."""
    try:
        with open(path, "rb") as handle:
            mtime, data = os.fstat(handle.fileno()).st_mtime_ns, json.loads(handle.read())
        files = data["files"] if data["version"] == 1 else None
        return (files if isinstance(files, dict) else {}), mtime
    except (OSError, ValueError, LookupError, TypeError, AttributeError):
        return {}, 0


def _write_cache(path: Path, files: dict[str, list[object]]) -> None:
    with contextlib.suppress(OSError, MemzoiError):  # a derived cache: the next writer tries again
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, json.dumps({"version": 1, "files": files}, separators=(",", ":")).encode("utf-8"))


def rel_path(layout: Layout, path: Path) -> str:
    """``path`` relative to the repository root, as a POSIX string."""
    return path.relative_to(layout.root).as_posix()
