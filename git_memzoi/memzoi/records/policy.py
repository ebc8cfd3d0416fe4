"""The effective proposal approval mode (seed "Approval policy"; memzoi-spec.md §1 "Workflow policy").

Four layers, later ones winning: the built-in default ``auto``, the user config
``${MEMZOI_HOME:-~/.memzoi}/config.toml``, the repository's ``.memzoi/config.toml``, then a per-call override
(``--manual`` / ``--auto-approve``). Both files have the shape ``[workflow] proposal_approval = "manual"|"auto"``;
other tables are left alone for future settings, but an unknown key inside ``[workflow]`` is an error. This
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
WORKFLOW_KEYS = ("proposal_approval",)


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


def read_mode(path: Path) -> str | None:
    """The ``[workflow] proposal_approval`` of one config file; ``None`` when the file or the key is absent.

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
    mode = workflow.get("proposal_approval")
    if mode is None:
        return None
    if mode not in MODES:
        raise PolicyError(f'{path}: [workflow] proposal_approval must be "auto" or "manual", not {mode!r}')
    return str(mode)


def resolve(repo_config: Path, memzoi_home: Path | None, override: str | None = None) -> ApprovalPolicy:
    """The effective approval mode: default < user config < repo config < ``override``.

    Both files are read (and so validated) even when an override wins, so a broken config never hides.

    Args:
        repo_config: the repository's ``.memzoi/config.toml``.
        memzoi_home: the runtime home (``$MEMZOI_HOME``, else ``~/.memzoi``); ``None`` skips the user layer.
        override: ``"auto"`` or ``"manual"`` from a per-call flag, or ``None``.

    Raises:
        PolicyError: a malformed config file, or an override that is not a mode.
    """
    policy = ApprovalPolicy("auto", "default")
    if memzoi_home is not None:
        user = user_config_path(memzoi_home)
        mode = read_mode(user)
        if mode is not None:
            policy = ApprovalPolicy(mode, "user", str(user))
    mode = read_mode(repo_config)
    if mode is not None:
        policy = ApprovalPolicy(mode, "repo", str(repo_config))
    if override is not None:
        if override not in MODES:
            raise PolicyError(f'approval override must be "auto" or "manual", not {override!r}')
        policy = ApprovalPolicy(override, "override")
    return policy
