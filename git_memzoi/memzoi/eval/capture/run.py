"""``git memzoi eval capture``: run a capture corpus case by case in disposable isolated projects
(memzoi-spec.md §11.3; io).

The current project is never opened. Each case gets a fresh temporary git repository with its project, record and
proposal fixtures (and, for git ranges, a base and a head commit), a clock fixed at ``evaluated_at``, and runs the
real capture surface: plan twice (determinism), prove planning wrote nothing, review with the case's outcomes,
apply, apply the produced proposal packets as a maintainer and check their provenance; then, in a second fresh
project, the stale check: the source is changed and review and apply must both refuse with nothing written.
Aggregates, thresholds and the baseline are in :mod:`~git_memzoi.memzoi.eval.capture.report`.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from git_memzoi.errors import MemzoiError
from git_memzoi.memzoi.eval.capture.corpus import BURDEN, CaptureCorpus, case_profile
from git_memzoi.memzoi.eval.capture.model import (
    ASSERTIONS,
    GATES,
    HARD_GATES,
    MAINTAINER,
    REVIEWER,
    ROUTER,
    Observed,
    Project,
)
from git_memzoi.memzoi.eval.run import RunResult, previous_baseline
from git_memzoi.memzoi.workspace import Workspace

# ------------------------------------------------------------------------------------------------ setup


@contextlib.contextmanager
def project(corpus: CaptureCorpus, case: Mapping[str, Any]) -> Iterator[Project]:
    """A fresh project for ``case``: fixtures installed, the index rebuilt, removed afterwards.

    A ``git_repository`` gets a base and a head commit; since the corpus's pinned commit ids depend on commit
    metadata upstream never published, the request's ids are mapped onto the commits built here (the blobs, and
    so every diff and hash, are the corpus's own).
    """
    from git_memzoi.core.clock import FixedClock
    from git_memzoi.memzoi import layout as layout_mod
    from git_memzoi.memzoi.eval.recall.run import empty_repository
    from git_memzoi.memzoi.layout import Layout
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.records.ids import use_spec_ids

    with tempfile.TemporaryDirectory(prefix="memzoi-capture-eval-") as tmp:
        root = Path(tmp) / "project"
        empty_repository(root)
        renames = _git_history(root, corpus, case) if "git_repository" in case else {}
        layout = Layout(root)
        layout_mod.init(layout, force=True)
        use_spec_ids(layout)  # the corpora name their expected records by memzoi-spec v0 ids
        for f in case.get("project_files") or ():
            _install(root, root / f["path"], corpus.fixtures[f["fixture"]])
        for f in case.get("record_fixtures") or ():
            _install(root, layout.records / f["path"], corpus.fixtures[f["fixture"]])
        for f in case.get("proposal_fixtures") or ():
            _install(root, layout.pending / f["path"], corpus.fixtures[f["fixture"]])
        index_db.rebuild(layout)
        now = corpus.evaluated_at
        ws = Workspace(layout, FixedClock(now.date(), now), ROUTER)
        supplied = {s["source_id"]: corpus.fixtures[s["fixture"]] for s in case.get("source_inputs") or ()}
        mapped = substitute(dict(case), renames)
        yield Project(ws, mapped, pinned(corpus, mapped["request"]), supplied, renames)


def pinned(corpus: CaptureCorpus, request: Any) -> Any:
    """``request`` with the extractor version the corpus declares for its profile (``extractor.version``): a
    corpus is scored against the extractor it was written for, not this build's newest (upstream's capture-v1
    corpus declares markdown 1.0.0, whose typed sections all wait for review)."""
    if not isinstance(request, dict) or not isinstance(request.get("extractor"), dict):
        return request
    declared = next((p for p in corpus.profiles if p.profile == request["extractor"].get("profile")), None)
    if declared is None or "version" in request["extractor"]:
        return request
    return {**request, "extractor": {**request["extractor"], "version": declared.extractor_version}}


def _install(root: Path, path: Path, data: bytes) -> None:
    """Write one corpus fixture into the sandbox at ``root`` (confined to it)."""
    from git_memzoi.core.atomic import write_bytes_atomic

    write_bytes_atomic(path, data, root=root, parents=True)


def _git_history(root: Path, corpus: CaptureCorpus, case: Mapping[str, Any]) -> dict[str, str]:
    """Commit the base tree, then the head tree (each exactly the files listed, so a file missing from the head
    is deleted); map the request's base/head ids onto the two commits."""
    from git_memzoi.core.gitview_pygit2 import commit_files

    spec = case["git_repository"]
    base_files = {f["path"]: corpus.fixtures[f["fixture"]] for f in spec["base_files"]}
    head_files = {f["path"]: corpus.fixtures[f["fixture"]] for f in spec["head_files"]}  # the whole head tree
    stamp = int(corpus.evaluated_at.timestamp())
    base = commit_files(root, base_files, "base", stamp)
    head = commit_files(root, head_files, "head", stamp)
    locator = next(s["locator"] for s in case["request"]["sources"] if s["locator"]["kind"] == "git_range")
    return {locator["base"]: f"sha1:{base}", locator["head"]: f"sha1:{head}"}


def substitute(value: Any, renames: Mapping[str, str]) -> Any:
    """``value`` with every string equal to a key of ``renames`` replaced (the pinned-id mapping)."""
    if not renames:
        return value
    return json.loads(
        json.dumps(value),
        object_hook=lambda d: {k: renames.get(v, v) if isinstance(v, str) else v for k, v in d.items()},
    )


def managed_state(root: Path) -> dict[str, str]:
    """Path → BLAKE3 of every file under the project (``.git`` internals and the derived index excluded)."""
    from git_memzoi.core.hashing import content_hash

    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if (
            rel.startswith(".git/")
            or "/cache/" in f"/{rel}"
            or rel.endswith((".sqlite", ".sqlite-wal", ".sqlite-shm", ".lock"))
        ):
            continue
        if path.is_file() and not path.is_symlink():
            out[rel] = content_hash(path.read_bytes())
    return out


# ------------------------------------------------------------------------------------------------ one case


def run_case(corpus: CaptureCorpus, case: Mapping[str, Any]) -> dict[str, Any]:
    """The case report of §11.3 for one case (never raises for a failing case: a crash is ``failed``)."""
    from git_memzoi.memzoi.eval.capture import score

    profile = case_profile(case)
    try:
        with project(corpus, case) as box:
            observed = _observe(box, box.case)
            checks = score.compare(box, box.case, observed, corpus.profiles)
        with project(corpus, case) as box:
            checks["assertions"].update(_stale(corpus, box, box.case, observed))
    except MemzoiError as exc:
        return score.failed(case, profile, f"{type(exc).__name__}: {exc.code}")
    return score.report(case, profile, observed, checks)


def _observe(box: Project, case: Mapping[str, Any]) -> Observed:
    from git_memzoi.memzoi.capture import plan as capture

    before = managed_state(box.ws.layout.root)
    start = time.perf_counter()
    first = capture.plan_or_blocked(box.ws, box.request, box.supplied)
    latency = (time.perf_counter() - start) * 1000
    second = capture.plan_or_blocked(box.ws, box.request, box.supplied)
    text = json.dumps(first, ensure_ascii=False, sort_keys=True)
    observed = Observed(
        first,
        text == json.dumps(second, ensure_ascii=False, sort_keys=True),
        managed_state(box.ws.layout.root) != before,
        latency,
        len(text.encode("utf-8")),
        emitted=text,
    )
    _review_and_apply(box, case, observed)
    return observed


def decisions_for(plan: Mapping[str, Any], case: Mapping[str, Any]) -> dict[str, Any]:
    """The review input built from the case's ``review_outcomes`` (expected ids mapped to matched candidates)."""
    from git_memzoi.memzoi.eval.capture import score

    matched = score.match(plan, case)
    out = []
    for outcome in case.get("review_outcomes") or ():
        candidate_id = matched.get(outcome["candidate"])
        if candidate_id is None:
            continue
        decision = {"candidate_id": candidate_id, "outcome": outcome["outcome"]}
        decision.update(
            {k: outcome[k] for k in ("reason_code", "memory", "requested_destination", "content_class") if k in outcome}
        )
        out.append(decision)
    return {"schema": "memzoi/capture-review-input-v1", "plan_id": plan["plan_id"], "decisions": out}


def _review_and_apply(box: Project, case: Mapping[str, Any], observed: Observed) -> None:
    from git_memzoi.memzoi.capture import review as capture_review
    from git_memzoi.memzoi.proposals import files as proposal_files

    plan, at = observed.plan, box.ws.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        observed.review = capture_review.review(
            box.ws, plan, decisions_for(plan, case), reviewed_by=REVIEWER, reviewed_at=at, source_bytes=box.supplied
        )
    except MemzoiError as exc:
        observed.review_error = exc.code
        observed.emitted += str(exc)
        return
    observed.emitted += json.dumps(observed.review, ensure_ascii=False)
    observed.records_before = _records(box)
    try:
        observed.applied = capture_review.apply(
            box.ws,
            plan,
            observed.review,
            plan_id=plan["plan_id"],
            review_id=observed.review["review_id"],
            source_bytes=box.supplied,
        )
    except MemzoiError as exc:
        observed.apply_error = exc.code
        observed.emitted += str(exc)
        return
    observed.emitted += json.dumps(observed.applied, ensure_ascii=False)
    observed.direct_write = _records(box) != observed.records_before
    maintainer = Workspace(box.ws.layout, box.ws.clock, MAINTAINER)
    observed.records = []
    for write in observed.applied["writes"]:
        if write["kind"] == "proposal_file":
            result = proposal_files.apply_packet(maintainer, write["proposal_id"], actor=MAINTAINER)
            observed.records.append(_record(box, result.record_id))


def _records(box: Project) -> dict[str, str]:
    return {k: v for k, v in managed_state(box.ws.layout.root).items() if k.startswith(".memzoi/records/")}


def _record(box: Project, record_id: str) -> dict[str, Any]:
    from git_memzoi.memzoi.records import store as record_store

    found = next((r for r in record_store.scan(box.ws.layout).records if r.id == record_id), None)
    return (
        {}
        if found is None
        else {"id": found.id, "source": found.source, "source_ref": found.source_ref, "capture": found.capture}
    )


# ------------------------------------------------------------------------------------------------ stale


def _stale(corpus: CaptureCorpus, box: Project, case: Mapping[str, Any], observed: Observed) -> dict[str, bool]:
    """Change the source after planning and reviewing; review and apply must both refuse, writing nothing."""
    from git_memzoi.memzoi.capture import plan as capture
    from git_memzoi.memzoi.capture import review as capture_review

    stale = case.get("stale_check")
    if stale is None or observed.plan["status"] != "ready":
        return {"stale_review_rejected": True, "stale_apply_rejected": True, "stale_no_write": True}
    plan = capture.plan_or_blocked(box.ws, box.request, box.supplied)
    review = capture_review.review(
        box.ws,
        plan,
        decisions_for(plan, case),
        reviewed_by=REVIEWER,
        reviewed_at=box.ws.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        source_bytes=box.supplied,
    )
    supplied = dict(box.supplied)
    if stale["kind"] == "project_path":
        _install(box.ws.layout.root, box.ws.layout.root / stale["path"], corpus.fixtures[stale["replacement_fixture"]])
    elif stale["kind"] == "supplied_bytes":
        source_id = stale.get("source_id") or next(iter(supplied))
        supplied[source_id] = corpus.fixtures[stale["replacement_fixture"]]
    else:
        from git_memzoi.core.gitview_pygit2 import drop_object

        drop_object(box.ws.layout.root, str(stale["oid"]).split(":", 1)[-1])
    before = managed_state(box.ws.layout.root)
    out = {}
    calls: tuple[tuple[str, Callable[[], object]], ...] = (
        (
            "stale_review_rejected",
            lambda: capture_review.review(
                box.ws,
                plan,
                decisions_for(plan, case),
                reviewed_by=REVIEWER,
                reviewed_at=review["reviewed_at"],
                source_bytes=supplied,
            ),
        ),
        (
            "stale_apply_rejected",
            lambda: capture_review.apply(
                box.ws, plan, review, plan_id=plan["plan_id"], review_id=review["review_id"], source_bytes=supplied
            ),
        ),
    )
    for name, call in calls:
        try:
            call()
            out[name] = False
        except MemzoiError:
            out[name] = True
    out["stale_no_write"] = managed_state(box.ws.layout.root) == before
    return out


# ------------------------------------------------------------------------------------------------ run


def run(corpus_path: Path, *, baseline: Path | None = None, update_baseline: bool = False) -> RunResult:
    """``eval capture``: validate the corpus, run every case in isolation, aggregate, gate and compare.

    The baseline comparison is exact: ``passed`` needs every gate and a ``match`` (§11.4). With
    ``update_baseline`` the baseline is written only when every case, hard gate and threshold passed.

    Raises:
        InputError: ``update_baseline`` without ``baseline`` (``bad_usage``). CorpusError: an invalid corpus
            (no report). BaselineError: an unreadable or (without ``update_baseline``) missing baseline.
    """
    from git_memzoi.memzoi.eval import report as eval_report
    from git_memzoi.memzoi.eval.capture import corpus as eval_capture_corpus
    from git_memzoi.memzoi.eval.capture import report as eval_capture_report

    previous = previous_baseline(baseline, update_baseline)
    corpus = eval_capture_corpus.load(corpus_path)
    cases = [run_case(corpus, case) for case in corpus.cases]
    report = eval_capture_report.build(corpus, cases, runtime_info())
    gates_ok = report["gates_passed"]
    current = eval_capture_report.projection(report)
    written = False
    if baseline is not None:
        if update_baseline and gates_ok:
            eval_report.write_baseline(baseline, current)
            written, previous = True, current
        comparison = (
            eval_capture_report.compare(previous, current)
            if previous is not None
            else {"version": eval_capture_report.COMPARISON_VERSION, "status": "missing", "compatible": False}
        )
        report["baseline"] = {**comparison, "written": written}
    matched = baseline is None or report["baseline"]["status"] == "match"
    report["passed"] = gates_ok and matched
    return RunResult(report, report["passed"], gates_ok, written)


def runtime_info() -> dict[str, Any]:
    """The report's ``runtime`` object (informational; never compared with a baseline)."""
    from git_memzoi.memzoi.eval.recall.run import runtime_info as recall_runtime

    info = recall_runtime()
    return {
        k: info[k]
        for k in (
            "memzoi_version",
            "target_os",
            "target_arch",
            "build_profile",
            "timer",
            "isolated_state",
            "network_required",
        )
    }


__all__ = [
    "ASSERTIONS",
    "BURDEN",
    "GATES",
    "HARD_GATES",
    "Observed",
    "Project",
    "RunResult",
    "decisions_for",
    "managed_state",
    "project",
    "run",
    "run_case",
    "runtime_info",
    "substitute",
]
