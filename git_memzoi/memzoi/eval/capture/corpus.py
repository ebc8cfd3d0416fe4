"""The strict ``memzoi-capture-corpus/v1`` format (pure apart from reading the corpus and its fixtures):
validation, coverage rules and the corpus digest (memzoi-spec.md §11.1–§11.2).

Unknown keys are rejected at every level the harness reads; requests are checked later by the planner itself.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memzoi.core.hashing import content_hash
from git_memzoi.memzoi.eval.recall.corpus import _parse, _read_corpus
from git_memzoi.memzoi.eval.values import CorpusError, as_instant

VERSION = "memzoi-capture-corpus/v1"
MAX_CORPUS_BYTES = 2 * 1024 * 1024
MAX_FIXTURE_BYTES = 8 * 1024 * 1024
MAX_FIXTURES_TOTAL = 64 * 1024 * 1024
RATIOS = (
    "min_candidate_precision",
    "min_candidate_recall",
    "min_evidence_validity",
    "min_destination_accuracy",
    "min_sensitivity_accuracy",
    "min_action_accuracy",
    "max_forbidden_hit_rate",
    "min_unsupported_outcome_accuracy",
    "min_case_pass_rate",
)
BURDEN = ("proposed", "accepted", "rejected", "edited", "deferred", "duplicates", "conflicts", "needs_review")
OUTCOMES = ("accept", "reject", "edit", "defer")
ACTIONS = ("create_proposal", "create_runtime", "duplicate", "conflict", "no_write", "blocked")
COVERAGE = (
    "useful",
    "low_confidence",
    "review_reject",
    "stale",
    "duplicate",
    "conflict",
    "cited_provenance",
    "prompt_injection",
    "credential",
    "raw_transcript",
    "private_data",
    "feedback_loop",
    "malformed",
    "ambiguous_sharing",
    "supplied_bytes",
    "git_range",
    "git_range_stale",
    "rename",
    "delete",
    "forbidden",
    "policy_prohibited",
)
# every required profile covers these; the corpus as a whole covers the rest (§11.1)
PER_PROFILE = (
    "useful",
    "low_confidence",
    "review_reject",
    "stale",
    "duplicate",
    "conflict",
    "cited_provenance",
    "forbidden",
)
CORPUS_WIDE = tuple(t for t in COVERAGE if t not in PER_PROFILE)
_CASE_KEYS = (
    "id",
    "coverage",
    "project_files",
    "record_fixtures",
    "proposal_fixtures",
    "source_inputs",
    "git_repository",
    "expected_policy_inputs",
    "request",
    "expected",
    "review_outcomes",
    "must_not_echo",
    "stale_check",
)
_EXPECTED_KEYS = ("status", "data_class", "diagnostic_codes", "candidates", "forbidden_candidates")
_CANDIDATE_KEYS = ("id", "memory", "evidence", "destination", "sensitivity", "action")
_EVIDENCE_KEYS = (
    "source_id",
    "locator",
    "source_content_hash",
    "span",
    "heading_path",
    "section_kind",
    "semantic_location",
)


@dataclass(frozen=True)
class Profile:
    """One declared extractor profile: name, whether it is required, and its identity."""

    profile: str
    required: bool
    extractor_kind: str
    extractor_id: str
    extractor_version: str
    configuration_hash: str | None


@dataclass(frozen=True)
class CaptureCorpus:
    """A validated capture corpus: its raw fields, cases (plain mappings), fixture bytes by corpus-relative path,
    the digest (``blake3:…``) and the fixed evaluation time."""

    path: Path
    name: str
    evaluated_at: dt.datetime
    evaluated_at_text: str
    profiles: tuple[Profile, ...]
    thresholds: Mapping[str, Any]
    cases: tuple[Mapping[str, Any], ...]
    fixtures: Mapping[str, bytes]
    digest: str


def load(path: Path) -> CaptureCorpus:
    """Read and validate the corpus at ``path`` and every fixture it names (relative to its folder).

    Raises:
        CorpusError: unreadable or invalid YAML (``corpus_unreadable``, ``corpus_invalid_yaml``), unknown or
            missing fields, bad values and coverage gaps (``corpus_invalid``), unsafe or missing fixtures
            (``corpus_invalid_fixture``).
    """
    raw = _read_corpus(path, MAX_CORPUS_BYTES)
    data = _plain(_parse(path, raw))
    _keys(
        "corpus",
        data,
        ("version", "name", "evaluated_at", "profiles", "thresholds", "cases"),
        ("version", "name", "evaluated_at", "profiles", "cases"),
    )
    if data["version"] != VERSION:
        raise CorpusError("version", f"must be {VERSION}", "corpus_invalid")
    profiles = tuple(_profile(n, p) for n, p in enumerate(_list("profiles", data["profiles"])))
    if len({p.profile for p in profiles}) != len(profiles):
        raise CorpusError("profiles", "a profile is declared twice", "corpus_invalid")
    cases = _list("cases", data["cases"])
    if not 1 <= len(cases) <= 256:
        raise CorpusError("cases", "1 to 256 cases", "corpus_invalid")
    for n, case in enumerate(cases):
        _case(n, case, {p.profile for p in profiles})
    ids = [c["id"] for c in cases]
    if len(set(ids)) != len(ids):
        raise CorpusError("cases", "case ids must be unique", "corpus_invalid")
    _coverage(cases, profiles)
    thresholds = _thresholds(data.get("thresholds") or {})
    fixtures = _fixtures(path.parent, cases)
    return CaptureCorpus(
        path,
        str(data["name"]),
        as_instant("evaluated_at", data["evaluated_at"]),
        str(data["evaluated_at"]),
        profiles,
        thresholds,
        tuple(cases),
        fixtures,
        digest(raw, fixtures),
    )


def digest(raw: bytes, fixtures: Mapping[str, bytes]) -> str:
    """``blake3:`` over ``corpus.yaml`` and every fixture path (sorted), each entry encoded as
    ``u64le(len(path)) ‖ path ‖ u64le(len(bytes)) ‖ bytes`` (memzoi-spec.md §11.2)."""
    parts = [_entry("corpus.yaml", raw)] + [_entry(p, fixtures[p]) for p in sorted(fixtures)]
    return content_hash(b"".join(parts))


def _entry(path: str, data: bytes) -> bytes:
    name = path.encode("utf-8")
    return len(name).to_bytes(8, "little") + name + len(data).to_bytes(8, "little") + data


def fixture_paths(case: Mapping[str, Any]) -> list[str]:
    """Every fixture path a case names: project, record, proposal and source-input fixtures, git base and head
    files, and the stale check's replacement fixture."""
    paths = [
        f["fixture"]
        for key in ("project_files", "record_fixtures", "proposal_fixtures", "source_inputs")
        for f in case.get(key) or ()
    ]
    repo = case.get("git_repository") or {}
    paths += [f["fixture"] for key in ("base_files", "head_files") for f in repo.get(key) or ()]
    stale = case.get("stale_check") or {}
    if "replacement_fixture" in stale:
        paths.append(stale["replacement_fixture"])
    return paths


def case_profile(case: Mapping[str, Any]) -> str:
    """The extractor profile a case's request names."""
    return str(case["request"]["extractor"]["profile"])


# ------------------------------------------------------------------------------------------------ parts


def _plain(value: Any) -> Any:
    from git_memzoi.core import yamlio

    return yamlio.plain(value)


def _keys(where: str, value: Any, allowed: Sequence[str], required: Sequence[str] = ()) -> None:
    if not isinstance(value, dict):
        raise CorpusError(where, "expected a mapping", "corpus_invalid")
    unknown = sorted(set(value) - set(allowed))
    missing = [k for k in required if k not in value]
    if unknown:
        raise CorpusError(where, f"unknown field {unknown[0]!r}", "corpus_invalid")
    if missing:
        raise CorpusError(where, f"missing field {missing[0]!r}", "corpus_invalid")


def _list(where: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise CorpusError(where, "expected a list", "corpus_invalid")
    return value


def _profile(n: int, item: Any) -> Profile:
    where = f"profiles[{n}]"
    _keys(
        where,
        item,
        ("profile", "required", "extractor_kind", "extractor_id", "extractor_version", "configuration_hash"),
        ("profile", "extractor_kind", "extractor_id", "extractor_version"),
    )
    required = item.get("required", True)
    if not isinstance(required, bool):
        raise CorpusError(f"{where}.required", "must be true or false", "corpus_invalid")
    return Profile(
        str(item["profile"]),
        required,
        str(item["extractor_kind"]),
        str(item["extractor_id"]),
        str(item["extractor_version"]),
        item.get("configuration_hash"),
    )


def _case(n: int, case: Any, profiles: set[str]) -> None:
    where = f"cases[{n}]"
    _keys(where, case, _CASE_KEYS, ("id", "request", "expected"))
    if not isinstance(case["id"], str) or not case["id"]:
        raise CorpusError(f"{where}.id", "must be a non-empty string", "corpus_invalid")
    where = f"cases[{case['id']}]"
    for tag in case.get("coverage") or ():
        if tag not in COVERAGE:
            raise CorpusError(f"{where}.coverage", f"unknown coverage tag {tag!r}", "corpus_invalid")
    request = case["request"]
    if not isinstance(request, dict) or not isinstance(request.get("extractor"), dict):
        raise CorpusError(f"{where}.request", "needs an extractor", "corpus_invalid")
    if case_profile(case) not in profiles:
        raise CorpusError(f"{where}.request", "names an undeclared profile", "corpus_invalid")
    for key in ("project_files", "record_fixtures", "proposal_fixtures"):
        for m, f in enumerate(_list(f"{where}.{key}", case.get(key) or [])):
            _keys(f"{where}.{key}[{m}]", f, ("fixture", "path"), ("fixture", "path"))
    for m, f in enumerate(_list(f"{where}.source_inputs", case.get("source_inputs") or [])):
        _keys(f"{where}.source_inputs[{m}]", f, ("source_id", "fixture"), ("source_id", "fixture"))
    if "git_repository" in case:
        _keys(
            f"{where}.git_repository",
            case["git_repository"],
            ("base_files", "head_files"),
            ("base_files", "head_files"),
        )
        for key in ("base_files", "head_files"):
            for m, f in enumerate(_list(key, case["git_repository"][key])):
                _keys(f"{where}.git_repository.{key}[{m}]", f, ("fixture", "path"), ("fixture", "path"))
    for m, f in enumerate(_list(f"{where}.expected_policy_inputs", case.get("expected_policy_inputs") or [])):
        _keys(
            f"{where}.expected_policy_inputs[{m}]",
            f,
            ("path", "engine_version", "engine_match", "source_content_hash"),
            ("path", "engine_version"),
        )
        if f.get("engine_match", "exact") not in ("exact", "prefix"):
            raise CorpusError(f"{where}.expected_policy_inputs", "engine_match is exact or prefix", "corpus_invalid")
    _expected(where, case["expected"])
    _reviews(where, case)
    if "stale_check" in case:
        _stale(where, case["stale_check"])


def _expected(where: str, expected: Any) -> None:
    _keys(f"{where}.expected", expected, _EXPECTED_KEYS, ("status", "data_class"))
    if expected["status"] not in ("ready", "blocked"):
        raise CorpusError(f"{where}.expected.status", "ready or blocked", "corpus_invalid")
    if expected["data_class"] not in ("repo_safe", "private", "blocked"):
        raise CorpusError(f"{where}.expected.data_class", "repo_safe, private or blocked", "corpus_invalid")
    seen: set[str] = set()
    for key, required in (("candidates", _CANDIDATE_KEYS), ("forbidden_candidates", ("id", "memory"))):
        for m, c in enumerate(_list(f"{where}.expected.{key}", expected.get(key) or [])):
            _keys(f"{where}.expected.{key}[{m}]", c, _CANDIDATE_KEYS, required)
            if c["id"] in seen:
                raise CorpusError(f"{where}.expected", f"candidate id {c['id']!r} is used twice", "corpus_invalid")
            seen.add(c["id"])
            for e, item in enumerate(_list("evidence", c.get("evidence") or [])):
                _keys(f"{where}.expected.{key}[{m}].evidence[{e}]", item, _EVIDENCE_KEYS, _EVIDENCE_KEYS[:6])
            if key == "candidates" and (not isinstance(c["action"], dict) or c["action"].get("kind") not in ACTIONS):
                raise CorpusError(f"{where}.expected.{key}[{m}].action", "an unknown action", "corpus_invalid")


def _reviews(where: str, case: Mapping[str, Any]) -> None:
    expected = {c["id"] for c in case["expected"].get("candidates") or ()}
    reviewed = []
    for m, r in enumerate(_list(f"{where}.review_outcomes", case.get("review_outcomes") or [])):
        _keys(
            f"{where}.review_outcomes[{m}]",
            r,
            ("candidate", "outcome", "reason_code", "memory", "requested_destination", "content_class"),
            ("candidate", "outcome"),
        )
        if r["outcome"] not in OUTCOMES:
            raise CorpusError(
                f"{where}.review_outcomes[{m}]", "outcome: accept, reject, edit or defer", "corpus_invalid"
            )
        if r["outcome"] != "edit" and any(k in r for k in ("memory", "requested_destination", "content_class")):
            raise CorpusError(f"{where}.review_outcomes[{m}]", "only edit carries edit fields", "corpus_invalid")
        reviewed.append(r["candidate"])
    if sorted(reviewed) != sorted(expected):
        raise CorpusError(
            f"{where}.review_outcomes", "every expected candidate is reviewed exactly once", "corpus_invalid"
        )


def _stale(where: str, stale: Any) -> None:
    kind = stale.get("kind") if isinstance(stale, dict) else None
    shapes = {
        "project_path": ("kind", "path", "replacement_fixture"),
        "supplied_bytes": ("kind", "source_id", "replacement_fixture"),
        "git_object_missing": ("kind", "oid"),
    }
    if kind not in shapes:
        raise CorpusError(
            f"{where}.stale_check", "kind: project_path, supplied_bytes or git_object_missing", "corpus_invalid"
        )
    optional = ("source_id",) if kind == "supplied_bytes" else ()
    _keys(f"{where}.stale_check", stale, shapes[kind], tuple(k for k in shapes[kind] if k not in optional))


def _thresholds(value: Any) -> dict[str, Any]:
    _keys("thresholds", value, (*RATIOS, "review_burden", "max_plan_payload_bytes", "max_p95_latency_ms"))
    out: dict[str, Any] = {}
    for key in RATIOS:
        if key in value:
            number = value[key]
            if isinstance(number, bool) or not isinstance(number, (int, float)) or not 0 <= number <= 1:
                raise CorpusError(f"thresholds.{key}", "a number in [0, 1]", "corpus_invalid")
            out[key] = float(number)
    if "review_burden" in value:
        _keys("thresholds.review_burden", value["review_burden"], BURDEN)
        out["review_burden"] = {k: int(v) for k, v in value["review_burden"].items()}
    for key in ("max_plan_payload_bytes", "max_p95_latency_ms"):
        if key in value:
            out[key] = value[key]
    return out


def _coverage(cases: Sequence[Mapping[str, Any]], profiles: Sequence[Profile]) -> None:
    """Each required profile covers :data:`PER_PROFILE`; the corpus covers :data:`CORPUS_WIDE` (§11.1)."""
    by_profile: dict[str, set[str]] = {}
    for case in cases:
        by_profile.setdefault(case_profile(case), set()).update(case.get("coverage") or ())
        _tags_fit(case)
    for p in profiles:
        missing = [t for t in PER_PROFILE if t not in by_profile.get(p.profile, set())]
        if p.required and missing:
            raise CorpusError(f"profiles.{p.profile}", f"no case covers {missing[0]!r}", "corpus_invalid")
    everything = set().union(*by_profile.values())
    missing = [t for t in CORPUS_WIDE if t not in everything]
    if missing:
        raise CorpusError("cases", f"no case covers {missing[0]!r}", "corpus_invalid")


def _tags_fit(case: Mapping[str, Any]) -> None:
    """A declared coverage tag must be backed by the case's content (a few structural checks per tag)."""
    expected, tags = case["expected"], set(case.get("coverage") or ())
    kinds = {c["action"]["kind"] for c in expected.get("candidates") or ()}
    locators = {s.get("locator", {}).get("kind") for s in case["request"].get("sources") or () if isinstance(s, dict)}
    outcomes = {r["outcome"] for r in case.get("review_outcomes") or ()}
    files = [f["path"] for f in case.get("project_files") or ()]
    codes = list(expected.get("diagnostic_codes") or ())
    rules = {
        "duplicate": "duplicate" in kinds,
        "conflict": "conflict" in kinds,
        "review_reject": "reject" in outcomes,
        "stale": "stale_check" in case,
        "forbidden": bool(expected.get("forbidden_candidates")),
        "supplied_bytes": "supplied_bytes" in locators and bool(case.get("source_inputs")),
        "git_range": "git_range" in locators and "git_repository" in case,
        "git_range_stale": (case.get("stale_check") or {}).get("kind") == "git_object_missing",
        "malformed": expected["status"] == "blocked",
        "rename": case_profile(case) == "git-change-deterministic"
        and ("git_rename_without_durable_candidate" in codes or "renamed" in str(expected)),
        "delete": case_profile(case) == "git-change-deterministic"
        and ("git-deletion" in str(expected) or any("deleted" in c for c in codes)),
        "feedback_loop": any("generated" in c for c in codes),
        "useful": bool(outcomes & {"accept", "edit"}),
        "cited_provenance": bool(outcomes & {"accept", "edit"}),
        "low_confidence": "needs_review" in str(expected)
        or any(c.startswith("unsupported") for c in codes)
        or "git_rename_without_durable_candidate" in codes,
        "policy_prohibited": expected["status"] == "blocked"
        and bool(case.get("must_not_echo"))
        and "source_preflight_failed" in (expected.get("diagnostic_codes") or ())
        and any(p.rsplit("/", 1)[-1] == ".gitignore" for p in files)
        and "project_directory" in locators,
        **{
            t: expected["status"] == "blocked" and bool(case.get("must_not_echo"))
            for t in ("credential", "prompt_injection", "raw_transcript", "private_data")
        },
    }
    for tag in tags:
        if not rules.get(tag, True):
            raise CorpusError(f"cases[{case['id']}].coverage", f"{tag!r} is not backed by the case", "corpus_invalid")


def _fixtures(base: Path, cases: Sequence[Mapping[str, Any]]) -> dict[str, bytes]:
    from git_memzoi.core import safe_read
    from git_memzoi.memzoi.eval.values import check_relative

    out: dict[str, bytes] = {}
    total = 0
    for case in cases:
        for rel in fixture_paths(case):
            if rel in out:
                continue
            check_relative(f"cases[{case['id']}] fixture", rel)
            try:
                data = safe_read.read_bytes(base / rel, MAX_FIXTURE_BYTES)  # a FIFO or a link is refused unopened
            except safe_read.FileRefused as exc:
                too_large = exc.code == safe_read.TOO_LARGE
                reason = f"larger than {MAX_FIXTURE_BYTES} bytes" if too_large else "not a regular fixture file"
                raise CorpusError(rel, reason, "corpus_invalid_fixture") from None
            except OSError:
                raise CorpusError(rel, "not a regular fixture file", "corpus_invalid_fixture") from None
            total += len(data)
            if total > MAX_FIXTURES_TOTAL:
                raise CorpusError(rel, f"fixtures exceed {MAX_FIXTURES_TOTAL} bytes", "corpus_invalid_fixture")
            out[rel] = data
    return out
