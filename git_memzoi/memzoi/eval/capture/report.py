"""The capture eval report (pure): aggregate metrics per corpus and per profile, hard gates, thresholds, profile
fingerprints, the baseline projection and its exact comparison, and the text view (memzoi-spec.md §11.4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from git_memzoi.memzoi.eval.capture.corpus import BURDEN, RATIOS, CaptureCorpus

REPORT_VERSION = "memzoi-capture-report/v1"
DEFINITIONS_VERSION = "memzoi-capture-metrics/v1"
BASELINE_VERSION = "memzoi-capture-baseline/v1"
COMPARISON_VERSION = "memzoi-capture-baseline-comparison/v1"
SAFEGUARD_POLICY = "memzoi/capture-safeguards-v1"
DEFINITIONS = {
    "candidate_precision": "TP / (TP + FP) over executed cases; TP = expected candidates matched by identical "
    "memory and evidence shape, FP = plan candidates matching none",
    "candidate_recall": "TP / (TP + FN); FN = expected candidates with no match",
    "evidence_validity": "evidence items whose source hash, excerpt hash, text and line numbers recompute from "
    "the isolated source bytes / all evidence items of plan candidates",
    "destination_accuracy": "matched candidates with the expected destination / matched candidates",
    "sensitivity_accuracy": "matched candidates with the expected sensitivity / matched candidates",
    "action_accuracy": "matched candidates with the expected action (kind, match count and kinds) / matched",
    "forbidden_hits": "declared forbidden candidates the plan emitted / declared forbidden candidates",
    "unsupported_outcome_accuracy": "blocked cases whose plan_status and diagnostics assertions hold / blocked cases",
    "case_pass_rate": "cases with all 21 assertions true / executed cases",
    "review_burden": "plan candidates, plan-summary duplicates, conflicts and needs_review, and reviewed outcomes",
}
# threshold → (metric, the key of its value, "min" | "max")
_GATES = {
    "min_candidate_precision": ("candidate_precision", "value", "min"),
    "min_candidate_recall": ("candidate_recall", "value", "min"),
    "min_evidence_validity": ("evidence_validity", "rate", "min"),
    "min_destination_accuracy": ("destination_accuracy", "rate", "min"),
    "min_sensitivity_accuracy": ("sensitivity_accuracy", "rate", "min"),
    "min_action_accuracy": ("action_accuracy", "rate", "min"),
    "max_forbidden_hit_rate": ("forbidden_hits", "rate", "max"),
    "min_unsupported_outcome_accuracy": ("unsupported_outcome_accuracy", "rate", "min"),
    "min_case_pass_rate": ("case_pass_rate", "value", "min"),
}
_BASELINE_CASE_KEYS = (
    "id",
    "profile",
    "execution",
    "plan_status",
    "data_class",
    "diagnostic_codes",
    "matched_candidates",
    "missing_candidates",
    "forbidden_hits",
    "forbidden_opportunities",
    "unexpected_candidates",
    "review_burden",
    "assertions",
    "passed",
)


def _fraction(numerator: int, denominator: int) -> dict[str, Any]:
    return {
        "numerator": numerator,
        "denominator": denominator,
        "value": numerator / denominator if denominator else 1.0,
    }


def _sum_rate(cases: Sequence[Mapping[str, Any]], key: str) -> dict[str, Any]:
    valid = sum(c[key]["valid"] for c in cases)
    checked = sum(c[key]["checked"] for c in cases)
    return {"valid": valid, "checked": checked, "rate": valid / checked if checked else 1.0}


def metrics(cases: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The aggregate metrics of §11.4 over the executed ``cases`` (ratios with their counts)."""
    run = [c for c in cases if c["execution"] == "executed"]
    tp, fp, fn = (sum(c[k] for c in run) for k in ("true_positives", "false_positives", "false_negatives"))
    hits = sum(len(c["forbidden_hits"]) for c in run)
    chances = sum(c["forbidden_opportunities"] for c in run)
    blocked = [c for c in run if c.get("plan_status") == "blocked"]
    good = sum(1 for c in blocked if c["assertions"]["plan_status"] and c["assertions"]["diagnostics"])
    return {
        "case_count": len(cases),
        "candidate_precision": _fraction(tp, tp + fp),
        "candidate_recall": _fraction(tp, tp + fn),
        **{
            k: _sum_rate(run, k)
            for k in ("evidence_validity", "destination_accuracy", "sensitivity_accuracy", "action_accuracy")
        },
        "forbidden_hits": {"hits": hits, "opportunities": chances, "rate": hits / chances if chances else 0.0},
        "unsupported_outcome_accuracy": {
            "valid": good,
            "checked": len(blocked),
            "rate": good / len(blocked) if blocked else 1.0,
        },
        "case_pass_rate": _fraction(sum(1 for c in run if c["passed"]), len(run)),
        "extractor_failures": sum(1 for c in cases if c["execution"] == "failed"),
        "optional_skips": 0,
        "review_burden": {k: sum(c["review_burden"][k] for c in run) for k in BURDEN},
    }


def hard_gates(cases: Sequence[Mapping[str, Any]], corpus: CaptureCorpus) -> dict[str, int]:
    """Summed hard-gate counts (all must be 0); a required profile whose cases did not all execute counts as a
    ``required_profile_skips``."""
    from git_memzoi.memzoi.eval.capture.model import HARD_GATES

    out = {g: sum(c["hard_gates"].get(g, 0) for c in cases) for g in HARD_GATES if g != "required_profile_skips"}
    required = {p.profile for p in corpus.profiles if p.required}
    out["required_profile_skips"] = sum(1 for c in cases if c["profile"] in required and c["execution"] != "executed")
    return {g: out[g] for g in HARD_GATES}


def thresholds(
    corpus: CaptureCorpus,
    m: Mapping[str, Any],
    per_profile: Mapping[str, Mapping[str, Any]],
    observations: Mapping[str, Any],
) -> dict[str, Any]:
    """``{checks: {name: bool}, passed}`` for every declared threshold, overall and per profile with cases."""
    limits = corpus.thresholds
    checks: dict[str, bool] = {}
    for scope, values in (("aggregate", m), *((f"profile.{p}", v) for p, v in sorted(per_profile.items()))):
        for name in RATIOS:
            if name in limits:
                metric, key, direction = _GATES[name]
                value = values[metric][key]
                checks[f"{scope}.{metric}"] = value >= limits[name] if direction == "min" else value <= limits[name]
    for name, limit in (limits.get("review_burden") or {}).items():
        checks[f"review_burden.{name}"] = m["review_burden"][name] <= limit
    if "max_plan_payload_bytes" in limits:
        checks["observations.max_plan_payload_bytes"] = (observations["payload"]["max"] or 0) <= limits[
            "max_plan_payload_bytes"
        ]
    if "max_p95_latency_ms" in limits:
        checks["observations.max_p95_latency_ms"] = (observations["latency"]["p95"] or 0) <= limits[
            "max_p95_latency_ms"
        ]
    return {"checks": checks, "passed": all(checks.values())}


def _observations(cases: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    from git_memzoi.memzoi.eval.report import percentile

    latency = sorted(c["observations"]["latency_ms"] for c in cases if c["observations"]["latency_ms"] is not None)
    payload = sorted(
        c["observations"]["payload_bytes"] for c in cases if c["observations"]["payload_bytes"] is not None
    )
    return {
        "latency": {
            "unit": "milliseconds",
            "timer": "time.perf_counter",
            "sample_count": len(latency),
            "p50": percentile(latency, 0.5),
            "p95": percentile(latency, 0.95),
        },
        "payload": {
            "unit": "bytes",
            "sample_count": len(payload),
            "p50": percentile(payload, 0.5),
            "p95": percentile(payload, 0.95),
            "max": payload[-1] if payload else None,
        },
        "provider": None,
        "model": None,
        "tokens": None,
        "cost": None,
    }


def fingerprints(corpus: CaptureCorpus) -> list[dict[str, Any]]:
    """The profile fingerprints, sorted by profile: this build's own extractor and safeguard configuration
    hashes (upstream's are specific to its Rust build, memzoi-spec.md §11.4)."""
    import importlib

    from git_memzoi.memzoi.capture.profiles.markdown import canonical_hash
    from git_memzoi.memzoi.capture.sources import PROFILES
    from git_memzoi.memzoi.records.secrets import SECRET_PLUGINS

    out = []
    for p in sorted(corpus.profiles, key=lambda p: p.profile):
        module = importlib.import_module(PROFILES[p.profile]) if p.profile in PROFILES else None
        configuration = getattr(module, "CONFIGURATION", None)
        out.append(
            {
                "profile": p.profile,
                "required": p.required,
                "extractor_kind": p.extractor_kind,
                "extractor_id": p.extractor_id,
                "extractor_version": p.extractor_version,
                "extractor_configuration_hash": None
                if configuration is None
                else "blake3:" + canonical_hash(configuration),
                "safeguard_policy_version": SAFEGUARD_POLICY,
                "safeguard_configuration_hash": "blake3:"
                + canonical_hash({"policy": SAFEGUARD_POLICY, "profile": p.profile, "detectors": list(SECRET_PLUGINS)}),
            }
        )
    return out


def build(corpus: CaptureCorpus, cases: Sequence[dict[str, Any]], runtime: Mapping[str, Any]) -> dict[str, Any]:
    """The ``memzoi-capture-report/v1`` object; ``gates_passed`` = every case passed, every hard gate is 0 and
    every threshold passed."""
    m = metrics(cases)
    per_profile = {p: metrics([c for c in cases if c["profile"] == p]) for p in sorted({c["profile"] for c in cases})}
    observations = _observations(cases)
    gates = hard_gates(cases, corpus)
    result = thresholds(corpus, m, per_profile, observations)
    gates_passed = all(c["passed"] for c in cases) and not any(gates.values()) and result["passed"]
    return {
        "version": REPORT_VERSION,
        "definitions": {"version": DEFINITIONS_VERSION, "metrics": DEFINITIONS},
        "corpus": {
            "name": corpus.name,
            "version": "memzoi-capture-corpus/v1",
            "digest": corpus.digest,
            "evaluated_at": corpus.evaluated_at_text,
            "case_count": len(cases),
            "fixture_count": len(corpus.fixtures),
        },
        "runtime": dict(runtime),
        "profiles": fingerprints(corpus),
        "metrics": m,
        "profile_metrics": per_profile,
        "hard_gates": gates,
        "threshold_results": result,
        "observations": observations,
        "cases": list(cases),
        "gates_passed": gates_passed,
        "passed": gates_passed,
    }


def projection(report: Mapping[str, Any]) -> dict[str, Any]:
    """The ``memzoi-capture-baseline/v1`` projection of a report (observations and runtime left out)."""
    return {
        "version": BASELINE_VERSION,
        "report_version": report["version"],
        "definitions_version": report["definitions"]["version"],
        "corpus": {k: report["corpus"][k] for k in ("name", "version", "digest")},
        "profiles": report["profiles"],
        "metrics": report["metrics"],
        "profile_metrics": report["profile_metrics"],
        "hard_gates": report["hard_gates"],
        "cases": [{k: c.get(k) for k in _BASELINE_CASE_KEYS} for c in report["cases"]],
    }


def compare(baseline: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, Any]:
    """The exact comparison of §11.4: ``incompatible`` (versions or corpus identity differ), ``changed`` (any
    metric, profile, hard gate or case differs; fails the run) or ``match``."""
    identity = ("version", "report_version", "definitions_version")
    compatible = all(baseline.get(k) == current[k] for k in identity) and baseline.get("corpus") == current["corpus"]
    before = {c.get("id"): c for c in baseline.get("cases") or () if isinstance(c, dict)}
    after = {c["id"]: c for c in current["cases"]}
    changed = [i for i in [*after, *(b for b in before if b not in after)] if before.get(i) != after.get(i)]
    out = {
        "version": COMPARISON_VERSION,
        "compatible": compatible,
        "deterministic_match": compatible and not changed,
        "metrics_changed": baseline.get("metrics") != current["metrics"]
        or baseline.get("profile_metrics") != current["profile_metrics"],
        "profiles_changed": baseline.get("profiles") != current["profiles"],
        "hard_gates_changed": baseline.get("hard_gates") != current["hard_gates"],
        "changed_cases": changed,
    }
    drift = out["metrics_changed"] or out["profiles_changed"] or out["hard_gates_changed"] or changed
    status = "incompatible" if not compatible else "changed" if drift else "match"
    return {"version": COMPARISON_VERSION, "status": status, **{k: v for k, v in out.items() if k != "version"}}


def render_text(report: Mapping[str, Any]) -> str:
    """The human report: tab-separated ``key:\\tvalue`` lines, one ``PASS|FAIL`` line per case, ``overall`` last."""
    m, corpus = report["metrics"], report["corpus"]
    lines = [
        f"Memzoi capture evaluation ({report['version']})",
        f"corpus:\t{corpus['name']} ({corpus['version']})",
        f"digest:\t{corpus['digest']}",
        f"cases:\t{corpus['case_count']}",
        *(
            f"{k}:\t{m[k]['value']} ({m[k]['numerator']}/{m[k]['denominator']})"
            for k in ("candidate_precision", "candidate_recall")
        ),
    ]
    for key in (
        "evidence_validity",
        "destination_accuracy",
        "sensitivity_accuracy",
        "action_accuracy",
        "unsupported_outcome_accuracy",
    ):
        lines.append(f"{key}:\t{m[key]['rate']} ({m[key]['valid']}/{m[key]['checked']})")
    hits = m["forbidden_hits"]
    lines.append(f"forbidden_hit_rate:\t{hits['rate']} ({hits['hits']}/{hits['opportunities']})")
    lines.append("review_burden:\t" + ", ".join(f"{k} {v}" for k, v in m["review_burden"].items()))
    for profile, pm in report["profile_metrics"].items():
        lines.append(
            f"profile {profile}:\tprecision {pm['candidate_precision']['value']}, "
            f"recall {pm['candidate_recall']['value']}, cases {pm['case_count']}"
        )
    bad = [g for g, n in report["hard_gates"].items() if n]
    lines.append(f"hard_gates:\t{'PASS' if not bad else 'FAIL (' + ', '.join(bad) + ')'}")
    failed = [n for n, ok in report["threshold_results"]["checks"].items() if not ok]
    lines.append(f"thresholds:\t{'PASS' if not failed else 'FAIL (' + ', '.join(failed) + ')'}")
    if "baseline" in report:
        b = report["baseline"]
        lines.append(
            f"baseline:\t{b['status']}"
            + (f" ({', '.join(b.get('changed_cases') or [])})" if b.get("changed_cases") else "")
            + ("; written" if b.get("written") else "")
        )
    for c in report["cases"]:
        why = [k for k, ok in c["assertions"].items() if not ok]
        lines.append(
            f"{'PASS' if c['passed'] else 'FAIL'}\t{c['profile']}\t{c['id']}"
            + (
                f"\t({', '.join(why[:4])})"
                if why and c["execution"] == "executed"
                else f"\t({c.get('failure')})"
                if c["execution"] != "executed"
                else ""
            )
        )
    lines.append(f"overall:\t{'PASS' if report['passed'] else 'FAIL'}")
    return "\n".join(lines)
