"""``git memzoi quickstart``: the first steps, each checked against this repository (io, reads only).

It printed the same seven steps before and after ``init`` and outside a repository, never named memkeep or the
hooks, and said a proposal "waits for review" though a person's proposal is approved at once under the default
policy (issue 20). Now each step is looked up: done or not, and the first one not done is the next step.

Steps, in order: ``init`` (``.memzoi/`` exists), a first record (a file under ``.memzoi/records/``), an empty
review inbox (``review.pending_count``), a first memkeep entry (a store with an
entry under ``entries/``; before one, the step says how to start it rather than ``git memkeep status``, which
exits 2 without a store), the git hooks (``hooks status`` has nothing left to recommend), and an agent connected
(the Claude Code hooks in ``.claude/settings.json`` or a memzoi block in ``AGENTS.md`` / ``CLAUDE.md``). Recall
(``search``, ``context``) is the last line, available once a record exists.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import InputError

if TYPE_CHECKING:
    from git_memzoi.memzoi import Layout

PROPOSE = 'git memzoi propose --type decision --sensitivity repo-safe --title "..." --body "..." --apply'
RECALL = 'git memzoi search "<words>"  /  git memzoi context --task "<task>"'


@dataclass(frozen=True)
class Step:
    """One step: a stable ``name`` (``init``, ``record``, ``review``, ``memkeep``, ``hooks``, ``agent``,
    ``recall``), the command to run, what it does, and whether this repository has done it."""

    name: str
    command: str
    purpose: str
    done: bool


@dataclass(frozen=True)
class Quickstart:
    """The steps for the repository at ``root`` (its working-tree root), in order."""

    root: Path
    steps: tuple[Step, ...]

    @property
    def next(self) -> Step | None:
        """The first step not done yet (``None``: every step is done)."""
        return next((s for s in self.steps if not s.done), None)

    def status(self, step: Step) -> str:
        """``done``, ``next`` (the first not done) or ``todo``."""
        return "done" if step.done else "next" if step is self.next else "todo"

    def as_json(self) -> dict[str, Any]:
        """``{root, next, steps: [{name, command, purpose, status, done}]}``; ``next`` is a step name or null."""
        ahead = self.next
        return {
            "root": str(self.root),
            "next": ahead.name if ahead else None,
            "steps": [
                {"name": s.name, "command": s.command, "purpose": s.purpose, "status": self.status(s), "done": s.done}
                for s in self.steps
            ],
        }


def survey(start: Path) -> Quickstart:
    """The quickstart steps of the repository around ``start`` (a directory), each checked; nothing is written.

    Raises:
        InputError: ``start`` is missing (``bad_directory``) or not inside a git working tree
            (``not_a_repository``).
    """
    from git_memzoi.memzoi import Layout, workspace

    root = workspace.find_root(start)
    layout = Layout(root)
    initialized = layout.base.is_dir()
    records = initialized and layout.records.is_dir() and any(layout.records.glob("*.md"))
    elsewhere = None if initialized else layout.memory_elsewhere()
    init = (
        Step(
            "init",
            "git memzoi init",
            "create .memzoi/ (records, proposals; private memory goes in .git/memzoi/)",
            initialized,
        )
        if elsewhere is None
        else Step(
            "init",
            f"commit .memzoi/ in {elsewhere}, then check that commit out here",
            "the main worktree has .memzoi/ and this checkout does not (git memzoi init here would start a separate store)",
            False,
        )
    )
    steps = (
        init,
        Step(
            "record",
            PROPOSE,
            "record what an agent should know; --apply writes it at once (without it, your proposal is approved "
            "and `git memzoi apply <id>` writes it; an agent's proposal waits for your review)",
            records,
        ),
        Step("review", "git memzoi review", "approve or reject what waits for review; an approved proposal is "
             "written by git memzoi apply <id> (or proposals apply --all-approved)", _inbox_empty(layout, initialized)),
        _memkeep_step(root),
        Step("hooks", "git memzoi hooks install", "the pre-commit guard and the post-merge/post-checkout notices",
             _hooked(root)),
        Step("agent", "git memzoi integrate install --profile claude-code", "connect Claude Code (or: integrate "
             "instructions --profile codex for AGENTS.md; mcp config for any MCP client)", _agent_connected(root)),
        Step("recall", RECALL, "recall memory for a task", records),
    )  # fmt: skip
    return Quickstart(root, steps)


def _inbox_empty(layout: Layout, initialized: bool) -> bool:
    """Nothing waits for review; not done before ``init`` (there is no inbox yet)."""
    if not initialized:
        return False
    from git_memzoi.memzoi import review

    try:
        return review.pending_count(layout) == 0
    except (OSError, InputError):
        return False


def _memkeep_step(root: Path) -> Step:
    """The memkeep step for the store's state: none yet (``git memkeep status`` would exit 2, "no memkeep store
    found", so the step says to start one), no entry yet (write the first), or entries (``status`` watches them)."""
    from git_memzoi.memkeep import api

    try:
        store = api.locate_store(root, root)
    except (InputError, OSError):  # StoreNotFound is an InputError
        store = None
    write = "write a first entry, agent-memory/entries/<id>.md (a claim, its evidence, anchor and scope; README "
    if store is None:
        return Step(
            "memkeep",
            "mkdir -p agent-memory/entries",
            f"earned memory: {write}'Your first entry'), then "
            "git memkeep index && git memkeep status: it flags the entry the moment its code changes",
            False,
        )
    if not any(store.entries_dir.glob("*.md")):
        return Step(
            "memkeep",
            f"$EDITOR {store.rel}/entries/<id>.md",
            f"earned memory: {write}'Your first entry'), then git memkeep index && git memkeep status",
            False,
        )
    return Step("memkeep", "git memkeep status", "earned memory: flags an entry the moment its code changes", True)


def _hooked(root: Path) -> bool:
    """Every hook runs memzoi: our shims, or a framework (pre-commit, husky, lefthook) that ``hooks status`` finds
    running memzoi (it has nothing to recommend but, at most, removing a redundant shim)."""
    from git_memzoi.integrations import git_hooks

    try:
        report = git_hooks.status(root)
    except (InputError, OSError):
        return False
    if all(h.state == "installed" for h in report.hooks):
        return True
    return report.recommendation in ("", git_hooks.FRAMEWORK_DONE_HINT)


def _agent_connected(root: Path) -> bool:
    """Our Claude Code hooks in ``.claude/settings.json``, or a memzoi block in AGENTS.md or CLAUDE.md."""
    from git_memzoi.integrations import agents

    settings = _text(root / ".claude" / "settings.json")
    try:
        data = json.loads(settings) if settings else {}
        groups = [g for event in (data.get("hooks") or {}).values() for g in event]
        commands = [str(h.get("command", "")) for g in groups for h in g.get("hooks", [])]
    except (ValueError, AttributeError, TypeError):  # not the settings shape: not connected by us
        commands = []
    if any(agents.hook_name(c) for c in commands):
        return True
    return any(agents.START in _text(root / name) for name in ("AGENTS.md", "CLAUDE.md"))


def _text(path: Path) -> str:
    """A small file's text, or "" when it is absent, not a regular file (a FIFO is never opened) or unreadable."""
    from git_memzoi.core import safe_read

    try:
        return safe_read.read_text(path, errors="replace")
    except (OSError, InputError):
        return ""
