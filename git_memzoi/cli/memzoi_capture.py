"""`git memzoi capture plan|review|apply`: evidence-backed capture of one named source (four profiles).

Each command parses its options, calls one function of :mod:`git_memzoi.memzoi.capture.plan` and prints the artifact
(``--json``) or a short human view; ``--output`` installs the artifact where its data class allows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from git_memzoi.cli.app import actor_option, emit_json, json_option
from git_memzoi.cli.workspace import given_path, open_workspace


def _bytes(ctx: click.Context, value: str | None) -> bytes | None:
    """The ``--source-bytes`` data: a file (regular, ≤ 2 MiB) or ``-`` for stdin."""
    from git_memzoi.memzoi import capture_artifacts, capture_markdown

    if value is None:
        return None
    if value == "-":
        import sys

        data = sys.stdin.buffer.read(capture_artifacts.MAX_ARTIFACT_BYTES + 1)
        if len(data) > capture_artifacts.MAX_ARTIFACT_BYTES:
            raise capture_markdown.CaptureError("--source-bytes: at most 2 MiB", "source_too_large")
        return bytes(data)
    return capture_artifacts.small_file(given_path(ctx, value), "source bytes file", "source_not_found")


def _prior(ctx: click.Context, value: str | None) -> dict[str, Any] | None:
    from git_memzoi.memzoi import capture_artifacts, capture_review

    return capture_artifacts.read_artifact(given_path(ctx, value), capture_review.REVIEW_SCHEMA) if value else None


def _finish(
    ctx: click.Context,
    core: Any,
    artifact: Mapping[str, Any],
    output: str | None,
    as_json: bool,
    plan_file: str | None = None,
) -> None:
    from git_memzoi.memzoi import capture_artifacts

    saved = capture_artifacts.save_artifact(core, given_path(ctx, output), artifact) if output else None
    if as_json:
        emit_json(artifact)
        return
    kind = artifact["schema"].rsplit("/", 1)[-1]
    ident = artifact.get("plan_id") if kind.startswith("capture-plan") else artifact.get("review_id")
    click.echo(f"{kind} {ident} ({artifact.get('status', 'ready')}, data class {artifact['data_class']})")
    for c in artifact.get("candidates", ()):
        click.echo(f"  {c['candidate_id']}  {c['action']['kind']:<10} {c['memory']['type']}: {c['memory']['title']}")
    for d in artifact.get("decisions", ()):
        click.echo(f"  {d['candidate_id']}  {d['outcome']}")
    diffs = {s.get("source_id") for s in artifact.get("sources", ()) if s.get("media_type") == "text/x-diff"}
    for diag in artifact.get("diagnostics", ()):
        rules = diag.get("detectors") or ([diag["detector"]] if "detector" in diag else [])
        click.echo(f"  {diag['code']} at {_where(diag, diffs)}" + (f" ({', '.join(rules)})" if rules else ""))
    if saved is not None:
        click.echo(f"wrote {saved}")
    step = _next_step(kind, artifact, output, plan_file)
    if step:
        click.echo(f"next: {step}")


def _where(diag: Mapping[str, Any], diffs: set[Any]) -> str:
    """Where a diagnostic points: ``path:line``, or for a diff source (``diffs``: their source ids) the path and
    the line of the rendered diff, which is not a line of that file."""
    line = diag["line_start"]
    if "path" not in diag:
        return f"line {line}"
    if diag.get("source_id") in diffs:
        return f"{diag['path']} (line {line} of the diff)"
    return f"{diag['path']}:{line}"


def _next_step(kind: str, artifact: Mapping[str, Any], output: str | None, plan_file: str | None = None) -> str | None:
    """The command after a plan or review in text output: a plan printed and nowhere saved left a new user with
    no way on (issue 20, the README re-run); a review's names the plan file it was given (``plan_file``)."""
    if artifact.get("status", "ready") != "ready" or not artifact.get("candidates", artifact.get("decisions")):
        return None
    if kind.startswith("capture-plan"):
        plan = output or "<plan.json>"
        saved = "" if output else "save the plan (--output FILE, or --json > FILE), then "
        return f"{saved}git memzoi capture review --plan-file {plan} --decisions-file <decisions.json> (its shape: git memzoi help capture review)"
    if kind.startswith("capture-review"):
        ids = f"--plan-id {artifact.get('plan_id')} --review-id {artifact.get('review_id')}"
        plan = plan_file or "<plan.json>"
        return f"git memzoi capture apply --plan-file {plan} --review-file {output or '<review.json>'} {ids}"
    return None


@click.group()
def capture() -> None:
    """Turn one named project source into reviewed, evidence-backed memory (plan → review → apply)."""


@capture.command("plan")
@click.option("--source", default=None, help="A project-relative .md file (the markdown-deterministic profile).")
@click.option(
    "--request-file",
    default=None,
    help="A strict memzoi/capture-request-v1 JSON or YAML file (any of the four profiles; docs/memzoi.md).",
)
@click.option("--source-id", default=None, help="1-64 chars of [a-z0-9._-] (with --source; default source-1).")
@click.option("--source-bytes", default=None, help="The bytes of a supplied_bytes source: a file, or - for stdin.")
@click.option("--output", default=None, help="Also save the plan here (private plans: under .git/memzoi/local/ only).")
@json_option
@click.pass_context
def plan(
    ctx: click.Context,
    source: str | None,
    request_file: str | None,
    source_id: str | None,
    source_bytes: str | None,
    output: str | None,
    as_json: bool,
) -> None:
    """Plan a capture; reads the source and memory, writes no memory state. Exits 1 when the plan is blocked.

    Example: git memzoi capture plan --source notes/findings.md --source-id findings --json;
    git memzoi capture plan --request-file capture-request.yaml --json
    """
    from git_memzoi.memzoi import capture_artifacts, capture_markdown, capture_sources
    from git_memzoi.memzoi import capture_plan as core

    if (source is None) == (request_file is None):
        raise capture_markdown.CaptureError(
            "give exactly one of --source and --request-file", "invalid_capture_request"
        )
    if request_file is not None and source_id is not None:
        raise capture_markdown.CaptureError(
            "--source-id goes with --source; a request names its own sources", "invalid_capture_request"
        )
    if source_bytes is not None and request_file is None:
        raise capture_markdown.CaptureError("--source-bytes goes with --request-file", "invalid_capture_request")
    ws = open_workspace(ctx)
    if request_file is not None:
        request = capture_artifacts.read_request(given_path(ctx, request_file))
        artifact = core.plan_request(ws, request, capture_sources.bind_supplied(request, _bytes(ctx, source_bytes)))
    else:
        artifact = core.plan(ws, str(source), source_id or "source-1")
    _finish(ctx, ws, artifact, output, as_json)
    ctx.exit(1 if artifact["status"] == "blocked" else 0)  # the redacted plan is printed; the privacy gate refused it


@capture.command("review")
@click.option("--plan-file", required=True, help="The plan artifact.")
@click.option(
    "--decisions-file",
    required=True,
    help="A memzoi/capture-review-input-v1 JSON file: one decision per candidate (its shape: in the help above).",
)
@click.option("--reviewed-by", default=None, help="Who reviewed (default: git config user.name).")
@click.option("--reviewed-at", default=None, help="When, as an RFC 3339 time (default: now).")
@click.option("--prior-review-file", default=None, help="The review whose deferred decisions this one replaces.")
@click.option("--source-bytes", default=None, help="The supplied_bytes source again: a file, or - for stdin.")
@click.option("--output", default=None, help="Also save the review here (private reviews: under .git/memzoi/local/).")
@json_option
@click.pass_context
def review(
    ctx: click.Context,
    plan_file: str,
    decisions_file: str,
    reviewed_by: str | None,
    reviewed_at: str | None,
    prior_review_file: str | None,
    source_bytes: str | None,
    output: str | None,
    as_json: bool,
) -> None:
    """Record one decision per candidate (accept, reject, edit, defer); re-validates the plan, writes no memory.

    \b
    The decisions file (plan_id and candidate ids from the plan):
      {"schema": "memzoi/capture-review-input-v1", "plan_id": "capture_...",
       "decisions": [{"candidate_id": "...", "outcome": "accept"},
                     {"candidate_id": "...", "outcome": "reject", "reason_code": "not_durable"}]}
    An edit adds "memory" (the candidate's memory, changed) and "requested_destination".

    Example: git memzoi capture review --plan-file p.json --decisions-file d.json --output ../review.json --json
    """
    from git_memzoi.memzoi import capture_artifacts, capture_plan, capture_sources
    from git_memzoi.memzoi import capture_review as core

    ws = open_workspace(ctx)
    supplied = capture_artifacts.read_artifact(given_path(ctx, plan_file), capture_plan.PLAN_SCHEMA)
    decisions = capture_artifacts.read_artifact(given_path(ctx, decisions_file), core.REVIEW_INPUT_SCHEMA)
    artifact = core.review(
        ws,
        supplied,
        decisions,
        reviewed_by=reviewed_by,
        reviewed_at=reviewed_at,
        prior=_prior(ctx, prior_review_file),
        source_bytes=capture_sources.bind_supplied(supplied.get("request"), _bytes(ctx, source_bytes)),
    )
    _finish(ctx, ws, artifact, output, as_json, plan_file)


@capture.command("apply")
@click.option("--plan-file", required=True, help="The plan artifact.")
@click.option("--review-file", required=True, help="The review artifact.")
@click.option("--plan-id", required=True, help="The expected plan id (capture_…).")
@click.option("--review-id", required=True, help="The expected review id (review_…).")
@click.option("--prior-review-file", default=None, help="The prior review the review replaced deferrals of.")
@click.option("--source-bytes", default=None, help="The supplied_bytes source again: a file, or - for stdin.")
@actor_option
@json_option
@click.pass_context
def apply(
    ctx: click.Context,
    plan_file: str,
    review_file: str,
    plan_id: str,
    review_id: str,
    prior_review_file: str | None,
    source_bytes: str | None,
    actor: str | None,
    as_json: bool,
) -> None:
    """Write the accepted candidates (pending proposals, runtime records), or nothing when anything drifted.

    Example: git memzoi capture apply --plan-file p.json --review-file r.json --plan-id capture_… --review-id
    review_… --actor zoki --json
    """
    from git_memzoi.memzoi import capture_artifacts, capture_plan, capture_sources
    from git_memzoi.memzoi import capture_review as core

    ws = open_workspace(ctx, actor=actor)
    supplied_plan = capture_artifacts.read_artifact(given_path(ctx, plan_file), capture_plan.PLAN_SCHEMA)
    supplied_review = capture_artifacts.read_artifact(given_path(ctx, review_file), core.REVIEW_SCHEMA)
    result = core.apply(
        ws,
        supplied_plan,
        supplied_review,
        plan_id=plan_id,
        review_id=review_id,
        prior=_prior(ctx, prior_review_file),
        source_bytes=capture_sources.bind_supplied(supplied_plan.get("request"), _bytes(ctx, source_bytes)),
    )
    if as_json:
        emit_json(result)
        return
    click.echo(f"applied {review_id}: {len(result['writes'])} write(s)")
    for w in result["writes"]:
        click.echo(f"  {w['kind']}  {w.get('proposal_id') or w.get('record_id')}")
    pending = [w["proposal_id"] for w in result["writes"] if w["kind"] == "proposal_file" and w.get("proposal_id")]
    if pending:  # the proposal packets wait in pending/: what writes them as records
        click.echo(
            f"next: git memzoi apply {pending[0]}"
            + (f" (and {len(pending) - 1} more: git memzoi review)" if len(pending) > 1 else "")
        )


def register(cli: click.Group) -> None:
    """Add this area's commands to ``cli``."""
    cli.add_command(capture)
