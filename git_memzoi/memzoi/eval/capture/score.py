"""Scoring one capture eval case (memzoi-spec.md §11.3): candidate matching, evidence re-validation against the
isolated bytes, the 21 assertions and the case report.

A candidate matches an expected one when its ``memory`` is identical and its evidence has the identical shape
(source id, locator, source hash, span, heading path, section kind, semantic location, in order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from git_memzoi.core.hashing import content_hash
from git_memzoi.memzoi.eval.capture.corpus import BURDEN
from git_memzoi.memzoi.eval.capture.model import ASSERTIONS, GATES, Observed, Project

_SHAPE = ("source_id", "locator", "source_content_hash", "span", "heading_path", "section_kind")


def _shape(item: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: item.get(k) for k in _SHAPE}
    out["semantic_location"] = item.get("semantic_location")
    return out


def _same(candidate: Mapping[str, Any], expected: Mapping[str, Any], *, evidence: bool = True) -> bool:
    if candidate["memory"] != expected["memory"]:
        return False
    if not evidence or "evidence" not in expected:
        return True
    return [_shape(e) for e in candidate["evidence"]] == [_shape(e) for e in expected["evidence"]]


def match(plan: Mapping[str, Any], case: Mapping[str, Any]) -> dict[str, str]:
    """Expected candidate id → the plan candidate id it matched (each plan candidate used once, in order)."""
    used: set[str] = set()
    out = {}
    for expected in case["expected"].get("candidates") or ():
        for candidate in plan.get("candidates") or ():
            if candidate["candidate_id"] not in used and _same(candidate, expected):
                used.add(candidate["candidate_id"])
                out[expected["id"]] = candidate["candidate_id"]
                break
    return out


def _action_ok(action: Mapping[str, Any], expected: Mapping[str, Any]) -> bool:
    if action.get("kind") != expected.get("kind"):
        return False
    if "match_count" in expected and action.get("match_count") != expected["match_count"]:
        return False
    if "match_kinds" in expected and sorted(m["kind"] for m in action.get("matches") or ()) != sorted(
        expected["match_kinds"]
    ):
        return False
    return all(action.get(k) == expected[k] for k in ("reason_code", "code", "route") if k in expected)


def _evidence_valid(box: Project, item: Mapping[str, Any]) -> bool:
    """Recompute the source hash, excerpt hash, text and line numbers of one evidence item from the isolated
    bytes of the source it names."""
    data = _source_bytes(box, item)
    span = item.get("span") or {}
    if data is None or content_hash(data) != item.get("source_content_hash"):
        return False
    start, end = span.get("byte_start", -1), span.get("byte_end", -1)
    if not 0 <= start <= end <= len(data):
        return False
    excerpt = data[start:end]
    try:
        text = excerpt.decode("utf-8")
    except UnicodeDecodeError:
        return False
    line_start = data[:start].count(b"\n") + 1
    return (
        content_hash(excerpt) == item.get("evidence_content_hash")
        and text == item.get("text")
        and span.get("line_start") == line_start
        and span.get("line_end") == line_start + excerpt[:-1].count(b"\n")
    )


def _source_bytes(box: Project, item: Mapping[str, Any]) -> bytes | None:
    locator = item.get("locator") or {}
    kind = locator.get("kind")
    try:
        if kind == "project_path":
            path: Path = box.ws.layout.root / locator["path"]  # the corpus's locator value is untyped JSON
            return path.read_bytes()
        if kind == "supplied_bytes":
            return box.supplied.get(str(item.get("source_id")))
        if kind == "git_range":
            from git_memzoi.memzoi.capture.profiles import gitchange as gc

            return bytes(gc.load_range(box.ws.layout.root, locator)[0])
    except (OSError, KeyError, ValueError):
        return None
    except Exception as exc:  # a planner error while re-rendering is an invalid item, never a crash of the run
        from git_memzoi.errors import MemzoiError

        if isinstance(exc, MemzoiError):
            return None
        raise
    return None


def _named(box: Project, plan: Mapping[str, Any]) -> bool:
    """Every evidence item cites a source the request named (a directory source: a file inside it)."""
    named = {s["source_id"]: s["locator"] for s in box.request["sources"]}
    for candidate in plan.get("candidates") or ():
        for item in candidate["evidence"]:
            locator = named.get(item.get("source_id"))
            cited = item.get("locator") or {}
            if locator is None:
                return False
            if locator.get("kind") == "project_directory":
                inside = str(cited.get("path", "")).startswith(str(locator["path"]).rstrip("/") + "/")
                if cited.get("kind") != "project_path" or not inside:
                    return False
            elif cited != locator:
                return False
    return True


def _policy_inputs(case: Mapping[str, Any], plan: Mapping[str, Any]) -> bool:
    declared = [p for s in plan.get("sources") or () for p in s.get("policy_inputs") or ()]
    for want in case.get("expected_policy_inputs") or ():
        prefix = want.get("engine_match", "exact") == "prefix"
        if not any(
            p.get("path") == want["path"]
            and (
                str(p.get("engine_version", "")).startswith(want["engine_version"])
                if prefix
                else p.get("engine_version") == want["engine_version"]
            )
            and ("source_content_hash" not in want or p.get("source_content_hash") == want["source_content_hash"])
            for p in declared
        ):
            return False
    return True


def _profile_ok(box: Project, plan: Mapping[str, Any], case: Mapping[str, Any], corpus_profiles: Any) -> bool:
    from git_memzoi.memzoi.eval.capture.corpus import case_profile

    declared = next((p for p in corpus_profiles if p.profile == case_profile(case)), None)
    extractor = plan.get("extractor")
    if declared is None or plan.get("request", {}).get("extractor", {}).get("profile") != declared.profile:
        return False
    if extractor is None:
        return plan.get("status") == "blocked"
    same = (extractor.get("kind"), extractor.get("id"), extractor.get("version")) == (
        declared.extractor_kind,
        declared.extractor_id,
        declared.extractor_version,
    )
    return same and declared.configuration_hash in (None, extractor.get("configuration_hash"))


def _provenance(observed: Observed) -> bool:
    """Each proposal applied by the maintainer became a record citing ``memzoi-capture`` with a durable
    ``source_ref`` and the compact capture provenance (no evidence text)."""
    for record in observed.records or ():
        capture = record.get("capture") or {}
        evidence = capture.get("evidence") or []
        if record.get("source") != "memzoi-capture" or not record.get("source_ref"):
            return False
        if capture.get("plan_id") != observed.plan["plan_id"] or any("text" in e for e in evidence):
            return False
        if observed.review is None or capture.get("review_id") != observed.review["review_id"]:
            return False
    return True


def compare(box: Project, case: Mapping[str, Any], observed: Observed, profiles: Any = ()) -> dict[str, Any]:
    """Every count and assertion of one case except the stale ones (added by the runner from a second project)."""
    plan, expected = observed.plan, case["expected"]
    matched = match(plan, case)
    by_plan: dict[str, Mapping[str, Any]] = {c["candidate_id"]: c for c in plan.get("candidates") or ()}
    wanted = {c["id"]: c for c in expected.get("candidates") or ()}
    destination = [by_plan[p]["classification"]["destination"] == wanted[e]["destination"] for e, p in matched.items()]
    sensitivity = [by_plan[p]["classification"]["sensitivity"] == wanted[e]["sensitivity"] for e, p in matched.items()]
    actions = [_action_ok(by_plan[p]["action"], wanted[e]["action"]) for e, p in matched.items()]
    forbidden = [
        f["id"] for f in expected.get("forbidden_candidates") or () if any(_same(c, f) for c in by_plan.values())
    ]
    evidence = [_evidence_valid(box, item) for c in by_plan.values() for item in c["evidence"]]
    ready = plan["status"] == "ready"
    outcomes = case.get("review_outcomes") or ()
    routeable = sum(1 for r in outcomes if r["candidate"] in matched and r["outcome"] in ("accept", "edit"))
    writes = (observed.applied or {}).get("writes") or []
    echo = [s for s in case.get("must_not_echo") or () if s in observed.emitted]
    assertions = {
        "plan_status": plan["status"] == expected["status"],
        "data_class": plan["data_class"] == expected["data_class"],
        "diagnostics": [d["code"] for d in plan.get("diagnostics") or ()]
        == list(expected.get("diagnostic_codes") or ()),
        "candidate_set": len(matched) == len(wanted) == len(by_plan),
        "classification": all(destination) and all(sensitivity),
        "actions": all(actions),
        "forbidden_suppressed": not forbidden,
        "evidence_integrity": all(evidence),
        "deterministic": observed.deterministic,
        "planning_no_write": not observed.wrote_while_planning,
        "named_evidence_only": _named(box, plan),
        "policy_inputs_declared": _policy_inputs(case, plan),
        "profile_identity": _profile_ok(box, plan, case, profiles),
        "prohibited_no_echo": not echo,
        "review_workflow": observed.review is not None if ready else observed.review_error == "blocked_plan",
        "apply_workflow": (observed.applied is not None and len(writes) == routeable) if ready else True,
        "repo_candidates_proposal_only": not observed.direct_write
        and all(
            w["kind"] == "proposal_file"
            for w in writes
            if by_plan.get(w["candidate_id"], {}).get("classification", {}).get("destination") == "repo"
        ),
        "provenance_and_citations": _provenance(observed),
    }
    return {
        "matched": matched,
        "missing": [e for e in wanted if e not in matched],
        "unexpected": len(by_plan) - len(matched),
        "forbidden_hits": forbidden,
        "forbidden_opportunities": len(expected.get("forbidden_candidates") or ()),
        "destination": destination,
        "sensitivity": sensitivity,
        "actions": actions,
        "evidence": evidence,
        "assertions": assertions,
    }


def _rate(values: Sequence[bool]) -> dict[str, Any]:
    valid = sum(values)
    return {"valid": valid, "checked": len(values), "rate": valid / len(values) if values else 1.0}


def burden(case: Mapping[str, Any], plan: Mapping[str, Any], matched: Mapping[str, str]) -> dict[str, int]:
    """``review_burden`` of one case: plan counts plus the reviewed outcomes of matched candidates (§11.3)."""
    summary = plan.get("summary") or {}
    counts = {k: 0 for k in BURDEN}
    counts.update(
        proposed=len(plan.get("candidates") or ()),
        duplicates=summary.get("duplicates", 0),
        conflicts=summary.get("conflicts", 0),
        needs_review=summary.get("needs_review", 0),
    )
    names = {"accept": "accepted", "reject": "rejected", "edit": "edited", "defer": "deferred"}
    for r in case.get("review_outcomes") or ():
        if r["candidate"] in matched:
            counts[names[r["outcome"]]] += 1
    return counts


def report(case: Mapping[str, Any], profile: str, observed: Observed, checks: Mapping[str, Any]) -> dict[str, Any]:
    """The case report of §11.3 (assertions in their fixed order; ``passed`` when all 21 hold)."""
    plan, assertions = observed.plan, {k: bool(checks["assertions"].get(k, False)) for k in ASSERTIONS}
    matched = checks["matched"]
    tp, fp, fn = len(matched), checks["unexpected"], len(checks["missing"])
    gates = {gate: 0 for gate in GATES.values()}
    for name, gate in GATES.items():
        if not assertions[name]:
            gates[gate] += checks["evidence"].count(False) if name == "evidence_integrity" else 1
    return {
        "id": case["id"],
        "profile": profile,
        "execution": "executed",
        "plan_status": plan["status"],
        "data_class": plan["data_class"],
        "diagnostic_codes": [d["code"] for d in plan.get("diagnostics") or ()],
        "matched_candidates": list(matched),
        "missing_candidates": checks["missing"],
        "forbidden_hits": checks["forbidden_hits"],
        "forbidden_opportunities": checks["forbidden_opportunities"],
        "unexpected_candidates": fp,
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
        "evidence_validity": _rate(checks["evidence"]),
        "destination_accuracy": _rate(checks["destination"]),
        "sensitivity_accuracy": _rate(checks["sensitivity"]),
        "action_accuracy": _rate(checks["actions"]),
        "review_burden": burden(case, plan, matched),
        "hard_gates": gates,
        "observations": {"latency_ms": round(observed.latency_ms, 3), "payload_bytes": observed.payload_bytes},
        "assertions": assertions,
        "passed": all(assertions.values()),
    }


def failed(case: Mapping[str, Any], profile: str, reason: str) -> dict[str, Any]:
    """The report of a case the harness could not execute (``execution: failed``; every assertion false)."""
    empty = {"valid": 0, "checked": 0, "rate": 1.0}
    return {
        "id": case["id"],
        "profile": profile,
        "execution": "failed",
        "failure": reason,
        "diagnostic_codes": [],
        "matched_candidates": [],
        "missing_candidates": [c["id"] for c in case["expected"].get("candidates") or ()],
        "forbidden_hits": [],
        "forbidden_opportunities": len(case["expected"].get("forbidden_candidates") or ()),
        "unexpected_candidates": 0,
        "true_positives": 0,
        "false_positives": 0,
        "false_negatives": len(case["expected"].get("candidates") or ()),
        "evidence_validity": empty,
        "destination_accuracy": empty,
        "sensitivity_accuracy": empty,
        "action_accuracy": empty,
        "review_burden": {k: 0 for k in BURDEN},
        "hard_gates": {g: 0 for g in GATES.values()},
        "observations": {"latency_ms": None, "payload_bytes": None},
        "assertions": {k: False for k in ASSERTIONS},
        "passed": False,
    }
