"""Where proposal packet files live (io, read-only): the packet folders by state, checked before anything under them is
read, and the pending packets' file ids by name alone.

Split from :mod:`~git_memzoi.memzoi.proposals.files` so that counting what waits for review (the session-start
hook, :func:`~git_memzoi.memzoi.proposals.review.pending_count`) loads none of the apply machinery.
"""

from __future__ import annotations

from pathlib import Path

from git_memzoi.errors import InputError
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.records import store as record_store


def packet_roots(layout: Layout) -> list[tuple[str, Path]]:
    """The packet folders by state, ``[("pending", path), ("applied", path), ("rejected", path)]``, after checking
    every proposal folder on the way is a real folder where it exists.

    Raises:
        InputError: a proposal folder is a symlink (``symlinked_root``) or not a folder (``bad_layout``).
    """
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


def pending_file_ids(layout: Layout) -> tuple[str, ...]:
    """The file ids of the packet files in ``pending/``, sorted, read from their names only (nothing is opened).

    Raises:
        InputError: a proposal root is a symlink or not a folder (``symlinked_root``, ``bad_layout``).
    """
    _, root = packet_roots(layout)[0]
    return tuple(file.relative_to(root).as_posix()[: -len(".md")] for file in record_store.markdown_files(root))
