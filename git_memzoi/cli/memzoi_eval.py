"""`git memzoi eval recall|capture`: run a trust corpus in disposable isolated state and gate on it.

Exit codes (seed "Recall evaluation"): 0 every gate passed and the baseline, if given, is compatible (recall) or
matches exactly (capture); 1 the report was printed but a gate or the baseline failed (or ``--update-baseline``
refused to write); 2 usage errors and invalid corpora or fixtures, with no report.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from git_memzoi.cli.app import emit_json, json_option


@click.group("eval")
def eval_group() -> None:
    """Evaluate recall and capture quality; never opens or changes this project's memory."""


def _options(kind: str, baseline_help: str, gate: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The options every ``eval`` command shares."""

    def wrap(func: Callable[..., None]) -> Callable[..., None]:
        func = json_option(func)
        func = click.option(
            "--update-baseline", is_flag=True, help=f"Write the baseline (only when every {gate} passed)."
        )(func)
        func = click.option("--baseline", metavar="PATH", help=baseline_help)(func)
        return click.option("--corpus", required=True, metavar="PATH", help=f"The {kind} YAML file.")(func)

    return wrap


def _run(
    ctx: click.Context,
    run: Callable[..., Any],
    render: Callable[[Any], str],
    gate: str,
    corpus: str,
    baseline: str | None,
    update_baseline: bool,
    as_json: bool,
) -> None:
    """Run one evaluation, print its report (JSON or text) and exit 0 (passed) or 1."""
    from git_memzoi.cli.workspace import start_dir

    if update_baseline and baseline is None:
        raise click.UsageError("--update-baseline requires --baseline", ctx=ctx)
    start = start_dir(ctx)
    result = run(
        start / Path(corpus), baseline=start / Path(baseline) if baseline else None, update_baseline=update_baseline
    )
    if as_json:
        emit_json(result.report, indent=2)
    else:
        click.echo(render(result.report))
    if update_baseline and not result.baseline_written:
        prog = ctx.find_root().info_name or "git-memzoi"
        click.echo(f"{prog}: error: a {gate} failed, so the baseline was not written", err=True)
    ctx.exit(0 if result.passed else 1)


@eval_group.command("recall")
@_options("memzoi-recall-corpus/v2", "A memzoi-recall-baseline/v1 JSON file to compare with.", "threshold")
@click.pass_context
def recall(ctx: click.Context, corpus: str, baseline: str | None, update_baseline: bool, as_json: bool) -> None:
    """Run every case of a trust corpus against a fresh temporary project and report the metrics.

    Example: git memzoi eval recall --corpus evals/recall/corpus.yaml --baseline evals/recall/baseline.json
    """
    from git_memzoi.memzoi import eval_recall, eval_report

    _run(ctx, eval_recall.run, eval_report.render_text, "threshold", corpus, baseline, update_baseline, as_json)


@eval_group.command("capture")
@_options("memzoi-capture-corpus/v1", "A memzoi-capture-baseline/v1 JSON file to match exactly.", "gate")
@click.pass_context
def capture(ctx: click.Context, corpus: str, baseline: str | None, update_baseline: bool, as_json: bool) -> None:
    """Run every capture case in its own temporary project: plan, review, apply, stale checks; report the metrics.

    Example: git memzoi eval capture --corpus evals/capture/corpus.yaml --baseline evals/capture/baseline.json
    """
    from git_memzoi.memzoi import eval_capture, eval_capture_report

    _run(ctx, eval_capture.run, eval_capture_report.render_text, "gate", corpus, baseline, update_baseline, as_json)


def register(cli: click.Group) -> None:
    """Add ``eval recall`` and ``eval capture`` to the ``git memzoi`` group."""
    cli.add_command(eval_group)
