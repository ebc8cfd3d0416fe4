"""The Earned Memory entry: a falsifiable claim with a YAML envelope and a free-form body (pure).

Reserved fields (memkeep README "The store & entry format", docs/memkeep.md): ``schema_version``, ``id``,
``type``, ``status``, ``written_at``, ``verified_at``, ``anchor``, ``scope``, ``evidence``, ``ttl_days``,
``explains``, ``check``, ``environment``, ``predictions``, ``tombstone_reason``, ``superseded_by``. Any other
field is the agent's own and is ignored. Accessors are lenient (a wrong type reads as absent) so that status
still computes; lint reports every wrong field.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

TYPES = ("fact", "gotcha", "recipe", "topology", "model")
STATUSES = ("verified", "observed", "inferred", "stale", "tombstone")
RESERVED = (
    "schema_version",
    "id",
    "type",
    "status",
    "written_at",
    "verified_at",
    "anchor",
    "scope",
    "evidence",
    "ttl_days",
    "explains",
    "check",
    "environment",
    "predictions",
    "tombstone_reason",
    "superseded_by",
)
DEFAULT_CHECK_TIMEOUT_S = 120
CHECK_MAX_TIMEOUT_S = 3600
_T = TypeVar("_T")


class cached_property(Generic[_T]):
    """``functools.cached_property`` without the lock Python 3.11 takes on every first access (12 ms over
    1,000 entries in ``git memkeep status``); Python 3.12 dropped that lock itself. The value is stored in the
    instance ``__dict__``, which then shadows this non-data descriptor."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func, self.name = func, func.__name__
        self.__doc__ = func.__doc__

    @overload
    def __get__(self, instance: None, owner: Any = None) -> cached_property[_T]: ...
    @overload
    def __get__(self, instance: object, owner: Any = None) -> _T: ...
    def __get__(self, instance: object, owner: Any = None) -> cached_property[_T] | _T:
        if instance is None:
            return self
        value = self.func(instance)
        instance.__dict__[self.name] = value
        return value


@dataclass(frozen=True)
class Check:
    """How to re-test a claim: a shell command run with ``sh -c`` in the repository root.

    ``safe`` marks a check as read-only and deterministic, so ``verify --all-safe`` may run it unattended.
    """

    run: str
    safe: bool = False
    timeout_s: int = DEFAULT_CHECK_TIMEOUT_S
    label: str = "check"


@dataclass(frozen=True)
class Entry:
    """One entry file, parsed.

    Args:
        path: repository-relative POSIX path of the file (NFC).
        fields: every frontmatter field, as plain Python values.
        body: the text after the frontmatter; its first non-empty line is the claim.
        body_line: the 1-based file line where the body starts.
    """

    path: str
    fields: Mapping[str, Any]
    body: str
    body_line: int = 1
    stem: str = field(default="")

    @property
    def id(self) -> str:
        """The entry's identity: the file name without ``.md`` (the convention: id = file name).

        status, verify, ``explains`` and INDEX.md all key entries by it, so an ``id`` field that differs (a lint
        ``id_mismatch``) never re-routes dependencies. An entry built without a file name uses its ``id`` field.
        """
        if self.stem:
            return self.stem
        value = self.fields.get("id")
        return value if isinstance(value, str) else ""

    @property
    def declared_id(self) -> str | None:
        """The ``id`` field as written, when it is a non-empty string (lint compares it with :attr:`id`)."""
        value = self.fields.get("id")
        return value if isinstance(value, str) and value else None

    @property
    def type(self) -> str | None:
        """The ``type`` field when it is a string."""
        return _str(self.fields.get("type"))

    @cached_property
    def status(self) -> str | None:
        """The ``status`` field when it is a string."""
        return _str(self.fields.get("status"))

    @cached_property
    def anchor(self) -> str | None:
        """The ``anchor`` commit id when it is a non-empty string."""
        return _str(self.fields.get("anchor")) or None

    @cached_property
    def scope(self) -> tuple[str, ...]:
        """The ``scope`` globs (strings only)."""
        return _str_list(self.fields.get("scope"))

    @cached_property
    def explains(self) -> tuple[str, ...]:
        """Ids this entry depends on: if one of them is suspect or stale, so is this one."""
        return _str_list(self.fields.get("explains"))

    @property
    def written_at(self) -> dt.date | None:
        """The ``written_at`` date."""
        return as_date(self.fields.get("written_at"))

    @property
    def verified_at(self) -> dt.date | None:
        """The ``verified_at`` date, else ``written_at``."""
        dated = self.dated_by
        return None if dated is None else dated[1]

    @property
    def dated_by(self) -> tuple[str, dt.date] | None:
        """The field a ttl is counted from and its date: ``("verified_at", date)``, else ``("written_at", date)``
        when ``verified_at`` is missing or no valid date; ``None`` without either (memkeep README, ttl_expired)."""
        for name in ("verified_at", "written_at"):
            date = as_date(self.fields.get(name))
            if date is not None:
                return name, date
        return None

    @property
    def ttl_days(self) -> int | None:
        """The ``ttl_days`` field when it is a positive integer."""
        value = self.fields.get("ttl_days")
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

    @property
    def claim(self) -> str:
        """The first non-empty body line, stripped ('' when the body is empty)."""
        for line in self.body.splitlines():
            if line.strip():
                return line.strip()
        return ""

    @property
    def is_live(self) -> bool:
        """False for tombstones, which never take part in staleness."""
        return self.status != "tombstone"

    def scope_hits(self, paths: list[str]) -> list[str]:
        """The paths of ``paths`` (repository-relative POSIX; the entry's own file left out) its ``scope``
        matches, in their order; ``[]`` without a scope or with a malformed one (lint's to say)."""
        from git_memzoi.core.globs import Scope
        from git_memzoi.errors import MemzoiError

        if not self.scope:
            return []
        try:
            return list(Scope(self.scope).select([p for p in paths if p != self.path]))
        except MemzoiError:
            return []

    def checks(self) -> tuple[Check, ...]:
        """The checks ``verify`` runs: the ``check`` field, or for a model every prediction's check."""
        if self.type == "model":
            predictions = self.fields.get("predictions")
            if not isinstance(predictions, list):
                return ()
            found = (
                parse_check(p.get("check"), f"prediction {i + 1}")
                for i, p in enumerate(predictions)
                if isinstance(p, dict)
            )
            return tuple(c for c in found if c is not None)
        check = parse_check(self.fields.get("check"), "check")
        return (check,) if check else ()

    def check_problems(self) -> list[tuple[str, str]]:
        """``(field, problem)`` for each check field :meth:`checks` would read leniently (lint's ``check_format``):
        verify refuses to run an entry's checks while one is malformed, rather than run it with defaults."""
        if self.type == "model":
            predictions = self.fields.get("predictions")
            found = [
                (f"predictions[{i}].check", check_problem(p.get("check")))
                for i, p in enumerate(predictions if isinstance(predictions, list) else [], 1)
                if isinstance(p, dict)
            ]
        else:
            found = [("check", check_problem(self.fields.get("check"), required=False))]
        return [(field, problem) for field, problem in found if problem]

    def environment(self) -> dict[str, str]:
        """Extra environment variables for the checks (``environment``: a mapping of strings)."""
        env = self.fields.get("environment")
        if not isinstance(env, dict):
            return {}
        return {str(k): str(v) for k, v in env.items() if isinstance(v, (str, int, float))}


def served(path: str, fields: Mapping[str, Any], body: str, body_line: int, stem: str) -> Entry:
    """``Entry(path, fields, body, body_line, stem)``, without the frozen dataclass's five guarded attribute
    writes: the store builds one per entry file on every run, and that ``__init__`` was a twentieth of a warm
    ``status``'s per-entry time. The result is the same frozen object."""
    entry = _NEW(Entry)
    attrs = entry.__dict__
    attrs["path"], attrs["fields"], attrs["body"], attrs["body_line"], attrs["stem"] = (
        path,
        fields,
        body,
        body_line,
        stem,
    )
    return entry


_NEW = object.__new__


def check_problem(value: Any, *, required: bool = True) -> str | None:
    """Why ``value`` is not a valid ``check`` (a command string, or a mapping with ``run`` and optional ``safe``
    true/false and ``timeout_s`` a whole number of seconds, 1 to :data:`CHECK_MAX_TIMEOUT_S`), else ``None``.
    An absent check is a problem only when ``required`` (a model's predictions)."""
    if value is None and not required:
        return None
    run = value.get("run") if isinstance(value, dict) else value
    if isinstance(run, str) and "\0" in run:  # no process can be started with it (issue 13)
        return "the command holds a NUL character"
    if isinstance(value, str) and value.strip():
        return None
    if isinstance(value, dict) and isinstance(value.get("run"), str) and value["run"].strip():
        if not isinstance(value.get("safe", False), bool):
            return "safe must be true or false"
        timeout = value.get("timeout_s", DEFAULT_CHECK_TIMEOUT_S)
        if not isinstance(timeout, int) or isinstance(timeout, bool) or not 0 < timeout <= CHECK_MAX_TIMEOUT_S:
            return f"timeout_s must be a whole number of seconds, 1 to {CHECK_MAX_TIMEOUT_S}"
        return None
    return "a check is a command string or a mapping with run, safe, timeout_s"


def parse_check(value: Any, label: str) -> Check | None:
    """Read a ``check`` value: a command string, or a mapping ``{run, safe, timeout_s}``; else ``None``.

    The command is stripped: a YAML block (``run: |``) keeps a trailing newline that ``sh -c`` ignores anyway.
    """
    if isinstance(value, str) and value.strip():
        return Check(value.strip(), False, DEFAULT_CHECK_TIMEOUT_S, label)
    if isinstance(value, dict) and isinstance(value.get("run"), str) and value["run"].strip():
        timeout = value.get("timeout_s", DEFAULT_CHECK_TIMEOUT_S)
        if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout <= 0:
            timeout = DEFAULT_CHECK_TIMEOUT_S
        return Check(value["run"].strip(), value.get("safe") is True, timeout, label)
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _str_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        for v in value:  # almost always all strings: one pass, no generator
            if not isinstance(v, str):
                return tuple(v for v in value if isinstance(v, str))
        return tuple(value)
    return ()


def as_date(value: Any) -> dt.date | None:
    """Read a YAML date, a timestamp (its date) or an ISO ``YYYY-MM-DD`` string; else ``None``."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            return None
    return None
