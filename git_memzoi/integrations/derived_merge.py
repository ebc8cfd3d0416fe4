"""The merge driver of committed derived files and records, and INDEX.md's regeneration after a merge (io; issue 16).

``agent-memory/INDEX.md`` (one generated line per memkeep entry, :mod:`git_memzoi.memkeep.index`) and
``.memzoi/index.md`` (fixed text written by ``init``) are committed but derived: two branches that each add an
entry and run ``git memkeep index`` both change INDEX.md, and git's text merge conflicts whenever their lines
are neighbours. git runs this driver for the paths ``.gitattributes`` marks ``merge=memzoi``
(:mod:`~git_memzoi.integrations.merge_config` registers it) as ``driver %O %A %B %P``.

Why a line merge rather than a rebuild from the entries: git runs content drivers while it merges in memory,
before it writes the merged entries to the working tree, so the entries on disk are still ours alone. The
index is a sorted set of lines, one per entry, so a three-way merge per entry is exactly what ``index`` would
write from the merged entries whenever those merge cleanly: a line one side changed takes that side's, and
where both sides changed one entry (its status on one, its claim on the other) the line is merged cell by cell,
as git merges the entry's own lines. Only where both changed one cell differently (the entry itself conflicts
then) are both lines kept, and ``post-merge`` regenerates the file from the merged tree (:func:`regenerate`)
and says so. The driver never needs a human for an index and exits 0.
A record file both sides changed is merged field by field (:mod:`~git_memzoi.integrations.record_merge`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from git_memzoi.memkeep.api import Store

MEMZOI_INDEX = ".memzoi/index.md"
RECORDS = ".memzoi/records/"
# INDEX.md lines are ``id | type | status | claim``; a header line starts with one of these
_HEADER_STARTS = ("#", "<!--")


@dataclass(frozen=True)
class DriverResult:
    """What the driver did for one path: ``how`` is ``lines`` (three-way line-set merge of a memkeep INDEX.md),
    ``fixed`` (``.memzoi/index.md``, rewritten to its generated text), ``record`` (a record both sides changed,
    merged field by field: :mod:`~git_memzoi.integrations.record_merge`) or ``unknown`` (any other path, or a
    record only a human can merge: both sides are written between conflict markers, ``conflicts`` 1)."""

    path: str
    how: str
    conflicts: int = 0

    @property
    def exit_code(self) -> int:
        """What git reads: 0 when the merged file is clean, 1 when it holds conflict markers."""
        return 1 if self.conflicts else 0


def merge_index_lines(base: str, ours: str, theirs: str) -> str:
    """The INDEX.md text merged three ways, entry by entry (pure; module docstring): an entry's line both sides
    kept, or only one side changed, added or removed, is that side's; one both sides changed is merged cell by
    cell (``id | type | status | claim``: each cell from the side that changed it); one whose same cell both
    changed differently, or that both added differently, keeps both lines for ``post-merge`` to settle. The
    result has memkeep's header and its lines sorted by id, as ``git memkeep index`` writes them.

    Args:
        base, ours, theirs: the ancestor's, our and their INDEX.md text (``""`` when absent on that side).
    Returns:
        The merged text.
    """
    from git_memzoi.memkeep import api

    o, a, b = _by_id(base), _by_id(ours), _by_id(theirs)
    kept: list[str] = []
    for entry_id in sorted(o.keys() | a.keys() | b.keys()):
        kept += _merged_entry(o.get(entry_id, ()), a.get(entry_id, ()), b.get(entry_id, ()))
    ordered = sorted(set(kept), key=lambda line: (line.split(" | ", 1)[0], line))
    return api.INDEX_HEADER + "".join(line + "\n" for line in ordered)


def _merged_entry(base: tuple[str, ...], ours: tuple[str, ...], theirs: tuple[str, ...]) -> tuple[str, ...]:
    """One entry's lines merged three ways (each side holds one line, none, or several left by a past merge)."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    if len(base) == len(ours) == len(theirs) == 1:
        cells = _merged_cells(base[0].split(" | "), ours[0].split(" | "), theirs[0].split(" | "))
        if cells is not None:
            return (" | ".join(cells),)
    changed = {*ours, *theirs} - set(base)  # a real conflict: both sides' lines, for post-merge to settle
    return tuple(sorted(changed or {*ours, *theirs}))


def _merged_cells(base: list[str], ours: list[str], theirs: list[str]) -> list[str] | None:
    """The cells of one index line merged three ways, or ``None`` when one cell was changed differently on both
    sides (or a line is not the four cells memkeep writes)."""
    if not len(base) == len(ours) == len(theirs) == 4:
        return None
    merged = []
    for o, a, b in zip(base, ours, theirs, strict=True):
        if a != o and b != o and a != b:
            return None
        merged.append(b if a == o else a)
    return merged


def _by_id(text: str) -> dict[str, tuple[str, ...]]:
    """The index lines of ``text`` by entry id (header and comment lines left out)."""
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith(_HEADER_STARTS):
            out.setdefault(line.split(" | ", 1)[0], []).append(line)
    return {entry_id: tuple(sorted(lines)) for entry_id, lines in out.items()}


def run(ancestor: Path, current: Path, other: Path, path: str) -> DriverResult:
    """Merge one derived file as git's driver: read git's three temporary files and write the result over
    ``current`` (``%A``), which git then takes as the merged file.

    Args:
        ancestor, current, other: git's ``%O``, ``%A`` and ``%B`` temporary files.
        path: ``%P``, the file's repository-relative path (it decides how the file is merged).
    Returns:
        A :class:`DriverResult`; its ``exit_code`` is the driver's.
    Raises:
        InputError: a temporary file cannot be read (``unreadable``), or is no regular file / too large.
    """
    from git_memzoi.core.atomic import write_bytes_atomic

    name = path.replace("\\", "/")
    if name == MEMZOI_INDEX or name.endswith("/" + MEMZOI_INDEX):
        from git_memzoi.memzoi import layout

        write_bytes_atomic(current, layout.INDEX_TEXT.encode("utf-8"), root=current.parent)
        return DriverResult(name, "fixed")
    texts = [_read(file) for file in (ancestor, current, other)]
    if name.startswith(RECORDS) and name.endswith(".md"):
        from git_memzoi.integrations.record_merge import merge_record

        base, ours, theirs = (text.encode("utf-8") for text in texts)
        merged_record = merge_record(base, ours, theirs, name[len(RECORDS) : -len(".md")], name)
        if merged_record is not None:
            write_bytes_atomic(current, merged_record, root=current.parent)
            return DriverResult(name, "record")
    if Path(name).name != "INDEX.md":  # marked by hand, or a record both sides edited: a human settles it
        markers = f"<<<<<<< ours\n{_ended(texts[1])}=======\n{_ended(texts[2])}>>>>>>> theirs\n"
        write_bytes_atomic(current, markers.encode("utf-8"), root=current.parent)
        return DriverResult(name, "unknown", 1)
    merged = merge_index_lines(*texts)
    write_bytes_atomic(current, merged.encode("utf-8"), root=current.parent)
    return DriverResult(name, "lines")


def _ended(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def _read(file: Path) -> str:
    from git_memzoi.core import safe_read
    from git_memzoi.errors import InputError

    try:
        return safe_read.read_text(file, safe_read.MAX_INDEX_BYTES, errors="replace")
    except FileNotFoundError:
        return ""
    except safe_read.FileRefused as exc:
        raise InputError(f"{file.name}: {exc.reason}", exc.code) from None
    except OSError as exc:
        raise InputError(f"{file.name}: cannot read ({exc.strerror})", "unreadable") from None


@dataclass(frozen=True)
class Regenerated:
    """The derived files :func:`regenerate` rewrote (repository-relative paths), and why it did."""

    paths: tuple[str, ...]
    written: bool = True  # False: found out of step, left as it is (``regenerate(write=False)``)

    def lines(self) -> list[str]:
        """One line per rewritten (or out-of-step) file, for the hook's stderr."""
        if not self.written:
            return [
                f"memkeep: {path} does not match the merged entries; run `git memkeep index` and commit it"
                for path in self.paths
            ]
        return [
            f"memkeep: regenerated {path} from the merged entries (it did not match them); commit it"
            for path in self.paths
        ]


def regenerate(start: Path, *, write: bool = True) -> Regenerated:
    """After a merge: rewrite the memkeep INDEX.md from the merged entries in the working tree when it does not
    match them (the driver was not installed, or both sides changed one entry), for the store found from
    ``start`` and for every store below the root whose files the merge changed (``ORIG_HEAD`` to ``HEAD``;
    ``svc/agent-memory/``). Nothing for a store without INDEX.md, whose index already matches, or whose entry
    files differ from HEAD's (uncommitted work: ``git memkeep index`` is the user's to run, and lint names the
    drift). Without ``write`` the out-of-step INDEX.md is only named: a hook run by the pre-commit framework must
    not change files, which it reports as a failed hook ("files were modified by this hook") whatever the exit
    code.

    Raises:
        InputError: whatever ``git memkeep index`` raises (the hook reports it in one line and exits 0).
    """
    from git_memzoi.memkeep import api

    root = _top(start)
    stores: list[Store] = []
    try:
        stores.append(api.locate_store(start, root))
    except api.StoreNotFound:
        pass
    stores += _merged_stores(root, stores[0] if stores else None)
    shown = tuple(path for store in stores if (path := _regenerate_one(store, root, write)) is not None)
    return Regenerated(shown, written=write)


def _regenerate_one(store: Store, root: Path, write: bool) -> str | None:
    """:func:`regenerate` for one store: the INDEX.md path it rewrote (or, without ``write``, found out of
    step), else ``None``."""
    from git_memzoi.memkeep import api

    if not store.index_path.is_file():  # a store that commits no index: not ours to start one
        return None
    options = api.Options(start=root, store=str(store.path))
    session = api.open_session(options)  # entries through the parse cache: no YAML when warm
    if not api.index_drift(session.loaded.entries, _read(store.index_path)):
        return None  # in step: no entry file is read again, no HEAD blob compared
    if _uncommitted_entries(store):  # the drift may be the user's work in progress, not the merge's: theirs to index
        return None
    if not write:
        return _shown(store.index_path, root)
    result = api.index(options)
    return _shown(result.path, root) if result.changed else None


def _merged_stores(root: Path, primary: Store | None) -> list[Store]:
    """The stores below the root (other than ``primary``) holding a file the merge changed, from ``ORIG_HEAD``
    (the HEAD before it) to ``HEAD``; none when git kept no ``ORIG_HEAD`` or the trees cannot be read."""
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView
    from git_memzoi.errors import MemzoiError
    from git_memzoi.integrations.guard import nested_stores

    try:
        view = Pygit2RepoView(root)
        before, head = view.resolve_commit("ORIG_HEAD"), view.head()
        if before is None or head is None or before == head:
            return []
        return nested_stores(root, view.changed_files(before, head), primary)[0]
    except MemzoiError:
        return []


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _uncommitted_entries(store: Store) -> bool:
    """Whether an entry file in the working tree differs from HEAD's (added, changed or deleted since the last
    commit): an INDEX.md regenerated from those would list entries no commit holds, and its "commit it" would
    commit index lines for them (a fresh user's walk, issue 17). Conservative: a file that cannot be read, or one
    a git filter rewrites, counts as changed, so the hook leaves INDEX.md alone."""
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView
    from git_memzoi.memkeep.api import entry_signatures

    view = Pygit2RepoView(store.root)
    prefix = store.entries_dir.relative_to(store.root).as_posix()
    on_disk = {Path(path).relative_to(store.root).as_posix(): path for path, _ in entry_signatures(store)}
    if set(on_disk) != {p for p in view.tracked_under(prefix) if p.endswith(".md")}:
        return True
    for rel, path in on_disk.items():
        try:
            if view.head_blob(rel) != Path(path).read_bytes():
                return True
        except OSError:
            return True
    return False


def _top(start: Path) -> Path:
    from git_memzoi.core.gitroot import worktree_root

    return Path(os.path.realpath(worktree_root(start)))
