"""Install, remove and inspect the git hook shims (io; research/aesthetics.md habit 9, field report BR-18).

The shims go into the repository's *effective* hooks directory, the one git actually runs: ``core.hooksPath``
when it is set (relative to the working tree's top, ``~`` expanded), else ``hooks/`` in the common git dir, which
every linked worktree shares. A hook file that is not ours is never overwritten: it is kept as
``<type>.legacy``, the shim runs it first, and uninstall puts it back.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from git_memzoi.errors import InputError
from git_memzoi.integrations.hook_events import HOOK_TYPES

MARKER = "# git-memzoi-hook-shim v2"
PYTHON_BEGIN = "# --- begin: interpreter pinned by `git memzoi hooks install` ---"
PYTHON_END = "# --- end: interpreter pinned by `git memzoi hooks install` ---"
# every marker a released shim carried: older shims are still recognised as ours (v1 had no pinned interpreter)
MARKERS = (MARKER, "# git-memzoi-hook-shim v1")


@dataclass(frozen=True)
class HooksDirs:
    """Where git runs hooks from (``effective``), the default dir, and ``core.hooksPath`` as configured."""

    effective: Path
    default: Path
    hooks_path: str | None


@dataclass(frozen=True)
class HookState:
    """One hook type: ``installed``, ``missing``, ``foreign`` (another tool's hook) or ``bypassed``."""

    hook: str
    state: str
    path: str
    chained: bool
    detail: str


@dataclass(frozen=True)
class HooksReport:
    """The result of install, uninstall or status: the directories and one state per hook type."""

    dirs: HooksDirs
    hooks: tuple[HookState, ...]
    actions: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        """0 when every hook is installed, else 1 (status only)."""
        return 0 if all(h.state == "installed" for h in self.hooks) else 1

    def as_json(self) -> dict[str, object]:
        """The report as plain data for ``--json``."""
        return {
            "ok": self.exit_code == 0,
            "hooks_dir": str(self.dirs.effective),
            "default_dir": str(self.dirs.default),
            "core_hooks_path": self.dirs.hooks_path,
            "actions": list(self.actions),
            "hooks": [vars(h) for h in self.hooks],
        }


def template_text(hook: str) -> str:
    """The shim template shipped for ``hook`` (package data ``resources/hooks/<hook>``, identical to the
    top-level ``hooks/<hook>`` for manual installs): the interpreter lines hold the placeholder."""
    return (resources.files("git_memzoi") / "resources" / "hooks" / hook).read_text("utf-8")


def shim_text(hook: str, python: str | None = None) -> str:
    """The shim for ``hook`` with the installing interpreter pinned between the marker lines (as pre-commit
    does), so the hook still runs ``<python> -m git_memzoi`` when ``git-memzoi`` is not on ``PATH``."""
    text = template_text(hook)
    begin, end = text.index(PYTHON_BEGIN), text.index(PYTHON_END)
    pinned = f"{PYTHON_BEGIN}\nINSTALL_PYTHON={_sh_quote(python or sys.executable)}\n"
    return text[:begin] + pinned + text[end:]


def pinned_python(path: Path) -> str | None:
    """The interpreter an installed shim pins (``""`` for the template's placeholder, ``None`` for a v1 shim)."""
    try:
        text = path.read_text("utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(r"^INSTALL_PYTHON='((?:[^']|'\\'')*)'$", text, re.MULTILINE)
    return match.group(1).replace("'\\''", "'") if match else None


def _sh_quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def refresh_index(start: Path) -> str | None:
    """Bring the derived memzoi index (``.memzoi/local/index.sqlite``) up to date after HEAD moved, when the
    repository has ``.memzoi/``; returns a one-line note when the index was rebuilt, else ``None``.

    Raises whatever the refresh raises (``index_busy``...); the hook runner reports it and exits 0.
    """
    from git_memzoi.core.gitview_pygit2 import worktree_root
    from git_memzoi.memzoi import Layout

    layout = Layout(worktree_root(start))
    if not layout.base.is_dir():
        return None
    from git_memzoi.memzoi import index_db

    result = index_db.refresh(layout)
    return "memzoi: rebuilt the derived index (.memzoi/local/index.sqlite)" if result.rebuilt else None


def is_ours(path: Path) -> bool:
    """True when ``path`` is a git-memzoi shim (any released marker)."""
    try:
        head = path.read_text("utf-8", errors="replace")[:400]
    except OSError:
        return False
    return any(marker in head.splitlines() for marker in MARKERS)


def hooks_dirs(start: Path) -> HooksDirs:
    """Find the effective hooks directory of the repository around ``start`` (honours GIT_DIR and worktrees)."""
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    view = Pygit2RepoView(start)
    default = view.common_dir / "hooks"
    configured = view.config_value("core.hooksPath")
    if not configured:
        return HooksDirs(default, default, None)
    path = Path(os.path.expanduser(configured))
    return HooksDirs(path if path.is_absolute() else view.root / path, default, configured)


def status(start: Path) -> HooksReport:
    """The state of each hook type, telling installed, missing, foreign and bypassed apart."""
    dirs = hooks_dirs(start)
    return HooksReport(dirs, tuple(_state(dirs, hook) for hook in HOOK_TYPES))


def _state(dirs: HooksDirs, hook: str) -> HookState:
    target = dirs.effective / hook
    chained = (dirs.effective / f"{hook}.legacy").exists()
    if is_ours(target):
        return HookState(hook, "installed", str(target), chained, "chains " + hook + ".legacy" if chained else "")
    if dirs.effective != dirs.default and is_ours(dirs.default / hook):
        detail = f"installed in {dirs.default} but bypassed by core.hooksPath={dirs.hooks_path}"
        return HookState(hook, "bypassed", str(dirs.default / hook), False, detail)
    if target.exists():
        return HookState(hook, "foreign", str(target), False, "another hook is installed; install chains it")
    return HookState(hook, "missing", str(target), False, "")


def install(start: Path) -> HooksReport:
    """Write the shims into the effective hooks dir; a foreign hook becomes ``<type>.legacy`` and is chained.

    Raises:
        InputError: a foreign hook is in the way and ``<type>.legacy`` is already taken (nothing is written).
    """
    dirs = hooks_dirs(start)
    for hook in HOOK_TYPES:
        target, legacy = dirs.effective / hook, dirs.effective / f"{hook}.legacy"
        if target.exists() and not is_ours(target) and (legacy.exists() or legacy.is_symlink()):
            raise InputError(
                f"{target} is another tool's hook and {legacy.name} is already taken; move one of "
                "them away, then install again",
                "hook_conflict",
            )
    dirs.effective.mkdir(parents=True, exist_ok=True)
    actions = [f"core.hooksPath={dirs.hooks_path} is set: installing into {dirs.effective}"] if dirs.hooks_path else []
    for hook in HOOK_TYPES:
        actions.append(_install_one(dirs.effective, hook))
    return HooksReport(dirs, tuple(_state(dirs, h) for h in HOOK_TYPES), tuple(actions))


def _install_one(directory: Path, hook: str) -> str:
    from git_memzoi.core.atomic import write_bytes_atomic

    target = directory / hook
    action = f"installed {target}"
    if target.exists() and not is_ours(target):
        os.replace(target, directory / f"{hook}.legacy")
        action = f"installed {target}; the existing hook runs first as {hook}.legacy"
    elif target.exists():
        action = f"updated {target}"
    write_bytes_atomic(target, shim_text(hook, sys.executable).encode("utf-8"))
    target.chmod(0o755)
    return action


def uninstall(start: Path) -> HooksReport:
    """Remove our shims from the effective (and the bypassed default) dir and restore ``<type>.legacy``."""
    dirs = hooks_dirs(start)
    actions: list[str] = []
    for directory in dict.fromkeys((dirs.effective, dirs.default)):
        for hook in HOOK_TYPES:
            target, legacy = directory / hook, directory / f"{hook}.legacy"
            if not is_ours(target):
                continue
            target.unlink()
            if legacy.exists():
                os.replace(legacy, target)
                actions.append(f"removed {target}; restored the hook it chained")
            else:
                actions.append(f"removed {target}")
    return HooksReport(dirs, tuple(_state(dirs, h) for h in HOOK_TYPES), tuple(actions))
