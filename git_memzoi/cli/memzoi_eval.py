"""`git memzoi eval recall|capture`: run a trust corpus in disposable isolated state and gate on it.

Exit codes (seed "Recall evaluation"): 0 every gate passed and the baseline, if given, is compatible (recall) or
matches exactly (capture); 1 the report was printed but a gate or the baseline failed (or ``--update-baseline``
refused to write); 2 usage errors and invalid corpora or fixtures, with no report.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from git_memzoi.cli.app import json_option


@click.group("eval")
def eval_group() -> None:
    """Evaluate recall and capture quality; never opens or changes this project's memory."""


@eval_group.command("recall")
@click.option("--corpus", required=True, metavar="PATH", help="The memzoi-recall-corpus/v2 YAML file.")
@click.option("--baseline", metavar="PATH", help="A memzoi-recall-baseline/v1 JSON file to compare with.")
@click.option("--update-baseline", is_flag=True, help="Write the baseline (only when every threshold passed).")
@json_option
@click.pass_context
def recall(ctx: click.Context, corpus: str, baseline: str | None, update_baseline: bool, as_json: bool) -> None:
    """Run every case of a trust corpus against a fresh temporary project and report the metrics.

    Example: git memzoi eval recall --corpus evals/recall/corpus.yaml --baseline evals/recall/baseline.json
    """
    from git_memzoi.cli.memzoi import start_dir
    from git_memzoi.memzoi import eval_recall, eval_report

    if update_baseline and baseline is None:
        raise click.UsageError("--update-baseline requires --baseline", ctx=ctx)
    start = start_dir(ctx)
    result = eval_recall.run(start / Path(corpus), baseline=start / Path(baseline) if baseline else None,
                             update_baseline=update_baseline)  # fmt: skip
    if as_json:
        click.echo(json.dumps(result.report, indent=2, ensure_ascii=False))
    else:
        click.echo(eval_report.render_text(result.report))
    if update_baseline and not result.thresholds_passed:
        prog = ctx.find_root().info_name or "git-memzoi"
        click.echo(f"{prog}: error: a threshold failed, so the baseline was not written", err=True)
    ctx.exit(0 if result.passed else 1)


@eval_group.command("capture")
@click.option("--corpus", required=True, metavar="PATH", help="The memzoi-capture-corpus/v1 YAML file.")
@click.option("--baseline", metavar="PATH", help="A memzoi-capture-baseline/v1 JSON file to match exactly.")
@click.option("--update-baseline", is_flag=True, help="Write the baseline (only when every gate passed).")
@json_option
@click.pass_context
def capture(ctx: click.Context, corpus: str, baseline: str | None, update_baseline: bool, as_json: bool) -> None:
    """Run every capture case in its own temporary project: plan, review, apply, stale checks; report the metrics.

    Example: git memzoi eval capture --corpus evals/capture/corpus.yaml --baseline evals/capture/baseline.json
    """
    from git_memzoi.cli.memzoi import start_dir
    from git_memzoi.memzoi import eval_capture, eval_capture_report

    if update_baseline and baseline is None:
        raise click.UsageError("--update-baseline requires --baseline", ctx=ctx)
    start = start_dir(ctx)
    result = eval_capture.run(start / Path(corpus), baseline=start / Path(baseline) if baseline else None,
                              update_baseline=update_baseline)  # fmt: skip
    if as_json:
        click.echo(json.dumps(result.report, indent=2, ensure_ascii=False))
    else:
        click.echo(eval_capture_report.render_text(result.report))
    if update_baseline and not result.gates_passed:
        prog = ctx.find_root().info_name or "git-memzoi"
        click.echo(f"{prog}: error: a gate failed, so the baseline was not written", err=True)
    ctx.exit(0 if result.passed else 1)


def register(cli: click.Group) -> None:
    """Add ``eval recall`` and ``eval capture`` to the ``git memzoi`` group."""
    cli.add_command(eval_group)
