"""The ``[session]`` settings of the agent hooks (io): the session-context budget and the transcript opt-in.

Read from the user config ``${MEMZOI_HOME:-~/.memzoi}/config.toml`` and the repository's ``.memzoi/config.toml``
(the files of :mod:`~git_memzoi.memzoi.records.policy`; the repository wins), table ``[session]``:

- ``context_budget_bytes`` (integer): the byte budget of ``integrate session-context`` when no
  ``--budget-bytes`` is given;
- ``checkpoint_transcript`` (boolean): the PreCompact checkpoint may read the hook input's ``transcript_path``
  (the user's conversation) even when the hook was installed without ``--checkpoint-transcript``.

Other tables are left alone; an unknown key inside ``[session]`` or a value of the wrong type is an error.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memzoi.core import safe_read
from git_memzoi.memzoi.records.policy import PolicyError, user_config_path

KEYS = {"context_budget_bytes": int, "checkpoint_transcript": bool}


@dataclass(frozen=True)
class SessionConfig:
    """The effective ``[session]`` settings; ``None`` / ``False`` when no file sets them."""

    context_budget_bytes: int | None = None
    checkpoint_transcript: bool = False


def load(repo_config: Path, memzoi_home: Path | None) -> SessionConfig:
    """The settings of the user file, then the repository file over it (``memzoi_home`` ``None``: repo only).

    Raises:
        PolicyError: a file that is not UTF-8 TOML, ``[session]`` not a table, an unknown key or a wrong type
            (``invalid_config``).
    """
    values: dict[str, Any] = {}
    for path in ([user_config_path(memzoi_home)] if memzoi_home is not None else []) + [repo_config]:
        values.update(_table(path))
    return SessionConfig(**values)


def _table(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(safe_read.read_text(path, follow_symlinks=True))
    except safe_read.FileRefused as exc:
        raise PolicyError(f"{path}: {exc.reason}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise PolicyError(f"{path}: not valid TOML ({reason})") from None
    table = data.get("session", {})
    if not isinstance(table, dict):
        raise PolicyError(f"{path}: [session] must be a table")
    for key, value in table.items():
        kind = KEYS.get(key)
        if kind is None:
            raise PolicyError(f"{path}: [session] has unknown key {key!r}; allowed: {', '.join(KEYS)}")
        if type(value) is not kind:  # a bool is an int to isinstance: exact types
            raise PolicyError(f"{path}: [session] {key} must be {'an integer' if kind is int else 'true or false'}")
    return dict(table)
