"""A record file that could not be read (pure): the value every reader of record files reports instead of raising.

Its own module so that the derived index can name it without importing the record parser (issue 17, "Start-up");
:mod:`~git_memzoi.memzoi.records.store` re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """A record file that could not be read; the others are still served.

    ``path`` is repository-relative (POSIX), ``reason`` one line for a human, ``code`` a stable error code.
    """

    path: str
    reason: str
    code: str
