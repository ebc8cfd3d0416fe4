"""Where a ``git memzoi`` command runs: its start directory (``-C``) and the memzoi :class:`Workspace` it opens."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from git_memzoi.memzoi import Workspace


def start_dir(ctx: click.Context) -> Path:
    """The directory a command runs in (``-C``, else the current one)."""
    directory = (ctx.find_root().obj or {}).get("directory")
    return Path(directory) if directory else Path.cwd()


def given_path(ctx: click.Context, value: str) -> Path:
    """A path given on the command line: absolute as given, else relative to the start directory (``-C``)."""
    path = Path(value)
    return path if path.is_absolute() else start_dir(ctx) / path


def open_workspace(ctx: click.Context, *, actor: str | None = None, initialized: bool = True) -> Workspace:
    """The :class:`~git_memzoi.memzoi.Workspace` of this command (the clock honours ``MEMZOI_NOW``)."""
    from git_memzoi.core import clock as clocks
    from git_memzoi.memzoi import workspace

    clock = clocks.from_environment(os.environ)  # a MEMZOI_NOW that is no instant is bad input (invalid_clock)
    ws = workspace.open_workspace(start_dir(ctx), clock=clock, actor=actor, initialized=initialized)
    _refresh_after_writes(ctx, ws)
    return ws


def _refresh_after_writes(ctx: click.Context, ws: Workspace) -> None:
    """When the command ends having written memory (it released the lifecycle lock that every writer holds),
    refresh the derived index if it is built: reads refresh it anyway, but ``doctor`` right after an ``apply``
    warned of drift the apply itself had made (issue 20). Only the folders the command wrote are listed again
    (:func:`~git_memzoi.memzoi.recall.index.db.settle`)."""
    from git_memzoi.core.atomic import folders_since, mark, releases

    lock = ws.layout.lock
    before, point = releases(lock), mark()

    def settle() -> None:
        if releases(lock) != before:
            from git_memzoi.memzoi import index_db

            index_db.refresh_if_built(ws.layout, folders_since(point))

    ctx.call_on_close(settle)
