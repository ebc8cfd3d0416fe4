"""The one guard of every write (io): a file is written only at its real path below its root, reached through real
folders, never through a symlink (issue 13, "Writes outside the repository").

A symlink committed with ``--no-verify`` - ``.memzoi/local -> ../../victim``, ``agent-memory/entries -> /outside``,
``.memzoi/local/events.jsonl -> ../../../.bashrc`` - arrives with every clone, and a write that followed it would
land outside the repository (an appended JSON line, a rewritten entry). :func:`confined` walks the path below its
root with ``lstat`` and refuses any symlink on the way, the file itself included (:class:`UnsafePath`, code
``unsafe_path``, exit 2: nothing written). Symlinks in the root's own path are the user's and are followed.
:func:`open_dir` then opens the file's folder and checks that the opened descriptor really lies below the root,
so the writers in :mod:`git_memzoi.core.atomic` create, rename and append relative to a checked descriptor.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from git_memzoi.errors import InputError

# a folder git keeps for itself, as git spells it on case-folding file systems (NTFS's short name too): a write
# there (a hook) would run code at the next commit
_GIT_NAMES = frozenset({".git", "git~1"})


class UnsafePath(InputError):
    """A write (or a read of private state) that would go through a symlink or outside its root (exit 2)."""

    default_code = "unsafe_path"


def real_root(root: Path) -> Path:
    """``root`` with its own symlinks resolved (they are the user's: ``/tmp`` on macOS, a linked home)."""
    return Path(os.path.realpath(root))


def confined(path: Path, root: Path) -> Path:
    """The real path of ``path``, which must lie below ``root`` and be reached from it through real folders only.

    Each existing component below ``root`` is ``lstat``-ed: a symlink (the file itself included) raises, so does a
    component that is not a folder, and so does any ``.git`` component (a repository's own folder is never memory); the first missing component ends the walk (nothing below it exists to follow).
    ``path`` may be spelt from ``root`` as given or from its resolved form; ``..`` is normalised lexically first.

    Returns:
        The resolved root joined with the path below it.

    Raises:
        UnsafePath: ``path`` is not below ``root``, or goes through a symlink (message: the component, its target).
        InputError: a component before the last is not a folder (``not_a_folder``).
    """
    real = real_root(root)
    parts = _below(path, root, real)
    if any(part.casefold() in _GIT_NAMES for part in parts):
        raise UnsafePath(f"refusing to write {_shown(real.joinpath(*parts), real)}: it is inside a .git folder")
    current = real
    for n, part in enumerate(parts):
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return real.joinpath(*parts)
        except NotADirectoryError:
            break  # reported below, with the component that is a file
        except OSError as exc:
            raise UnsafePath(f"cannot check {_shown(current, real)} before writing: {exc.strerror}") from None
        if stat.S_ISLNK(mode):
            which = "it" if n == len(parts) - 1 else _shown(current, real)
            raise UnsafePath(
                f"refusing to write {_shown(real.joinpath(*parts), real)}: {which} is a symlink "
                f"(to {_target(current)}); writes stay inside {real}"
            )
        if n < len(parts) - 1 and not stat.S_ISDIR(mode):
            break
    else:
        return current
    raise InputError(
        f"cannot write {_shown(real.joinpath(*parts), real)}: a part of it is not a folder", "not_a_folder"
    )


def open_dir(directory: Path, root: Path) -> int:
    """A descriptor of the real folder ``directory`` (checked by :func:`confined`), opened without following a
    symlink and checked once more where the system can name an open descriptor's path (Linux ``/proc``, macOS
    ``F_GETPATH``): a folder swapped for a symlink between the check and the open is refused too.

    Raises:
        UnsafePath: as :func:`confined`, or the opened folder lies outside ``root``. OSError: it cannot be opened.
    """
    real = confined(directory, root)
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        if os.path.islink(real):
            raise UnsafePath(f"refusing to write in {real}: it became a symlink") from None
        raise exc
    opened = fd_path(fd)
    base = real_root(root)
    if opened is not None and not (opened == base or base in opened.parents):
        os.close(fd)
        raise UnsafePath(f"refusing to write in {real}: it resolves to {opened}, outside {base}")
    return fd


def fd_path(fd: int) -> Path | None:
    """Where an open descriptor is, as the system names it; ``None`` where it cannot say."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        pass
    try:
        import fcntl

        getpath = getattr(fcntl, "F_GETPATH", None)
        if getpath is None:
            return None
        raw = fcntl.fcntl(fd, getpath, bytes(1024))
        return Path(os.fsdecode(raw.split(b"\0", 1)[0]))
    except OSError:
        return None


def _below(path: Path, root: Path, real: Path) -> tuple[str, ...]:
    """The parts of ``path`` below ``root`` (as given or resolved), after lexical normalisation."""
    absolute = Path(os.path.abspath(path))
    for base in (Path(os.path.abspath(root)), real):
        try:
            return absolute.relative_to(base).parts
        except ValueError:
            continue
    raise UnsafePath(f"refusing to write {path}: it is outside {real}")


def _shown(path: Path, real: Path) -> str:
    try:
        return path.relative_to(real).as_posix()
    except ValueError:
        return str(path)


def _target(link: Path) -> str:
    try:
        target = os.readlink(link)
    except OSError:
        return "?"
    return ascii(target)[1:-1]  # one printable line whatever the link holds
