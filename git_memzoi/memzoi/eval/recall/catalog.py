"""What the recall corpus's fixtures are (memzoi-spec.md §10.1 semantics, §10.3 step 7): the catalog of every
record an eval may retrieve, and the checks that a corpus's relevant and forbidden ids mean what they claim.

The *fixture catalog* is built from the corpus bytes alone (records parsed, proposal packets projected as the
records they apply as, runtime fixtures as declared), so a corpus is fully validated before anything runs. The
*live catalog* is read back from the disposable project after setup; the runner checks it against citations.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from git_memzoi.errors import InputError
from git_memzoi.memzoi.eval.recall.corpus import NEEDS_OPPORTUNITY, SURFACES, Case, Corpus, CorpusError
from git_memzoi.memzoi.records.okf import Record
from git_memzoi.memzoi.records.validity import Interval

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout

PLANE = {"repo": "git", "local": "runtime", "session": "runtime"}


@dataclass(frozen=True)
class Known:
    """One retrievable record as the eval knows it: identity, plane, scope, paths, lifecycle at ``evaluated_at``."""

    id: str
    destination: str
    type: str
    scope_kind: str
    scope_id: str | None
    visibility: str
    paths: tuple[str, ...]
    status: str
    query_only: bool
    source_kind: str | None = None
    source_ref: str | None = None
    proposal_id: str | None = None
    boundary: dt.datetime | None = None  # the retention boundary (query_only from it on)
    span: Interval = field(default_factory=Interval)  # the business validity (records/validity.py)

    def query_only_at(self, when: dt.datetime | None) -> bool:
        """:attr:`query_only` at ``when`` (a case's ``as_of``; ``None``: at ``evaluated_at``, the field itself)."""
        if when is None:
            return self.query_only
        return (self.boundary is not None and when >= self.boundary) or not self.span.contains(when)

    @property
    def plane(self) -> str:
        """``git`` for repository records, ``runtime`` for local and session ones."""
        return PLANE[self.destination]

    @classmethod
    def of(cls, record: Record, destination: str, now: dt.datetime) -> Known:
        """The catalog entry of a parsed record (its retention decided at ``now``; outside its business validity
        at ``now`` it is ``query_only`` too: the corpus's ``expired`` category, records/validity.py)."""
        from git_memzoi.memzoi.records import validity
        from git_memzoi.memzoi.records.retention import decide

        span = validity.interval({"valid_from": record.valid_from, "valid_to": record.valid_to})
        boundary = decide(record, now).effective_boundary

        return cls(
            record.id,
            destination,
            record.type,
            record.scope,
            record.scope_id,
            record.visibility,
            tuple(record.applies_to),
            record.status,
            decide(record, now).state == "query_only" or not span.contains(now),
            record.source,
            record.source_ref,
            record.proposal_id,
            None if boundary is None else validity.parse_bound(boundary, "retention"),
            span,
        )


Catalog = Mapping[str, Known]
ENTRIES_DIR = "agent-memory/entries"  # where the sandbox installs the corpus's memkeep entries


def entry_known(rel: str, data: bytes) -> Known:
    """The catalog entry of one memkeep entry file at ``rel``, read as the index reads it (store ``entry``: the
    scope globs are its paths, ``memkeep`` its source kind, its file its source ref).

    Raises:
        InputError: the file is not a readable entry.
    """
    from git_memzoi.memzoi.recall.index import rows
    from git_memzoi.memzoi.recall.index.schema import COLUMNS
    from git_memzoi.memzoi.recall.index.sources import Source

    source = Source("git", "repo", f"{ENTRIES_DIR}/", "entry")
    values = rows.entry_values(source, rel, data)
    if not isinstance(values, tuple):
        raise InputError(values.reason, values.code)
    row = dict(zip(COLUMNS, values, strict=True))
    status = "active" if row["status"] == "active" else "tombstone"
    paths = tuple(json.loads(row["applies_to"]))
    return Known(row["id"], "repo", row["type"], "repo", None, "repo", paths, status, False, "memkeep", rel)


# ------------------------------------------------------------------------------------------------ fixture catalog


def fixture_catalog(corpus: Corpus) -> dict[str, Known]:
    """Every record the corpus's fixtures will produce, keyed by id.

    Raises:
        CorpusError: a fixture that is not a valid record or packet (``corpus_invalid_fixture``), or two
            fixtures producing one id (``corpus_duplicate_id``).
    """
    from git_memzoi.memzoi.proposals import packets
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.records import retention

    now = corpus.evaluated_at
    catalog: dict[str, Known] = {}
    for n, fixture in enumerate(corpus.records):
        where = f"records[{n}]"
        rel = f".memzoi/records/{fixture.path}"
        try:
            record = index_db.parse_record(fixture.path[: -len(".md")], rel, fixture.data)
            if record.content_class == "unknown":
                raise InputError("content_class: canonical records need an explicit classification")
            _add(catalog, Known.of(record, "repo", now), where)
        except (InputError, ValueError, TypeError, KeyError) as exc:
            raise CorpusError(
                where, f"{fixture.path!r} is not a valid record: {_reason(exc)}", "corpus_invalid_fixture"
            ) from None
    for n, pf in enumerate(corpus.proposal_fixtures):
        where = f"proposal_fixtures[{n}]"
        try:
            packet = packets.parse(pf.path[: -len(".md")], f"proposals/{pf.path}", pf.data)
            packets.check_shape(packet, f"proposals/{pf.path}")
            if packet.id != pf.proposal_id or packet.action != "create" or packet.sensitivity != "repo-safe":
                raise InputError("the packet must be a repo-safe create packet whose id is proposal_id")
            record = packets.project_record(packet, pf.expected_record_id)
            retention.decide(record, now)
        except (InputError, ValueError, TypeError, KeyError) as exc:
            raise CorpusError(
                where, f"{pf.path!r} is not an appliable proposal: {_reason(exc)}", "corpus_invalid_fixture"
            ) from None
        _add(catalog, Known.of(record, "repo", now), f"{where}.expected_record_id")
    for n, fixture in enumerate(corpus.entries):
        where = f"entries[{n}]"
        try:
            _add(catalog, entry_known(f"{ENTRIES_DIR}/{fixture.path}", fixture.data), where)
        except InputError as exc:
            raise CorpusError(
                where, f"{fixture.path!r} is not a valid memkeep entry: {exc.message}", "corpus_invalid_fixture"
            ) from None
    for n, rf in enumerate(corpus.runtime_fixtures):
        known = Known(
            rf.id,
            rf.destination,
            rf.type,
            "repo",
            None,
            "private",
            (),
            "active",
            False,
            "memzoi-local" if rf.destination == "local" else "memzoi-checkpoint",
        )
        _add(catalog, known, f"runtime_fixtures[{n}].id")
    return catalog


def _reason(exc: Exception) -> str:
    return exc.message if isinstance(exc, InputError) else type(exc).__name__


def _add(catalog: dict[str, Known], known: Known, where: str) -> None:
    if known.id in catalog:
        raise CorpusError(where, f"a second fixture produces the record id {known.id!r}", "corpus_duplicate_id")
    catalog[known.id] = known


# ------------------------------------------------------------------------------------------------ semantics


def load(path: Path) -> Corpus:
    """The recall corpus at ``path``, read and validated (:func:`~git_memzoi.memzoi.eval.recall.corpus.read`),
    then cross-checked over its fixture catalog (:func:`check_semantics`). Read-only.

    Raises:
        CorpusError: the first problem, with a stable code (see both functions).
    """
    from git_memzoi.memzoi.eval.recall.corpus import read

    corpus = read(path)
    check_semantics(corpus)
    return corpus


def check_semantics(corpus: Corpus) -> None:
    """The cross-checks of memzoi-spec.md §10.1 at ``evaluated_at`` (a case's ``as_of`` for its forbidden ids),
    on the fixture catalog.

    Every surface appears; each required forbidden category has an opportunity; relevant and forbidden ids
    (but ``prohibited`` ones, which name records that must not exist) name fixtures; ``stale`` ids are inactive
    and not expired; ``expired`` ids are ``status: expired``, past their retention boundary or outside their
    business validity; ``scope`` ids lie outside the case's scope kind, scope id or path; ``destination`` ids
    live in a plane the case does not read.

    Raises:
        CorpusError: the first violation (``corpus_missing_surface``, ``corpus_missing_opportunity``,
            ``corpus_unknown_record``, ``corpus_forbidden_semantics``) or an invalid fixture.
    """
    missing = [s for s in SURFACES if not any(c.surface == s for c in corpus.cases)]
    if missing:
        raise CorpusError("cases", f"no {missing[0]} case: every surface must be exercised", "corpus_missing_surface")
    lacking = [c for c in NEEDS_OPPORTUNITY if not corpus.opportunities[c]]
    if lacking:
        raise CorpusError(
            "cases",
            f"no {lacking[0]} opportunity: every forbidden category except other needs at least one declared id",
            "corpus_missing_opportunity",
        )
    catalog = fixture_catalog(corpus)
    fixture_ids = {pf.expected_record_id for pf in corpus.proposal_fixtures}
    for n, case in enumerate(corpus.cases):
        where = f"cases[{n}] ({case.id})"
        if case.proposal_fixture is not None and case.proposal_fixture not in fixture_ids:
            raise CorpusError(
                f"{where}.proposal_fixture",
                "must be the expected_record_id of a proposal fixture",
                "corpus_unknown_record",
            )
        for record_id in (*case.relevant_ids, *case.staleness_ids):
            _known(catalog, record_id, f"{where}.relevant_ids")
        if case.surface == "write_gate":
            if case.forbidden_record_id in catalog:
                raise CorpusError(
                    f"{where}.forbidden_record_id",
                    "names a fixture record; it must stay absent",
                    "corpus_forbidden_semantics",
                )
            continue
        for category, ids in case.forbidden.items():
            for record_id in ids:
                if category != "prohibited":
                    _check(
                        case,
                        category,
                        _known(catalog, record_id, f"{where}.forbidden.{category}"),
                        f"{where}.forbidden.{category}",
                    )


def _known(catalog: Catalog, record_id: str, where: str) -> Known:
    known = catalog.get(record_id)
    if known is None:
        raise CorpusError(where, f"{record_id!r} is not a record, proposal or runtime fixture", "corpus_unknown_record")
    return known


def _check(case: Case, category: str, known: Known, where: str) -> None:
    problem = None
    query_only = known.query_only_at(case.as_of)
    if category == "stale" and (known.status in ("active", "expired") or query_only):
        problem = "a stale id must be inactive (superseded, tombstoned ...) and not expired"
    elif category == "expired" and not (known.status == "expired" or query_only):
        at = "its as_of" if case.as_of is not None else "evaluated_at"
        problem = f"an expired id must be status expired, past its retention boundary or outside its validity at {at}"
    elif category == "scope" and in_scope(case, known):
        problem = "a scope id must lie outside the case's scope kind, scope id or path"
    elif category == "destination" and known.destination in case.requested_destinations():
        problem = f"a destination id must live in a plane the case does not read ({known.destination} is read)"
    if problem:
        raise CorpusError(where, f"{known.id!r}: {problem}", "corpus_forbidden_semantics")


def in_scope(case: Case, known: Known) -> bool:
    """Whether ``known`` satisfies the case's scope kind, scope id and path filters (all that are given)."""
    from git_memzoi.memzoi.recall.pathmatch import path_matches_request

    if case.scope_kind is not None and known.scope_kind != case.scope_kind:
        return False
    if case.scope_id is not None and known.scope_id != case.scope_id:
        return False
    return case.path is None or any(path_matches_request(p, case.path) for p in known.paths)


# ------------------------------------------------------------------------------------------------ live catalog


def live_catalog(layout: Layout, now: dt.datetime) -> dict[str, Known]:
    """Every record of the disposable project (canonical and runtime), parsed from its files (§10.3 step 7).

    Raises:
        CorpusError: a file the setup wrote does not read back (``corpus_invalid_fixture``).
    """
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.records import store as record_store

    scan = record_store.scan(layout)
    if scan.problems:
        problem = scan.problems[0]
        raise CorpusError(problem.path, problem.reason, "corpus_invalid_fixture")
    catalog = {r.id: Known.of(r, "repo", now) for r in scan.records}
    for destination in index_db.RUNTIME_DESTINATIONS:
        folder = index_db.runtime_dir(layout, destination)
        for file in sorted(folder.glob("*.md")) if folder.is_dir() else ():
            rel = layout.label(file)
            record = index_db.parse_record(file.name[: -len(".md")], rel, file.read_bytes())
            catalog[record.id] = Known.of(record, destination, now)
    entries = layout.root / ENTRIES_DIR
    for file in sorted(entries.rglob("*.md")) if entries.is_dir() else ():
        rel = file.relative_to(layout.root).as_posix()
        catalog[file.name[: -len(".md")]] = entry_known(rel, file.read_bytes())
    return catalog
