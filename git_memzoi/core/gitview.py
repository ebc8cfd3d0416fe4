"""The repository view the pure cores depend on (a Protocol), and the answers it gives."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

HISTORY_HINT = (
    "this clone lacks the commit's trees (a treeless partial clone, --filter=tree:0); fetch them "
    "(git fetch --refetch --filter=blob:none origin) or clone with --filter=blob:none"
)


class AnchorState(enum.Enum):
    """What a commit id resolves to (memkeep README "How staleness works": anchor_unreachable)."""

    ANCESTOR = "ancestor"  # a commit that HEAD contains: its history can be diffed
    NOT_ANCESTOR = "not_ancestor"  # a commit HEAD does not contain (rebased away, another branch)
    MISSING = "missing"  # no such object (gc'd after a rewrite, a typo)
    SHALLOW = "shallow_missing"  # no such object, and the clone is shallow: deepening may bring it back
    AMBIGUOUS = "ambiguous"  # an abbreviated id that names several objects
    NOT_COMMIT = "not_commit"  # names an object that is not a commit
    NO_HEAD = "no_head"  # the repository has no commits yet
    # a commit HEAD contains whose trees this clone lacks (a treeless partial clone, --filter=tree:0): libgit2
    # cannot fetch them from the promisor remote, so what changed since it is unknown
    HISTORY_UNAVAILABLE = "history_unavailable"


class RepoView(Protocol):
    """Read-only history questions, answered in-process. Paths are repository-relative POSIX strings."""

    def head(self) -> str | None:
        """The full id of the commit HEAD points at, or ``None`` in a repository with no commits."""
        ...

    def is_shallow(self) -> bool:
        """True in a shallow clone."""
        ...

    def anchor_states(self, revs: Iterable[str]) -> Mapping[str, tuple[AnchorState, str | None]]:
        """Resolve each of ``revs`` against HEAD: its :class:`AnchorState` and its full id when it resolved."""
        ...

    def changed_files(self, base: str, head: str) -> Sequence[str]:
        """Sorted unique paths whose content differs between the trees of ``base`` and ``head``.

        A rename contributes both its old and its new path.
        """
        ...

    def changed_since(self, bases: Iterable[str], head: str) -> Mapping[str, frozenset[str]]:
        """For each of ``bases`` (full commit ids): the set :meth:`changed_files` gives against ``head``; a base
        whose trees the clone lacks (a treeless partial clone) is left out of the mapping."""
        ...

    def path_exists(self, commit: str, path: str) -> bool:
        """True when ``path`` names a file or a directory in ``commit``'s tree."""
        ...
