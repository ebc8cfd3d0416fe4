"""The walk over the record files the derived index covers (io): their paths and (size, mtime_ns, inode)
signatures, and the folders walked.

:mod:`~git_memzoi.memzoi.recall.index.db` compares a walk with the one it stored to decide what to re-read; equal
:meth:`Scan.snapshot` bytes mean nothing changed. Hidden names, ``index.md`` and ``log.md`` are never records.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
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
            return "\0".join(self.rels).encode("utf-8") + b"\0\0" + array("q", self.ints).tobytes()
        except OverflowError:  # a pre-1970 mtime: no snapshot, so every refresh compares file by file
            return None


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
    directory's descriptor (the refresh's main cost)."""
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
                dirs.append((f"{directory}/{name}", st.st_mtime_ns, st.st_ino))
                walk(f"{directory}/{name}", f"{prefix}{name}/", rels, ints, dirs, links=links)
    finally:
        os.close(fd)
