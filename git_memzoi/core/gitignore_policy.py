"""The ``git-v1`` ignore policy: git's ``.gitignore`` semantics over ignore files the caller has already read,
via dulwich's gitignore engine (memzoi-spec.md §9.2; seed "Instruction, ADR, and Git-change profiles").

Inputs are exactly the project's ``.gitignore`` files, handed over as bytes with their directory
(project-relative POSIX, ``""`` for the root): the bytes that are hashed into a plan are the bytes that decide.
``.git/info/exclude``, ``core.excludesFile`` and global ignores are machine-local and never consulted; matching
is case-sensitive (``core.ignorecase=false``). As in git, a file below an excluded directory is excluded and no
``!`` pattern re-includes it, and a deeper ``.gitignore`` overrides a shallower one.
"""

from __future__ import annotations

import io

import dulwich
from dulwich.ignore import IgnoreFilter, IgnoreFilterManager, read_ignore_patterns

# the engine named in a plan's ``policy_inputs``; the library version is part of it, as git's is for diffs
ENGINE_VERSION = "memzoi/git-ignore-v1+dulwich-" + ".".join(str(part) for part in dulwich.__version__)


class IgnorePolicy(IgnoreFilterManager):
    """git's ignore decision for project-relative POSIX paths, from in-memory ``.gitignore`` files (pure: it
    reads nothing; a symbolic link is a file, as git sees it).

    A walk calls :meth:`add` with each directory's ``.gitignore`` as it enters that directory, as git does: until
    then the file takes no part in any decision (so a directory's own ``.gitignore`` never decides whether the
    walk enters it).
    """

    def __init__(self) -> None:
        super().__init__("", [], False)

    def add(self, directory: str, data: bytes) -> None:
        """Take ``data`` as the ``.gitignore`` of ``directory`` (project-relative POSIX, ``""`` for the root)."""
        self._path_filters[directory] = IgnoreFilter(read_ignore_patterns(io.BytesIO(data)))

    def _load_path(self, path: str) -> IgnoreFilter | None:
        # dulwich reads ``<dir>/.gitignore`` from disk here; the policy knows only what was added
        return self._path_filters.get(path)

    def _is_dir(self, path: str) -> bool:
        # dulwich stats the work tree here; callers say "directory" with a trailing '/', so nothing is read
        return path.endswith("/")

    def excluded(self, path: str, *, is_dir: bool = False) -> bool:
        """True when git ignores the file (or, with ``is_dir``, the directory) ``path``."""
        return self.is_ignored(path.rstrip("/") + ("/" if is_dir else "")) is True

    def prunable(self, directory: str) -> bool:
        """True when a walk may skip ``directory`` entirely: a pattern excludes it by name, so nothing below it
        can be re-included (``dir/*`` alone leaves it to be entered)."""
        return self.may_prune_directory(directory.rstrip("/") + "/")
