"""Where git's environment puts the repository: ``GIT_DIR``, ``GIT_WORK_TREE`` and ``core.worktree`` read the way
git itself reads them (setup.c), without loading pygit2 (issue 12, the hook environment).

Git runs a hook at the top of the working tree with ``GIT_DIR`` (and, under ``git --work-tree``, ``GIT_WORK_TREE``)
set relative to that directory: ``GIT_DIR=.git GIT_WORK_TREE=.``. Both are relative to the *current directory*,
never to each other; with ``GIT_DIR`` alone, the current directory is the top of the working tree unless the
repository's ``core.worktree`` (relative to the git dir) or ``core.bare`` says otherwise. Our own ``-C DIR``
stands for that directory (git's ``-C`` has already moved the process there when git runs the command).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def redirected(environ: Mapping[str, str]) -> bool:
    """True when ``GIT_DIR`` or ``GIT_WORK_TREE`` is set (git's environment decides where the repository is)."""
    return bool(environ.get("GIT_DIR") or environ.get("GIT_WORK_TREE"))


def env_git_dir(cwd: Path, environ: Mapping[str, str]) -> Path | None:
    """``GIT_DIR`` as an absolute path (relative to ``cwd``, the current directory), or ``None`` when unset."""
    value = environ.get("GIT_DIR")
    return Path(os.path.abspath(cwd / os.path.expanduser(value))) if value else None


def work_tree(
    start: Path, environ: Mapping[str, str], *, cwd: Path, git_dir: Path, core_worktree: str | None, core_bare: bool
) -> Path | None:
    """The top of the working tree git uses under its environment, or ``None`` for a bare repository.

    In git's order: ``GIT_WORK_TREE`` (relative to ``cwd``); none for a bare repository (``core.bare``); the
    repository's ``core.worktree`` (relative to ``git_dir``); else ``start`` itself, as git takes the current
    directory with ``GIT_DIR`` alone (only called when :func:`redirected`: without ``GIT_DIR``,
    ``GIT_WORK_TREE`` is set and comes first).

    Args:
        start: the directory the command runs in (``-C``, else the current one).
        cwd: the process's current directory, which the environment's relative paths are read from (git set them
            where it runs the hook or command, which is also where ``git -C`` went).
        git_dir: the repository's git directory (absolute).
        core_worktree: the repository's ``core.worktree``, or ``None``.
        core_bare: the repository's ``core.bare``.
    """
    tree = environ.get("GIT_WORK_TREE")
    if tree:
        return Path(os.path.abspath(cwd / os.path.expanduser(tree)))
    if core_bare:
        return None
    if core_worktree:
        return Path(os.path.abspath(git_dir / os.path.expanduser(core_worktree)))
    return Path(os.path.abspath(start))


def plain_top(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding a ``.git`` whose repository keeps its working tree there:
    a ``.git`` file (a linked worktree, a submodule), or a ``.git`` directory whose config sets no
    ``core.worktree`` (one substring test on the config's bytes). ``None`` when there is none, or when the
    nearest config mentions ``worktree`` at all: the caller asks pygit2."""
    here = start.resolve()
    for folder in (here, *here.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            try:
                config = (dot_git / "config").read_bytes()
            except OSError:
                return folder
            return None if b"worktree" in config.lower() else folder
        if dot_git.exists():
            return folder
    return None


def dot_git_target(root: Path) -> Path | None:
    """The git directory of the working tree at ``root`` read from the file system: ``root/.git`` itself, or
    where a ``.git`` file points (``gitdir: …``, relative to ``root``); ``None`` when neither can be read."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git.resolve()
    try:
        first = dot_git.read_text("utf-8").splitlines()[0]
    except (OSError, UnicodeDecodeError, IndexError):
        return None
    if first.startswith("gitdir: "):
        return (root / first.removeprefix("gitdir: ").strip()).resolve()
    return None


def git_dirs(root: Path, environ: Mapping[str, str]) -> tuple[Path, Path] | None:
    """``(git dir, common git dir)`` of the working tree at ``root``, as ``git rev-parse --git-dir`` and
    ``--git-common-dir`` name them, read from the file system without pygit2 or a subprocess (hot paths).

    The git dir is ``GIT_DIR`` when set (relative to the current directory), else ``root/.git`` (spelt below
    ``root``) or where a ``.git`` file points. The common dir is ``GIT_COMMON_DIR`` when set, else the git dir's
    ``commondir`` file (a linked worktree's, relative to its git dir), else the git dir itself. ``None`` when
    ``root`` has no git dir (an eval's scratch folder).
    """
    cwd = Path(os.getcwd())
    git_dir = env_git_dir(cwd, environ)
    if git_dir is None:
        dot_git = root / ".git"
        git_dir = Path(os.path.abspath(dot_git)) if dot_git.is_dir() else dot_git_target(root)
    if git_dir is None or not git_dir.is_dir():
        return None
    common_env = environ.get("GIT_COMMON_DIR")
    if common_env:
        return git_dir, Path(os.path.abspath(cwd / os.path.expanduser(common_env)))
    try:
        pointer = (git_dir / "commondir").read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return git_dir, git_dir
    return git_dir, Path(os.path.abspath(git_dir / pointer)) if pointer else git_dir
