"""The earned envelope a command writes on a record: ``memkeep: {anchor, scope, verified_at, ttl_days, check}``.

DESIGN.md "Decisions for the second wave" (one memory): the commands that write records set the envelope, so a
record earns its freshness as a memkeep entry does (memkeep README "The store & entry format"). A
:class:`WatchRequest` is what the user asked for (``--scope``, ``--anchor``, ``--ttl-days``, ``--check``,
``--check-safe``), validated before anything is written (:func:`make_request`); :func:`seal` resolves the
anchor against the repository (io) and builds the envelope. A record in a repository without commits, or with
nothing to watch (no scope, no ttl, no check), gets no envelope and stays a plain record: :class:`Sealed` says
so (``watched: false`` and why), so ``--json`` never leaves the user guessing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memzoi.errors import InputError

MAX_TTL_DAYS = 36_500  # a hundred years: any more is a typo, and memkeep reads any positive whole number
MAX_CHECK = 2048
UNWATCHED = {
    "no_commits": "the repository has no commits yet, so no anchor can be recorded: nothing watches this record",
    "no_scope": "no --scope or --applies-to path: no change in the repository can flag this record",
}


@dataclass(frozen=True)
class WatchRequest:
    """The envelope options of a write command, validated. ``None`` means "the default" for each field:
    scope = the record's ``applies_to`` paths, anchor = ``HEAD``, no ttl, no check."""

    scope: tuple[str, ...] | None = None
    anchor: str | None = None
    ttl_days: int | None = None
    check: str | None = None
    check_safe: bool = False


@dataclass(frozen=True)
class Sealed:
    """The envelope a record is written with (``None``: no envelope) and whether anything watches it."""

    envelope: Mapping[str, Any] | None
    reason: str | None = None  # a key of UNWATCHED when nothing watches the record

    @property
    def watched(self) -> bool:
        """True when a change to the scope (or the ttl) can make the record suspect."""
        return self.envelope is not None and bool(self.envelope.get("scope") or self.envelope.get("ttl_days"))

    def as_json(self) -> dict[str, Any]:
        """``{"watched", "reason", "message", "envelope"}`` for ``--json`` output."""
        reason = self.reason if not self.watched else None
        return {
            "watched": self.watched,
            "reason": reason,
            "message": UNWATCHED.get(reason or ""),
            "envelope": _plain(self.envelope),
        }


def make_request(
    *,
    scope: Sequence[str] | None = None,
    anchor: str | None = None,
    ttl_days: int | None = None,
    check: str | None = None,
    check_safe: bool = False,
) -> WatchRequest:
    """Validate envelope options (all before anything is written).

    Args:
        scope: gitignore-style globs (memkeep's scope syntax); empty or ``None`` means the default.
        anchor: a revision (``HEAD``, a branch, a commit id); resolved later by :func:`seal`.
        ttl_days: whole days, 1 to :data:`MAX_TTL_DAYS`.
        check: a shell command re-testing the claim (``sh -c`` in the repository root); ``check_safe`` marks it
            read-only and deterministic, so ``verify --all-safe`` may run it.

    Raises:
        InputError: ``invalid_scope`` (a glob git never matches), ``invalid_anchor`` (empty), ``invalid_ttl_days``,
            ``invalid_check`` (empty, holding a NUL, or too long), ``check_safe_without_check``,
            ``prohibited_content_detected`` (a credential in ``--check``; never echoed).
    """
    from git_memzoi.core.globs import pattern_problem
    from git_memzoi.memzoi.records.secrets import require_clean_fields

    globs: tuple[str, ...] | None = None
    if scope:
        for pattern in scope:
            problem = pattern_problem(pattern)
            if problem is not None:
                raise InputError(f"--scope {pattern!r}: {problem}", "invalid_scope")
        globs = tuple(dict.fromkeys(scope))
    if anchor is not None and not anchor.strip():
        raise InputError("--anchor must name a revision, e.g. HEAD or a commit id", "invalid_anchor")
    if ttl_days is not None and (
        isinstance(ttl_days, bool) or not isinstance(ttl_days, int) or not 0 < ttl_days <= MAX_TTL_DAYS
    ):
        raise InputError(f"--ttl-days must be a whole number of days, 1 to {MAX_TTL_DAYS}", "invalid_ttl_days")
    clean_check = None
    if check is not None:
        clean_check = check.strip()
        if not clean_check or len(clean_check) > MAX_CHECK or "\x00" in clean_check:
            raise InputError(f"--check must be a shell command of at most {MAX_CHECK} characters", "invalid_check")
        require_clean_fields({"--check": clean_check}, "the envelope")
    elif check_safe:
        raise InputError("--check-safe marks a --check command as safe; give --check too", "check_safe_without_check")
    return WatchRequest(globs, anchor.strip() if anchor else None, ttl_days, clean_check, check_safe)


def seal(
    root: Path,
    request: WatchRequest,
    default_scope: Sequence[str],
    today: dt.date,
    *,
    inherit: Mapping[str, Any] | None = None,
) -> Sealed:
    """The envelope of a record written now in the repository at ``root`` (io: resolves the anchor).

    Args:
        default_scope: the scope when ``request.scope`` is unset (the record's ``applies_to``).
        today: ``verified_at`` (the claim is as fresh as the command that writes it).
        inherit: an envelope whose ``scope``, ``ttl_days`` and ``check`` stand in for unset options (supersede
            keeps what its target was watched by).

    Returns:
        A :class:`Sealed`: the envelope in the writer's key order (``anchor`` a full commit id, ``scope``,
        ``verified_at`` an ISO date, then ``ttl_days`` and ``check`` when set), or ``None`` with the reason.

    Raises:
        InputError: ``unknown_rev`` when ``request.anchor`` names no commit (also in a repository without
            commits: an explicit anchor that cannot be recorded is refused, never dropped).
    """
    old = inherit or {}
    scope = list(request.scope or _globs(old.get("scope")) or default_scope)
    ttl = request.ttl_days if request.ttl_days is not None else _ttl(old.get("ttl_days"))
    check: Any = {"run": request.check, "safe": request.check_safe} if request.check else old.get("check")
    anchor = _anchor(root, request.anchor)
    if anchor is None and request.anchor is not None:
        raise InputError(f"--anchor {request.anchor!r} names no commit in this repository", "unknown_rev")
    if anchor is None:
        return Sealed(None, "no_commits")
    if not scope and ttl is None and check is None:
        return Sealed(None, "no_scope")
    envelope: dict[str, Any] = {"anchor": anchor, "scope": scope, "verified_at": today.isoformat()}
    if not scope:
        del envelope["scope"]
    if ttl is not None:
        envelope["ttl_days"] = ttl
    if check is not None:
        envelope["check"] = check
    return Sealed(envelope, None if scope else "no_scope")


def _anchor(root: Path, rev: str | None) -> str | None:
    """The commit ``rev`` names (``None``: HEAD's), ``None`` when there is none. HEAD is read from the git
    directory's files when it can be (:mod:`~git_memzoi.core.gitrefs`): pygit2 costs 45-100 ms to import, a
    third of a write (issue 17, "Per-call overhead"); any other revision, and whatever git's files do not tell
    plainly, is resolved by pygit2."""
    if rev is None:
        from git_memzoi.core import gitrefs

        head = gitrefs.head_commit(root)
        if head is not None:
            return head or None  # UNBORN: no commit yet
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    return Pygit2RepoView(root).resolve_commit(rev or "HEAD")


def _globs(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _ttl(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dt.date):
        return value.isoformat()
    return value
