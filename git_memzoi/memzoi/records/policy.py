"""The effective proposal approval mode (seed "Approval policy"; memzoi-spec.md §1 "Workflow policy").

Four layers, later ones winning: the built-in default, the user config ``${MEMZOI_HOME:-~/.memzoi}/config.toml``,
the repository's ``.memzoi/config.toml``, then a per-call override (``--manual`` / ``--auto-approve``). Who
proposes picks the key and the default (issue 15): a human on the CLI reads ``[workflow] proposal_approval``
(default ``auto``); an agent (MCP, hooks) reads ``[workflow] agent_proposal_approval`` (default ``manual``: an
agent's proposal waits for review unless a human opted in), and may override only towards ``manual``. Values are
``"manual"|"auto"``; other tables are left alone for future settings, but an unknown key inside ``[workflow]`` is
an error. This
module never reads the environment: the CLI resolves ``MEMZOI_HOME`` and passes the folder in.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from git_memzoi.core import safe_read
from git_memzoi.errors import InputError

MODES = ("auto", "manual")
SOURCES = ("default", "user", "repo", "override")
ACTOR_KINDS = ("human", "agent")
KEYS = {"human": "proposal_approval", "agent": "agent_proposal_approval"}  # actor kind -> [workflow] key
DEFAULTS = {"human": "auto", "agent": "manual"}
WORKFLOW_KEYS = tuple(KEYS.values())


class PolicyError(InputError):
    """A config file that cannot be read as workflow policy; the message names the file (exit 2)."""

    default_code = "invalid_config"


@dataclass(frozen=True)
class ApprovalPolicy:
    """The effective approval mode and which layer decided it (``path`` is the deciding file, if any)."""

    mode: str
    source: str
    path: str | None = None

    def to_json(self) -> dict[str, str | None]:
        """``{"mode", "source", "path"}`` for ``--json`` output."""
        return {"mode": self.mode, "source": self.source, "path": self.path}


def user_config_path(memzoi_home: Path) -> Path:
    """``<MEMZOI_HOME>/config.toml``: the user-global policy file."""
    return memzoi_home / "config.toml"


def read_mode(path: Path, key: str = "proposal_approval") -> str | None:
    """The ``[workflow] <key>`` (``proposal_approval`` or ``agent_proposal_approval``) of one config file;
    ``None`` when the file or the key is absent. Every key of ``[workflow]`` is validated, whichever is asked.

    Raises:
        PolicyError: the file is not UTF-8 TOML, ``workflow`` is not a table, it holds an unknown key, or the
            mode is not ``auto`` or ``manual``.
    """
    if not path.is_file():
        if path.exists() or path.is_symlink():
            raise PolicyError(f"{path}: not a regular file")
        return None
    try:
        data = tomllib.loads(safe_read.read_text(path, follow_symlinks=True))  # swapped for a FIFO: refused
    except safe_read.FileRefused as exc:
        raise PolicyError(f"{path}: {exc.reason}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise PolicyError(f"{path}: not valid TOML ({reason})") from None
    workflow = data.get("workflow")
    if workflow is None:
        return None
    if not isinstance(workflow, dict):
        raise PolicyError(f"{path}: [workflow] must be a table")
    unknown = sorted(set(workflow) - set(WORKFLOW_KEYS))
    if unknown:
        raise PolicyError(f"{path}: [workflow] has unknown key {unknown[0]!r}; allowed: {', '.join(WORKFLOW_KEYS)}")
    for name in WORKFLOW_KEYS:
        value = workflow.get(name)
        if value is not None and value not in MODES:
            raise PolicyError(f'{path}: [workflow] {name} must be "auto" or "manual", not {value!r}')
    mode = workflow.get(key)
    return None if mode is None else str(mode)


def resolve(
    repo_config: Path, memzoi_home: Path | None, override: str | None = None, *, actor_kind: str = "human"
) -> ApprovalPolicy:
    """The effective approval mode: default < user config < repo config < ``override``.

    Both files are read (and so validated) even when an override wins, so a broken config never hides.

    Args:
        repo_config: the repository's ``.memzoi/config.toml``.
        memzoi_home: the runtime home (``$MEMZOI_HOME``, else ``~/.memzoi``); ``None`` skips the user layer.
        override: ``"auto"`` or ``"manual"`` from a per-call flag, or ``None``.
        actor_kind: ``human`` (the CLI: key ``proposal_approval``, default ``auto``) or ``agent`` (MCP, hooks:
            key ``agent_proposal_approval``, default ``manual``).

    Raises:
        PolicyError: a malformed config file, or an override that is not a mode. InputError: an agent's
            ``auto`` override (``agent_self_approval``: an agent never approves its own proposal).
    """
    if actor_kind not in ACTOR_KINDS:
        raise InputError(f"actor kind must be human or agent, not {actor_kind!r}", "invalid_actor_kind")
    key = KEYS[actor_kind]
    policy = ApprovalPolicy(DEFAULTS[actor_kind], "default")
    if memzoi_home is not None:
        user = user_config_path(memzoi_home)
        mode = read_mode(user, key)
        if mode is not None:
            policy = ApprovalPolicy(mode, "user", str(user))
    mode = read_mode(repo_config, key)
    if mode is not None:
        policy = ApprovalPolicy(mode, "repo", str(repo_config))
    if override is not None:
        if override not in MODES:
            raise PolicyError(f'approval override must be "auto" or "manual", not {override!r}')
        if actor_kind == "agent" and override == "auto":
            raise InputError(
                "an agent cannot approve its own proposal; a human may opt agents in with [workflow] "
                'agent_proposal_approval = "auto"',
                "agent_self_approval",
            )
        policy = ApprovalPolicy(override, "override")
    return policy
