"""Moving an older version's ``.memzoi/local/`` into the git directory (io; issue 15, "Private memory shared by
worktrees"; docs/private-memory.md).

Before issue 15 each working tree kept its private memory in ``.memzoi/local/``, so a ``git worktree`` saw none of
it. Now it lives in :attr:`Layout.private` (``<git common dir>/memzoi/local/``). The first command that opens a
workspace moves what an old folder holds, under the lifecycle lock, losing nothing:

- operations a killed process left journaled there are rolled back first (their paths name the old folder);
- each private file is moved to the same path below :attr:`Layout.private` by a hard link and an unlink (a copy
  across file systems), never replacing a file: when the new place holds the same bytes, the old copy is only
  removed; when it holds other bytes (another worktree migrated first), the old file is kept in
  ``migration-conflicts/<worktree>/`` beside them, and ``git memzoi doctor`` names it;
- derived caches (the index, the packet identity cache) and the old lock are removed: they are rebuilt on demand;
- the emptied folders are removed last. A process killed part-way leaves some files in each place, each whole;
  the next command carries on where it stopped. Anything that cannot be moved (a symlink, a FIFO) stays, and the
  folder with it, for ``doctor`` to report.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout

CONFLICTS = "migration-conflicts"
_DROPPED = ("index.sqlite", "packet-identities.json", "lifecycle.lock")  # derived, or the old lock: not memory


@dataclass(frozen=True)
class Migration:
    """What one migration did, as paths relative to the old folder: ``moved`` into :attr:`Layout.private`,
    ``dropped`` (derived caches), ``conflicts`` (kept in ``migration-conflicts/``) and ``stuck`` (left in place:
    not a regular file)."""

    moved: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    stuck: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The migration as JSON lists."""
        return {k: list(getattr(self, k)) for k in ("moved", "dropped", "conflicts", "stuck")}


def pending(layout: Layout) -> bool:
    """Whether an old ``.memzoi/local/`` waits to be migrated (one ``lstat``; never outside git, where it is the
    private folder itself)."""
    return layout.private != layout.legacy_local and os.path.lexists(layout.legacy_local)


def migrate(layout: Layout) -> Migration | None:
    """Move the old ``.memzoi/local/`` into :attr:`Layout.private` (see the module docstring); ``None`` when
    there was nothing to do. The caller has run :meth:`Layout.require`, which refuses a symlinked old folder.

    Raises:
        ToolError: ``lock_timeout``, or a file cannot be moved (``write_failed``; what moved stays moved).
        RollbackError: a journaled operation in the old folder cannot be rolled back (nothing moved).
    """
    from git_memzoi.core.atomic import lifecycle_lock
    from git_memzoi.memzoi.proposals import lifecycle

    with lifecycle_lock(layout.lock, root=layout.private_root):
        if not pending(layout) or layout.legacy_local.is_symlink():
            return None
        old = layout.legacy_local
        if (old / "transactions").is_dir() and not (old / "transactions").is_symlink():
            _refuse_absolute(old / "transactions")
            lifecycle.repair_folder(layout, old / "transactions")
        moved: list[str] = []
        dropped: list[str] = []
        kept: list[str] = []
        stuck: list[str] = []
        for rel in _files(old, stuck):
            top = rel.split("/", 1)[0]
            if top.startswith(_DROPPED):
                _remove(layout, old / rel)
                dropped.append(rel)
            elif _move(layout, old / rel, layout.private / rel):
                moved.append(rel)
            else:
                kept.append(rel)
        _prune(layout, old)
        return Migration(tuple(moved), tuple(dropped), tuple(kept), tuple(stuck))


def conflicts(layout: Layout) -> list[str]:
    """The files kept in ``migration-conflicts/`` (labels, sorted), for ``doctor``."""
    folder = layout.private / CONFLICTS
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        found += [layout.label(Path(dirpath) / name) for name in sorted(filenames)]
    return found


def _refuse_absolute(folder: Path) -> None:
    """An older version's journals sit in the working tree, where a commit can plant one: they may name
    working-tree paths only, never the git directory's private memory (an absolute path).

    Raises:
        RollbackError: a journal names an absolute path (nothing rolled back, nothing moved).
    """
    from git_memzoi.core import safe_read
    from git_memzoi.memzoi.proposals.lifecycle import JOURNAL, RollbackError

    for txdir in sorted(folder.iterdir()):
        try:
            journal = safe_read.load_json(safe_read.read_text(txdir / JOURNAL, None))
            entries = journal.get("entries", []) if isinstance(journal, dict) else []
        except (OSError, ValueError, safe_read.FileRefused):
            continue  # no journal to follow: the repair only removes the folder
        if any(isinstance(e, dict) and Path(str(e.get("path", ""))).is_absolute() for e in entries):
            raise RollbackError(f"interrupted operation {txdir.name} names an absolute path; remove {txdir}")


def _files(folder: Path, stuck: list[str]) -> list[str]:
    """The regular files below ``folder`` (relative POSIX paths, sorted), never through a symlink; anything else
    that is no folder goes to ``stuck``."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        for name in list(dirnames):
            if (here / name).is_symlink():
                dirnames.remove(name)
                stuck.append((here / name).relative_to(folder).as_posix())
        dirnames.sort()
        for name in sorted(filenames):
            path = here / name
            rel = path.relative_to(folder).as_posix()
            (found if path.is_file() and not path.is_symlink() else stuck).append(rel)
    return sorted(found)


def _move(layout: Layout, source: Path, target: Path) -> bool:
    """Move ``source`` to ``target``; True when it went there (or was there already, byte for byte), False when
    it was kept in ``migration-conflicts/`` instead."""
    from git_memzoi.core import safe_read
    from git_memzoi.core.atomic import move_new

    if move_new(source, target, source_root=layout.root, root=layout.root_for(target)):
        return True
    if safe_read.read_bytes(source, None) == safe_read.read_bytes(target, None):
        _remove(layout, source)  # a kill between the link and the unlink, or an identical copy
        return True
    rel = source.relative_to(layout.legacy_local)
    base = layout.private / CONFLICTS / _worktree_tag(layout)
    for n in range(1000):
        kept = base / (rel if n == 0 else rel.with_name(f"{rel.name}.{n}"))
        if move_new(source, kept, source_root=layout.root, root=layout.root_for(kept)):
            return False
        if safe_read.read_bytes(source, None) == safe_read.read_bytes(kept, None):
            _remove(layout, source)
            return False
    raise FileExistsError(f"no free place in {base} for {rel}")


def _worktree_tag(layout: Layout) -> str:
    """``<working tree folder name>-<8 hex of its path>``: the worktree a conflicting file came from."""
    from git_memzoi.core.hashing import short_hash

    return f"{layout.root.name}-{short_hash(str(layout.root).encode('utf-8'), 8)}"


def _remove(layout: Layout, path: Path) -> None:
    from git_memzoi.core.atomic import remove_file

    remove_file(path, root=layout.root)


def _prune(layout: Layout, folder: Path) -> None:
    """Remove the emptied folders below ``folder``, deepest first, and ``folder`` itself; one still holding
    something (a stuck file) stays."""
    from git_memzoi.core.atomic import remove_dir
    from git_memzoi.errors import ToolError

    for dirpath, _dirnames, _files in sorted(os.walk(folder), key=lambda w: -len(w[0])):
        if not Path(dirpath).is_symlink():
            try:
                remove_dir(Path(dirpath), root=layout.root)
            except ToolError:
                continue
