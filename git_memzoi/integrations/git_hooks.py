"""Install, remove and inspect the git hook shims (io; research/aesthetics.md habit 9, field report BR-18).

The shims go into the repository's *effective* hooks directory, the one git actually runs: ``core.hooksPath``
when it is set (relative to the working tree's top, ``~`` expanded), else ``hooks/`` in the common git dir, which
every linked worktree shares. A hook file that is not ours is never overwritten: it is kept as
``<type>.before-memzoi`` (:data:`KEPT_SUFFIX`, a name no hook manager claims: ``pre-commit install`` moves a
shim to ``<type>.legacy`` and would overwrite a hook kept there), the shim runs it first, and uninstall puts it
back. When the pre-commit framework owns a hook (its script chains ``<type>.legacy`` itself), the shim goes in
as ``<type>.legacy`` instead (a hook the framework already chained there is kept as above), so the framework's
script runs it first and neither chain ever comes back to itself (issue 12, hook chains). Shims of 0.1 kept
the hook as ``<type>.legacy``; they still chain it, and install moves it to the new name. husky and lefthook
(:mod:`~git_memzoi.integrations.hook_managers`) are chained like any hook, the shim running a chained sh script
under this hook's own ``$0``; status tells a shim they rewrote apart and recommends their own files instead.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from git_memzoi.core import safe_read
from git_memzoi.errors import InputError
from git_memzoi.integrations import hook_managers, merge_config
from git_memzoi.integrations.hook_events import HOOK_TYPES

MARKER = "# git-memzoi-hook-shim v2"
PYTHON_BEGIN = "# --- begin: interpreter pinned by `git memzoi hooks install` ---"
PYTHON_END = "# --- end: interpreter pinned by `git memzoi hooks install` ---"
# every marker a released shim carried: older shims are still recognised as ours (v1 had no pinned interpreter)
MAX_HOOK_BYTES = 1 << 20  # read of a hook file to find the pinned interpreter; shims are about 2 KB
MARKERS = (MARKER, "# git-memzoi-hook-shim v1")
# the header line of the pre-commit framework's hook script (it chains ``<type>.legacy`` in "migration mode")
PRE_COMMIT_HEADER = hook_managers.PRE_COMMIT_HEADER
OWNERS = ("memzoi", "pre-commit", "husky", "lefthook", "other", "none")
# the managers that write their hooks again on their own (npx husky, lefthook install), over a shim
REWRITERS = ("husky", "lefthook")
MANIFEST_HINT = (
    "the pre-commit framework is in use: add the memzoi-guard, memkeep-lint and memkeep-status hooks to "
    ".pre-commit-config.yaml (docs/integrations.md, pre-commit framework) instead of the shims"
)
UNINSTALL_HINT = ", then run `git memzoi hooks uninstall --keep-merge-driver`"
FRAMEWORK_INSTALL_HINT = (
    "the pre-commit framework's config runs git memzoi, but its hook scripts are not installed: run `pre-commit "
    "install --hook-type pre-commit --hook-type post-merge --hook-type post-checkout`"
)
FRAMEWORK_DONE_HINT = (
    "the pre-commit framework runs git memzoi for every hook: run `git memzoi hooks uninstall --keep-merge-driver` "
    "(a shim runs the guard a second time)"
)
KEPT_SUFFIX = ".before-memzoi"
# the slots other managers move a hook they replace to: pre-commit's migration mode, lefthook install
MANAGER_SLOTS = (".legacy", ".old")


@dataclass(frozen=True)
class HooksDirs:
    """Where git runs hooks from (``effective``), the default dir, and ``core.hooksPath`` as configured."""

    effective: Path
    default: Path
    hooks_path: str | None
    root: Path | None = None


@dataclass(frozen=True)
class HookState:
    """One hook type: ``installed``, ``missing``, ``foreign`` (another tool's hook), ``bypassed``,
    ``overwritten`` (another manager rewrote the shim away) or ``broken`` (the pinned python is gone); ``owner``
    is the system git runs first for it: ``memzoi`` (our shim), ``pre-commit`` (the framework), ``husky``, ``lefthook``, ``other`` or ``none``."""

    hook: str
    state: str
    path: str
    chained: bool
    detail: str
    owner: str = "none"


@dataclass(frozen=True)
class HooksReport:
    """The result of install, uninstall or status: the directories and one state per hook type."""

    dirs: HooksDirs
    hooks: tuple[HookState, ...]
    actions: tuple[str, ...] = ()
    recommendation: str = ""
    merge_actions: tuple[str, ...] = ()  # the derived-file merge driver (merge_config), install and uninstall

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
            "merge_driver": list(self.merge_actions),
            "recommendation": self.recommendation,
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
        text = safe_read.read_head(path, MAX_HOOK_BYTES).decode("utf-8", "replace")
    except (OSError, safe_read.FileRefused):  # a FIFO is never opened: it would block
        return None
    match = re.search(r"^INSTALL_PYTHON='((?:[^']|'\\'')*)'$", text, re.MULTILINE)
    return match.group(1).replace("'\\''", "'") if match else None


def _sh_quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def refresh_index(start: Path) -> str | None:
    """Bring the derived memzoi index (:attr:`Layout.index`, in the worktree's git dir) up to date after HEAD
    moved, when the repository has ``.memzoi/``; returns a one-line note when the index was rebuilt, else ``None``.

    Raises whatever the refresh raises (``index_busy``...); the hook runner reports it and exits 0.
    """
    from git_memzoi.core.gitroot import worktree_root
    from git_memzoi.memzoi import Layout

    layout = Layout(worktree_root(start))
    if not layout.base.is_dir():
        return None
    from git_memzoi.memzoi import index_db

    result = index_db.refresh(layout)
    return f"memzoi: rebuilt the derived index ({layout.label(layout.index)})" if result.rebuilt else None


def _head(path: Path) -> list[str]:
    try:
        return safe_read.read_head(path, 400).decode("utf-8", "replace").splitlines()
    except (OSError, safe_read.FileRefused):  # a FIFO is never opened: it would block
        return []


def is_ours(path: Path) -> bool:
    """True when ``path`` is a git-memzoi shim (any released marker)."""
    return any(marker in _head(path) for marker in MARKERS)


def is_pre_commit(path: Path) -> bool:
    """True when ``path`` is the pre-commit framework's hook script (its generated-by header line)."""
    return any(line.startswith(PRE_COMMIT_HEADER) for line in _head(path))


def owner(path: Path) -> str:
    """Which system ``path`` belongs to: ``memzoi``, ``pre-commit``, ``husky``, ``lefthook``, ``other`` or
    ``none`` (no file)."""
    if is_ours(path):
        return "memzoi"
    return hook_managers.manager(path) or ("other" if path.exists() or path.is_symlink() else "none")


def rewritten(target: Path, legacy: Path) -> bool:
    """True when ``target`` is husky's or lefthook's hook and ``legacy`` holds the same bytes: install kept the
    hook as ``<type>.legacy``, then its manager wrote it again over the shim (husky on every ``npm install``).
    Any other pair of equal files stays a foreign hook with a taken ``.legacy`` (install refuses)."""
    files = (target, legacy)
    if any(p.is_symlink() or not p.is_file() for p in files) or hook_managers.manager(target) not in REWRITERS:
        return False
    try:
        return safe_read.read_bytes(target, None, follow_symlinks=True) == safe_read.read_bytes(
            legacy, None, follow_symlinks=True
        )
    except (OSError, safe_read.FileRefused):
        return False


def _python_gone(shim: Path) -> str:
    """Why the shim at ``shim`` cannot run the guard unless ``git-memzoi`` is on git's ``PATH``: the python it
    pins is gone (a moved or deleted virtualenv); ``""`` when it is there (or the shim pins none)."""
    python = pinned_python(shim)
    if not python or os.access(python, os.X_OK):
        return ""
    return (
        f"its pinned python {python} is gone: the hook only runs while git-memzoi is on PATH; run `git memzoi "
        "hooks install` again"
    )


def kept(directory: Path, hook: str) -> Path:
    """Where install keeps the hook it chains: ``<hook>.before-memzoi`` (:data:`KEPT_SUFFIX`)."""
    return directory / f"{hook}{KEPT_SUFFIX}"


def _present(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def chained_by(directory: Path, hook: str) -> Path | None:
    """The hook our shim at ``<hook>`` runs first: the kept hook, else (a 0.1 layout) a ``<hook>.legacy`` that is
    neither ours nor the framework's; ``None`` when there is none."""
    if _present(kept(directory, hook)):
        return kept(directory, hook)
    legacy = directory / f"{hook}.legacy"
    return legacy if _present(legacy) and not is_ours(legacy) and not is_pre_commit(legacy) else None


def hooks_dirs(start: Path) -> HooksDirs:
    """Find the effective hooks directory of the repository around ``start`` (honours GIT_DIR and worktrees)."""
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    view = Pygit2RepoView(start)
    default = view.common_dir / "hooks"
    configured = view.config_value("core.hooksPath")
    if not configured:
        return HooksDirs(default, default, None, view.root)
    path = Path(os.path.expanduser(configured))
    return HooksDirs(path if path.is_absolute() else view.root / path, default, configured, view.root)


def status(start: Path) -> HooksReport:
    """The state of each hook type, telling installed, missing, foreign and bypassed apart; the recommendation
    also names a merge driver ``.gitattributes`` asks for that this clone lacks
    (:func:`~git_memzoi.integrations.merge_config.unregistered_hint`) and memory indexes it does not mark yet
    (:func:`~git_memzoi.integrations.merge_config.unmarked_hint`)."""
    dirs = hooks_dirs(start)
    report = _report(dirs, ())
    hints = (merge_config.unregistered_hint(dirs.root), merge_config.unmarked_hint(dirs.root)) if dirs.root else ()
    missing = "; ".join(hint for hint in hints if hint)
    if not missing:
        return report
    joined = f"{report.recommendation}; {missing}" if report.recommendation else missing
    return dataclasses.replace(report, recommendation=joined)


def _report(dirs: HooksDirs, actions: tuple[str, ...]) -> HooksReport:
    hooks = tuple(_state(dirs, hook) for hook in HOOK_TYPES)
    return HooksReport(dirs, hooks, actions, _recommend(dirs, hooks))


def _recommend(dirs: HooksDirs, hooks: tuple[HookState, ...]) -> str:
    """One recommendation: the framework's manifest when pre-commit is in use, husky's scripts or lefthook's
    config when one of them is, else the shims."""
    config = dirs.root is not None and (dirs.root / ".pre-commit-config.yaml").is_file()
    framework = config or any(h.owner == "pre-commit" for h in hooks)
    if framework:
        leftover = any(is_ours(path) for h in hooks for path in _shim_paths(dirs, h.hook))
        if all(_framework_runs(dirs, h.hook) for h in hooks):
            return FRAMEWORK_DONE_HINT if leftover else ""
        if all(_configured(dirs, h.hook) for h in hooks):  # the config names memzoi: only `pre-commit install` is due
            return FRAMEWORK_INSTALL_HINT
        return MANIFEST_HINT + (UNINSTALL_HINT if leftover else "")
    chained = {hook_managers.manager(p) for h in hooks if (p := chained_by(dirs.effective, h.hook)) is not None}
    name = hook_managers.in_use(dirs.effective, dirs.root, {h.owner for h in hooks} | chained)
    if name:
        return _manager_hint(dirs, hooks, name)
    if all(h.state == "installed" for h in hooks):
        return ""
    return "run `git memzoi hooks install` to install the shims where git runs hooks"


def _shim_paths(dirs: HooksDirs, hook: str) -> tuple[Path, ...]:
    """Where a shim of ``hook`` may sit: first, under the framework, or bypassed in the default dir."""
    return (dirs.effective / hook, dirs.effective / f"{hook}.legacy", dirs.default / hook)


def _framework_runs(dirs: HooksDirs, hook: str) -> bool:
    """True when git runs the framework's script for ``hook`` and its config runs memzoi for it."""
    return _configured(dirs, hook) and owner(dirs.effective / hook) == "pre-commit"


def _configured(dirs: HooksDirs, hook: str) -> bool:
    """True when ``.pre-commit-config.yaml`` runs memzoi for ``hook`` (whether or not its script is installed)."""
    runs = hook_managers.durable(dirs.effective, dirs.root, hook)
    return runs is not None and runs[0] == "pre-commit"


def _manager_hint(dirs: HooksDirs, hooks: tuple[HookState, ...], name: str) -> str:
    """husky or lefthook: add memzoi to its files for the hooks it does not run memzoi for, and uninstall the
    shims (or their leftovers) once it does, since the shims are not needed then."""
    todo = [h.hook for h in hooks if (hook_managers.durable(dirs.effective, dirs.root, h.hook) or ("",))[0] != name]
    shims = any(h.owner == "memzoi" or h.state in ("bypassed", "overwritten") for h in hooks)
    if todo:
        return hook_managers.hint(name, dirs.effective, dirs.root, todo) + (UNINSTALL_HINT if shims else "")
    if shims:
        return (
            f"{name} runs git memzoi for every hook: run `git memzoi hooks uninstall --keep-merge-driver` (the shims "
            "are not needed)"
        )
    return ""


def _state(dirs: HooksDirs, hook: str) -> HookState:
    target, legacy = dirs.effective / hook, dirs.effective / f"{hook}.legacy"
    first = owner(target)
    if first == "memzoi":
        chain = chained_by(dirs.effective, hook)
        gone = _python_gone(target)
        if gone:
            return HookState(hook, "broken", str(target), chain is not None, gone, first)
        detail = f"chains {chain.name}" if chain is not None else ""
        return HookState(hook, "installed", str(target), chain is not None, detail, first)
    runs = hook_managers.durable(dirs.effective, dirs.root, hook)
    if runs is not None and runs[0] == first:
        where = hook_managers.shown(runs[1], dirs.root)
        if first == "pre-commit":
            detail = f"the pre-commit framework runs memzoi from {where}"
            if is_ours(legacy):
                detail += f"; the shim it chains as {hook}.legacy runs it again (uninstall the shims)"
        else:
            detail = f"{first} runs `git memzoi hook run {hook}` from {where}"
        return HookState(hook, "installed", str(runs[1]), False, detail, first)
    if first == "pre-commit" and is_ours(legacy):
        detail = f"the pre-commit framework runs this shim first, as {hook}.legacy"
        if _present(kept(dirs.effective, hook)):
            detail += f", and the shim chains {hook}{KEPT_SUFFIX}"
        return HookState(hook, "installed", str(legacy), False, detail, first)
    copy = next((c for c in (kept(dirs.effective, hook), legacy) if rewritten(target, c)), None)
    if copy is not None:
        detail = f"{first} wrote its hook again over the shim; {copy.name} is the copy install kept (install again)"
        return HookState(hook, "overwritten", str(target), False, detail, first)
    if first != "none" and is_ours(dirs.effective / f"{hook}.old"):
        detail = f"{first if first != 'other' else 'another tool'} replaced the shim and keeps it as {hook}.old, unrun"
        return HookState(hook, "overwritten", str(target), False, detail, first)
    if dirs.effective != dirs.default and is_ours(dirs.default / hook):
        detail = f"installed in {dirs.default} but bypassed by core.hooksPath={dirs.hooks_path}"
        return HookState(hook, "bypassed", str(dirs.default / hook), False, detail, first)
    if first == "pre-commit" and _present(legacy):
        detail = (
            f"the pre-commit framework already chains {hook}.legacy; install puts the shim there and keeps that "
            f"hook as {hook}{KEPT_SUFFIX}"
        )
        return HookState(hook, "foreign", str(target), False, detail, first)
    if first != "none":
        who = {"husky": "husky's hook", "lefthook": "lefthook's hook"}.get(first, "another hook")
        return HookState(hook, "foreign", str(target), False, f"{who} is installed; install chains it", first)
    return HookState(hook, "missing", str(target), False, "", first)


def install(start: Path) -> HooksReport:
    """Write the shims into the effective hooks dir; a foreign hook is kept as ``<type>.before-memzoi`` and
    chained (under the pre-commit framework, the hook it chained as ``<type>.legacy``). Then register the
    derived-file merge driver and mark its paths in ``.gitattributes`` (:mod:`merge_config`, ``merge_actions``).

    Raises:
        InputError: a hook must be kept and ``<type>.before-memzoi`` is already taken (nothing is written).
    """
    dirs = hooks_dirs(start)
    for hook in HOOK_TYPES:
        keep = _to_keep(dirs.effective, hook)
        slot = kept(dirs.effective, hook)
        if keep is not None and _present(slot) and not rewritten(keep, slot):
            raise InputError(
                f"{keep} must be kept as {slot.name} to be chained, and {slot.name} is already taken; move one "
                "of them away, then install again",
                "hook_conflict",
            )
    dirs.effective.mkdir(parents=True, exist_ok=True)
    actions = [f"core.hooksPath={dirs.hooks_path} is set: installing into {dirs.effective}"] if dirs.hooks_path else []
    tracked = _tracked_hooks(start, dirs)
    if tracked:
        shown = ", ".join(tracked[:3]) + (f" and {len(tracked) - 3} more" if len(tracked) > 3 else "")
        actions.append(
            f"warning: git tracks files in {dirs.effective} ({shown}): the shims written there pin this machine's "
            "python; do not commit them (`git memzoi hooks uninstall` restores the committed hooks)"
        )
    for hook in HOOK_TYPES:
        runs = hook_managers.durable(dirs.effective, dirs.root, hook)
        if runs is not None and runs[0] == owner(dirs.effective / hook):  # a shim would run memzoi twice
            where = hook_managers.shown(runs[1], dirs.root)
            actions.append(f"left {dirs.effective / hook} as it is: {runs[0]} runs memzoi from {where}")
            continue
        actions.append(_install_one(dirs.effective, hook))
    return _with_merge(_report(dirs, tuple(actions)), merge_config.install(start).actions)


def _with_merge(report: HooksReport, merge_actions: tuple[str, ...]) -> HooksReport:
    from dataclasses import replace

    return replace(report, merge_actions=merge_actions)


def _to_keep(directory: Path, hook: str) -> Path | None:
    """The hook file install moves to ``<hook>.before-memzoi``: a foreign ``<hook>``, the hook the framework
    chains as ``<hook>.legacy``, or the ``<hook>.legacy`` a 0.1 shim chains; ``None`` when nothing moves."""
    target, legacy = directory / hook, directory / f"{hook}.legacy"
    if is_pre_commit(target) or is_ours(target):
        return legacy if _present(legacy) and not is_ours(legacy) and not is_pre_commit(legacy) else None
    return target if _present(target) else None


def _verb(path: Path, text: bytes) -> str:
    """``installed`` (no shim of ours there), ``unchanged`` (the same bytes) or ``updated``."""
    if not is_ours(path):
        return "installed"
    try:
        return "unchanged" if safe_read.read_bytes(path, None, follow_symlinks=True) == text else "updated"
    except (OSError, safe_read.FileRefused):
        return "updated"


def _tracked_hooks(start: Path, dirs: HooksDirs) -> list[str]:
    """The files of a ``core.hooksPath`` folder inside the work tree that git tracks (a shared ``.githooks/``):
    a shim written there would reach a commit with this machine's python path in it."""
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    if dirs.root is None or not dirs.effective.is_relative_to(dirs.root) or dirs.effective == dirs.default:
        return []
    prefix = dirs.effective.relative_to(dirs.root).as_posix()
    return sorted(Pygit2RepoView(start).tracked_under(prefix + "/"))


def _install_one(directory: Path, hook: str) -> str:
    from git_memzoi.core.atomic import write_bytes_atomic

    target = directory / hook
    keep = _to_keep(directory, hook)
    action = f"installed {target}"
    text = shim_text(hook, sys.executable).encode("utf-8")
    if is_pre_commit(target):  # the framework chains <hook>.legacy: be that, never chain its script
        target = directory / f"{hook}.legacy"
        action = f"{_verb(target, text)} {target}; the pre-commit framework's {hook} hook runs it first"
    elif is_ours(target):
        action = f"{_verb(target, text)} {target}"
    if keep is not None:
        os.replace(keep, kept(directory, hook))
        action += f"; the hook that was {keep.name} runs first, kept as {hook}{KEPT_SUFFIX}"
    if action.startswith("unchanged "):
        return action
    write_bytes_atomic(target, text, root=directory)
    target.chmod(0o755)
    return action


def uninstall(start: Path, *, keep_merge_driver: bool = False) -> HooksReport:
    """Remove our shims from the effective (and the bypassed default) dir and restore the hooks they kept; remove
    the merge driver from the repository's config (``.gitattributes`` stays as committed) unless
    ``keep_merge_driver``: what the hints say when another manager runs the hooks, which registers no driver
    (removing it there made ``hooks status`` ask for ``hooks install`` again, a fresh user's walk found)."""
    dirs = hooks_dirs(start)
    actions: list[str] = []
    for directory in dict.fromkeys((dirs.effective, dirs.default)):
        for hook in HOOK_TYPES:
            actions.extend(_uninstall_one(directory, hook))
    merge = () if keep_merge_driver else merge_config.uninstall(start).actions
    return _with_merge(_report(dirs, tuple(actions)), merge)


def _uninstall_one(directory: Path, hook: str) -> list[str]:
    """Remove our shim from ``<hook>`` and put the hook it kept back there; from ``<hook>.legacy`` (where the
    pre-commit framework runs it) or ``<hook>.old`` (where lefthook set it aside), putting the kept hook in that
    slot, where the manager whose script is ``<hook>`` would have kept it. A file that is not ours is never touched, except a kept copy of
    a hook its manager wrote again over the shim (the same bytes as ``<hook>``)."""
    target, keep = directory / hook, kept(directory, hook)
    actions: list[str] = []
    shim_first = is_ours(target)  # else the manager's script is <hook>: the kept hook goes to its slot
    for slot in (directory / f"{hook}{suffix}" for suffix in MANAGER_SLOTS):
        if is_ours(slot):
            slot.unlink()
            actions.append(f"removed {slot}")
            if not shim_first and _present(keep) and not rewritten(target, keep):
                os.replace(keep, slot)
                actions.append(f"restored {keep.name} as {slot.name}, where {owner(target)} keeps it")
    if not is_ours(target):
        for copy in (keep, directory / f"{hook}.legacy"):
            if rewritten(target, copy):
                copy.unlink()
                actions.append(f"removed {copy}, the copy of {hook} install kept (its manager wrote {hook} again)")
        return actions
    chain = chained_by(directory, hook)
    target.unlink()
    if chain is not None:
        os.replace(chain, target)
        actions.append(f"removed {target}; restored the hook it chained")
    else:
        actions.append(f"removed {target}")
    return actions
