"""``context --expand``: related records pulled into a context pack (io).

vault-memory "Domain relation roles" (``expand``) for packs: after ranking, each repository record of the pack's
candidates brings the current records its relations reach in one hop (:func:`~git_memzoi.memzoi.recall.related.walk`,
both directions, every role), placed right after it in the rank order, so they share the pack's one budget and
are packed only when they fit. Each carries the relation that brought it (``via``), which the prompt and the
``included`` entry cite. A record already among the candidates is not repeated; broken relations bring
nothing (``doctor`` reports them). At most :data:`PER_RECORD` records per candidate and :data:`LIMIT` per pack.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from git_memzoi.memzoi.recall.schema import SuspectJson
    from git_memzoi.memzoi.workspace import Workspace

PER_RECORD = 3
LIMIT = 10


class _Ranked(Protocol):
    row: Mapping[str, Any]


C = TypeVar("C", bound=_Ranked)


def insert(
    ws: Workspace,
    ranked: Sequence[C],
    make: Callable[[Mapping[str, Any], dict[str, Any], SuspectJson | None], C],
) -> list[C]:
    """``ranked`` with the related records of its repository records inserted after the one that brought each.

    Args:
        ranked: the pack's candidates in rank order (each with an index ``row``).
        make: builds a candidate of a related row, its ``via`` (role, direction, from, to, hop, file, line)
            and its suspect mark.
    """
    from git_memzoi.memzoi.recall import suspect
    from git_memzoi.memzoi.recall.related import Related, walk
    from git_memzoi.memzoi.recall.search import withhold

    taken = {suspect.key(c.row) for c in ranked}
    brought: list[tuple[int, Mapping[str, Any], dict[str, Any]]] = []
    for n, c in enumerate(ranked):
        row = c.row
        if (row.get("store") or "record") != "record" or row["destination"] != "repo" or len(brought) >= LIMIT:
            continue
        found = Related(row, "both", 1, ())
        walk(ws, found, [row["id"]])
        for reached, via in found.reached[:PER_RECORD]:
            if suspect.key(reached) not in taken and len(brought) < LIMIT:
                taken.add(suspect.key(reached))
                brought.append((n, reached, via))
    if not brought:
        return list(ranked)
    kept = {row["id"] for row in withhold(ws.layout, [row for _, row, _ in brought])[0]}
    marks = suspect.assess(ws, [row for _, row, _ in brought])
    out: list[C] = []
    for n, c in enumerate(ranked):
        out.append(c)
        out += [make(row, via, marks.get(row["id"])) for m, row, via in brought if m == n and row["id"] in kept]
    return out
