"""What merged branches leave for a reviewer, for the CI check (io; issue 16).

Two kinds of review item, both found in the merged tree rather than met as text conflicts: a memkeep INDEX.md that
no longer matches its entries (the clone merged without the driver; post-merge regenerates it locally, CI says
so), and the conflicting claims among Memzoi records (:mod:`git_memzoi.memzoi.records.conflicts`).
:func:`~git_memzoi.integrations.ci_report.github` and ``sarif`` render them as warnings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from pathlib import Path

    from git_memzoi.memkeep.api import StatusResult


class ReviewItem(NamedTuple):
    """One warning for CI: the repository-relative file it points at, its rule and its one-line message."""

    path: str
    rule: str
    message: str


def review_items(result: StatusResult) -> tuple[ReviewItem, ...]:
    """The review items of the repository ``result`` (a ``git memkeep status`` run) describes: INDEX.md drift
    (rule ``index_drift``), then each conflicting claim among the records (rule ``conflict/<kind>``, pointing at
    its first record file). Never raises for an unreadable store or a repository without ``.memzoi/``: it
    just has fewer items."""
    items = list(_index_drift(result))
    items += _conflicts(result.store.root)
    return tuple(items)


def _index_drift(result: StatusResult) -> list[ReviewItem]:
    from git_memzoi.core import safe_read
    from git_memzoi.memkeep import api

    store = result.store
    rel = f"{store.rel}/INDEX.md" if store.rel != "." else "INDEX.md"
    try:
        text = safe_read.read_text(store.index_path, safe_read.MAX_INDEX_BYTES, errors="replace")
    except (OSError, safe_read.FileRefused):
        return []  # missing or unreadable: lint names it (index_missing)
    differs = api.index_drift(api.load_store(store).entries, text)
    if not differs:
        return []
    message = (
        f"{rel} does not match its entries ({differs}): run `git memkeep index` and commit it; "
        "`git memzoi hooks install` registers the merge driver that keeps it merged"
    )
    return [ReviewItem(rel, "index_drift", message)]


def _conflicts(root: Path) -> list[ReviewItem]:
    from git_memzoi.memzoi import Layout, Workspace, conflicts

    layout = Layout(root)
    if not layout.initialized:
        return []
    try:
        found = conflicts.find_conflicts(Workspace(layout))
    except Exception:
        return []
    return [ReviewItem(c.paths[0], f"conflict/{c.kind}", c.message) for c in found]
