"""The optional case keys this project adds to a ``memzoi-recall-corpus/v2`` case (pure; values checked here).

Split from :mod:`~git_memzoi.memzoi.eval.recall.corpus`, which parses the rest of a case. Issue 14: ``store``
and the staleness expectations (``expect_suspect``, ``expect_trusted``, ``expect_before``). Issue 19: ``as_of``
(an instant with a zone or a date, the forms of ``--as-of``: the case recalls at that instant instead of the
corpus's ``evaluated_at``, and its forbidden ids are checked there) and ``include_superseded`` (a historical
query). An upstream corpus has none of them and reads as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from git_memzoi.memzoi.eval.values import CorpusError, as_bool, as_choice, as_ids, as_list, as_record_id

STALENESS_KEYS = ("store", "expect_suspect", "expect_trusted", "expect_before", "as_of", "include_superseded")
STORES = ("records", "entries", "all")
SUSPECT_REASONS = ("scope_hit", "ttl_expired", "dependency_suspect", "anchor_unreachable", "ref_missing")


def extensions(where: str, item: Mapping[str, Any]) -> dict[str, Any]:
    """The extension fields of a case present in ``item``, as :class:`~.corpus.Case` keyword arguments.

    Raises:
        CorpusError: a value of the wrong shape (``corpus_invalid_value``).
    """
    out = _staleness(where, item)
    if "as_of" in item:
        from git_memzoi.errors import InputError
        from git_memzoi.memzoi.records.validity import normalized, parse_as_of

        try:
            out["as_of"] = parse_as_of(normalized(item["as_of"]))
        except InputError as exc:
            raise CorpusError(f"{where}.as_of", exc.message.removeprefix("--as-of: ")) from None
    if "include_superseded" in item:
        out["include_superseded"] = as_bool(f"{where}.include_superseded", item["include_superseded"])
    return out


def _staleness(where: str, item: Mapping[str, Any]) -> dict[str, Any]:
    """``store`` and the staleness expectations of a case (module docstring)."""
    out: dict[str, Any] = {}
    if "store" in item:
        out["store"] = as_choice(f"{where}.store", item["store"], STORES)
    if "expect_suspect" in item:
        value = item["expect_suspect"]
        if not isinstance(value, dict) or not value:
            raise CorpusError(f"{where}.expect_suspect", "must map record or entry ids to a suspect reason")
        out["expect_suspect"] = {
            as_record_id(f"{where}.expect_suspect", k): as_choice(f"{where}.expect_suspect.{k}", v, SUSPECT_REASONS)
            for k, v in value.items()
        }
    if "expect_trusted" in item:
        out["expect_trusted"] = as_ids(f"{where}.expect_trusted", item["expect_trusted"])
    if "expect_before" in item:
        pairs = as_list(f"{where}.expect_before", item["expect_before"])
        if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise CorpusError(f"{where}.expect_before", "must be a list of [earlier, later] id pairs")
        out["expect_before"] = tuple(tuple(as_ids(f"{where}.expect_before", p)) for p in pairs)
    return out


SUSPECT_REASONS = ("scope_hit", "ttl_expired", "dependency_suspect", "anchor_unreachable", "ref_missing")
