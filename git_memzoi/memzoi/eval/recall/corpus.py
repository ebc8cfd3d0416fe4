"""The recall trust corpus ``memzoi-recall-corpus/v2`` (memzoi-spec.md §10.1–10.2): strict loading and the digest.

:func:`load` reads the corpus file and every fixture it names exactly once; the bytes it validates are the bytes
the runner copies into its disposable project and the bytes the digest covers. Unknown keys are rejected at
every level, fixture paths must stay below the corpus folder (relative, no ``..``, no symlink anywhere on the
way, a regular ``.md`` file that is not ``index.md``/``log.md``), and the forbidden categories are checked
against the fixtures' own facts at ``evaluated_at``. Every failure is a :class:`CorpusError` with a stable code;
nothing is ever run for an invalid corpus.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re
import stat
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git_memzoi.errors import InputError
from git_memzoi.memzoi.records import vocab

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
)
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
    ),
    "precheck": ("surface", "id", "path", "action", "command", "scope_kind", "relevant_ids", "forbidden"),
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
_CASE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_IGNORED = ("index.md", "log.md")


class CorpusError(InputError):
    """A corpus or fixture that is not valid ``memzoi-recall-corpus/v2``: where, why, and a stable code (exit 2)."""

    default_code = "corpus_invalid_value"

    def __init__(self, where: str, reason: str, code: str | None = None) -> None:
        super().__init__(f"{where}: {reason}", code)
        self.where, self.reason = where, reason


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
    _keys("corpus", data, TOP_KEYS, TOP_REQUIRED)
    if data["version"] != VERSION:
        raise CorpusError("version", f"must be {VERSION}", "corpus_unsupported_version")
    base = path.parent
    records_root = _root(data.get("records_root", "."), "records_root")
    proposals_root = _root(data.get("proposals_root", "proposals"), "proposals_root")
    records = tuple(
        Fixture(p, _read_fixture(base, records_root, p, f"records[{n}]"))
        for n, p in enumerate(_paths("records", data["records"], allow_empty=False))
    )
    listed = _list("proposal_fixtures", data.get("proposal_fixtures", []))
    proposals = tuple(_proposal(base, proposals_root, n, item) for n, item in enumerate(listed))
    _unique("proposal_fixtures", [p.path for p in proposals], "corpus_duplicate_id")
    runtime = tuple(_runtime(n, item) for n, item in enumerate(_list("runtime_fixtures", data["runtime_fixtures"])))
    cases = tuple(_case(n, item) for n, item in enumerate(_list("cases", data["cases"])))
    _unique("cases", [c.id for c in cases], "corpus_duplicate_id")
    corpus = Corpus(
        path=path,
        raw=raw,
        version=VERSION,
        name=_text("name", data["name"]),
        evaluated_at=_instant("evaluated_at", data["evaluated_at"]),
        records_root=records_root,
        records=records,
        proposals_root=proposals_root,
        proposal_fixtures=proposals,
        runtime_fixtures=runtime,
        thresholds=_thresholds(data["thresholds"]),
        cases=cases,
        digest=digest(raw, records, proposals),
        opportunities=opportunities(cases),
    )
    return corpus


def digest(raw: bytes, records: Sequence[Fixture], proposals: Sequence[ProposalFixture]) -> str:
    """The corpus digest (memzoi-spec.md §10.2): lowercase hex BLAKE3 over length-prefixed (path, bytes)
    entries: ``corpus.yaml``, then ``records/<p>`` and ``proposals/<p>`` in sorted path order."""
    from git_memzoi.core.hashing import content_hash

    entries = [("corpus.yaml", raw)]
    entries += [(f"records/{r.path}", r.data) for r in sorted(records, key=lambda r: r.path)]
    entries += [(f"proposals/{p.path}", p.data) for p in sorted(proposals, key=lambda p: p.path)]
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


def _read_corpus(path: Path) -> bytes:
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise CorpusError(str(path), "not a regular file", "corpus_unreadable")
        if st.st_size > MAX_CORPUS_BYTES:
            raise CorpusError(str(path), f"larger than {MAX_CORPUS_BYTES} bytes", "corpus_unreadable")
        return path.read_bytes()
    except OSError as exc:
        raise CorpusError(str(path), f"cannot read the corpus ({exc.strerror})", "corpus_unreadable") from None


def _parse(path: Path, raw: bytes) -> dict[str, Any]:
    from git_memzoi.core import yamlio

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CorpusError(str(path), "not UTF-8 text", "corpus_invalid_yaml") from None
    try:
        data, _ = yamlio.load_mapping(text)
    except yamlio.YamlProblem as exc:
        line = f" (line {exc.line + 1})" if exc.line is not None else ""
        raise CorpusError(str(path), f"not valid YAML{line}: {exc.reason}", "corpus_invalid_yaml") from None
    return data


# ------------------------------------------------------------------------------------------------ fixtures


def _root(value: Any, where: str) -> str:
    text = _text(where, value)
    if text == ".":
        return text
    _check_relative(where, text.rstrip("/"))
    return text.rstrip("/")


def _check_relative(where: str, text: str) -> None:
    if text.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", text) or "\\" in text or "\0" in text:
        raise CorpusError(where, f"{text!r} must be a relative POSIX path", "corpus_unsafe_fixture_path")
    if any(part in ("", ".", "..") for part in text.split("/")):
        raise CorpusError(where, f"{text!r} must not contain '..', '.' or empty segments", "corpus_unsafe_fixture_path")


def _paths(where: str, value: Any, *, allow_empty: bool) -> list[str]:
    items = _list(where, value)
    if not items and not allow_empty:
        raise CorpusError(where, "must list at least one fixture")
    paths = [_text(f"{where}[{n}]", item) for n, item in enumerate(items)]
    _unique(where, paths, "corpus_duplicate_id")
    return paths


def _read_fixture(base: Path, root: str, rel: str, where: str) -> bytes:
    """The bytes of ``base/root/rel`` after the path checks of §10.1; read through a no-follow descriptor."""
    _check_relative(where, rel)
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
    if not stat.S_ISREG(st.st_mode):
        raise CorpusError(where, f"{rel!r} is not a regular file", "corpus_unsafe_fixture_path")
    if st.st_size > MAX_FIXTURE_BYTES:
        raise CorpusError(where, f"{rel!r} is larger than {MAX_FIXTURE_BYTES} bytes", "corpus_invalid_fixture")
    fd = os.open(current, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _proposal(base: Path, root: str, n: int, item: Any) -> ProposalFixture:
    where = f"proposal_fixtures[{n}]"
    _keys(where, item, PROPOSAL_KEYS, PROPOSAL_KEYS)
    path = _text(f"{where}.path", item["path"])
    applies = _ids(f"{where}.expected_applies_to", item["expected_applies_to"])
    return ProposalFixture(
        path=path,
        data=_read_fixture(base, root, path, f"{where}.path"),
        proposal_id=_text(f"{where}.proposal_id", item["proposal_id"]),
        expected_record_id=_record_id(f"{where}.expected_record_id", item["expected_record_id"]),
        expected_source_kind=_text(f"{where}.expected_source_kind", item["expected_source_kind"]),
        expected_source_ref=_text(f"{where}.expected_source_ref", item["expected_source_ref"]),
        expected_applies_to=applies,
    )


def _runtime(n: int, item: Any) -> RuntimeFixture:
    where = f"runtime_fixtures[{n}]"
    _keys(where, item, RUNTIME_KEYS, RUNTIME_KEYS)
    fixture = RuntimeFixture(
        id=_record_id(f"{where}.id", item["id"]),
        destination=_choice(f"{where}.destination", item["destination"], ("local", "session")),
        type=_choice(f"{where}.type", item["type"], vocab.TYPES),
        lane=_choice(f"{where}.lane", item["lane"], vocab.LANES),
        title=_line(f"{where}.title", item["title"]),
        body=_text(f"{where}.body", item["body"]),
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
    _keys(where, item, CASE_KEYS[surface], CASE_REQUIRED[surface])
    case_id = _text(f"{where}.id", item["id"])
    if not _CASE_ID.match(case_id):
        raise CorpusError(f"{where}.id", "must be letters, digits, '.', '_' and '-' (at most 128)")
    where = f"cases[{n}] ({case_id})"
    if surface == "write_gate":
        return _write_gate(where, case_id, item)
    relevant = _ids(f"{where}.relevant_ids", item["relevant_ids"])
    _unique(f"{where}.relevant_ids", list(relevant), "corpus_duplicate_id")
    forbidden = _forbidden(f"{where}.forbidden", item.get("forbidden", {}), relevant)
    common: dict[str, Any] = {
        "id": case_id,
        "surface": surface,
        "relevant_ids": relevant,
        "forbidden": forbidden,
        "path": _optional(f"{where}.path", item.get("path")),
    }
    if "scope_kind" in item:
        common["scope_kind"] = _choice(f"{where}.scope_kind", item["scope_kind"], vocab.SCOPE_KINDS)
    if surface == "search":
        return Case(
            **common,
            query=_text(f"{where}.query", item["query"], strip=False),
            scope_id=_optional(f"{where}.scope_id", item.get("scope_id")),
            type=_choice(f"{where}.type", item["type"], vocab.TYPES) if "type" in item else None,
            lane=_choice(f"{where}.lane", item["lane"], vocab.LANES) if "lane" in item else None,
            k=_integer(f"{where}.k", item["k"], 1, 100),
            proposal_fixture=_optional(f"{where}.proposal_fixture", item.get("proposal_fixture")),
        )
    if surface == "precheck":
        action = _optional(f"{where}.action", item.get("action"))
        command = _optional(f"{where}.command", item.get("command"))
        if common["path"] is None and action is None and command is None:
            raise CorpusError(
                where, "a precheck case needs at least one of path, action, command", "corpus_missing_field"
            )
        return Case(**common, action=action, command=command)
    budget = item.get("token_budget")
    return Case(
        **common,
        task=_text(f"{where}.task", item["task"], strip=False),
        token_budget=None if budget is None else _integer(f"{where}.token_budget", budget, 1, 1_000_000),
        include_local=_bool(f"{where}.include_local", item.get("include_local", False)),
        include_session=_bool(f"{where}.include_session", item.get("include_session", False)),
    )


def _write_gate(where: str, case_id: str, item: Mapping[str, Any]) -> Case:
    sensitivity = _choice(f"{where}.sensitivity", item["sensitivity"], vocab.SENSITIVITIES)
    if sensitivity == "repo-safe":
        raise CorpusError(f"{where}.sensitivity", "a write gate case must be blocked, so not repo-safe")
    return Case(
        id=case_id,
        surface="write_gate",
        title=_line(f"{where}.title", item["title"]),
        body=_text(f"{where}.body", item["body"]),
        query=_text(f"{where}.query", item["query"], strip=False),
        sensitivity=sensitivity,
        expected_issue_code=_text(f"{where}.expected_issue_code", item["expected_issue_code"]),
        forbidden_record_id=_record_id(f"{where}.forbidden_record_id", item["forbidden_record_id"]),
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
        ids = _ids(f"{where}.{category}", value[category])
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


# ------------------------------------------------------------------------------------------------ values


def _keys(where: str, value: Any, allowed: Sequence[str], required: Sequence[str]) -> None:
    if not isinstance(value, dict):
        raise CorpusError(where, "must be a mapping")
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise CorpusError(
            f"{where}.{unknown[0]}" if where != "corpus" else unknown[0],
            f"unknown field; allowed: {', '.join(allowed)}",
            "corpus_unknown_field",
        )
    for key in required:
        if key not in value:
            raise CorpusError(
                f"{where}.{key}" if where != "corpus" else key, "required field is missing", "corpus_missing_field"
            )


def _thresholds(value: Any) -> dict[str, float]:
    _keys("thresholds", value, (*RATIO_THRESHOLDS, *OPTIONAL_THRESHOLDS), RATIO_THRESHOLDS)
    out: dict[str, float] = {}
    for key in RATIO_THRESHOLDS:
        number = _number(f"thresholds.{key}", value[key])
        if not 0 <= number <= 1:
            raise CorpusError(f"thresholds.{key}", "must be from 0 to 1")
        out[key] = number
    if "max_estimated_usage" in value:
        out["max_estimated_usage"] = _integer("thresholds.max_estimated_usage", value["max_estimated_usage"], 0, None)
    if "max_p95_latency_ms" in value:
        out["max_p95_latency_ms"] = _number("thresholds.max_p95_latency_ms", value["max_p95_latency_ms"])
        if out["max_p95_latency_ms"] < 0:
            raise CorpusError("thresholds.max_p95_latency_ms", "must not be negative")
    return out


def _list(where: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise CorpusError(where, "must be a list")
    return value


def _ids(where: str, value: Any) -> tuple[str, ...]:
    return tuple(_text(f"{where}[{n}]", item) for n, item in enumerate(_list(where, value)))


def _unique(where: str, values: Sequence[str], code: str) -> None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise CorpusError(where, f"{value!r} is listed twice", code)
        seen.add(value)


def _text(where: str, value: Any, *, strip: bool = True) -> str:
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise CorpusError(where, "must be a non-empty string")
    return value.strip() if strip else value


def _line(where: str, value: Any) -> str:
    text = _text(where, value)
    if "\n" in text or "\r" in text:
        raise CorpusError(where, "must be one line")
    return text


def _optional(where: str, value: Any) -> str | None:
    return None if value is None else _text(where, value)


def _record_id(where: str, value: Any) -> str:
    from git_memzoi.memzoi.records.okf import concept_id_problem

    text = _text(where, value)
    problem = concept_id_problem(text)
    if problem:
        raise CorpusError(where, f"{text!r} is not a record id: {problem}")
    return text


def _choice(where: str, value: Any, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise CorpusError(where, f"must be one of {', '.join(allowed)}")
    return str(value)


def _bool(where: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise CorpusError(where, "must be true or false")
    return value


def _integer(where: str, value: Any, low: int, high: int | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        raise CorpusError(where, f"must be an integer from {low}" + (f" to {high}" if high is not None else ""))
    return value


def _number(where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise CorpusError(where, "must be a number")
    return float(value)


def _instant(where: str, value: Any) -> dt.datetime:
    from git_memzoi.memzoi.records.okf import parse_timestamp

    parsed = parse_timestamp(value)
    if parsed is None:
        raise CorpusError(where, "must be an RFC 3339 instant with a zone, e.g. 2026-07-10T12:00:00Z")
    return parsed.astimezone(dt.UTC)
