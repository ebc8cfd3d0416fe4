"""The one parser of git's hook arguments: (hook type, argv) → a typed event (research/aesthetics.md habit 10).

Only this module knows git's argument order (githooks(5)): ``pre-commit`` takes none, ``post-merge`` one (the
squash flag), ``post-checkout`` three (previous HEAD, new HEAD, 1 for a branch checkout, 0 for a file
checkout). A wrong count is an :class:`~git_memzoi.errors.InputError` naming the hook and what it expects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from git_memzoi.core.patterns import lazy
from git_memzoi.errors import InputError

HOOK_TYPES = ("pre-commit", "post-merge", "post-checkout")
NULL_ID = "0" * 40
_ID = lazy(r"[0-9a-f]{40}([0-9a-f]{24})?")
_ARGS = {
    "pre-commit": (0, "no arguments"),
    "post-merge": (1, "one argument (the squash flag, 0 or 1)"),
    "post-checkout": (3, "three arguments (previous HEAD, new HEAD, checkout flag)"),
}


class HookUsageError(InputError):
    """git called a hook with arguments it never passes (exit 2)."""

    default_code = "bad_hook_arguments"


@dataclass(frozen=True)
class PreCommit:
    """``pre-commit``: check what is staged."""

    hook: str = "pre-commit"


@dataclass(frozen=True)
class PostMerge:
    """``post-merge``: a merge (or a pull) just updated HEAD; ``squash`` when it was ``--squash``."""

    squash: bool
    hook: str = "post-merge"


@dataclass(frozen=True)
class PostCheckout:
    """``post-checkout``: HEAD moved from ``previous`` to ``new`` (``previous`` is all zeros after a clone)."""

    previous: str
    new: str
    branch_checkout: bool
    hook: str = "post-checkout"

    @property
    def after_clone(self) -> bool:
        """True for the checkout that ends ``git clone`` (or ``git worktree add``): there is no previous HEAD."""
        return set(self.previous) == {"0"}


HookEvent = PreCommit | PostMerge | PostCheckout


def parse(hook: str, argv: list[str] | tuple[str, ...]) -> HookEvent:
    """Turn a hook's type and arguments into its event.

    Raises:
        HookUsageError: an unknown hook type, a wrong argument count, or a malformed argument.
    """
    if hook not in _ARGS:
        raise HookUsageError(f"unknown hook type {hook!r}; expected one of {', '.join(HOOK_TYPES)}")
    count, expected = _ARGS[hook]
    if len(argv) != count:
        raise HookUsageError(f"{hook} takes {expected}; got {len(argv)}")
    if hook == "pre-commit":
        return PreCommit()
    if hook == "post-merge":
        return PostMerge(squash=_flag(hook, argv[0]))
    previous, new, flag = argv
    for value in (previous, new):
        if not _ID.fullmatch(value):
            raise HookUsageError(f"post-checkout: {value!r} is not a full commit id")
    return PostCheckout(previous, new, _flag(hook, flag))


def _flag(hook: str, value: str) -> bool:
    if value not in ("0", "1"):
        raise HookUsageError(f"{hook}: flag {value!r} must be 0 or 1")
    return value == "1"


def from_pre_commit_env(environ: dict[str, str] | Any) -> PostMerge | PostCheckout | None:
    """The event the pre-commit framework describes in its environment (it passes no git arguments).

    ``PRE_COMMIT_CHECKOUT_TYPE`` with ``PRE_COMMIT_FROM_REF``/``PRE_COMMIT_TO_REF`` is a post-checkout,
    ``PRE_COMMIT_IS_SQUASH_MERGE`` a post-merge; anything else (the ``manual`` stage) is ``None``.

    Raises:
        HookUsageError: the variables are there but malformed.
    """
    if "PRE_COMMIT_CHECKOUT_TYPE" in environ:
        refs = [environ.get("PRE_COMMIT_FROM_REF", ""), environ.get("PRE_COMMIT_TO_REF", "")]
        event = parse("post-checkout", [*refs, environ["PRE_COMMIT_CHECKOUT_TYPE"]])
    elif "PRE_COMMIT_IS_SQUASH_MERGE" in environ:
        event = parse("post-merge", [environ["PRE_COMMIT_IS_SQUASH_MERGE"]])
    else:
        return None
    assert not isinstance(event, PreCommit)
    return event
