"""``git memzoi related <id>``: the records a record's relations reach, from the derived index (io).

vault-memory README "Domain relation roles" (the ``expand`` tool), for records: the edges are the ``relations:``
lists of current repository records (:mod:`~git_memzoi.memzoi.records.relations`), indexed with their lines
(:mod:`~git_memzoi.memzoi.recall.index.links`). ``direction`` is ``outgoing`` (the roles the record declares),
``incoming`` (the records declaring a role towards it) or ``both`` (the default); ``roles`` filter the edges of
every hop (none given: every role). ``depth`` is 1 or 2; a record is reached once, at its nearest hop, so a cycle
ends (the start is never reached again). Each reached record is cited with the edge that brought it (``via``:
role, direction, the declaring record, its file and line).

Nothing is invented: a role towards an id no record has is listed under ``broken`` (``broken_relation``, also
reported by ``doctor``); one towards a record that is no longer current (superseded, tombstoned, expired) under
``excluded`` (``target_not_current``); a declaring file changed since it was indexed under ``excluded``
(``stale_relation``) with none of its indexed roles followed. ``owns`` roles name paths, listed under ``paths``.
Traversal never invents an inverse role.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import InputError

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout
    from git_memzoi.memzoi.workspace import Workspace

DIRECTIONS = ("outgoing", "incoming", "both")
DEPTHS = (1, 2)
SCHEMA_VERSION = 1
_EDGE_COLUMNS = "l.path, l.source_id, l.role, l.target, l.target_kind, l.line, s.source_hash"


@dataclass(frozen=True)
class Edge:
    """One indexed relation: ``source`` declares ``role`` towards ``target`` (a record id, or a path glob when
    ``target_kind`` is ``path``) on ``line`` of the file ``path``."""

    path: str
    source: str
    role: str
    target: str
    target_kind: str
    line: int

    def via(self, direction: str, hop: int) -> dict[str, Any]:
        """The citation of the edge that brought a record: ``{role, direction, from, to, hop, file, line}``."""
        return {
            "role": self.role,
            "direction": direction,
            "from": self.source,
            "to": self.target,
            "hop": hop,
            "file": self.path,
            "line": self.line,
        }


@dataclass
class Related:
    """What :func:`related` found: the start record's row, the reached records (rows with their ``via``, in
    hop then edge order), owned paths, broken relations and excluded edges."""

    start: Mapping[str, Any]
    direction: str
    depth: int
    roles: tuple[str, ...]
    reached: list[tuple[Mapping[str, Any], dict[str, Any]]] = field(default_factory=list)
    paths: list[dict[str, Any]] = field(default_factory=list)
    broken: list[dict[str, Any]] = field(default_factory=list)
    excluded: list[dict[str, Any]] = field(default_factory=list)
    suspects: Mapping[str, Any] = field(default_factory=dict)
    statements: Mapping[str, Any] = field(default_factory=dict)  # record id -> recall/statements.py of_file

    def to_json(self) -> dict[str, Any]:
        """The ``related --json`` object."""
        from git_memzoi.memzoi.recall.search import result

        def one(row: Mapping[str, Any], via: Mapping[str, Any] | None = None) -> dict[str, Any]:
            found: dict[str, Any] = dict(result(row, "", None, self.suspects.get(row["id"])))
            found["statements"] = self.statements.get(row["id"])
            if via is None:
                return found
            found["rationale"] = f"related: {via['from']} {via['role']} {via['to']} (hop {via['hop']})"
            return {**found, "via": via}

        return {
            "schema_version": SCHEMA_VERSION,
            "record": one(self.start),
            "direction": self.direction,
            "depth": self.depth,
            "roles": list(self.roles),
            "related": [one(row, via) for row, via in self.reached],
            "paths": self.paths,
            "broken": self.broken,
            "excluded": self.excluded,
        }


def check(direction: str, depth: int, roles: Iterable[str]) -> tuple[str, int, tuple[str, ...]]:
    """Validate the traversal options (before anything is read).

    Raises:
        InputError: ``invalid_direction``, ``invalid_depth`` (1 or 2), ``invalid_relation`` (a role name that
            does not match ``[a-z][a-z0-9_]*``).
    """
    from git_memzoi.memzoi.records.relations import ROLE

    if direction not in DIRECTIONS:
        raise InputError(f"--direction must be one of {', '.join(DIRECTIONS)}", "invalid_direction")
    if isinstance(depth, bool) or depth not in DEPTHS:
        raise InputError("--depth must be 1 or 2", "invalid_depth")
    clean = tuple(dict.fromkeys(roles))
    for role in clean:
        if not ROLE.match(role):
            raise InputError(f"--role {role!r} must match [a-z][a-z0-9_]*", "invalid_relation")
    return direction, depth, clean


def _unique_id(ws: Workspace, target: str) -> str:
    """``target`` when a current repository record has that id, else the one such id it is a prefix of.

    Raises:
        InputError: ``ambiguous_target`` when it is a prefix of several (``target_not_found`` is the caller's).
    """
    from git_memzoi.memzoi.recall.index import select

    known = select.ids(ws.layout, "repo", now=ws.recall_at())
    if target in known or not target:
        return target
    matches = [i for i in known if i.startswith(target)]
    if len(matches) > 1:
        raise InputError(
            f"{target!r} names {len(matches)} records: {', '.join(matches[:5])} (give more of the id)",
            "ambiguous_target",
        )
    return matches[0] if matches else target


def related(
    ws: Workspace, target: str, *, roles: Sequence[str] = (), direction: str = "both", depth: int = 1
) -> Related:
    """The records ``target`` (a current repository record's id, or a prefix naming exactly one, as ``show``
    takes) reaches through its relations.

    Raises:
        InputError: bad options (:func:`check`); ``target_not_found`` when no current repository record has the
            id; ``ambiguous_target`` when a prefix names several; ``content_withheld`` when it holds a credential
            (as ``show``).
    """
    from git_memzoi.memzoi.recall import statements, suspect
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.recall.linked import current_rows
    from git_memzoi.memzoi.recall.search import withhold

    direction, depth, roles = check(direction, depth, roles)
    with index_db.read_session(ws.layout):
        target = _unique_id(ws, target)
        start = current_rows(ws, [target]).get(target)
        if start is None:
            raise InputError(f"no current repository record {target!r}", "target_not_found")
        if withhold(ws.layout, [start])[1]:
            raise InputError(f"record {target} holds a credential (not printed); fix its file", "content_withheld")
        found = Related(start, direction, depth, roles)
        walk(ws, found, [target])
        kept, withheld = withhold(ws.layout, [row for row, _ in found.reached])
        shown = {row["id"] for row in kept}
        found.reached = [(row, via) for row, via in found.reached if row["id"] in shown]
        found.excluded += [{"code": "content_withheld", "record_id": w["record_id"]} for w in withheld]
        rows = [start, *(row for row, _ in found.reached)]
        found.suspects = suspect.assess(ws, rows)
        found.statements = {row["id"]: statements.of_file(ws.layout, row["path"]) for row in rows}
    return found


def walk(ws: Workspace, found: Related, start: Sequence[str]) -> None:
    """Breadth-first over ``found.depth`` hops from the ids ``start``, filling ``found`` (each record at its
    nearest hop; edges in (hop, direction, role, id, file, line) order)."""
    from git_memzoi.memzoi.recall.linked import current_rows

    seen = set(start)
    frontier = list(start)
    checked: dict[str, bool] = {}
    for hop in range(1, found.depth + 1):
        steps: list[tuple[str, Edge, str]] = []  # (direction, edge, the id it leads to)
        for edge in edges(ws.layout, frontier, found.direction, found.roles, ws.recall_at(), checked, found.excluded):
            if edge.source in frontier and found.direction != "incoming":
                steps.append(("outgoing", edge, edge.target))
            if edge.target in frontier and edge.target_kind == "record" and found.direction != "outgoing":
                steps.append(("incoming", edge, edge.source))
        steps.sort(key=lambda s: (s[0] != "outgoing", s[1].role, s[2], s[1].path, s[1].line))
        rows = current_rows(ws, [to for _, e, to in steps if e.target_kind == "record"])
        frontier = []
        for direction, edge, to in steps:
            if edge.target_kind == "path":
                if hop == 1:
                    found.paths.append({"role": edge.role, "path": edge.target, "file": edge.path, "line": edge.line})
                continue
            if to in seen:
                continue
            row = rows.get(to)
            if row is None:
                _unreached(ws, found, edge, to)
                seen.add(to)
                continue
            seen.add(to)
            frontier.append(to)
            found.reached.append((row, edge.via(direction, hop)))
        if not frontier:
            return


def _unreached(ws: Workspace, found: Related, edge: Edge, to: str) -> None:
    from git_memzoi.memzoi.recall.linked import record_status

    status = record_status(ws.layout, to)
    item = {"role": edge.role, "from": edge.source, "target": to, "file": edge.path, "line": edge.line}
    if status is None:
        found.broken.append({"code": "broken_relation", **item})
    else:
        found.excluded.append({"code": "target_not_current", "status": status, **item})


def edges(
    layout: Layout,
    ids: Sequence[str],
    direction: str,
    roles: Sequence[str],
    now: dt.datetime,
    checked: dict[str, bool] | None = None,
    excluded: list[dict[str, Any]] | None = None,
) -> list[Edge]:
    """The indexed relations of current repository records touching ``ids`` in ``direction`` (outgoing: declared
    by one of them; incoming: naming one of them), of ``roles`` only when given, current at ``now``. An edge
    whose declaring file changed since it was indexed is left out and its file added once to ``excluded``
    (``stale_relation``);
    ``checked`` remembers each file's verdict between calls."""
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.recall.index.query import CURRENT, at
    from git_memzoi.memzoi.recall.index.row_json import instant_micros
    from git_memzoi.memzoi.recall.linked import source_fresh

    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    sides = []
    if direction != "incoming":
        sides.append(f"l.source_id IN ({marks})")
    if direction != "outgoing":
        sides.append(f"(l.target_kind = 'record' AND l.target IN ({marks}))")
    where = [f"({' OR '.join(sides)})", "r.destination = 'repo'", "r.store = 'record'", CURRENT]
    params: list[Any] = [*ids] * len(sides) + at(instant_micros(now))
    if roles:
        where.append(f"l.role IN ({', '.join('?' * len(roles))})")
        params += roles
    sql = (
        # CROSS JOIN keeps the (small) relations table the outer loop: never a scan of the records
        f"SELECT {_EDGE_COLUMNS} FROM relations l CROSS JOIN records r ON r.path = l.path"
        f" CROSS JOIN link_sources s ON s.path = l.path WHERE {' AND '.join(where)} ORDER BY l.path, l.ordinal"
    )
    checked = {} if checked is None else checked
    out = []
    for row in index_db.select(layout, sql, params):
        if row["path"] not in checked:
            checked[row["path"]] = source_fresh(layout, row["path"], row["source_hash"])
            if not checked[row["path"]] and excluded is not None:
                excluded.append({"code": "stale_relation", "file": row["path"], "record_id": row["source_id"]})
        if checked[row["path"]]:
            out.append(Edge(row["path"], row["source_id"], row["role"], row["target"], row["target_kind"], row["line"]))
    return out
