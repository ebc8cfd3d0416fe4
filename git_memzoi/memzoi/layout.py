"""Where Memzoi state lives, and ``init`` (memzoi-spec.md §1; DESIGN.md principle 1 and the wave-2 decision
"private state lives in the common git directory"; docs/private-memory.md).

Three places, each reached only through a :class:`Layout` property:

- the working tree's ``.memzoi/``: canonical records and repo-safe review packets (committed);
- :attr:`Layout.private` (``<git common dir>/memzoi/local/``): private memory - runtime local and session records,
  private proposals, inbox state, capture plans, the event log, replay keys and the lifecycle lock - shared by
  every worktree of the repository and impossible to commit (git never lists its own directory);
- :attr:`Layout.derived` (``<git dir>/memzoi/worktree/``, the worktree's own git directory): what is derived from
  one worktree's files - the recall index, the packet identity cache and the journals of operations in progress,
  whose entries name that worktree's files.

Outside a git repository (an eval's scratch folder) both fall back to ``.memzoi/local/``, the place every version
before issue 15 used; :mod:`git_memzoi.memzoi.runtime.migrate` moves such a folder's contents on first use.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from git_memzoi.core import safe_read
from git_memzoi.errors import InputError

INDEX_TEXT = """# Memzoi memory

This folder holds the repository's reviewed project memory, kept by `git memzoi`.

- `records/` — canonical records, one claim per file; change meaning with `git memzoi supersede`, never by renaming.
- `proposals/pending/` — review packets waiting for `git memzoi proposal-files apply` or `reject`.
- `proposals/resolved/` — applied and rejected packets, kept as the review trail.
- `config.toml` — optional workflow policy (`[workflow] proposal_approval = "auto" | "manual"`).

Private runtime memory lives in the git directory (`.git/memzoi/local/`), shared by every worktree and never
committed. This file is for people; it has no frontmatter and is never read as a record.
"""
GITIGNORE_TEXT = "# Private runtime memory and derived caches of older versions: never committed.\nlocal/\n"
MARKER_NAME = "initialized"
MARKER_TEXT = """# Written by `git memzoi init`: this repository keeps Memzoi memory in .memzoi/.
# Commit this file. git keeps no empty folders, so a fresh clone, or a branch made before the first record,
# has no records/ folder; this file still says the repository is initialised (records/ is created on the
# first write). Do not edit it.
format = 1
"""


# The paths of the private memory folder (Layout.private) and whether each is a folder (True) or a regular file.
PRIVATE_KINDS: tuple[tuple[str, bool], ...] = (
    ("events.jsonl", False),
    ("lifecycle.lock", False),
    ("inbox", True),
    ("proposals", True),
    ("runtime", True),
    ("runtime/local", True),
    ("runtime/session", True),
    ("capture", True),
    ("replay", True),
    ("journals", True),
)
# The paths of the per-worktree folder (Layout.derived): derived from, or naming, one worktree's files.
DERIVED_KINDS: tuple[tuple[str, bool], ...] = (
    ("index.sqlite", False),
    ("packet-identities.json", False),
    ("transactions", True),
)
# Everything ``.memzoi/local/`` held before issue 15 (the migration's map).
LOCAL_KINDS = PRIVATE_KINDS + DERIVED_KINDS
LEGACY_LOCAL = ".memzoi/local"


class NotInitialized(InputError):
    """The repository has no ``.memzoi/`` yet (exit 2)."""

    default_code = "not_initialized"


@dataclass(frozen=True)
class Layout:
    """The paths of one repository's Memzoi state. ``root`` is the working tree's top directory."""

    root: Path

    @property
    def base(self) -> Path:
        """``.memzoi/``."""
        return self.root / ".memzoi"

    @property
    def records(self) -> Path:
        """``.memzoi/records/``: canonical records."""
        return self.base / "records"

    @property
    def pending(self) -> Path:
        """``.memzoi/proposals/pending/``: review packets."""
        return self.base / "proposals" / "pending"

    def resolved(self, outcome: str) -> Path:
        """``.memzoi/proposals/resolved/<applied|rejected>/``."""
        return self.base / "proposals" / "resolved" / outcome

    @cached_property
    def _git_dirs(self) -> tuple[Path, Path] | None:
        """``(git dir, common git dir)`` of the working tree at :attr:`root`, read from the file system (``.git``,
        ``commondir``) or, under git's environment, from ``GIT_DIR`` / ``GIT_COMMON_DIR``; ``None`` outside git."""
        from git_memzoi.core import gitenv

        return gitenv.git_dirs(self.root, os.environ)

    @property
    def legacy_local(self) -> Path:
        """``.memzoi/local/``: where versions before issue 15 kept private memory and caches (migrated away)."""
        return self.base / "local"

    @property
    def private_root(self) -> Path:
        """``<git common dir>/memzoi/``: the confinement root of :attr:`private` (see :meth:`root_for`)."""
        dirs = self._git_dirs
        return dirs[1] / "memzoi" if dirs else self.root

    @property
    def private(self) -> Path:
        """``<git common dir>/memzoi/local/``: private memory shared by every worktree (``.memzoi/local/``
        outside git)."""
        dirs = self._git_dirs
        return dirs[1] / "memzoi" / "local" if dirs else self.legacy_local

    @property
    def local(self) -> Path:
        """The private memory folder, :attr:`private` (the name every caller used before issue 15)."""
        return self.private

    @property
    def derived_root(self) -> Path:
        """``<git dir>/memzoi/``: the confinement root of :attr:`derived`."""
        dirs = self._git_dirs
        return dirs[0] / "memzoi" if dirs else self.root

    @property
    def derived(self) -> Path:
        """``<git dir>/memzoi/worktree/``: this worktree's derived caches and operation journals (the main
        checkout's git dir is the common one; a linked worktree's is ``.git/worktrees/<name>/``)."""
        dirs = self._git_dirs
        return dirs[0] / "memzoi" / "worktree" if dirs else self.legacy_local

    @property
    def index(self) -> Path:
        """The derived recall index of this worktree."""
        return self.derived / "index.sqlite"

    @property
    def events(self) -> Path:
        """The lifecycle event log (private, shared)."""
        return self.private / "events.jsonl"

    @property
    def inbox(self) -> Path:
        """The review inbox's workflow state, one JSON file per proposal (private, shared)."""
        return self.private / "inbox"

    @property
    def private_proposals(self) -> Path:
        """Review packets that are not repo-safe (private, shared; never git-visible)."""
        return self.private / "proposals"

    @property
    def capture_plans(self) -> Path:
        """Saved private capture plans (private, shared)."""
        return self.private / "capture"

    @property
    def replay(self) -> Path:
        """The ``(session_id, event_id)`` keys of session ends and checkpoints (private, shared)."""
        return self.private / "replay"

    @property
    def identity_cache(self) -> Path:
        """The packet identity cache of this worktree's pending packets (derived)."""
        return self.derived / "packet-identities.json"

    def runtime(self, destination: str) -> Path:
        """The private runtime record files of ``destination`` (``local`` or ``session``)."""
        return self.private / "runtime" / destination

    def root_for(self, path: Path) -> Path:
        """The folder a write of ``path`` is confined to: :attr:`private_root` or :attr:`derived_root` for the
        git directory's memory (its own ``.git`` component would be refused below the working tree), else
        :attr:`root`."""
        for base in (self.private_root, self.derived_root):
            if base != self.root and _below(path, base):
                return base
        return self.root

    def label(self, path: Path) -> str:
        """How output and journals name ``path``: relative to the working tree when it lies there (the main
        checkout's ``.git/memzoi/local/…`` too), else absolute, as ``git rev-parse --git-common-dir`` prints it
        (a linked worktree's private memory). ``layout.root / label`` is the path again either way."""
        absolute = Path(os.path.abspath(path))
        try:
            return absolute.relative_to(os.path.abspath(self.root)).as_posix()
        except ValueError:
            return absolute.as_posix()

    @property
    def capture_decisions(self) -> Path:
        """``capture/decisions.json`` in the private plane: the capture decisions reviewers made, by content hash."""
        return self.local / "capture" / "decisions.json"

    @property
    def marker(self) -> Path:
        """``.memzoi/initialized``: the tracked file that says the repository is initialised (issue 16)."""
        return self.base / MARKER_NAME

    @property
    def initialized(self) -> bool:
        """Whether ``init`` ran here: ``records/`` exists, or a tracked file does (the marker, or the
        ``index.md`` / ``.gitignore`` every earlier ``init`` wrote), which a fresh clone or a branch made before
        the first record has while its empty folders are gone."""
        if self.records.is_dir():
            return True
        return self.base.is_dir() and any(
            os.path.lexists(self.base / name) for name in (MARKER_NAME, "index.md", ".gitignore")
        )

    @property
    def config(self) -> Path:
        """``.memzoi/config.toml``: repository workflow policy."""
        return self.base / "config.toml"

    @property
    def lock(self) -> Path:
        """The lifecycle lock every write holds, in the private folder: it serialises every worktree's writes to
        the memory they share."""
        return self.private / "lifecycle.lock"

    def require(self) -> Layout:
        """Return self when the repository is :attr:`initialized` (a missing ``records/`` reads as empty and is
        created by the first write), and ``.memzoi/``, its records and the private folders are real folders: a
        ``.memzoi/local`` committed as a symlink (``-> ../../victim``) would send every private read and write of
        an older version, and the migration, outside the repository (issue 13).

        Raises:
            NotInitialized: otherwise, naming ``git memzoi init``. InputError: ``symlinked_root``; a known path of
            the private folders of the wrong kind (``bad_layout``, ``not_a_regular_file``, :meth:`private_problems`).
            UnsafePath: ``.memzoi/local`` or a known path in a private folder is a symlink.
        """
        from git_memzoi.core.confine import UnsafePath

        if not self.initialized:
            raise NotInitialized(self._not_initialized())
        if self.base.is_symlink() or self.records.is_symlink():
            raise InputError(f"{self.base} is a symlink; Memzoi state must be real folders", "symlinked_root")
        for path in self.private_paths():
            if path.is_symlink():
                raise UnsafePath(
                    f"{self.label(path)} is a symlink (to {ascii(str(path.readlink()))[1:-1]}); private memory must "
                    "stay in real files and folders of the repository: remove the link"
                )
        problems = self.private_problems()
        if problems:
            message, code = problems[0]
            raise InputError(f"{message}; not written", code)
        return self

    def memory_elsewhere(self) -> Path | None:
        """The main worktree's root when this is a linked worktree without ``.memzoi/`` and the main worktree has
        one (not committed, or not checked out here): there ``git memzoi init`` would start a second, separate
        store, so :meth:`require`, ``doctor`` and ``quickstart`` say to commit it instead (a fresh user's walk).
        ``None`` otherwise."""
        dirs = self._git_dirs
        main = dirs[1].parent if dirs is not None and dirs[0] != dirs[1] and dirs[1].name == ".git" else None
        if main is None or main == self.root or self.initialized or not Layout(main).initialized:
            return None
        return main

    def _not_initialized(self) -> str:
        """Why :meth:`require` fails: ``init`` is the step, unless :meth:`memory_elsewhere`."""
        main = self.memory_elsewhere()
        if main is not None:
            return (
                f"no Memzoi memory in this worktree ({self.root}): the main worktree {main} has .memzoi/, but this"
                " checkout does not; commit .memzoi/ there and check that commit out here (`git memzoi init` here"
                " would start a separate store)"
            )
        return f"no Memzoi memory in {self.root}: run `git memzoi init` first"

    def _planes(self) -> list[tuple[Path, tuple[tuple[str, bool], ...]]]:
        """Each private folder with the known paths it holds: the legacy ``.memzoi/local/`` (all of them, until
        migrated), :attr:`private` and :attr:`derived` (one folder outside git)."""
        planes: list[tuple[Path, tuple[tuple[str, bool], ...]]] = [(self.legacy_local, LOCAL_KINDS)]
        if self.private != self.legacy_local:
            planes += [(self.private, PRIVATE_KINDS), (self.derived, DERIVED_KINDS)]
        return planes

    def private_paths(self) -> list[Path]:
        """The private folders and their known files, checked by :meth:`require` before any command reads or writes
        there: ``.memzoi/local`` committed as a symlink (``--no-verify``) would lead reads and writes out of the
        repository."""
        return [p for folder, kinds in self._planes() for p in (folder, *(folder / name for name, _ in kinds))]

    @property
    def journals(self) -> Path:
        """The journals of operations in progress, or of killed ones, of every worktree: in the private folder
        they share, because an operation may write the private memory they share, and whichever worktree runs the
        next guarded command must roll it back (each journal names its worktree)."""
        return self.private / "journals"

    @property
    def transactions(self) -> Path:
        """Where an older version kept this worktree's journals (repaired like :attr:`journals`)."""
        return self.derived / "transactions"

    def interrupted(self) -> bool:
        """Whether a journal is on disk (a live operation's, or one a killed process left); a listing or two."""
        for folder in (self.journals, self.transactions):
            try:
                with os.scandir(folder) as listing:
                    if next(listing, None) is not None:
                        return True
            except OSError:
                continue
        return False

    def temp_folders(self) -> list[Path]:
        """The folders a killed writer may have left a temporary file in (versions before issue 13 wrote them
        beside their targets; now a write across file systems, and every write in the git directory's memory
        folders, whose temporary files git never lists either): :mod:`git_memzoi.core.scratch`."""
        private = self.private
        return [
            self.base,
            self.records,
            self.pending,
            self.resolved("applied"),
            self.resolved("rejected"),
            self.base / "exports",
            self.base / "exports" / "okf",
            self.legacy_local,
            private,
            self.inbox,
            self.private_proposals,
            self.capture_plans,
            self.replay,
            self.runtime("local"),
            self.runtime("session"),
            self.derived,
        ]

    def private_problems(self) -> list[tuple[str, str]]:
        """What in the private folders is of the wrong kind, as ``(phrase, code)``: ``(".git/memzoi/local/inbox: a
        regular file, not a folder", "bad_layout")``, or ``not_a_regular_file`` (the safe reader's code) where a
        file belongs; empty when every known path there is absent or what it must be.

        Checked before a command's first write (issue 13): ``local/`` that is a file, an index, event log or
        lock that is a folder, an inbox or transaction folder that is a file each failed deep inside a command,
        after it had written something, as an internal error.
        """
        found: list[tuple[str, str]] = []
        for top, kinds in self._planes():
            for path, folder in ((top, True), *((top / name, kind) for name, kind in kinds)):
                try:
                    mode = os.stat(path).st_mode
                except FileNotFoundError:
                    continue
                except OSError as exc:  # a component is a file (local/ itself is), a link loops: unusable either way
                    if path != top and not top.is_dir():
                        break  # the folder itself was reported
                    found.append((f"{self.label(path)}: cannot be used ({exc.strerror})", "bad_layout"))
                    continue
                if folder and not stat.S_ISDIR(mode):
                    found.append((f"{self.label(path)}: {safe_read.kind(mode)}, not a folder", "bad_layout"))
                elif not folder and not stat.S_ISREG(mode):
                    found.append(
                        (f"{self.label(path)}: {safe_read.kind(mode)}, not a regular file", safe_read.NOT_REGULAR)
                    )
        return found


def _below(path: Path, base: Path) -> bool:
    """``path`` is ``base`` or lies below it, compared as absolute paths (symlinks of the user's own folders
    resolved the same way on both sides)."""
    absolute, top = os.path.abspath(path), os.path.abspath(base)
    return absolute == top or absolute.startswith(top.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class InitResult:
    """What ``init`` created (repository-relative POSIX paths); empty when everything existed."""

    root: Path
    created: tuple[str, ...]
    forced: bool


def _text(path: Path) -> str:
    """A generated file's text; a FIFO or a folder there is refused unopened (``not_a_regular_file``)."""
    return safe_read.read_text(path, errors="replace")


def init(layout: Layout, *, force: bool = False) -> InitResult:
    """Create ``.memzoi/`` with records/, proposals/, index.md, .gitignore and the tracked marker ``initialized``
    (:attr:`Layout.marker`), and the private folders (:attr:`Layout.private`, :attr:`Layout.derived`); idempotent.

    ``force`` rewrites index.md, .gitignore and the marker to their defaults; records and packets are never
    touched.

    Raises:
        InputError: when a path that must be a folder is a file or a symlink.
    """
    from git_memzoi.core.atomic import make_dirs, write_bytes_atomic

    created: list[str] = []
    folders = [
        layout.base,
        layout.records,
        layout.pending,
        layout.resolved("applied"),
        layout.resolved("rejected"),
    ]
    if layout.private == layout.legacy_local:  # outside git: the one private folder is .memzoi/local/
        folders.append(layout.private)
    else:
        for folder in (layout.private, layout.derived):  # in the git directory: never listed as created files
            make_dirs(folder, root=layout.root_for(folder))
    for folder in folders:
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise InputError(f"{folder} exists and is not a folder", "bad_layout")
        if not folder.exists():
            make_dirs(folder, root=layout.root)
            created.append(folder.relative_to(layout.root).as_posix() + "/")
    generated = (
        (layout.base / "index.md", INDEX_TEXT),
        (layout.base / ".gitignore", GITIGNORE_TEXT),
        (layout.marker, MARKER_TEXT),
    )
    for path, text in generated:
        if (force or not os.path.lexists(path)) and (not path.exists() or _text(path) != text):
            write_bytes_atomic(path, text.encode("utf-8"), root=layout.root)
            created.append(path.relative_to(layout.root).as_posix())
    return InitResult(layout.root, tuple(created), force)
