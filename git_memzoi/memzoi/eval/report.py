"""The recall report ``memzoi-recall-report/v2`` and baseline ``memzoi-recall-baseline/v1`` (memzoi-spec.md
§10.5–10.6): aggregates with their formulas, threshold gates, the typed baseline comparison, the text rendering.

Pure except :func:`write_baseline`. Threshold checks use unrounded values; reported values are rounded to 6
decimals (latency to 3). Empty denominators give 1.0 for ratios and integrity, 0.0 for leakage.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from git_memzoi.core import safe_read
from git_memzoi.core.safe_read import load_json
from git_memzoi.errors import InputError
from git_memzoi.memzoi.eval.recall.corpus import CATEGORIES, RATIO_THRESHOLDS, Corpus

REPORT_VERSION = "memzoi-recall-report/v2"
DEFINITIONS_VERSION = "memzoi-trust-metrics/v1"
BASELINE_VERSION = "memzoi-recall-baseline/v1"
MAX_BASELINE_BYTES = 16 * 1024 * 1024  # a baseline of 256 cases is under 100 KB
DEFINITIONS = {
    "version": DEFINITIONS_VERSION,
    "search_recall_at_k": "per search case |relevant ∩ retrieved top-k| / |relevant| (1.0 when nothing is "
    "relevant); mean over search cases",
    "search_mrr": "per search case 1 / (1 + index of the first relevant retrieved id), 0 when none is retrieved "
    "(1.0 when nothing is relevant); mean over search cases",
    "precheck_precision": "sum of true positives / (true positives + false positives) over precheck cases",
    "precheck_recall": "sum of true positives / (true positives + false negatives) over precheck cases",
    "leakage_rate": "per category, retrieved forbidden ids / declared forbidden ids (each write_gate case "
    "declares one prohibited id)",
    "forbidden_hit_rate": "retrieved forbidden ids of every category, other included / all declared forbidden ids",
    "citation_integrity": "returned items whose citations are non-empty and all name the record's id, type, "
    "scope kind, destination, visibility and a path of the record matching the requested "
    "path / returned items",
    "provenance_integrity": "returned items whose citations are non-empty and all carry the record's plane, "
    "source kind and source ref (for a proposal-applied record: its fixture passed and "
    "the source ref is not the proposal id) / returned items",
    "token_usage": "context cases' budget.estimated_used: whitespace words of the rendered prompt, each "
    "character of an unspaced script one unit (approx_words)",
    "latency_percentiles": "nearest rank: sorted samples[clamp(ceil(p * n) - 1, 0, n - 1)], milliseconds of a "
    "monotonic clock around each surface call",
    "empty_denominator": "ratios and integrity are 1.0, leakage rates 0.0",
}
_GATES = {  # threshold → (metric path, "min" | "max")
    "min_mean_recall_at_k": (("search", "mean_recall_at_k"), "min"),
    "min_mean_mrr": (("search", "mean_mrr"), "min"),
    "min_precheck_precision": (("precheck", "precision", "value"), "min"),
    "min_precheck_recall": (("precheck", "recall", "value"), "min"),
    "max_stale_leakage_rate": (("leakage", "stale", "rate"), "max"),
    "max_expired_leakage_rate": (("leakage", "expired", "rate"), "max"),
    "max_scope_leakage_rate": (("leakage", "scope", "rate"), "max"),
    "max_forbidden_hit_rate": (("leakage", "forbidden", "rate"), "max"),
    "min_citation_integrity": (("citation_integrity", "rate"), "min"),
    "min_provenance_integrity": (("provenance_integrity", "rate"), "min"),
    "min_case_pass_rate": (("case_pass_rate", "value"), "min"),
    "max_estimated_usage": (("token_usage", "max"), "max"),
    "max_p95_latency_ms": (("latency", "p95"), "max"),
}
_BASELINE_METRICS = {
    "mean_recall_at_k": ("search", "mean_recall_at_k"),
    "mean_mrr": ("search", "mean_mrr"),
    "precheck_precision": ("precheck", "precision", "value"),
    "precheck_recall": ("precheck", "recall", "value"),
    **{f"{c}_leakage_rate": ("leakage", c, "rate") for c in ("stale", "expired", "scope", "prohibited", "destination")},
    "forbidden_hit_rate": ("leakage", "forbidden", "rate"),
    "citation_integrity": ("citation_integrity", "rate"),
    "provenance_integrity": ("provenance_integrity", "rate"),
    "case_pass_rate": ("case_pass_rate", "value"),
    "estimated_usage_total": ("token_usage", "total"),
    "estimated_usage_max": ("token_usage", "max"),
}


class BaselineError(InputError):
    """A baseline file that cannot be read as ``memzoi-recall-baseline/v1`` JSON (exit 2)."""

    default_code = "invalid_baseline"


# ------------------------------------------------------------------------------------------------ aggregates


def metrics(cases: Sequence[Mapping[str, Any]], corpus: Corpus) -> dict[str, Any]:
    """The unrounded ``metrics`` object of §10.5 from the per-case entries."""
    search = [c for c in cases if c["surface"] == "search"]
    pre = [c for c in cases if c["surface"] == "precheck"]
    tp, fp, fn = (sum(c[k] for c in pre) for k in ("true_positives", "false_positives", "false_negatives"))
    leakage: dict[str, Any] = {}
    for category in (*CATEGORIES[:5], "forbidden"):
        hits = sum(len(v) for c in cases for k, v in c["forbidden_hits"].items() if category in (k, "forbidden"))
        opportunities = corpus.opportunities[category]
        leakage[category] = {"hits": hits, "opportunities": opportunities, "rate": _ratio(hits, opportunities, 0.0)}
    usage = sorted(c["estimated_usage"] for c in cases if c.get("estimated_usage") is not None)
    latency = sorted(c["latency_ms"] for c in cases)
    passed = sum(1 for c in cases if c["passed"])
    return {
        "search": {
            "case_count": len(search),
            "mean_recall_at_k": _mean([c["recall_at_k"] for c in search]),
            "mean_mrr": _mean([c["mrr"] for c in search]),
        },
        "precheck": {
            "case_count": len(pre),
            "true_positives": tp,
            "false_positives": fp,
            "false_negatives": fn,
            "precision": _fraction(tp, tp + fp),
            "recall": _fraction(tp, tp + fn),
        },
        "leakage": leakage,
        "citation_integrity": _integrity(cases, "citation_integrity"),
        "provenance_integrity": _integrity(cases, "provenance_integrity"),
        "token_usage": {
            "unit": "approx_words",
            "estimator": "context_pack/approx_words-v1",
            "sample_count": len(usage),
            "total": sum(usage),
            "mean": round(sum(usage) / len(usage), 3) if usage else 0.0,
            "p50": percentile(usage, 0.5),
            "p95": percentile(usage, 0.95),
            "max": max(usage, default=0),
        },
        "latency": {
            "unit": "milliseconds",
            "timer": "monotonic_instant",
            "sample_count": len(latency),
            "p50": percentile(latency, 0.5),
            "p95": percentile(latency, 0.95),
        },
        "case_pass_rate": _fraction(passed, len(cases)),
    }


def percentile(sorted_values: Sequence[Any], p: float) -> Any:
    """Nearest rank: ``sorted_values[clamp(ceil(p·n) − 1, 0, n − 1)]``; 0 for no samples."""
    if not sorted_values:
        return 0
    index = min(max(math.ceil(p * len(sorted_values)) - 1, 0), len(sorted_values) - 1)
    return sorted_values[index]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 1.0


def _ratio(numerator: int, denominator: int, empty: float) -> float:
    return numerator / denominator if denominator else empty


def _fraction(numerator: int, denominator: int) -> dict[str, Any]:
    return {"numerator": numerator, "denominator": denominator, "value": _ratio(numerator, denominator, 1.0)}


def _integrity(cases: Sequence[Mapping[str, Any]], key: str) -> dict[str, Any]:
    valid, checked = sum(c[key]["valid"] for c in cases), sum(c[key]["checked"] for c in cases)
    return {"valid": valid, "checked": checked, "rate": _ratio(valid, checked, 1.0)}


def _get(tree: Mapping[str, Any], path: Sequence[str]) -> Any:
    value: Any = tree
    for key in path:
        value = value[key]
    return value


def gates(raw: Mapping[str, Any], thresholds: Mapping[str, float]) -> dict[str, bool]:
    """Each configured threshold → whether the unrounded metric meets it."""
    out: dict[str, bool] = {}
    for name, limit in thresholds.items():
        path, kind = _GATES[name]
        value = _get(raw, path)
        out[name] = value >= limit if kind == "min" else value <= limit
    return out


def rounded(value: Any, places: int = 6) -> Any:
    """``value`` with every float rounded (recursively); integers and everything else unchanged."""
    if isinstance(value, float):
        return round(value, places)
    if isinstance(value, dict):
        return {k: rounded(v, 3 if k in ("latency", "latency_ms") else places) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v, places) for v in value]
    return value


# ------------------------------------------------------------------------------------------------ report


def build(
    corpus: Corpus,
    cases: Sequence[Mapping[str, Any]],
    fixtures: Sequence[Mapping[str, Any]],
    runtime: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The report (without ``baseline``) and the unrounded metrics. ``passed`` covers the thresholds only; a
    baseline comparison is added by :func:`attach_baseline`."""
    raw = metrics(cases, corpus)
    results = gates(raw, corpus.thresholds)
    report = {
        "version": REPORT_VERSION,
        "corpus": {
            "name": corpus.name,
            "version": corpus.version,
            "digest": corpus.digest,
            "evaluated_at": corpus.evaluated_at.isoformat().replace("+00:00", "Z"),
            "fixture_record_count": len(corpus.records),
            "runtime_fixture_count": len(corpus.runtime_fixtures),
            "proposal_fixture_count": len(corpus.proposal_fixtures),
            "case_count": len(corpus.cases),
        },
        "definitions": dict(DEFINITIONS),
        "runtime": {**runtime, "latency_sample_count": raw["latency"]["sample_count"]},
        "proposal_fixtures": [dict(f) for f in fixtures],
        "cases": rounded([dict(c) for c in cases]),
        "metrics": rounded(raw),
        "thresholds": {k: v for k, v in corpus.thresholds.items()},
        "threshold_results": results,
        "passed": all(results.values()),
    }
    return report, raw


def thresholds_passed(report: Mapping[str, Any]) -> bool:
    """Whether every configured threshold holds (the regression gate)."""
    return all(report["threshold_results"].values())


# ------------------------------------------------------------------------------------------------ baseline


def projection(report: Mapping[str, Any]) -> dict[str, Any]:
    """The deterministic part of a report, as a ``memzoi-recall-baseline/v1`` object (no runtime, no latency)."""
    corpus = report["corpus"]
    metrics_ = {name: _get(report["metrics"], path) for name, path in _BASELINE_METRICS.items()}
    cases = [
        {
            "id": c["id"],
            "surface": c["surface"],
            "retrieved_ids": list(c["retrieved_ids"]),
            "estimated_usage": c.get("estimated_usage"),
            "passed": c["passed"],
        }
        for c in report["cases"]
    ]
    return {
        "version": BASELINE_VERSION,
        "report_version": report["version"],
        "definitions_version": report["definitions"]["version"],
        "corpus": {"name": corpus["name"], "version": corpus["version"], "digest": corpus["digest"]},
        "metrics": metrics_,
        "cases": cases,
    }


def read_baseline(path: Path) -> dict[str, Any]:
    """The baseline object at ``path``.

    Raises:
        BaselineError: missing, unreadable, not JSON, or not a baseline-shaped object (``invalid_baseline``).
    """
    try:
        data = load_json(safe_read.read_bytes(path, MAX_BASELINE_BYTES, follow_symlinks=True).decode("utf-8"))
    except FileNotFoundError:
        raise BaselineError(
            f"{path}: no such baseline (create it with --update-baseline)", "missing_baseline"
        ) from None
    except (OSError, UnicodeDecodeError, ValueError, safe_read.FileRefused) as exc:
        raise BaselineError(f"{path}: not a readable JSON baseline ({type(exc).__name__})") from None
    shape = isinstance(data, dict) and isinstance(data.get("corpus"), dict) and isinstance(data.get("metrics"), dict)
    if not shape or not isinstance(data.get("cases"), list) or not all(isinstance(c, dict) for c in data["cases"]):
        raise BaselineError(f"{path}: not a {BASELINE_VERSION} object (version, corpus, metrics, cases)")
    baseline: dict[str, Any] = data
    return baseline


def compare(baseline: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, Any]:
    """The typed comparison: ``incompatible`` (schema or corpus identity differs; fails the report), else
    ``changed`` (metric deltas or changed case outcomes; informational) or ``match``."""
    identity = [
        ("version", ("version",)),
        ("report_version", ("report_version",)),
        ("definitions_version", ("definitions_version",)),
        ("corpus.name", ("corpus", "name")),
        ("corpus.version", ("corpus", "version")),
        ("corpus.digest", ("corpus", "digest")),
    ]
    mismatches = [
        {"field": name, "baseline": _maybe(baseline, path), "current": _get(current, path)}
        for name, path in identity
        if _maybe(baseline, path) != _get(current, path)
    ]
    if mismatches:
        return {"status": "incompatible", "incompatibilities": mismatches, "metric_deltas": [], "changed_cases": []}
    deltas = []
    for name, value in current["metrics"].items():
        old = baseline["metrics"].get(name)
        if old != value:
            numeric = isinstance(old, (int, float)) and not isinstance(old, bool)
            deltas.append(
                {"metric": name, "baseline": old, "current": value, "delta": round(value - old, 6) if numeric else None}
            )
    keys = ("surface", "retrieved_ids", "estimated_usage", "passed")
    before = {c.get("id"): {k: c.get(k) for k in keys} for c in baseline["cases"]}
    after = {c["id"]: {k: c.get(k) for k in keys} for c in current["cases"]}
    changed = [i for i in [*after, *(b for b in before if b not in after)] if before.get(i) != after.get(i)]
    status = "changed" if deltas or changed else "match"
    return {"status": status, "incompatibilities": [], "metric_deltas": deltas, "changed_cases": changed}


def _maybe(tree: Mapping[str, Any], path: Sequence[str]) -> Any:
    try:
        return _get(tree, path)
    except (KeyError, TypeError):
        return None


def baseline_bytes(current: Mapping[str, Any]) -> bytes:
    """The baseline file's bytes: 2-space pretty JSON and a newline."""
    return (json.dumps(current, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_baseline(path: Path, current: Mapping[str, Any]) -> None:
    """Write the baseline atomically (temp file in the same folder, then rename)."""
    from git_memzoi.core.atomic import write_bytes_atomic

    write_bytes_atomic(path, baseline_bytes(current), root=path.parent)  # the file the caller named


# ------------------------------------------------------------------------------------------------ text


def render_text(report: Mapping[str, Any]) -> str:
    """The human report: a header, tab-separated ``key:\\tvalue`` lines, one ``PASS|FAIL`` line per case, and
    ``overall:\\tPASS|FAIL`` last."""
    m, corpus = report["metrics"], report["corpus"]
    lines = [
        f"Memzoi recall evaluation ({report['version']})",
        f"corpus:\t{corpus['name']} ({corpus['version']})",
        f"digest:\t{corpus['digest']}",
        f"evaluated_at:\t{corpus['evaluated_at']}",
        f"cases:\t{corpus['case_count']}",
        f"mean_recall_at_k:\t{m['search']['mean_recall_at_k']}",
        f"mean_mrr:\t{m['search']['mean_mrr']}",
        f"precheck_precision:\t{m['precheck']['precision']['value']}",
        f"precheck_recall:\t{m['precheck']['recall']['value']}",
    ]
    for category in (*CATEGORIES[:5], "forbidden"):
        leak = m["leakage"][category]
        name = "forbidden_hit_rate" if category == "forbidden" else f"{category}_leakage_rate"
        lines.append(f"{name}:\t{leak['rate']} ({leak['hits']}/{leak['opportunities']})")
    for key in ("citation_integrity", "provenance_integrity"):
        lines.append(f"{key}:\t{m[key]['rate']} ({m[key]['valid']}/{m[key]['checked']})")
    usage, latency, rate = m["token_usage"], m["latency"], m["case_pass_rate"]
    lines += [
        (
            f"estimated_usage:\ttotal {usage['total']}, max {usage['max']}, p50 {usage['p50']}, "
            f"p95 {usage['p95']} {usage['unit']}"
        ),
        f"latency_ms:\tp50 {latency['p50']}, p95 {latency['p95']}",
        f"case_pass_rate:\t{rate['value']} ({rate['numerator']}/{rate['denominator']})",
    ]
    failed = [name for name, ok in report["threshold_results"].items() if not ok]
    lines.append(f"thresholds:\t{'PASS' if not failed else 'FAIL (' + ', '.join(failed) + ')'}")
    baseline = report.get("baseline")
    if baseline is not None:
        extra = ", ".join(
            baseline["changed_cases"]
            or [d["metric"] for d in baseline["metric_deltas"]]
            or [i["field"] for i in baseline["incompatibilities"]]
        )
        lines.append(
            f"baseline:\t{baseline['status']}"
            + (f" ({extra})" if extra else "")
            + ("; written" if baseline.get("written") else "")
        )
    lines += [f"{'PASS' if c['passed'] else 'FAIL'}\t{c['surface']}\t{c['id']}" for c in report["cases"]]
    lines.append(f"overall:\t{'PASS' if report['passed'] else 'FAIL'}")
    return "\n".join(lines)


__all__ = [
    "DEFINITIONS",
    "RATIO_THRESHOLDS",
    "BaselineError",
    "build",
    "compare",
    "gates",
    "metrics",
    "percentile",
    "projection",
    "read_baseline",
    "render_text",
    "write_baseline",
]
