"""The name of the command this process runs (``git memzoi propose``), as a lock holder is reported (pure).

Its own module because every command names itself before it runs: :mod:`git_memzoi.core.atomic`, which reports
the name, costs milliseconds of imports that a read-only command such as ``git memkeep status`` never needs.
"""

from __future__ import annotations

_NAME: list[str] = []


def name_command(label: str) -> None:
    """Name the command this process runs (``git memzoi propose``), as lock holders are reported; never its
    arguments, which may hold anything."""
    _NAME[:] = [label]


def command_name() -> str | None:
    """The name given by :func:`name_command`, or ``None`` when none was given (a library caller)."""
    return _NAME[0] if _NAME else None
