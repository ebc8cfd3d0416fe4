"""Where Memzoi state lives in a checkout, and ``init`` (memzoi-spec.md §1; DESIGN.md principle 1).

The working tree is the only store: canonical records and review packets are files under ``.memzoi/``; private
runtime memory and every derived cache live under ``.memzoi/local/``, which a ``.memzoi/.gitignore`` keeps out
of git.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from git_memzoi.core import safe_read
from git_memzoi.errors import InputError

INDEX_TEXT = """# Memzoi memory

This folder holds the repository's reviewed project memory, kept by `git memzoi`.

- `records/` — canonical records, one claim per file; change meaning with `git memzoi supersede`, never by renaming.
- `proposals/pending/` — review packets waiting for `git memzoi proposal-files apply` or `reject`.
- `proposals/resolved/` — applied and rejected packets, kept as the review trail.
- `config.toml` — optional workflow policy (`[workflow] proposal_approval = "auto" | "manual"`).
- `local/` — private runtime memory and derived caches; ignored by git, never committed.

This file is for people; it has no frontmatter and is never read as a record.
"""
GITIGNORE_TEXT = "# Private runtime memory and derived caches: never committed.\nlocal/\n"
MARKER_NAME = "initialized"
MARKER_TEXT = """# Written by `git memzoi init`: this repository keeps Memzoi memory in .memzoi/.
# Commit this file. git keeps no empty folders, so a fresh clone, or a branch made before the first record,
# has no records/ folder; this file still says the repository is initialised (records/ is created on the
# first write). Do not edit it.
format = 1
"""


# The paths .memzoi/local/ holds and whether each is a folder (True) or a regular file (False).
LOCAL_KINDS = (
    ("index.sqlite", False),
    ("events.jsonl", False),
    ("lifecycle.lock", False),
    ("packet-identities.json", False),
    ("inbox", True),
    ("transactions", True),
    ("proposals", True),
    ("runtime", True),
    ("runtime/local", True),
    ("runtime/session", True),
    ("capture", True),
)


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

    @property
    def local(self) -> Path:
        """``.memzoi/local/``: private runtime memory and derived caches (git-ignored)."""
        return self.base / "local"

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
        """The lifecycle lock every write holds."""
        return self.local / "lifecycle.lock"

    def require(self) -> Layout:
        """Return self when the repository is :attr:`initialized` (a missing ``records/`` reads as empty and is
        created by the first write), and ``.memzoi/``, its records and its private plane are real folders: a
        ``.memzoi/local`` committed as a symlink (``-> ../../victim``) would send every private read and write
        outside the repository (issue 13).

        Raises:
            NotInitialized: otherwise, naming ``git memzoi init``. InputError: ``symlinked_root``; a path in
            ``.memzoi/local/`` of the wrong kind (``bad_layout``, ``not_a_regular_file``, :meth:`private_problems`).
            UnsafePath: ``.memzoi/local`` or a path in it is a symlink.
        """
        from git_memzoi.core.confine import UnsafePath

        if not self.initialized:
            raise NotInitialized(f"no Memzoi memory in {self.root}: run `git memzoi init` first")
        if self.base.is_symlink() or self.records.is_symlink():
            raise InputError(f"{self.base} is a symlink; Memzoi state must be real folders", "symlinked_root")
        for path in self.private_paths():
            if path.is_symlink():
                rel = path.relative_to(self.root).as_posix()
                raise UnsafePath(
                    f"{rel} is a symlink (to {ascii(str(path.readlink()))[1:-1]}); private memory must stay in "
                    "real files and folders of the repository: remove the link"
                )
        problems = self.private_problems()
        if problems:
            message, code = problems[0]
            raise InputError(f"{message}; not written", code)
        return self

    def private_paths(self) -> list[Path]:
        """The private plane's fixed folders and files, checked by :meth:`require` before any command reads or writes
        there: one committed as a symlink (``--no-verify``) would lead reads and writes out of the repository."""
        return [self.local, *(self.local / name for name, _ in LOCAL_KINDS)]

    @property
    def transactions(self) -> Path:
        """``.memzoi/local/transactions/``: the journals of operations in progress, or of killed ones."""
        return self.local / "transactions"

    def interrupted(self) -> bool:
        """Whether a journal is on disk (a live operation's, or one a killed process left); one listing."""
        try:
            with os.scandir(self.transactions) as listing:
                return next(listing, None) is not None
        except OSError:
            return False

    def temp_folders(self) -> list[Path]:
        """The folders a killed writer may have left a temporary file in (versions before issue 13 wrote them
        beside their targets; now only a write across file systems does): :mod:`git_memzoi.core.scratch`."""
        local = self.local
        return [
            self.base,
            self.records,
            self.pending,
            self.resolved("applied"),
            self.resolved("rejected"),
            self.base / "exports",
            self.base / "exports" / "okf",
            local,
            local / "inbox",
            local / "proposals",
            local / "runtime" / "local",
            local / "runtime" / "session",
        ]

    def private_problems(self) -> list[tuple[str, str]]:
        """What in ``.memzoi/local/`` is of the wrong kind, as ``(phrase, code)``: ``(".memzoi/local/inbox: a
        regular file, not a folder", "bad_layout")``, or ``not_a_regular_file`` (the safe reader's code) where a
        file belongs; empty when every known path there is absent or what it must be.

        Checked before a command's first write (issue 13): ``local/`` that is a file, an index, event log or
        lock that is a folder, an inbox or transaction folder that is a file each failed deep inside a command,
        after it had written something, as an internal error.
        """
        import os

        found: list[tuple[str, str]] = []
        for path, folder in ((self.local, True), *((self.local / name, kind) for name, kind in LOCAL_KINDS)):
            try:
                mode = os.stat(path).st_mode
            except FileNotFoundError:
                continue
            except OSError as exc:  # a component is a file (local/ itself is), a link loops: unusable either way
                if path != self.local and not self.local.is_dir():
                    break  # local/ itself was reported
                found.append((f"{self._rel(path)}: cannot be used ({exc.strerror})", "bad_layout"))
                continue
            if folder and not stat.S_ISDIR(mode):
                found.append((f"{self._rel(path)}: {safe_read.kind(mode)}, not a folder", "bad_layout"))
            elif not folder and not stat.S_ISREG(mode):
                found.append((f"{self._rel(path)}: {safe_read.kind(mode)}, not a regular file", safe_read.NOT_REGULAR))
        return found

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


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
    """Create ``.memzoi/`` with records/, proposals/, local/, index.md, .gitignore and the tracked marker
    ``initialized`` (:attr:`Layout.marker`); idempotent.

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
        layout.local,
    ]
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
