"""Regular expressions compiled on first use, not at import (issue 17, "Start-up": 47 module-level patterns
were compiled by every command, and a character class over the CJK ranges alone costs 2–3 ms to build).

``NAME = lazy(r"...")`` reads like ``re.compile`` and is typed as a :class:`re.Pattern`. The first use of any
attribute compiles the pattern once and binds the compiled pattern's methods onto the object, so later calls
are plain attribute lookups with no indirection.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr, cast

_BOUND = (
    "search",
    "match",
    "fullmatch",
    "finditer",
    "findall",
    "sub",
    "subn",
    "split",
    "pattern",
    "flags",
    "groups",
    "groupindex",
)


class _Lazy:
    """A stand-in for ``re.compile(pattern, flags)`` until an attribute is first read."""

    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        compiled = re.compile(*self._source)  # type: ignore[type-var]  # str or bytes, as given
        for attr in _BOUND:
            setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self._source[0]!r}, {self._source[1]})"


def lazy(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """A pattern that compiles ``pattern`` with ``flags`` the first time it is used.

    Args:
        pattern: the regular expression source (``str`` or ``bytes``).
        flags: ``re`` flags, as for :func:`re.compile`.
    Returns:
        An object with the methods and attributes of the compiled :class:`re.Pattern`. It is not an instance of
        ``re.Pattern``, so it is never handed to ``re.sub(pattern, ...)`` or an ``isinstance`` check.
    Raises:
        re.error: on first use, when ``pattern`` is not a valid expression (a bug in our own source).
    """
    return cast("re.Pattern[AnyStr]", _Lazy(pattern, flags))
