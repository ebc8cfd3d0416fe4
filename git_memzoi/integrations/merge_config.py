"""Register the derived-file merge driver: git config plus ``.gitattributes`` (io; issue 16).

``git memzoi hooks install`` and ``git memzoi integrate install`` call :func:`install`: it writes the section

    [merge "memzoi"]
        name = ...
        driver = <python> -m git_memzoi merge-driver %O %A %B %P

into the repository's own config (the common git dir's, shared by every linked worktree; config is never
committed, so each clone installs it) and adds the lines of :func:`attribute_lines` to ``.gitattributes`` at
the top of the working tree, which the user commits so every clone marks the same paths. Both steps are
idempotent and each says what it did. The section is edited as text, ours alone: every other byte of the
config file is kept.

A clone without the driver merges those paths with git's text merge; ``post-merge`` then regenerates
INDEX.md (:func:`~git_memzoi.integrations.derived_merge.regenerate`) and ``git memkeep lint`` names any drift.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

DRIVER = "memzoi"
DRIVER_NAME = "git-memzoi: merge memory indexes and records without a human"
SECTION = f'[merge "{DRIVER}"]'
ATTRIBUTES_COMMENT = "# git-memzoi: memory indexes and records merge without a human (git memzoi hooks install)"
DEFAULT_STORE = "agent-memory"


@dataclass(frozen=True)
class MergeSetup:
    """What :func:`install` or :func:`uninstall` did, one sentence per step, and the ``.gitattributes`` lines;
    ``changes`` are the actions that wrote something (not the ``unchanged`` / ``already`` ones)."""

    actions: tuple[str, ...]
    attributes: tuple[str, ...]
    changes: tuple[str, ...] = ()


def driver_command(python: str | None = None) -> str:
    """The driver line git runs (through the shell): this interpreter, pinned as the hook shims pin it, so the
    driver runs without ``git-memzoi`` on ``PATH``."""
    return f"{shlex.quote(python or sys.executable)} -m git_memzoi merge-driver %O %A %B %P"


def attribute_lines(root: Path) -> tuple[str, ...]:
    """The ``.gitattributes`` lines for the repository at ``root``: the memkeep store's INDEX.md (the folder
    ``.memkeep.yml`` names, else ``agent-memory``), the INDEX.md of each store in a subfolder holding a tracked
    entry (:func:`~git_memzoi.integrations.guard.stores_below`: two branches adding entries there must not
    conflict either), ``.memzoi/index.md`` and the records."""
    from git_memzoi.integrations.guard import stores_below_root
    from git_memzoi.memkeep import api

    try:
        store = api.read_store_config(root, root).store_dir or DEFAULT_STORE
    except Exception:  # an unreadable .memkeep.yml: lint reports it; the default store is still marked
        store = DEFAULT_STORE
    below = [f"/{s.rel}/INDEX.md merge={DRIVER}" for s in stores_below_root(root) if s.rel not in (".", store)]
    return (
        f"/{store}/INDEX.md merge={DRIVER}",
        *below,
        f"/.memzoi/index.md merge={DRIVER}",
        f"/.memzoi/records/** merge={DRIVER}",
    )


def install(start: Path) -> MergeSetup:
    """Register the driver in the repository's config and mark its paths in ``.gitattributes``.

    Returns:
        The actions taken, e.g. ``registered merge driver memzoi ...`` and ``added ... to .gitattributes``.
    Raises:
        FileRefused: ``.gitattributes`` or the config is a folder, a FIFO or a symlink (InputError, exit 2).
    """
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    view = Pygit2RepoView(start)
    lines = attribute_lines(view.root)
    steps = [_register(view), _mark(view.root, lines)]
    return MergeSetup(tuple(a for a, _ in steps), lines, tuple(a for a, wrote in steps if wrote))


def uninstall(start: Path) -> MergeSetup:
    """Remove the driver's section from the repository's config; ``.gitattributes`` is left as committed (a path
    marked for a driver git does not know is merged as text)."""
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    view = Pygit2RepoView(start)
    text = view.local_config_bytes().decode("utf-8", "surrogateescape")
    kept = without_section(text)
    if kept == text:
        return MergeSetup((), ())
    _write_config(view.common_dir, kept)
    removed = f"removed merge driver {DRIVER} from the repository's git config"
    return MergeSetup((removed,), (), (removed,))


def unregistered_hint(root: Path) -> str:
    """What to do when ``.gitattributes`` at ``root`` marks paths ``merge=memzoi`` but this clone's git config
    has no such driver (a fresh clone: git config is not cloned), else ``""``. git then merges those paths as
    text: two branches' INDEX.md lines conflict for a human (a fresh user's walk found nothing said so)."""
    try:
        text = (root / ".gitattributes").read_text("utf-8", errors="replace")
    except OSError:
        return ""
    if not any(f"merge={DRIVER}" in line.split() for line in text.splitlines()) or registered(root):
        return ""
    return (
        f".gitattributes marks memory files merge={DRIVER} but this clone has no such merge driver (git config is "
        "not cloned): run `git memzoi hooks install` so they merge without a human"
    )


def unmarked_hint(root: Path) -> str:
    """What to do when ``.gitattributes`` at ``root`` marks paths ``merge=memzoi`` but not every line of
    :func:`attribute_lines` (a store added in a subfolder after ``hooks install``: two branches adding entries
    there stop the merge on its INDEX.md for a human), else ``""``."""
    try:
        text = (root / ".gitattributes").read_text("utf-8", errors="replace")
    except OSError:
        return ""
    present = {line.strip() for line in text.splitlines()}
    if not any(f"merge={DRIVER}" in line.split() for line in present):
        return ""  # the driver is not in use here: nothing of it is due
    missing = [line.split(" ", 1)[0] for line in attribute_lines(root) if line not in present]
    if not missing:
        return ""
    return (
        f".gitattributes does not mark {', '.join(missing)} merge={DRIVER}: run `git memzoi hooks install` and "
        "commit .gitattributes so they merge without a human"
    )


def registered(start: Path) -> str | None:
    """The driver command the repository's config holds, or ``None`` when the driver is not registered."""
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    return Pygit2RepoView(start).config_value(f"merge.{DRIVER}.driver")


def without_section(text: str) -> str:
    """``text`` (a git config file) without our ``[merge "memzoi"]`` section (pure)."""
    out: list[str] = []
    inside = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("["):
            inside = stripped.replace(" ", "") == SECTION.replace(" ", "")
        if not inside:
            out.append(line)
    return "".join(out)


def section_text(command: str) -> str:
    """Our config section for ``command`` (pure); values quoted as git config reads them."""
    return f"{SECTION}\n\tname = {_quoted(DRIVER_NAME)}\n\tdriver = {_quoted(command)}\n"


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _register(view: Pygit2RepoView) -> tuple[str, bool]:
    command = driver_command()
    if view.config_value(f"merge.{DRIVER}.driver") == command:
        return f"merge driver {DRIVER} unchanged in the repository's git config", False
    text = without_section(view.local_config_bytes().decode("utf-8", "surrogateescape"))
    prefix = text if not text or text.endswith("\n") else text + "\n"
    _write_config(view.common_dir, prefix + section_text(command))
    return f"registered merge driver {DRIVER} in the repository's git config: {command}", True


def _write_config(common_dir: Path, text: str) -> None:
    from git_memzoi.core.atomic import write_bytes_atomic

    write_bytes_atomic(common_dir / "config", text.encode("utf-8", "surrogateescape"), root=common_dir)


def _mark(root: Path, lines: tuple[str, ...]) -> tuple[str, bool]:
    from git_memzoi.core import safe_read
    from git_memzoi.core.atomic import write_bytes_atomic

    path = root / ".gitattributes"
    try:
        text = safe_read.read_text(path, safe_read.MAX_FILE_BYTES, errors="replace")
    except FileNotFoundError:
        text = ""
    except safe_read.FileRefused as exc:
        raise exc.renamed(".gitattributes") from None
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in lines if line not in present]
    if not missing:
        return ".gitattributes already marks the memory indexes and records for the merge driver", False
    block = ([] if ATTRIBUTES_COMMENT in present else [ATTRIBUTES_COMMENT]) + missing
    prefix = text if not text or text.endswith("\n") else text + "\n"
    write_bytes_atomic(path, (prefix + "\n".join(block) + "\n").encode("utf-8"), root=root)
    shown = ", ".join(line.split(" ", 1)[0] for line in missing)
    return f"added {shown} to .gitattributes (merge={DRIVER}): commit it so every clone merges them the same way", True
