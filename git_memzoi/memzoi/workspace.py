"""One command's world (io): find the repository, open its layout, pass the clock and the actor (nothing prints).

Commands open a :class:`Workspace` and call one core function; results are typed and rendered by the CLI.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git_memzoi.core.clock import Clock, SystemClock
from git_memzoi.errors import InputError
from git_memzoi.memzoi.layout import InitResult, Layout


@dataclass(frozen=True)
class Workspace:
    """One command's world: the repository's Memzoi layout, the clock and the acting identity.

    A recall may look at the past or the future: ``as_of`` (an aware instant; ``None``: the clock's now) is the
    instant retention and business validity are judged at (records/validity.py), and ``include_superseded``
    lets superseded records be recalled too (a historical query). Writes ignore both.
    """

    layout: Layout
    clock: Clock = field(default_factory=SystemClock)
    actor: str = "cli"
    as_of: dt.datetime | None = None
    include_superseded: bool = False

    def recall_at(self) -> dt.datetime:
        """The instant a recall selects rows at: ``as_of``, else the clock's now."""
        return self.as_of if self.as_of is not None else self.clock.now()

    def viewing(self, as_of: dt.datetime | None = None, include_superseded: bool = False) -> Workspace:
        """This workspace recalling at ``as_of`` (``None``: now) and with ``include_superseded``."""
        from dataclasses import replace

        return replace(self, as_of=as_of, include_superseded=include_superseded)


def find_root(start: Path) -> Path:
    """The working-tree root of the git repository containing ``start``.

    Raises:
        InputError: ``start`` is missing or not inside a git working tree (codes ``bad_directory``,
            ``not_a_repository``).
    """
    from git_memzoi.core.gitroot import worktree_root

    if not start.is_dir():
        raise InputError(f"cannot run in {start}: no such directory", "bad_directory")
    return worktree_root(start)


def open_workspace(
    start: Path,
    *,
    clock: Clock | None = None,
    actor: str | None = None,
    initialized: bool = True,
    layout: Layout | None = None,
) -> Workspace:
    """A :class:`Workspace` for the repository around ``start``; with ``initialized``, ``.memzoi/`` must exist.
    ``layout``: the one an earlier call of this process returned for ``start`` (a running MCP server's, issue 17
    "reuse the workspace across MCP calls"): the repository is not looked up again, the checks still run.

    Raises:
        InputError: not a repository; NotInitialized: no ``.memzoi/`` (names ``git memzoi init``).
    """
    from git_memzoi.core.gitroot import git_dir
    from git_memzoi.memzoi.records import secrets

    reused = layout is not None
    layout = layout or Layout(find_root(start))
    if initialized:
        layout.require()
        if os.path.lexists(layout.legacy_local) and layout.private != layout.legacy_local:
            from git_memzoi.memzoi.runtime import migrate

            migrate.migrate(layout)  # an older version's .memzoi/local/ moves to the git directory (issue 15)
        if layout.interrupted():  # one listing; the lifecycle is loaded only after a crash
            from git_memzoi.memzoi.proposals.lifecycle import heal

            heal(layout)  # an operation a killed process left is rolled back before any command reads or writes
    if not reused:  # kept with the other derived caches, so a later write or recall with no token shape skips it
        secrets.remember_shapes_in(git_dir(layout.root) / "memzoi" / "cache")
    return Workspace(layout, clock or SystemClock(), actor or "cli")


def init(start: Path, *, force: bool = False) -> InitResult:
    """``git memzoi init``: create ``.memzoi/`` in the repository around ``start`` (idempotent)."""
    from git_memzoi.memzoi.layout import init as run_init

    return run_init(open_workspace(start, initialized=False).layout, force=force)


def expiry(ws: Workspace, record_id: str) -> dict[str, Any]:
    """``git memzoi expiry <id>``: why the record is or is not a current assertion now (never mutates).

    Raises:
        RecordNotFound, RecordError, RetentionError: unknown id, invalid record, invalid retention facts.
    """
    from git_memzoi.memzoi.records import retention
    from git_memzoi.memzoi.records import store as record_store

    return retention.explain(record_store.load(ws.layout, record_id), ws.clock.now())
