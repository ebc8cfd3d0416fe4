"""``git memzoi eval recall``: run a trust corpus in disposable isolated state (memzoi-spec.md §10.3–10.4; io).

The current project is never opened: :func:`sandbox` builds a fresh project in a temporary folder (an empty git
repository, ``init``, the record fixtures copied in and indexed, the clock fixed at ``evaluated_at``, the proposal
fixtures applied through the real file apply as ``memzoi-eval``, a second rebuild, the runtime fixtures seeded
through the real local-memory and checkpoint writers) and deletes it afterwards. Each case then calls the real
recall surface (``search``, ``precheck``, ``context``, or ``propose`` + ``search`` for a write gate) and is scored
against the catalog of what the fixtures are. Aggregates, the report and the baseline are in ``eval_report``.

A corpus with memkeep ``entries`` (this project's extension, corpus.py) also gets them installed under
``agent-memory/entries/`` and one fixed root commit (empty tree, author and time fixed, so its id is
:data:`EVAL_ROOT` everywhere): an entry anchored there is watched and trusted, one anchored elsewhere is
``anchor_unreachable``. Its cases' ``expect_suspect``, ``expect_trusted`` and ``expect_before`` become the
assertions ``suspect_flags`` and ``expected_order``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memzoi.errors import MemzoiError
from git_memzoi.memzoi.eval.recall.catalog import ENTRIES_DIR, Known, live_catalog
from git_memzoi.memzoi.eval.recall.catalog import load as load_corpus
from git_memzoi.memzoi.eval.recall.corpus import CATEGORIES, Case, Corpus, CorpusError, ProposalFixture
from git_memzoi.memzoi.eval.run import RunResult, previous_baseline
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.workspace import Workspace

ACTOR = "memzoi-eval"
SEVERITY = {"risk": "high", "warning": "warning", "failed_attempt": "warning"}
DEFAULT_BUDGET = 400
EVAL_ROOT = "feb3d8dc45a3c1cbdf73d44f6a1cfd8240285f49"  # commit_files(root, {}, ROOT_MESSAGE, 0) in a fresh repository
ROOT_MESSAGE = "memzoi recall eval root"


@dataclass(frozen=True)
class Sandbox:
    """The disposable project of one run: its context (fixed clock, actor ``memzoi-eval``), a private runtime
    home, the live catalog and the proposal fixture reports (by proposal id)."""

    ws: Workspace
    home: Path
    catalog: Mapping[str, Known]
    fixtures: Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Observation:
    """What one surface call returned: ``(record_id, citations)`` in rank order, usage, time and assertions."""

    retrieved: tuple[tuple[str, tuple[Mapping[str, Any], ...]], ...]
    estimated_usage: int | None
    latency_ms: float
    assertions: Mapping[str, bool]


# ------------------------------------------------------------------------------------------------ setup


@contextlib.contextmanager
def sandbox(corpus: Corpus) -> Iterator[Sandbox]:
    """The isolated project of §10.3 steps 1–7, removed when the block ends (whatever happens in it).

    Raises:
        CorpusError: a fixture that does not install as declared (``corpus_invalid_fixture``,
            ``corpus_fixture_failed``, ``corpus_fixture_mismatch``).
    """
    import tempfile

    from git_memzoi.core.atomic import make_dirs
    from git_memzoi.core.clock import FixedClock
    from git_memzoi.memzoi import layout as layout_mod
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.records.ids import use_spec_ids

    with tempfile.TemporaryDirectory(prefix="memzoi-eval-") as tmp:
        root, home = Path(tmp) / "project", Path(tmp) / "home"
        make_dirs(home, root=Path(tmp))
        empty_repository(root)
        layout = Layout(root)
        layout_mod.init(layout, force=True)
        use_spec_ids(layout)  # the corpora name their expected records by memzoi-spec v0 ids
        if corpus.entries:
            _root_commit(root)
        for fixture in corpus.entries:
            _install(layout, root / ENTRIES_DIR / fixture.path, fixture.data)
        for fixture in corpus.records:
            _install(layout, layout.records / fixture.path, fixture.data)
        _rebuild(layout)
        now = corpus.evaluated_at
        ws = Workspace(layout, FixedClock(now.date(), now), ACTOR)
        fixtures = {pf.proposal_id: _apply_fixture(ws, n, pf) for n, pf in enumerate(corpus.proposal_fixtures)}
        _rebuild(layout)
        _seed_runtime(ws, corpus)
        index_db.refresh(layout)
        yield Sandbox(ws, home, live_catalog(layout, now), fixtures)


def empty_repository(root: Path) -> None:
    """Create ``root`` as an empty git repository on branch ``main`` (through the one pygit2 owner)."""
    from git_memzoi.core.gitview_pygit2 import init_repository

    init_repository(root, "main")


def _install(layout: Layout, path: Path, data: bytes) -> None:
    """Write one corpus fixture into the sandbox (confined to it: a fixture path never leaves the sandbox)."""
    from git_memzoi.core.atomic import write_bytes_atomic

    write_bytes_atomic(path, data, root=layout.root, parents=True)


def _root_commit(root: Path) -> None:
    """The fixed root commit that entry fixtures anchor at (:data:`EVAL_ROOT`)."""
    from git_memzoi.core.gitview_pygit2 import commit_files

    made = commit_files(root, {}, ROOT_MESSAGE, 0)
    if made != EVAL_ROOT:  # a libgit2 that writes commits differently: the fixtures' anchors would not resolve
        raise CorpusError("entries", f"the eval root commit is {made}, not {EVAL_ROOT}", "corpus_fixture_failed")


def _rebuild(layout: Layout) -> None:
    from git_memzoi.memzoi.recall.index import db as index_db

    result = index_db.rebuild(layout)
    if result.unreadable:
        problem = result.unreadable[0]
        raise CorpusError(problem.path, problem.reason, "corpus_invalid_fixture")


def _apply_fixture(ws: Workspace, n: int, pf: ProposalFixture) -> dict[str, Any]:
    """Install one packet in ``pending/``, apply it as ``memzoi-eval`` and report what survived (§10.6)."""
    from git_memzoi.memzoi.proposals import files as proposal_files
    from git_memzoi.memzoi.proposals import packets
    from git_memzoi.memzoi.records import store as record_store

    layout = ws.layout
    _install(layout, layout.pending / pf.path, pf.data)
    try:
        applied = proposal_files.apply_packet(ws, pf.proposal_id, actor=ACTOR)
        record = record_store.load(layout, applied.record_id)
        resolved = layout.root / applied.resolved_path
        resolution = packets.parse(applied.file_id, applied.resolved_path, resolved.read_bytes()).resolution
    except MemzoiError as exc:
        raise CorpusError(
            f"proposal_fixtures[{n}]", f"{pf.path!r} did not apply: {exc.message}", "corpus_fixture_failed"
        ) from None
    report: dict[str, Any] = {
        "proposal_id": pf.proposal_id,
        "record_id": record.id,
        "source_kind": record.source,
        "source_ref": record.source_ref,
        "applies_to": list(record.applies_to),
        "source_preserved": (record.source, record.source_ref) == (pf.expected_source_kind, pf.expected_source_ref),
        "resolution_preserved": resolution is not None
        and resolution.outcome == "applied"
        and resolution.record_id == record.id
        and resolution.resolved_by == ACTOR,
        "lineage_preserved": record.proposal_id == pf.proposal_id,
        "lineage_separate_from_evidence": record.source_ref != pf.proposal_id and record.source != "proposal",
        "applicability_preserved": sorted(record.applies_to) == sorted(pf.expected_applies_to),
    }
    report["passed"] = record.id == pf.expected_record_id and all(
        v for k, v in report.items() if k.endswith(("_preserved", "_evidence"))
    )
    return report


def _seed_runtime(ws: Workspace, corpus: Corpus) -> None:
    from git_memzoi.memzoi.runtime import checkpoint, local

    for n, rf in enumerate(corpus.runtime_fixtures):
        try:
            if rf.destination == "local":
                written = local.add_local(ws, memory_type=rf.type, title=rf.title, body=rf.body)
            else:
                written = checkpoint.add_checkpoint(ws, task=rf.title, note=rf.body)
        except MemzoiError as exc:
            raise CorpusError(
                f"runtime_fixtures[{n}]", f"cannot be seeded: {exc.message}", "corpus_fixture_failed"
            ) from None
        if written.record["id"] != rf.id or written.record["lane"] != rf.lane:
            raise CorpusError(
                f"runtime_fixtures[{n}].id",
                f"the runtime writes {written.record['id']!r} "
                f"(lane {written.record['lane']}), not {rf.id!r} (lane {rf.lane})",
                "corpus_fixture_mismatch",
            )


# ------------------------------------------------------------------------------------------------ surfaces


def observe(box: Sandbox, case: Case) -> Observation:
    """Call the case's surface once and time it (monotonic clock, milliseconds)."""
    call = {"search": _search, "precheck": _precheck, "context": _context, "write_gate": _write_gate}[case.surface]
    started = time.perf_counter_ns()
    try:
        retrieved, usage, extra = call(box, case)
    except MemzoiError:  # the surface refused the case's input: the case fails, the run goes on
        retrieved, usage, extra = [], None, {"surface_completed": False}
        if case.surface == "precheck" and case.action is None and case.command is None:
            extra["path_only_supported"] = False
    latency = (time.perf_counter_ns() - started) / 1e6
    ids = [record_id for record_id, _ in retrieved]
    assertions = {"unique_results": len(ids) == len(set(ids)), **extra}
    return Observation(tuple(retrieved), usage, latency, assertions)


_Call = tuple[Sequence[tuple[str, tuple[Mapping[str, Any], ...]]], int | None, dict[str, bool]]


def _view(box: Sandbox, case: Case) -> Workspace:
    """The sandbox's workspace recalling at the case's ``as_of`` (default ``evaluated_at``, the fixed clock) and
    with its ``include_superseded`` (records/validity.py; case_extensions.py)."""
    if case.as_of is None and not case.include_superseded:
        return box.ws
    return box.ws.viewing(case.as_of, case.include_superseded)


def _search(box: Sandbox, case: Case) -> _Call:
    from git_memzoi.memzoi.recall import search

    response = search.search(
        _view(box, case),
        case.query or "",
        scope_kind=case.scope_kind,
        scope_id=case.scope_id,
        memory_type=case.type,
        lane=case.lane,
        path=case.path,
        limit=case.k or 10,
        store=case.store,
    )
    retrieved = [(r["record"]["id"], tuple(r["citations"])) for r in response.results]
    extra = staleness_assertions(case, [(r["record"]["id"], r["suspect"]) for r in response.results])
    if case.proposal_fixture is not None:
        extra["proposal_evidence_round_trip"] = _round_trip(box, case.proposal_fixture, retrieved)
    return retrieved, None, extra


def _round_trip(box: Sandbox, record_id: str, retrieved: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]) -> bool:
    """The fixture applied cleanly, and its record came back citing the original evidence, not the proposal."""
    report = next((r for r in box.fixtures.values() if r["record_id"] == record_id), None)
    hit = next((cites for rid, cites in retrieved if rid == record_id), None)
    if report is None or not report["passed"] or not hit:
        return False
    return all(
        c.get("source_kind") == report["source_kind"]
        and c.get("source_ref") == report["source_ref"]
        and c.get("source_ref") != report["proposal_id"]
        for c in hit
    )


def _precheck(box: Sandbox, case: Case) -> _Call:
    from git_memzoi.memzoi.recall import precheck

    result = precheck.precheck(
        _view(box, case),
        path=case.path,
        action=case.action,
        command=case.command,
        scope_kind=case.scope_kind,
        store=case.store,
    )
    warnings = _field(result, "warnings")
    retrieved = [(w["record_id"], tuple(w["citations"])) for w in warnings]
    severities = [w.get("severity") == SEVERITY.get(_type(box, w["record_id"]) or "", "info") for w in warnings]
    extra = {"path_only_supported": True, "warning_severity": all(severities)}
    return retrieved, None, extra | staleness_assertions(case, [(w["record_id"], w.get("suspect")) for w in warnings])


def _context(box: Sandbox, case: Case) -> _Call:
    from git_memzoi.memzoi.recall import pack as context_pack

    pack = _json(
        context_pack.build(
            _view(box, case),
            task=case.task or "",
            path=case.path,
            token_budget=case.token_budget,
            include_local=case.include_local,
            include_session=case.include_session,
            store=case.store,
        )
    )
    retrieved = [(r["record"]["id"], tuple(r["citations"])) for r in pack["records"]]
    flagged = staleness_assertions(case, [(r["record"]["id"], r.get("suspect")) for r in pack["records"]])
    budget = pack["budget"]
    usage = int(budget.get("estimated_used", budget.get("used", 0)))
    effective = int(budget.get("effective") or case.token_budget or DEFAULT_BUDGET)
    requested = set(case.requested_destinations())
    planes = [box.catalog[rid].destination if rid in box.catalog else None for rid, _ in retrieved]
    included = set(pack.get("policy", {}).get("included_destinations", []))
    return (
        retrieved,
        usage,
        {
            "destination_policy": all(p in requested for p in planes) and included <= requested,
            "usage_within_budget": usage <= effective,
            **flagged,
        },
    )


def staleness_assertions(case: Case, results: Sequence[tuple[str, Any]]) -> dict[str, bool]:
    """The extension's assertions over ``(id, suspect)`` results in rank order: ``suspect_flags`` (each
    ``expect_suspect`` id came back flagged, its first reason the expected one; each ``expect_trusted`` id came
    back unflagged) and ``expected_order`` (each ``expect_before`` pair came back in that order). Only the
    assertions a case asks for are present."""
    marks = {rid: suspect for rid, suspect in results}
    order = [rid for rid, _ in results]
    out: dict[str, bool] = {}
    if case.expect_suspect or case.expect_trusted:
        flagged = all(
            rid in marks and bool(marks[rid]) and marks[rid]["reasons"][0]["reason"] == reason
            for rid, reason in case.expect_suspect.items()
        )
        out["suspect_flags"] = flagged and all(rid in marks and not marks[rid] for rid in case.expect_trusted)
    if case.expect_before:
        out["expected_order"] = all(
            a in order and b in order and order.index(a) < order.index(b) for a, b in case.expect_before
        )
    return out


def _write_gate(box: Sandbox, case: Case) -> _Call:
    from git_memzoi.memzoi.proposals import inbox
    from git_memzoi.memzoi.recall import search
    from git_memzoi.memzoi.records import store as record_store

    draft = inbox.make_draft(
        title=case.title,
        body=case.body,
        type="fact",
        lane="semantic",
        scope_kind="repo",
        visibility="repo",
        sensitivity=case.sensitivity,
        source_kind="eval",
        source_ref="fixture://write-gate",
        actor=ACTOR,
    )
    issue, applied = None, None
    try:
        outcome = inbox.propose(box.ws, draft, memzoi_home=box.home, override="auto", apply=True)
        applied = outcome.applied.record_id if outcome.applied is not None else None
    except MemzoiError as exc:
        issue = exc.code
    response = search.search(box.ws, case.query or "", scope_kind="repo", limit=10)
    retrieved = [(r["record"]["id"], tuple(r["citations"])) for r in response.results]
    if applied is not None and applied not in {rid for rid, _ in retrieved}:
        retrieved.append((applied, ()))
    forbidden = case.forbidden_record_id or ""
    absent = not (box.ws.layout.records / f"{forbidden}.md").exists()
    absent = absent and forbidden not in record_store.scan(box.ws.layout).by_id()
    return (
        retrieved,
        None,
        {
            "not_applied": applied is None,
            "expected_issue": issue == case.expected_issue_code,
            "no_canonical_record": absent,
        },
    )


def _field(result: Any, name: str) -> Any:
    return result[name] if isinstance(result, Mapping) else getattr(result, name)


def _json(result: Any) -> Mapping[str, Any]:
    return result if isinstance(result, Mapping) else result.to_json()


def _type(box: Sandbox, record_id: str) -> str | None:
    known = box.catalog.get(record_id)
    return known.type if known else None


# ------------------------------------------------------------------------------------------------ scoring


def score(box: Sandbox, case: Case, obs: Observation) -> dict[str, Any]:
    """The per-case report entry of §10.6 with the pass rule of §10.4 (set metrics; FP alone never fails)."""
    ids = [rid for rid, _ in obs.retrieved]
    retrieved, relevant = set(ids), set(case.relevant_ids)
    tp = len(relevant & retrieved)
    forbidden = case.forbidden_sets()
    hits = {c: [i for i in forbidden[c] if i in retrieved] for c in CATEGORIES}
    citation = [citation_valid(box.catalog.get(rid), cites, case) for rid, cites in obs.retrieved]
    provenance = [provenance_valid(box, box.catalog.get(rid), cites) for rid, cites in obs.retrieved]
    entry: dict[str, Any] = {"id": case.id, "surface": case.surface}
    if case.query is not None and case.surface in ("search", "write_gate"):
        entry["query"] = case.query
    entry.update(
        {
            "relevant_ids": list(case.relevant_ids),
            "forbidden": {c: list(v) for c, v in forbidden.items()},
            "retrieved_ids": ids,
            "retrieved": [
                {"rank": n + 1, "record_id": rid, "citations": [dict(c) for c in cites]}
                for n, (rid, cites) in enumerate(obs.retrieved)
            ],
            "true_positives": tp,
            "false_positives": len(retrieved - relevant),
            "false_negatives": len(relevant) - tp,
        }
    )
    if case.surface == "search":
        entry["recall_at_k"] = tp / len(relevant) if relevant else 1.0
        first = next((n for n, rid in enumerate(ids) if rid in relevant), None)
        entry["mrr"] = (1.0 if not relevant else 0.0) if first is None else 1.0 / (1 + first)
    entry.update(
        {
            "forbidden_hits": hits,
            "citation_integrity": {"valid": sum(citation), "checked": len(citation)},
            "provenance_integrity": {"valid": sum(provenance), "checked": len(provenance)},
        }
    )
    if case.surface == "context":
        entry["estimated_usage"] = obs.estimated_usage
    entry["latency_ms"] = obs.latency_ms
    entry["assertions"] = dict(obs.assertions)
    entry["passed"] = (
        entry["false_negatives"] == 0
        and not any(hits.values())
        and all(citation)
        and all(provenance)
        and all(obs.assertions.values())
    )
    return entry


def citation_valid(known: Known | None, citations: Sequence[Mapping[str, Any]], case: Case) -> bool:
    """§10.4 citation integrity of one returned item: citations present, each naming the record's id, type,
    scope kind, destination and visibility, and a path of the record that binds to the requested path.

    Search and precheck filter by path, so each of their citations must name a matching path. A context pack
    also admits records found by the task text alone; such a record may cite a path that does not match, but a
    record that has a matching path must cite one.
    """
    from git_memzoi.memzoi.recall.pathmatch import path_matches_request

    if known is None or not citations:
        return False
    matching = [p for p in known.paths if case.path and path_matches_request(p, case.path)]
    strict = bool(case.path) and (case.surface != "context" or bool(matching))
    for c in citations:
        same = (
            c.get("record_id"),
            c.get("memory_type"),
            c.get("scope_kind"),
            c.get("destination"),
            c.get("visibility"),
        ) == (known.id, known.type, known.scope_kind, known.destination, known.visibility)
        path = c.get("path")
        if strict:
            path_ok = path in matching
        else:
            path_ok = path in known.paths or (path is None and not known.paths)
        if not (same and path_ok):
            return False
    return True


def provenance_valid(box: Sandbox, known: Known | None, citations: Sequence[Mapping[str, Any]]) -> bool:
    """§10.4 provenance integrity: each citation's plane and evidence are the record's own; a record that came
    from a proposal needs that proposal's fixture to have passed, and evidence that is not the proposal id."""
    if known is None or not citations:
        return False
    for c in citations:
        if (c.get("provenance"), c.get("source_kind"), c.get("source_ref")) != (
            known.plane,
            known.source_kind,
            known.source_ref,
        ):
            return False
        if known.proposal_id is not None:
            report = box.fixtures.get(known.proposal_id)
            if report is None or not report["passed"] or c.get("source_ref") == known.proposal_id:
                return False
    return True


# ------------------------------------------------------------------------------------------------ run


def run(corpus_path: Path, *, baseline: Path | None = None, update_baseline: bool = False) -> RunResult:
    """``eval recall``: validate the corpus, run every case in a sandbox, aggregate, gate and compare.

    Without ``update_baseline`` a given baseline must exist; ``incompatible`` fails the report, ``changed`` is
    informational. With it, the baseline is written (atomically) only when every threshold passed; the report then
    compares against what was written (``match``) and names the previous file's status.

    Raises:
        InputError: ``update_baseline`` without ``baseline`` (``bad_usage``). CorpusError: an invalid corpus or
            fixture (no report). BaselineError: an unreadable or (without ``update_baseline``) missing baseline.
    """
    from git_memzoi.memzoi.eval import report as eval_report

    previous = previous_baseline(baseline, update_baseline)
    corpus = load_corpus(corpus_path)
    with sandbox(corpus) as box:
        cases = [score(box, case, observe(box, case)) for case in corpus.cases]
        fixtures = list(box.fixtures.values())
    report, _ = eval_report.build(corpus, cases, fixtures, runtime_info())
    gates_ok = eval_report.thresholds_passed(report)
    current = eval_report.projection(report)
    written = False
    if baseline is not None:
        before = eval_report.compare(previous, current) if previous is not None else None
        if update_baseline and gates_ok:
            eval_report.write_baseline(baseline, current)
            written = True
            comparison = {**eval_report.compare(current, current), "previous_status": before and before["status"]}
        else:
            assert before is not None or update_baseline
            comparison = before or {
                "status": "missing",
                "incompatibilities": [],
                "metric_deltas": [],
                "changed_cases": [],
            }
        report["baseline"] = {**comparison, "written": written}
    compatible = baseline is None or report["baseline"]["status"] in ("match", "changed")
    report.pop("passed")  # re-added last, after the baseline (memzoi-spec.md §10.6 key order)
    report["passed"] = gates_ok and compatible
    return RunResult(report, report["passed"], gates_ok, written)


def runtime_info() -> dict[str, Any]:
    """The report's ``runtime`` object (informational; never compared with a baseline)."""
    import platform
    import sys

    from git_memzoi import __version__
    from git_memzoi.memzoi.recall import budget
    from git_memzoi.memzoi.recall.index import db as index_db

    return {
        "memzoi_version": __version__,
        "target_os": sys.platform,
        "target_arch": platform.machine(),
        "build_profile": f"{platform.python_implementation().lower()}-{platform.python_version()}",
        "sqlite_version": index_db.SQLITE_VERSION,
        "timer": "monotonic_instant",
        "isolated_state": True,
        "network_required": False,
        "token_estimator": budget.ESTIMATOR,
    }
