"""The error base class and the one exit-code table both commands share (DESIGN.md "Exit codes").

Errors live beside the code that raises them; each subclasses :class:`MemzoiError` and carries a stable
``code`` (shown in ``--json`` output) and an ``exit_code`` from :class:`ExitCode`.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Process exit codes for ``git memzoi`` and ``git memkeep`` (DESIGN.md, memkeep README "Commands")."""

    OK = 0
    FINDINGS = 1  # a violation, a suspect entry, a failed check or gate
    USAGE = 2  # bad usage or bad input; nothing was written
    INTERNAL = 3  # a bug: never expected, reported without a traceback
    INTERRUPTED = 130  # 128 + SIGINT
    BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader of stdout went away (`| head`); ends quietly


class MemzoiError(Exception):
    """An expected, user-facing failure: one line of text, a stable code, an exit code.

    Args:
        message: one line for stderr; never contains private or blocked content.
        code: stable machine-readable identifier for ``--json`` (snake_case).
    """

    exit_code: ExitCode = ExitCode.USAGE
    default_code = "error"

    def __init__(self, message: str, code: str | None = None) -> None:
        if len(message) > MAX_MESSAGE:  # a message quoting a 2 MB id it was given would be sent back whole
            message = f"{message[:MAX_MESSAGE]}… ({len(message) - MAX_MESSAGE:,} more characters)"
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code


MAX_MESSAGE = 2000  # characters of a MemzoiError's message; what it quotes beyond that is cut


class InputError(MemzoiError):
    """Bad input: a malformed file, a wrong id, a path outside the repository (exit 2)."""

    default_code = "invalid_input"


class ToolError(MemzoiError):
    """The tool could not do its job: git missing, a check that crashed, an unreadable store (exit 2)."""

    default_code = "tool_error"
