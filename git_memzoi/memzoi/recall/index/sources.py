"""The folders of record files the derived index covers (pure but for :func:`sources`, which reads
``.memkeep.yml``): each source's plane, destination and prefix, and a file's stat signature.

Split from :mod:`~git_memzoi.memzoi.recall.index.rows` so that a refresh that finds nothing changed (every CLI
call, every hook) imports no record parser (issue 17, "Start-up").
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from git_memzoi.errors import InputError

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout

RUNTIME_DESTINATIONS = ("local", "session")
STORES = ("record", "entry")  # the two stores recall reads (DESIGN.md "One memory"); ``store`` column values

Signature = tuple[int, int, int]  # (size, mtime_ns, inode) of a record file


@dataclass(frozen=True)
class Source:
    """One folder of record files: its plane, destination and repository-relative POSIX prefix (with ``/``)."""

    plane: str
    destination: str
    prefix: str
    store: str = "record"


SOURCES = (
    Source("git", "repo", ".memzoi/records/"),
    *(Source("runtime", d, f".git/memzoi/local/runtime/{d}/") for d in RUNTIME_DESTINATIONS),  # see sources()
)


def sources(layout: Layout) -> tuple[Source, ...]:
    """The record folders of :data:`SOURCES` - the runtime ones where :meth:`Layout.runtime` puts them (the git
    directory's shared private memory: their prefixes are :meth:`Layout.label` s, absolute in a linked worktree) -
    plus the memkeep store's ``entries/`` folder when the repository has one (located from its root as ``git
    memkeep`` does: ``.memkeep.yml``'s ``store_dir``, else ``agent-memory``; store ``entry``, destination
    ``repo``). A missing store or a broken ``.memkeep.yml`` only leaves entries out."""
    from git_memzoi.memkeep.location import locate

    base = (
        SOURCES[0],
        *(Source("runtime", d, layout.label(layout.runtime(d)) + "/") for d in RUNTIME_DESTINATIONS),
    )
    try:
        store = locate(layout.root, layout.root)
    except InputError:
        return base
    rel = os.path.relpath(store.entries_dir, os.path.realpath(layout.root)).replace(os.sep, "/")
    if rel.startswith("../") or any(rel.startswith(s.prefix) or s.prefix.startswith(f"{rel}/") for s in base):
        return base
    return (*base, Source("git", "repo", f"{rel}/", "entry"))
