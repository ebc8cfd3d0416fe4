"""Typed relations between records: the ``relations:`` frontmatter list (pure).

vault-memory README "Domain relation roles", as project memory declares them: a record lists directed roles in
its frontmatter, one single-key mapping per item::

    relations:
      - depends_on: use-pnpm-1a2b3c
      - owns: src/auth/**

A role name matches ``[a-z][a-z0-9_]*`` and is open (unknown names are kept, never inferred). ``owns`` (and any
role of :data:`PATH_ROLES`) targets a path glob of the repository, checked as a scope glob; every other role
targets a record id. ``depends_on`` is the one role staleness follows: a record that depends on a suspect one is
``dependency_suspect`` (memkeep README "How staleness works", as its ``explains``). An invalid shape is refused
with ``invalid_relation`` (exit 2) at write time and makes a hand-edited record unreadable (listed by ``doctor``
and ``rebuild --json`` with that code), never silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from git_memzoi.core.patterns import lazy
from git_memzoi.errors import InputError

ROLE = lazy(r"^[a-z][a-z0-9_]*$")
DEPENDS_ON = "depends_on"
PATH_ROLES = ("owns",)  # roles whose target is a path glob; every other role names a record
MAX_RELATIONS = 64
MAX_TARGET_CHARS = 400
CODE = "invalid_relation"
MAX_ID_CHARS = 400
# the shape okf.concept_id_problem accepts (not imported from there: okf imports this module)
_RECORD_ID = lazy(r"^[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?(?:/[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?)*$")


class RelationError(InputError):
    """A relation that does not have the documented shape (exit 2, code ``invalid_relation``)."""

    default_code = CODE


@dataclass(frozen=True, order=True)
class Relation:
    """One declared relation: ``role`` (``[a-z][a-z0-9_]*``) and its ``target`` (a record id, or a path glob for
    the roles of :data:`PATH_ROLES`)."""

    role: str
    target: str

    @property
    def targets_path(self) -> bool:
        """True when the target is a path glob (``owns``), not a record id."""
        return self.role in PATH_ROLES

    def as_json(self) -> dict[str, str]:
        """``{"role", "target"}``."""
        return {"role": self.role, "target": self.target}

    def as_item(self) -> dict[str, str]:
        """The frontmatter list item ``{role: target}``."""
        return {self.role: self.target}


def problem(role: Any, target: Any) -> str | None:
    """Why ``role: target`` is not a valid relation, or ``None``."""
    from git_memzoi.core.globs import pattern_problem

    if not isinstance(role, str) or not ROLE.match(role):
        return f"role {role!r} must match [a-z][a-z0-9_]* (e.g. depends_on, owns)"
    if not isinstance(target, str) or not target.strip():
        return f"{role}: the target must be a non-empty string"
    if len(target) > MAX_TARGET_CHARS or "\x00" in target or "\n" in target:
        return f"{role}: the target must be one line of at most {MAX_TARGET_CHARS} characters"
    if role in PATH_ROLES:
        clean = target.strip()
        if clean.startswith("/") or ".." in clean.split("/"):
            return f"{role}: {target!r} must be a path glob inside the repository"
        glob = pattern_problem(clean)
        return None if glob is None else f"{role}: {target!r} is not a path glob ({glob})"
    clean = target.strip()
    if len(clean) > MAX_ID_CHARS or not _RECORD_ID.match(clean):
        return f"{role}: {target!r} is not a record id (lowercase letters, digits, '-' and '_', '/'-separated)"
    return None


def parse(value: Any, where: str = "relations") -> tuple[Relation, ...]:
    """The relations of a ``relations:`` frontmatter value (``None``: none), in file order (as written).

    Args:
        value: a list of single-key mappings ``{role: target}`` as YAML reads it.
        where: names the field in the error (``relations``, ``--relation``).

    Raises:
        RelationError: not a list, an item that is not a single-key mapping, an invalid role or target
            (:func:`problem`), or more than :data:`MAX_RELATIONS` items.
    """
    if value is None:
        return ()
    if not isinstance(value, list):
        raise RelationError(f"{where}: must be a list of '- role: target' items")
    if len(value) > MAX_RELATIONS:
        raise RelationError(f"{where}: at most {MAX_RELATIONS} relations")
    out: list[Relation] = []
    for n, item in enumerate(value, 1):
        if not isinstance(item, Mapping) or len(item) != 1:
            raise RelationError(f"{where}: item {n} must be one '- role: target' mapping")
        ((role, target),) = item.items()
        reason = problem(role, target)
        if reason is not None:
            raise RelationError(f"{where}: item {n}: {reason}")
        out.append(Relation(role, target.strip()))
    return tuple(out)


def from_options(values: Iterable[str]) -> tuple[Relation, ...] | None:
    """The relations of repeated ``--relation role=target`` options (none given: ``None``, "the default").

    Raises:
        RelationError: an option without ``=``, or an invalid relation (:func:`parse`).
    """
    items: list[dict[str, str]] = []
    for text in values:
        role, sep, target = text.partition("=")
        if not sep:
            raise RelationError(f"--relation {text!r}: write role=target, e.g. depends_on=use-pnpm")
        items.append({role.strip(): target.strip()})
    return parse(items, "--relation") if items else None


def items(relations: Sequence[Relation]) -> list[dict[str, str]] | None:
    """The frontmatter value of ``relations`` (``None`` for none, so the key is left out)."""
    return [r.as_item() for r in relations] or None


def item_lines(yaml_text: str, count: int, first_line: int) -> list[int]:
    """The 1-based file line of each of the ``count`` items of the top-level ``relations:`` key in ``yaml_text``
    (the frontmatter between its fences, whose first line is file line ``first_line``): the line of each item's
    ``-``. A flow-style or unusual list (a count that does not match) gives every item the key's own line."""
    lines = yaml_text.splitlines()
    key = next((n for n, line in enumerate(lines) if re.match(r"^relations\s*:", line)), None)
    if key is None:
        return [first_line] * count
    dashes = []
    for n in range(key + 1, len(lines)):
        line = lines[n]
        if line and not line[0].isspace() and not line.startswith("-"):
            break  # the next top-level key
        if re.match(r"^\s*-\s", line + " "):
            dashes.append(first_line + n)
    return dashes if len(dashes) == count else [first_line + key] * count


@dataclass(frozen=True)
class Broken:
    """A relation of an active record towards a record id no record file has (``broken_relation``)."""

    source: str
    role: str
    target: str


def broken(records: Iterable[Any], known: Iterable[str] = ()) -> list[Broken]:
    """The broken relations among ``records`` (:class:`~git_memzoi.memzoi.records.okf.Record` s, every status):
    each role of an active record naming a record id none of them has (nor ``known``: the ids of record files
    that could not be read, reported on their own), sorted by source, role and target. A superseded or
    tombstoned target is not broken (the dependent is ``dependency_suspect`` instead)."""
    every = list(records)
    ids = {r.id for r in every} | set(known)
    found = {
        Broken(r.id, rel.role, rel.target)
        for r in every
        if r.status == "active"
        for rel in r.relations
        if not rel.targets_path and rel.target not in ids
    }
    return sorted(found, key=lambda b: (b.source, b.role, b.target))
