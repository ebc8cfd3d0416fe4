"""The recall trust corpus ``memzoi-recall-corpus/v2`` (memzoi-spec.md §10.1–10.2): strict loading and the digest.

:func:`load` reads the corpus file and every fixture it names exactly once; the bytes it validates are the bytes
the runner copies into its disposable project and the bytes the digest covers. Unknown keys are rejected at
every level, fixture paths must stay below the corpus folder (relative, no ``..``, no symlink anywhere on the
way, a regular ``.md`` file that is not ``index.md``/``log.md``), and the forbidden categories are checked
against the fixtures' own facts at ``evaluated_at``. Every failure is a :class:`CorpusError` with a stable code;
nothing is ever run for an invalid corpus.

Extension (issue 14, staleness-aware recall across both stores; all optional, so an upstream v2 corpus reads,
digests and runs exactly as before): ``entries_root`` (default ``entries``) and ``entries``, memkeep entry files
installed under ``agent-memory/entries/`` (digested as ``entries/<path>`` after the proposals); and, on search,
precheck and context cases, ``store`` (``records``, ``entries``, ``all``), ``expect_suspect`` (id → the reason
its first suspect verdict must give), ``expect_trusted`` (ids that must come back unflagged) and
``expect_before`` (``[earlier, later]`` id pairs, both returned, in that order).
"""

from __future__ import annotations

import datetime as dt
import os
import stat
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git_memzoi.core.patterns import lazy
from git_memzoi.memzoi.eval.values import (
    CorpusError,
    as_bool,
    as_choice,
    as_ids,
    as_instant,
    as_integer,
    as_line,
    as_list,
    as_number,
    as_optional,
    as_record_id,
    as_text,
    check_keys,
    check_relative,
    check_unique,
)
from git_memzoi.memzoi.records import vocab

__all__ = ["CorpusError"]  # re-exported from values (this module's own public names are exported as ever)

VERSION = "memzoi-recall-corpus/v2"
SURFACES = ("search", "precheck", "context", "write_gate")
CATEGORIES = ("stale", "expired", "scope", "prohibited", "destination", "other")
NEEDS_OPPORTUNITY = ("stale", "expired", "scope", "prohibited", "destination")
RATIO_THRESHOLDS = (
    "min_mean_recall_at_k",
    "min_mean_mrr",
    "min_precheck_precision",
    "min_precheck_recall",
    "max_stale_leakage_rate",
    "max_expired_leakage_rate",
    "max_scope_leakage_rate",
    "max_forbidden_hit_rate",
    "min_citation_integrity",
    "min_provenance_integrity",
    "min_case_pass_rate",
)
OPTIONAL_THRESHOLDS = ("max_estimated_usage", "max_p95_latency_ms")
MAX_CORPUS_BYTES = 1024 * 1024
MAX_FIXTURE_BYTES = 256 * 1024
TOP_KEYS = (
    "version",
    "name",
    "evaluated_at",
    "records_root",
    "records",
    "proposals_root",
    "proposal_fixtures",
    "runtime_fixtures",
    "thresholds",
    "cases",
    "entries_root",
    "entries",
)
STALENESS_KEYS = ("store", "expect_suspect", "expect_trusted", "expect_before")
STORES = ("records", "entries", "all")
TOP_REQUIRED = ("version", "name", "evaluated_at", "records", "runtime_fixtures", "thresholds", "cases")
PROPOSAL_KEYS = (
    "path",
    "proposal_id",
    "expected_record_id",
    "expected_source_kind",
    "expected_source_ref",
    "expected_applies_to",
)
RUNTIME_KEYS = ("id", "destination", "type", "lane", "title", "body")
CASE_KEYS = {
    "search": (
        "surface",
        "id",
        "query",
        "relevant_ids",
        "forbidden",
        "scope_kind",
        "scope_id",
        "type",
        "lane",
        "path",
        "k",
        "proposal_fixture",
        *STALENESS_KEYS,
    ),
    "precheck": (
        *("surface", "id", "path", "action", "command", "scope_kind", "relevant_ids", "forbidden"),
        *STALENESS_KEYS,
    ),
    "context": (
        "surface",
        "id",
        "task",
        "path",
        "token_budget",
        "include_local",
        "include_session",
        "relevant_ids",
        "forbidden",
        *STALENESS_KEYS,
    ),
    "write_gate": (
        "surface",
        "id",
        "title",
        "body",
        "query",
        "sensitivity",
        "expected_issue_code",
        "forbidden_record_id",
    ),
}
CASE_REQUIRED = {
    "search": ("surface", "id", "query", "relevant_ids", "k"),
    "precheck": ("surface", "id", "relevant_ids"),
    "context": ("surface", "id", "task", "relevant_ids"),
    "write_gate": CASE_KEYS["write_gate"],
}
_CASE_ID = lazy(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_IGNORED = ("index.md", "log.md")


@dataclass(frozen=True)
class Fixture:
    """One record fixture: its path below ``records_root`` (POSIX) and its bytes."""

    path: str
    data: bytes


@dataclass(frozen=True)
class ProposalFixture:
    """One proposal packet fixture (path below ``proposals_root``) and what applying it must produce."""

    path: str
    data: bytes
    proposal_id: str
    expected_record_id: str
    expected_source_kind: str
    expected_source_ref: str
    expected_applies_to: tuple[str, ...]


@dataclass(frozen=True)
class RuntimeFixture:
    """One private runtime record to seed: ``local`` memory or a ``session`` checkpoint."""

    id: str
    destination: str
    type: str
    lane: str
    title: str
    body: str


@dataclass(frozen=True)
class Case:
    """One tagged case. Fields that do not belong to its surface stay ``None`` (or empty)."""

    id: str
    surface: str
    relevant_ids: tuple[str, ...] = ()
    forbidden: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    query: str | None = None
    scope_kind: str | None = None
    scope_id: str | None = None
    type: str | None = None
    lane: str | None = None
    path: str | None = None
    k: int | None = None
    proposal_fixture: str | None = None
    action: str | None = None
    command: str | None = None
    task: str | None = None
    token_budget: int | None = None
    include_local: bool = False
    include_session: bool = False
    title: str | None = None
    body: str | None = None
    sensitivity: str | None = None
    expected_issue_code: str | None = None
    forbidden_record_id: str | None = None
    store: str = "all"
    expect_suspect: Mapping[str, str] = field(default_factory=dict)
    expect_trusted: tuple[str, ...] = ()
    expect_before: tuple[tuple[str, str], ...] = ()

    @property
    def staleness_ids(self) -> tuple[str, ...]:
        """Every id the staleness expectations name."""
        return (*self.expect_suspect, *self.expect_trusted, *(i for pair in self.expect_before for i in pair))

    def requested_destinations(self) -> tuple[str, ...]:
        """The planes this case may read: ``repo``, plus ``local``/``session`` when a context case opts in."""
        return ("repo", *(("local",) if self.include_local else ()), *(("session",) if self.include_session else ()))

    def forbidden_sets(self) -> dict[str, tuple[str, ...]]:
        """Every category with its ids (empty tuples included); a write gate forbids its record as prohibited."""
        if self.surface == "write_gate":
            return {c: ((self.forbidden_record_id or "",) if c == "prohibited" else ()) for c in CATEGORIES}
        return {c: tuple(self.forbidden.get(c, ())) for c in CATEGORIES}


@dataclass(frozen=True)
class Corpus:
    """A validated corpus: everything the runner needs, already read, and its digest."""

    path: Path
    raw: bytes
    version: str
    name: str
    evaluated_at: dt.datetime
    records_root: str
    records: tuple[Fixture, ...]
    proposals_root: str
    proposal_fixtures: tuple[ProposalFixture, ...]
    runtime_fixtures: tuple[RuntimeFixture, ...]
    thresholds: Mapping[str, float]
    cases: tuple[Case, ...]
    digest: str
    opportunities: Mapping[str, int]
    entries_root: str = "entries"
    entries: tuple[Fixture, ...] = ()


# ------------------------------------------------------------------------------------------------ loading


def read(path: Path) -> Corpus:
    """Read, validate and digest the corpus at ``path`` and its fixtures (read-only); the semantic
    cross-checks over the fixture catalog are :func:`~git_memzoi.memzoi.eval.recall.catalog.load`'s.

    Raises:
        CorpusError: the first problem, with a stable code (``corpus_unreadable``, ``corpus_invalid_yaml``,
            ``corpus_unknown_field``, ``corpus_missing_field``, ``corpus_invalid_value``,
            ``corpus_unsupported_version``, ``corpus_unknown_surface``, ``corpus_unknown_forbidden_category``,
            ``corpus_forbidden_overlap``, ``corpus_duplicate_id``, ``corpus_unsafe_fixture_path``,
            ``corpus_invalid_fixture``, ``corpus_unknown_record``, ``corpus_forbidden_semantics``,
            ``corpus_missing_surface``, ``corpus_missing_opportunity``).
    """
    raw = _read_corpus(path)
    data = _parse(path, raw)
    check_keys("corpus", data, TOP_KEYS, TOP_REQUIRED)
    if data["version"] != VERSION:
        raise CorpusError("version", f"must be {VERSION}", "corpus_unsupported_version")
    base = path.parent
    records_root = _root(data.get("records_root", "."), "records_root")
    proposals_root = _root(data.get("proposals_root", "proposals"), "proposals_root")
    records = tuple(
        Fixture(p, _read_fixture(base, records_root, p, f"records[{n}]"))
        for n, p in enumerate(_paths("records", data["records"], allow_empty=False))
    )
    listed = as_list("proposal_fixtures", data.get("proposal_fixtures", []))
    proposals = tuple(_proposal(base, proposals_root, n, item) for n, item in enumerate(listed))
    check_unique("proposal_fixtures", [p.path for p in proposals], "corpus_duplicate_id")
    runtime = tuple(_runtime(n, item) for n, item in enumerate(as_list("runtime_fixtures", data["runtime_fixtures"])))
    entries_root = _root(data.get("entries_root", "entries"), "entries_root")
    entries = tuple(
        Fixture(p, _read_fixture(base, entries_root, p, f"entries[{n}]"))
        for n, p in enumerate(_paths("entries", data.get("entries", []), allow_empty=True))
    )
    cases = tuple(_case(n, item) for n, item in enumerate(as_list("cases", data["cases"])))
    check_unique("cases", [c.id for c in cases], "corpus_duplicate_id")
    corpus = Corpus(
        path=path,
        raw=raw,
        version=VERSION,
        name=as_text("name", data["name"]),
        evaluated_at=as_instant("evaluated_at", data["evaluated_at"]),
        records_root=records_root,
        records=records,
        proposals_root=proposals_root,
        proposal_fixtures=proposals,
        runtime_fixtures=runtime,
        thresholds=_thresholds(data["thresholds"]),
        cases=cases,
        digest=digest(raw, records, proposals, entries),
        opportunities=opportunities(cases),
        entries_root=entries_root,
        entries=entries,
    )
    return corpus


def digest(
    raw: bytes, records: Sequence[Fixture], proposals: Sequence[ProposalFixture], memkeep: Sequence[Fixture] = ()
) -> str:
    """The corpus digest (memzoi-spec.md §10.2): lowercase hex BLAKE3 over length-prefixed (path, bytes)
    entries: ``corpus.yaml``, then ``records/<p>`` and ``proposals/<p>`` in sorted path order, then (this
    project's extension; none in an upstream corpus) ``entries/<p>``."""
    from git_memzoi.core.hashing import content_hash

    entries = [("corpus.yaml", raw)]
    entries += [(f"records/{r.path}", r.data) for r in sorted(records, key=lambda r: r.path)]
    entries += [(f"proposals/{p.path}", p.data) for p in sorted(proposals, key=lambda p: p.path)]
    entries += [(f"entries/{e.path}", e.data) for e in sorted(memkeep, key=lambda e: e.path)]
    stream = bytearray()
    for name, data in entries:
        encoded = name.encode("utf-8")
        stream += struct.pack("<Q", len(encoded)) + encoded + struct.pack("<Q", len(data)) + data
    return content_hash(bytes(stream)).removeprefix("blake3:")


def opportunities(cases: Sequence[Case]) -> dict[str, int]:
    """Declared forbidden ids per category (each write gate adds one ``prohibited``), and their total."""
    counts = dict.fromkeys(CATEGORIES, 0)
    for case in cases:
        for category, ids in case.forbidden_sets().items():
            counts[category] += len(ids)
    return {**counts, "forbidden": sum(counts.values())}


def _read_corpus(path: Path, limit: int = MAX_CORPUS_BYTES) -> bytes:
    from git_memzoi.core import safe_read

    try:
        return safe_read.read_bytes(path, limit, follow_symlinks=True)  # a FIFO is refused unopened
    except safe_read.FileRefused as exc:
        reason = f"larger than {limit} bytes" if exc.code == safe_read.TOO_LARGE else "not a regular file"
        raise CorpusError(str(path), reason, "corpus_unreadable") from None
    except OSError as exc:
        raise CorpusError(str(path), f"cannot read the corpus ({exc.strerror})", "corpus_unreadable") from None


def _parse(path: Path, raw: bytes) -> dict[str, Any]:
    from git_memzoi.core import yamlio

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CorpusError(str(path), "not UTF-8 text", "corpus_invalid_yaml") from None
    try:
        data, _ = yamlio.load_mapping(text, "the corpus", max_bytes=len(raw), max_nodes=None)  # capped on read
    except yamlio.YamlProblem as exc:
        line = f" (line {exc.line + 1})" if exc.line is not None else ""
        raise CorpusError(str(path), f"not valid YAML{line}: {exc.reason}", "corpus_invalid_yaml") from None
    return data


# ------------------------------------------------------------------------------------------------ fixtures


def _root(value: Any, where: str) -> str:
    text = as_text(where, value)
    if text == ".":
        return text
    check_relative(where, text.rstrip("/"))
    return text.rstrip("/")


def _paths(where: str, value: Any, *, allow_empty: bool) -> list[str]:
    items = as_list(where, value)
    if not items and not allow_empty:
        raise CorpusError(where, "must list at least one fixture")
    paths = [as_text(f"{where}[{n}]", item) for n, item in enumerate(items)]
    check_unique(where, paths, "corpus_duplicate_id")
    return paths


def _read_fixture(base: Path, root: str, rel: str, where: str) -> bytes:
    """The bytes of ``base/root/rel`` after the path checks of §10.1; read through a no-follow descriptor."""
    check_relative(where, rel)
    name = rel.rsplit("/", 1)[-1]
    if not name.endswith(".md") or name in _IGNORED:
        raise CorpusError(
            where, f"{rel!r} must be a .md file other than index.md and log.md", "corpus_unsafe_fixture_path"
        )
    parts = ([] if root == "." else root.split("/")) + rel.split("/")
    current = base
    for n, part in enumerate(parts):
        current = current / part
        try:
            st = os.lstat(current)
        except OSError:
            raise CorpusError(where, f"{rel!r} does not exist below {root!r}", "corpus_unsafe_fixture_path") from None
        if stat.S_ISLNK(st.st_mode):
            raise CorpusError(where, f"{rel!r}: {'/'.join(parts[: n + 1])} is a symlink", "corpus_unsafe_fixture_path")
        if n < len(parts) - 1 and not stat.S_ISDIR(st.st_mode):
            raise CorpusError(
                where, f"{rel!r}: {'/'.join(parts[: n + 1])} is not a folder", "corpus_unsafe_fixture_path"
            )
    from git_memzoi.core import safe_read

    try:  # checked again on the open descriptor: a file swapped for a FIFO or a link meanwhile cannot block
        return safe_read.read_bytes(current, MAX_FIXTURE_BYTES)
    except safe_read.FileRefused as exc:
        if exc.code == safe_read.TOO_LARGE:
            raise CorpusError(
                where, f"{rel!r} is larger than {MAX_FIXTURE_BYTES} bytes", "corpus_invalid_fixture"
            ) from None
        raise CorpusError(where, f"{rel!r} is not a regular file", "corpus_unsafe_fixture_path") from None


def _proposal(base: Path, root: str, n: int, item: Any) -> ProposalFixture:
    where = f"proposal_fixtures[{n}]"
    check_keys(where, item, PROPOSAL_KEYS, PROPOSAL_KEYS)
    path = as_text(f"{where}.path", item["path"])
    applies = as_ids(f"{where}.expected_applies_to", item["expected_applies_to"])
    return ProposalFixture(
        path=path,
        data=_read_fixture(base, root, path, f"{where}.path"),
        proposal_id=as_text(f"{where}.proposal_id", item["proposal_id"]),
        expected_record_id=as_record_id(f"{where}.expected_record_id", item["expected_record_id"]),
        expected_source_kind=as_text(f"{where}.expected_source_kind", item["expected_source_kind"]),
        expected_source_ref=as_text(f"{where}.expected_source_ref", item["expected_source_ref"]),
        expected_applies_to=applies,
    )


def _runtime(n: int, item: Any) -> RuntimeFixture:
    where = f"runtime_fixtures[{n}]"
    check_keys(where, item, RUNTIME_KEYS, RUNTIME_KEYS)
    fixture = RuntimeFixture(
        id=as_record_id(f"{where}.id", item["id"]),
        destination=as_choice(f"{where}.destination", item["destination"], ("local", "session")),
        type=as_choice(f"{where}.type", item["type"], vocab.TYPES),
        lane=as_choice(f"{where}.lane", item["lane"], vocab.LANES),
        title=as_line(f"{where}.title", item["title"]),
        body=as_text(f"{where}.body", item["body"]),
    )
    if fixture.destination == "session" and (fixture.type, fixture.lane) != ("episode", "session"):
        raise CorpusError(where, "a session fixture must be type episode, lane session")
    inferred = {"procedure": "procedural", "episode": "episodic"}.get(fixture.type, "semantic")
    if fixture.destination == "local" and fixture.lane != inferred:
        raise CorpusError(f"{where}.lane", f"a local {fixture.type} is written in lane {inferred}")
    return fixture


# ------------------------------------------------------------------------------------------------ cases


def _case(n: int, item: Any) -> Case:
    where = f"cases[{n}]"
    if not isinstance(item, dict):
        raise CorpusError(where, "must be a mapping")
    surface = item.get("surface")
    if surface not in SURFACES:
        raise CorpusError(f"{where}.surface", f"must be one of {', '.join(SURFACES)}", "corpus_unknown_surface")
    check_keys(where, item, CASE_KEYS[surface], CASE_REQUIRED[surface])
    case_id = as_text(f"{where}.id", item["id"])
    if not _CASE_ID.match(case_id):
        raise CorpusError(f"{where}.id", "must be letters, digits, '.', '_' and '-' (at most 128)")
    where = f"cases[{n}] ({case_id})"
    if surface == "write_gate":
        return _write_gate(where, case_id, item)
    relevant = as_ids(f"{where}.relevant_ids", item["relevant_ids"])
    check_unique(f"{where}.relevant_ids", list(relevant), "corpus_duplicate_id")
    forbidden = _forbidden(f"{where}.forbidden", item.get("forbidden", {}), relevant)
    common: dict[str, Any] = {
        "id": case_id,
        "surface": surface,
        "relevant_ids": relevant,
        "forbidden": forbidden,
        "path": as_optional(f"{where}.path", item.get("path")),
    }
    if "scope_kind" in item:
        common["scope_kind"] = as_choice(f"{where}.scope_kind", item["scope_kind"], vocab.SCOPE_KINDS)
    common.update(_staleness(where, item))
    if surface == "search":
        return Case(
            **common,
            query=as_text(f"{where}.query", item["query"], strip=False),
            scope_id=as_optional(f"{where}.scope_id", item.get("scope_id")),
            type=as_choice(f"{where}.type", item["type"], vocab.TYPES) if "type" in item else None,
            lane=as_choice(f"{where}.lane", item["lane"], vocab.LANES) if "lane" in item else None,
            k=as_integer(f"{where}.k", item["k"], 1, 100),
            proposal_fixture=as_optional(f"{where}.proposal_fixture", item.get("proposal_fixture")),
        )
    if surface == "precheck":
        action = as_optional(f"{where}.action", item.get("action"))
        command = as_optional(f"{where}.command", item.get("command"))
        if common["path"] is None and action is None and command is None:
            raise CorpusError(
                where, "a precheck case needs at least one of path, action, command", "corpus_missing_field"
            )
        return Case(**common, action=action, command=command)
    budget = item.get("token_budget")
    return Case(
        **common,
        task=as_text(f"{where}.task", item["task"], strip=False),
        token_budget=None if budget is None else as_integer(f"{where}.token_budget", budget, 1, 1_000_000),
        include_local=as_bool(f"{where}.include_local", item.get("include_local", False)),
        include_session=as_bool(f"{where}.include_session", item.get("include_session", False)),
    )


def _staleness(where: str, item: Mapping[str, Any]) -> dict[str, Any]:
    """The extension fields of a case (module docstring): ``store`` and the staleness expectations."""
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


def _write_gate(where: str, case_id: str, item: Mapping[str, Any]) -> Case:
    sensitivity = as_choice(f"{where}.sensitivity", item["sensitivity"], vocab.SENSITIVITIES)
    if sensitivity == "repo-safe":
        raise CorpusError(f"{where}.sensitivity", "a write gate case must be blocked, so not repo-safe")
    return Case(
        id=case_id,
        surface="write_gate",
        title=as_line(f"{where}.title", item["title"]),
        body=as_text(f"{where}.body", item["body"]),
        query=as_text(f"{where}.query", item["query"], strip=False),
        sensitivity=sensitivity,
        expected_issue_code=as_text(f"{where}.expected_issue_code", item["expected_issue_code"]),
        forbidden_record_id=as_record_id(f"{where}.forbidden_record_id", item["forbidden_record_id"]),
    )


def _forbidden(where: str, value: Any, relevant: Sequence[str]) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise CorpusError(where, f"must be a mapping of categories ({', '.join(CATEGORIES)}) to id lists")
    unknown = sorted(set(value) - set(CATEGORIES))
    if unknown:
        raise CorpusError(
            f"{where}.{unknown[0]}",
            f"unknown forbidden category; allowed: {', '.join(CATEGORIES)}",
            "corpus_unknown_forbidden_category",
        )
    out: dict[str, tuple[str, ...]] = {}
    seen: dict[str, str] = {r: "relevant_ids" for r in relevant}
    for category in CATEGORIES:
        if category not in value:
            continue
        ids = as_ids(f"{where}.{category}", value[category])
        for record_id in ids:
            other = seen.setdefault(record_id, category)
            if other != category or ids.count(record_id) > 1:
                raise CorpusError(
                    f"{where}.{category}",
                    f"{record_id!r} is also listed in {other}; forbidden "
                    "lists are disjoint, without duplicates, and never relevant",
                    "corpus_forbidden_overlap",
                )
        out[category] = ids
    return out


def _thresholds(value: Any) -> dict[str, float]:
    check_keys("thresholds", value, (*RATIO_THRESHOLDS, *OPTIONAL_THRESHOLDS), RATIO_THRESHOLDS)
    out: dict[str, float] = {}
    for key in RATIO_THRESHOLDS:
        number = as_number(f"thresholds.{key}", value[key])
        if not 0 <= number <= 1:
            raise CorpusError(f"thresholds.{key}", "must be from 0 to 1")
        out[key] = number
    if "max_estimated_usage" in value:
        out["max_estimated_usage"] = as_integer("thresholds.max_estimated_usage", value["max_estimated_usage"], 0, None)
    if "max_p95_latency_ms" in value:
        out["max_p95_latency_ms"] = as_number("thresholds.max_p95_latency_ms", value["max_p95_latency_ms"])
        if out["max_p95_latency_ms"] < 0:
            raise CorpusError("thresholds.max_p95_latency_ms", "must not be negative")
    return out
