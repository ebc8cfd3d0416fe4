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
    return workspace.open_workspace(start_dir(ctx), clock=clock, actor=actor, initialized=initialized)
