"""Merging one canonical record that both branches changed, field by field (io-free core of the driver; issue 16).

A record changes in place only in a few ways: its ``status`` line (``supersede`` and ``tombstone``), its
``updated`` instant, and its ``memkeep`` envelope (``verify`` re-anchors it). Two branches that each changed one
of these merge as text, unless they changed the same line: one branch tombstoned the record the other
superseded, or both verified it. :func:`merge_record` settles those cases without a human, so the merge
succeeds and the disagreement shows as a review item instead of a conflict in YAML:

- ``status``: ``tombstoned`` wins over ``superseded`` over ``active``. The replacement another branch made
  still ``supersedes`` the record, so ``find_conflicts`` lists it (``supersede_of_inactive``).
- ``updated``: the later instant.
- ``memkeep``: the envelope verified later (``verified_at``, then ours).

Anything else both sides changed differently (a title, a body, a key one side removed) is a conflict for a human:
the caller writes both versions between conflict markers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

STATUS_RANK = {"active": 0, "superseded": 1, "tombstoned": 2}
_MISSING = object()


def merge_record(base: bytes, ours: bytes, theirs: bytes, concept_id: str, path: str) -> bytes | None:
    """The merged record file, or ``None`` when the two sides disagree on something only a human can settle (or a
    version does not parse as a record).

    Args:
        base, ours, theirs: the ancestor's, our and their file bytes.
        concept_id, path: the record's id and repository-relative path (the result is checked as that record).
    """
    from git_memzoi.core import frontmatter
    from git_memzoi.errors import MemzoiError
    from git_memzoi.memzoi import okf, record_store

    try:
        parsed = [record_store.parse_fields(data) for data in (base, ours, theirs)]
    except MemzoiError:
        return None
    if not all(parts.has_frontmatter for parts, _ in parsed):
        return None
    (po, fo), (pa, fa), (pb, fb) = parsed
    body = _pick(po.body, pa.body, pb.body)
    fields = _fields(fo, fa, fb)
    if body is None or fields is None:
        return None
    start, start_fields = (theirs, fb) if fa.get("memkeep") != fields.get("memkeep") else (ours, fa)
    if set(start_fields) - set(fields):
        return None  # a key one side removed: not a change this settles
    changes = {k: v for k, v in fields.items() if start_fields.get(k, _MISSING) != v}
    try:
        merged = frontmatter.update(start, changes)
        parts = frontmatter.split(merged)
        result: bytes = parts.bom + (parts.opening + parts.yaml_text + parts.closing + str(body)).encode("utf-8")
        checked, values = record_store.parse_fields(result)
        okf.record_from_fields(concept_id, path, values, checked.body)
    except MemzoiError:
        return None
    return result


def _pick(base: object, ours: object, theirs: object) -> Any:
    """The three-way value: ours when both agree or theirs did not change it, theirs when ours did not; else
    ``None`` (both changed it differently)."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    return None


def _fields(base: Mapping[str, Any], ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    for key in dict.fromkeys([*ours, *theirs]):
        o, a, b = base.get(key, _MISSING), ours.get(key, _MISSING), theirs.get(key, _MISSING)
        value = _pick(o, a, b)
        if value is None and a is not None and b is not None:
            value = _settle(key, a, b)
            if value is None:
                return None
        if value is not _MISSING:
            out[key] = value
    return out


def _settle(key: str, ours: Any, theirs: Any) -> Any:
    """Both sides changed ``key`` differently: the value the module docstring names, or ``None``."""
    if key == "status" and ours in STATUS_RANK and theirs in STATUS_RANK:
        return max(ours, theirs, key=STATUS_RANK.__getitem__)
    if key == "updated" and isinstance(ours, str) and isinstance(theirs, str):
        from git_memzoi.memzoi import okf

        a, b = okf.parse_timestamp(ours), okf.parse_timestamp(theirs)
        return None if a is None or b is None else (theirs if b > a else ours)
    if key == "memkeep" and isinstance(ours, Mapping) and isinstance(theirs, Mapping):
        later = str(theirs.get("verified_at") or "") > str(ours.get("verified_at") or "")
        return theirs if later else ours
    return None
