"""Shared CLI plumbing: the error → exit-code handler and the ``--json`` switch (DESIGN.md "Exit codes").

Every expected failure is a :class:`~git_memzoi.errors.MemzoiError`: one line on stderr, ``{"error": {...}}``
on stdout under ``--json``, exit 2. Anything else is a bug: one line, exit 3, a traceback only with
``MEMZOI_DEBUG=1``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import click

from git_memzoi.errors import ExitCode, MemzoiError

JSON_KEY = "memzoi.json"


class AppGroup(click.Group):
    """A click group whose commands' errors become one line and an exit code, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the subcommand, mapping errors through the one exit-code table."""
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except MemzoiError as exc:
            fail(ctx, exc.message, exc.code, int(exc.exit_code))
        except KeyboardInterrupt:
            fail(ctx, "interrupted", "interrupted", int(ExitCode.INTERRUPTED))
        except Exception as exc:
            if os.environ.get("MEMZOI_DEBUG"):
                raise
            message = f"internal error: {type(exc).__name__}: {exc} (MEMZOI_DEBUG=1 shows a traceback)"
            fail(ctx, message, "internal_error", int(ExitCode.INTERNAL))


def fail(ctx: click.Context, message: str, code: str, exit_code: int) -> None:
    """Report one error (stderr line; JSON object on stdout under ``--json``) and exit."""
    prog = ctx.find_root().info_name or "git-memzoi"
    click.echo(f"{prog}: error: {message}", err=True)
    if ctx.meta.get(JSON_KEY):
        click.echo(json.dumps({"error": {"code": code, "message": message, "exit_code": exit_code}}))
    ctx.exit(exit_code)


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--json``: print one JSON object on stdout; also makes errors JSON."""

    def remember(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
        ctx.meta[JSON_KEY] = value
        return value

    return click.option(
        "--json", "as_json", is_flag=True, callback=remember, expose_value=True, is_eager=True,
        help="Print one JSON object on stdout.",
    )(func)  # fmt: skip


def emit_json(payload: dict[str, Any]) -> None:
    """Print ``payload`` as one line of JSON (UTF-8, not ASCII-escaped)."""
    click.echo(json.dumps(payload, ensure_ascii=False, sort_keys=False))
