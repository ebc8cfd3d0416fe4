"""Where temporary files live, and the leftovers a killed process leaves (io; issue 13, "Crash leftovers").

An atomic replace writes a temporary file and renames it over the target, so the rename must stay on one file
system. A temp file beside the target (``agent-memory/entries/.x.md.<hex>.tmp``) is git-visible: a process killed
between the two leaves it for ``git add -A`` to commit. So temp files go to ``<git dir>/memzoi/tmp/`` - git never
lists its own directory - whenever that folder is on the target's file system (a rename across file systems is
not atomic; then, and outside any repository, the temp file stays beside its target, hidden). Each name carries
its writer's pid: a temp file whose process is gone is a leftover, which :func:`sweep` removes (writes under the
lifecycle lock call it) and :func:`leftovers` lists (``git memzoi doctor``). A name without a pid (written by an
older version) counts as a leftover once it is a minute old.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from git_memzoi.core.patterns import lazy

# <pid>-<12 hex>-<target name>.tmp in the scratch folder; .<target name>.[<pid>-]<12 hex>.tmp beside a target
# (the second form without a pid is how versions before issue 13 named them; capture's .<name>.<pid>.tmp too)
_SCRATCH_NAME = lazy(r"(\d+)-[0-9a-f]{12}-.*\.tmp")
_BESIDE_NAME = lazy(r"\..+\.(?:(\d+)-)?[0-9a-f]{12}\.tmp|\..+\.(\d+)\.tmp")
LEGACY_AGE_S = 60.0
PID_REUSE_AGE_S = 86400.0
_SCRATCH: dict[str, tuple[Path, int] | None] = {}


@dataclass(frozen=True)
class Temp:
    """An open temporary file: its descriptor, and its name for ``os.replace`` (absolute, or relative to
    ``dir_fd`` when it sits beside the target)."""

    fd: int
    name: str
    dir_fd: int | None


def scratch_dir(root: Path, *, create: bool = True) -> Path | None:
    """``<git dir>/memzoi/tmp/`` of the repository whose working tree is ``root`` (resolved); ``None`` when ``root``
    holds no ``.git`` (a git directory itself, a folder outside any repository) or the folder cannot be made."""
    found = _scratch(root, create)
    return found[0] if found else None


def _scratch(root: Path, create: bool) -> tuple[Path, int] | None:
    key = str(root)
    if key in _SCRATCH:
        return _SCRATCH[key]
    from git_memzoi.core.gitenv import dot_git_target

    git_dir = dot_git_target(root) if os.path.lexists(root / ".git") else None
    found = None
    if git_dir is not None:
        folder = git_dir / "memzoi" / "tmp"
        try:
            if create:
                os.makedirs(folder, exist_ok=True)
            found = (folder, os.stat(folder).st_dev)
        except OSError:
            found = None
    if found is not None or create:
        _SCRATCH[key] = found
    return found


def create(dir_fd: int, name: str, root: Path) -> Temp:
    """A new temporary file for the file ``name`` of the folder open as ``dir_fd`` (below the resolved ``root``).

    Opened ``0o666`` so the kernel applies the umask exactly as ``open()`` would for a new file (mkstemp's
    ``0o600`` would be handed on by the rename); a folder's default ACL applies only beside the target.

    Raises:
        OSError: neither place can hold a new file.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    pid = os.getpid()
    found = _scratch(root, True)
    same_device = found is not None and os.fstat(dir_fd).st_dev == found[1]
    for _ in range(100):
        token = os.urandom(6).hex()
        try:
            if found is not None and same_device:
                path = str(found[0] / f"{pid}-{token}-{name[:80]}.tmp")
                return Temp(os.open(path, flags, 0o666), path, None)
            hidden = f".{name[:200]}.{pid}-{token}.tmp"
            return Temp(os.open(hidden, flags, 0o666, dir_fd=dir_fd), hidden, dir_fd)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name for {name}")


def discard(temp: Temp) -> None:
    """Remove a temporary file that was not renamed into place (it may already be gone)."""
    try:
        os.unlink(temp.name, dir_fd=temp.dir_fd)
    except FileNotFoundError:
        pass


def leftovers(root: Path, folders: Iterable[Path] = ()) -> list[Path]:
    """Temporary files left by processes that are gone: in ``root``'s scratch folder and beside targets in
    ``folders`` (each listed itself, not below; a missing one is skipped), sorted. Read-only."""
    found: list[Path] = []
    scratch = _scratch(root, False)
    if scratch is not None:
        found += _stale(scratch[0], _SCRATCH_NAME)
    for folder in folders:
        found += _stale(folder, _BESIDE_NAME)
    return sorted(found)


def sweep(root: Path, folders: Iterable[Path] = ()) -> list[Path]:
    """Remove :func:`leftovers` (best effort: one that cannot be removed stays for the next run); the removed."""
    removed = []
    for path in leftovers(root, folders):
        try:
            os.unlink(path)
        except OSError:
            continue
        removed.append(path)
    return removed


def _stale(folder: Path, pattern: re.Pattern[str]) -> list[Path]:
    from git_memzoi.core.clock import file_time_ns

    try:
        listing = list(os.scandir(folder))
    except OSError:
        return []
    now = file_time_ns() / 1e9
    found = []
    for item in listing:
        # both patterns end so; a folder of 1,000 records costs 1,000 regex matches without this test
        match = pattern.fullmatch(item.name) if item.name.endswith(".tmp") else None
        if match is None:
            continue
        try:
            st = item.stat(follow_symlinks=False)
        except OSError:
            continue
        pid = next((int(g) for g in match.groups() if g), None)
        age = now - st.st_mtime
        if (pid is None and age > LEGACY_AGE_S) or (pid is not None and (not alive(pid) or age > PID_REUSE_AGE_S)):
            found.append(Path(item.path))
    return found


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (one that belongs to another user does)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError, OSError):
        return False
    return True
