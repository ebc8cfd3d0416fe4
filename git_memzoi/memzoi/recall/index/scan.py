"""The walk over the record files the derived index covers (io): their paths and (size, mtime_ns, inode)
signatures, and the folders walked.

:mod:`~git_memzoi.memzoi.recall.index.db` compares a walk with the one it stored to decide what to re-read; equal
:meth:`Scan.snapshot` bytes mean nothing changed. Hidden names, ``index.md`` and ``log.md`` are never records.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from stat import S_ISDIR, S_ISREG
from typing import TYPE_CHECKING

from git_memzoi.memzoi.recall.index.sources import Signature, Source, sources

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout

_IGNORED = ("index.md", "log.md")


@dataclass(frozen=True)
class Scan:
    """One walk of every source: repository-relative paths and, flat, (size, mtime_ns, inode) per path; and the
    subfolders walked as (absolute path, mtime_ns, inode), each stat taken before it was listed."""

    rels: list[str]
    ints: list[int]
    dirs: list[tuple[str, int, int]]
    sources: tuple[Source, ...] = ()

    @classmethod
    def of(cls, layout: Layout) -> Scan:
        """Walk every source of ``layout`` (:func:`~git_memzoi.memzoi.recall.index.sources.sources`: the record folders and
        the memkeep store's entries; symlinked files included, never followed)."""
        scan = cls([], [], [], sources(layout))
        for source in scan.sources:
            walk(os.path.join(layout.root, source.prefix), source.prefix, scan.rels, scan.ints, scan.dirs, links=True)
        return scan

    def signature(self, n: int) -> Signature:
        """The (size, mtime_ns, inode) of the ``n``-th path."""
        return self.ints[3 * n], self.ints[3 * n + 1], self.ints[3 * n + 2]

    def snapshot(self) -> bytes | None:
        """The walk as bytes: equal bytes mean no file was added, removed, renamed or changed."""
        from array import array

        try:
            return "\0".join(self.rels).encode("utf-8") + _SEPARATOR + array("q", self.ints).tobytes()
        except OverflowError:  # a pre-1970 mtime: no snapshot, so every refresh compares file by file
            return None

    @classmethod
    def stored(cls, snapshot: bytes, sources: tuple[Source, ...]) -> Scan | None:
        """The walk a :meth:`snapshot` was taken of (without its folders), or ``None`` when the bytes are not
        one: the index's own account of every file, read without a query of its ``files`` table."""
        from array import array

        text, separator, packed = snapshot.partition(_SEPARATOR)  # no path is empty: the first pair separates
        ints = array("q")
        if not separator or len(packed) % (3 * ints.itemsize):
            return None
        ints.frombytes(packed)
        try:
            rels = text.decode("utf-8").split("\0") if text else []
        except UnicodeDecodeError:  # a damaged index: the caller compares with its files table instead
            return None
        return cls(rels, ints.tolist(), [], sources) if 3 * len(rels) == len(ints) else None

    @cached_property
    def folders(self) -> list[str]:
        """The folder of each path (its prefix without the trailing ``/``), in walk order."""
        return [rel.rpartition("/")[0] for rel in self.rels]

    def signatures(self, start: int = 0, end: int | None = None) -> dict[str, Signature]:
        """The (size, mtime_ns, inode) of each path, of the ``start``-th to before the ``end``-th (all)."""
        return dict(signed(self.rels[start:end], self.ints[3 * start : None if end is None else 3 * end]))

    def relisted(self, folder: str, prefix: str) -> Relisting | None:
        """This walk with the files directly in ``folder`` (absolute; ``prefix`` its repository-relative path
        with ``/``) listed again and nothing else stat'ed: for a process that knows which folders it wrote.

        ``None`` when the files of ``folder`` cannot be put in place: they were not one run of this walk (a
        snapshot of an older walk order), or the folder held none and now holds some (its place in the walk is
        unknown). The caller then walks everything."""
        folders, key = self.folders, prefix[:-1]
        start = end = None
        if key in folders:
            start = end = folders.index(key)
            while end < len(folders) and folders[end] == key:
                end += 1
            if folders.count(key) != end - start:
                return None
        rels: list[str] = []
        ints: list[int] = []
        _list(folder, prefix, rels, ints, [], links=True)
        if start is None or end is None:
            return Relisting(self, [], []) if not rels else None
        old = self.signatures(start, end)
        changed = [(rel, sig) for rel, sig in signed(rels, ints) if old.pop(rel, None) != sig]
        scan = Scan(
            self.rels[:start] + rels + self.rels[end:],
            self.ints[: 3 * start] + ints + self.ints[3 * end :],
            self.dirs,
            self.sources,
        )
        return Relisting(scan, changed, sorted(old))

    def voided(self, rels: set[str]) -> Scan:
        """This walk with the size of each of ``rels`` set to -1, which no stat gives: the snapshot of an index
        that will read those files again (git's racily clean rule, :func:`~.build.forget_racy`)."""
        ints = list(self.ints)
        for n, rel in enumerate(self.rels):
            if rel in rels:
                ints[3 * n] = -1
        return Scan(self.rels, ints, self.dirs, self.sources)


def signed(rels: Sequence[str], ints: Sequence[int]) -> Iterator[tuple[str, Signature]]:
    """``(path, (size, mtime_ns, inode))`` of each of ``rels``, from the flat ``ints`` of a :class:`Scan`."""
    flat = iter(ints)
    return zip(rels, zip(flat, flat, flat, strict=True), strict=True)


@dataclass(frozen=True)
class Relisting:
    """:meth:`Scan.relisted`: the new walk, and the files of the folder that changed (with their new
    signatures) or vanished."""

    scan: Scan
    changed: list[tuple[str, Signature]]
    removed: list[str]


_SEPARATOR = b"\0\0"  # between the paths and their packed signatures in a snapshot


def walk(
    directory: str,
    prefix: str,
    rels: list[str],
    ints: list[int],
    dirs: list[tuple[str, int, int]],
    *,
    links: bool = False,
) -> None:
    """Add the record files below ``directory``: hidden names skipped, only ``*.md``, no index.md/log.md. With
    ``links`` a symlinked file, a FIFO, socket or device is added with its own (lstat) signature, never followed
    or read (``read_file`` reports it unreadable); without, they are skipped. One stat per entry, through the
    directory's descriptor (the refresh's main cost). A folder's own files come before its subfolders', so
    they are one run of ``rels`` (:meth:`Scan.relisted`)."""
    below: list[tuple[str, int, int]] = []
    _list(directory, prefix, rels, ints, below, links=links)
    for folder in below:
        dirs.append(folder)
        walk(folder[0], f"{prefix}{folder[0].rsplit('/', 1)[1]}/", rels, ints, dirs, links=links)


def _list(
    directory: str, prefix: str, rels: list[str], ints: list[int], below: list[tuple[str, int, int]], *, links: bool
) -> None:
    """Add the record files directly in ``directory`` (see :func:`walk`), and its subfolders to ``below`` as
    (path, mtime_ns, inode), each stat taken before the subfolder is listed."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return
    try:
        for name in os.listdir(fd):
            if name[0] == ".":
                continue
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:  # removed since the listing, or a name the file system cannot stat
                continue
            if S_ISREG(st.st_mode) or (links and not S_ISDIR(st.st_mode)):
                if name.endswith(".md") and name not in _IGNORED and name.isprintable():
                    rels.append(prefix + name)
                    ints += (st.st_size, st.st_mtime_ns, st.st_ino)
            elif S_ISDIR(st.st_mode):
                below.append((f"{directory}/{name}", st.st_mtime_ns, st.st_ino))
    finally:
        os.close(fd)
