"""Shared CLI plumbing: the error → exit-code handler and the ``--json`` switch (DESIGN.md "Exit codes").

Every expected failure is a :class:`~git_memzoi.errors.MemzoiError`: one line on stderr, ``{"error": {...}}``
on stdout under ``--json``, exit 2. A usage error (an unknown command or option, a missing argument) is the
same one line, ending in where to find help: ``git-memkeep: error: No such command 'x'. (see git memkeep -h)``.
Anything else is a bug: one line, exit 3, a traceback only with ``MEMZOI_DEBUG=1``. A closed stdout (the
reader went away, as in ``git memzoi doctor | head -1``) ends the command quietly with 141, the status a shell
shows for a tool that SIGPIPE ended (git's own behaviour): no message, never "internal error".

Bad input is refused at this edge before any command runs (issue 13, "Exit 3 where exit 2 is right"): an argument
that is not UTF-8 or holds a NUL is ``invalid_argument``, and a path built from an argument that is longer than
the system allows (``ENAMETOOLONG``: a 5,000-character ``-C`` or id) is ``name_too_long``; both exit 2.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

import click

from git_memzoi.core import jsonout
from git_memzoi.errors import ExitCode, InputError, MemzoiError

JSON_KEY = "memzoi.json"
_ARGV_KEY = "memzoi.argv"
_ENVELOPE_KEY = "memzoi.envelope"  # this tool's --json objects carry "ok" (set by the root group)
_PENDING_KEY = "memzoi.pending_json"  # objects emit_json held back until the exit code is known


class AppGroup(click.Group):
    """A click group whose commands' errors become one line and an exit code, never a traceback.

    With ``json_envelope=True`` (``git memzoi``; not ``git memkeep``, whose JSON is upstream's schema) every
    object :func:`emit_json` prints carries ``"ok"`` first, true exactly when the command exits 0: the object is
    held until the command ends and printed then, the one place the rule is applied (docs/memzoi.md, "JSON
    output").
    """

    def __init__(self, *args: Any, json_envelope: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.json_envelope = json_envelope

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse the group's own options; a usage error is one line (and JSON under ``--json``)."""
        ctx.meta.setdefault(_ARGV_KEY, list(args))
        if self.json_envelope:
            ctx.meta[_ENVELOPE_KEY] = True
        if ctx.parent is None:
            _check_arguments(ctx, args)
        try:
            return super().parse_args(ctx, args)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            _usage_error(ctx, exc)
            raise  # not reached: _usage_error exits
        except BrokenPipeError:  # --help or --version into a closed pipe
            _closed_stdout(ctx)
            raise  # not reached: _closed_stdout exits

    def invoke(self, ctx: click.Context) -> Any:
        """Run the subcommand, mapping errors through the one exit-code table."""
        from git_memzoi.core.command import name_command

        name_command(self._command_words(ctx))  # how a lock timeout elsewhere names this process
        try:
            try:
                result = super().invoke(ctx)
            except click.exceptions.Exit as done:
                _flush_json(ctx, done.exit_code)
                raise
            _flush_json(ctx, 0)
            return result
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            _usage_error(ctx, exc)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except MemzoiError as exc:
            fail(ctx, exc.message, exc.code, int(exc.exit_code))
        except KeyboardInterrupt:
            fail(ctx, "interrupted", "interrupted", int(ExitCode.INTERRUPTED))
        except BrokenPipeError:
            _closed_stdout(ctx)
        except OSError as exc:
            if exc.errno != errno.ENAMETOOLONG:
                _internal(ctx, exc)
            # a path built from an argument (-C, --store, an id) longer than the system allows: bad input
            fail(
                ctx, f"a path is too long for this system: {_short(exc.filename)}", "name_too_long", int(ExitCode.USAGE)
            )
        except Exception as exc:
            _internal(ctx, exc)

    def _command_words(self, ctx: click.Context) -> str:
        """``git-memzoi proposal-files apply``: the program and the command names, never an argument."""
        words = [ctx.command_path]
        command: click.Command = self
        for word in [*getattr(ctx, "_protected_args", ()), *ctx.args]:
            sub = command.get_command(ctx, word) if isinstance(command, click.Group) else None
            if sub is None:
                break
            words.append(word)
            command = sub
        return " ".join(words)


class LazyGroup(AppGroup):
    """An :class:`AppGroup` whose subcommands are imported when first named (issue 17, "Start-up"): ``git memzoi
    search`` loads the recall commands only, not the capture, hook and integration modules beside them.

    ``lazy`` maps each command name to the module whose ``register(group)`` adds it; the map is checked against
    what the modules really register by ``tests/cli/test_lazy_commands.py``. ``after_load(group)`` runs after each
    module is loaded (the ``-C DIR`` option every command takes is added there).
    """

    def __init__(
        self,
        *args: Any,
        lazy: Mapping[str, str] | None = None,
        after_load: Callable[[click.Group], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})
        self.after_load = after_load
        self._loaded: set[str] = set()

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, loaded or not, sorted."""
        return sorted(set(self.commands) | set(self.lazy))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, importing the module that registers it on first use."""
        module = self.lazy.get(cmd_name)
        if cmd_name not in self.commands and module is not None:
            self.load(module)
        return self.commands.get(cmd_name)

    def load(self, module: str) -> None:
        """Import ``module`` and let it register its commands here (once)."""
        if module in self._loaded:
            return
        import importlib

        self._loaded.add(module)
        importlib.import_module(module).register(self)
        if self.after_load is not None:
            self.after_load(self)

    def load_all(self) -> None:
        """Load every lazy module (the man-page generator and the help command list all commands)."""
        for module in sorted(set(self.lazy.values())):
            self.load(module)


def _internal(ctx: click.Context, exc: Exception) -> None:
    """A bug: one line, exit 3 (``MEMZOI_DEBUG=1`` re-raises it for the traceback)."""
    if os.environ.get("MEMZOI_DEBUG"):
        raise exc
    message = f"internal error: {type(exc).__name__}: {exc} (MEMZOI_DEBUG=1 shows a traceback)"
    fail(ctx, message, "internal_error", int(ExitCode.INTERNAL))


def _short(value: object, limit: int = 80) -> str:
    """``value`` quoted on one line, cut to ``limit`` characters (a 5,000-character id is not echoed whole)."""
    text = os.fsdecode(value) if isinstance(value, (str, bytes)) else str(value)
    return repr(text[:limit]) + ("…" if len(text) > limit else "")


def _check_arguments(ctx: click.Context, args: list[str]) -> None:
    """Refuse an argument that is not text: bytes that are not UTF-8 (Python hands them on as lone surrogates,
    which every later write failed on with UnicodeEncodeError, exit 3) or a NUL (possible in-process only)."""
    for n, arg in enumerate(args, 1):
        problem = "holds a NUL character" if "\0" in arg else None
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            problem = "is not valid UTF-8"
        if problem:
            _json_if_asked(ctx, args)
            fail(ctx, f"argument {n} {problem}: {_short(arg)}", "invalid_argument", int(ExitCode.USAGE))


def environment(name: str) -> str | None:
    """The value of the environment variable ``name`` (``None`` when unset or empty), refused when it is not
    UTF-8: a path from ``MEMKEEP_STORE`` with such bytes failed the first message or write (exit 3).

    Raises:
        InputError: ``invalid_environment``, naming the variable.
    """
    value = os.environ.get(name) or None
    if value is not None:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"{name} is not valid UTF-8: {_short(value, 40)}", "invalid_environment") from None
    return value


def _json_if_asked(ctx: click.Context, argv: list[str]) -> None:
    """Make the error JSON when ``--json`` was given: the parse stopped before its callback could say so."""
    if "--json" in (argv[: argv.index("--")] if "--" in argv else argv):
        ctx.meta[JSON_KEY] = True


def _closed_stdout(ctx: click.Context) -> None:
    """The reader of stdout went away: exit 141 (128 + SIGPIPE) without a word, like git or ``cat`` would."""
    _detach_stdout()
    ctx.exit(int(ExitCode.BROKEN_PIPE))


def _detach_stdout() -> None:
    # Python flushes sys.stdout once more at exit; into the closed pipe that prints "Exception ignored ...
    # BrokenPipeError" and turns the status into 120. Pointing the descriptor at /dev/null makes that flush a
    # no-op (the recipe of the Python docs, "Note on SIGPIPE").
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # an in-memory stdout (click's CliRunner) has no descriptor
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _usage_error(ctx: click.Context, exc: click.UsageError) -> None:
    """Report a click usage error as one line naming where help is, exit 2."""
    where = exc.ctx or ctx
    path = where.command_path
    if path.startswith("git-"):  # run as `git memkeep`, where `--help` asks git for a man page
        path = "git " + path[len("git-") :]
    names = where.command.get_help_option_names(where)
    hint = f" (see {path} {min(names, key=len)})" if names else ""
    _json_if_asked(ctx, ctx.meta.get(_ARGV_KEY, []))
    # click lays a list of choices out on indented lines ("Choose from:\n\tokf,\n\t..."): one line reads them
    message = exc.format_message().replace(":\n\t", ": ").replace(",\n\t", ", ")
    fail(ctx, message + hint, "bad_usage", int(ExitCode.USAGE))


def add_help_command(group: click.Group) -> None:
    """Add ``help [COMMAND]``: the help text without ``--help``, which ``git <cmd> --help`` turns into ``man``."""

    @group.command("help")
    @click.argument("names", nargs=-1, metavar="[COMMAND]")
    @click.pass_context
    def help_command(ctx: click.Context, names: tuple[str, ...]) -> None:
        """Show the help of the tool, or of one command.

        Example: git memkeep help status
        """
        target: click.Command = group
        target_ctx = ctx.parent or ctx
        for name in names:
            sub = target.get_command(target_ctx, name) if isinstance(target, click.Group) else None
            if sub is None:
                raise click.UsageError(f"No such command {name!r}.", ctx=target_ctx)
            target, target_ctx = sub, click.Context(sub, info_name=name, parent=target_ctx)
        click.echo(target_ctx.get_help())


def accept_directory_anywhere(group: click.Group) -> None:
    """Give every command below ``group`` a ``-C DIR`` of its own, so ``git memzoi search salt -C DIR`` works as
    ``git memzoi -C DIR search salt`` does (memkeep accepts it both ways; issue 20). The option only sets the root
    context's ``directory``, which :func:`git_memzoi.cli.workspace.start_dir` reads; given after the subcommand,
    it wins over one given before."""

    def remember(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value is not None:
            root = ctx.find_root()
            root.obj = {**(root.obj or {}), "directory": value}

    def add(command: click.Command) -> None:
        if not any("-C" in p.opts for p in command.params):
            option = click.Option(
                ["-C", "directory_after"],
                metavar="DIR",
                type=click.Path(file_okay=False),
                expose_value=False,
                callback=remember,
                help="Run as if started in DIR (also accepted before the command).",
            )
            command.params.append(option)
        if isinstance(command, click.Group):
            for sub in command.commands.values():
                add(sub)

    for command in group.commands.values():
        add(command)


def one_line(message: str) -> str:
    """``message`` with its line breaks and other control characters escaped (``\\n``), so an error always stays
    the one line the exit-code contract promises, whatever path or value it names (``MEMKEEP_STORE=$'\\n'``)."""
    if message.isprintable():
        return message
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in message)


def fail(ctx: click.Context, message: str, code: str, exit_code: int) -> None:
    """Report one error (stderr line; JSON object on stdout under ``--json``) and exit.

    The error object replaces anything the command had emitted but not yet printed; under the envelope rule it
    is ``{"ok": false, "error": {code, message, exit_code}}``.
    """
    prog = ctx.find_root().info_name or "git-memzoi"
    click.echo(f"{prog}: error: {one_line(message)}", err=True)
    ctx.meta.pop(_PENDING_KEY, None)
    if ctx.meta.get(JSON_KEY):
        error: dict[str, Any] = {"error": {"code": code, "message": message, "exit_code": exit_code}}
        if ctx.meta.get(_ENVELOPE_KEY):
            error = {"ok": False, **error}
        try:
            click.echo(jsonout.dumps(error, ascii_only=True))
        except BrokenPipeError:  # the error stands; only its JSON copy had no reader
            _detach_stdout()
    ctx.exit(exit_code)


MAX_ID_CHARS = 400  # the longest concept id (memzoi/records/okf.py MAX_ID_CHARS); no id of any store is longer


class IdType(click.ParamType):  # type: ignore[type-arg]  # generic only from click 8.2; 8.1 is supported
    """An id on the command line (a record, entry, proposal or checkpoint id): one line of at most
    :data:`MAX_ID_CHARS` characters. Anything else is refused before any lookup (``invalid_id``, exit 2): a
    5,000-character id named a file no system allows, and every message echoed it whole."""

    name = "id"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        """``value`` unchanged when it is a bounded one-line id.

        Raises:
            InputError: ``invalid_id``, naming the parameter and the start of the value.
        """
        text = str(value)
        label = _label(param)
        if len(text) > MAX_ID_CHARS:
            raise InputError(f"{label} is longer than {MAX_ID_CHARS} characters: {_short(text, 40)}", "invalid_id")
        if not text.isprintable():
            raise InputError(f"{label} holds a line break or control character: {_short(text, 40)}", "invalid_id")
        return text


ID = IdType()


def _label(param: click.Parameter | None) -> str:
    """How a message names ``param``: ``--from-checkpoint``, ``RECORD_ID``, ``ID``."""
    if isinstance(param, click.Option):
        return param.opts[0]
    if param is None:
        return "ID"
    return (param.metavar or (param.name or "id").upper()).strip("[]")


def actor_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--actor``: who acts, recorded in packets, records and the event log (default ``cli``)."""
    return click.option("--actor", default=None, help="Who acts (recorded in packets and events; default cli).")(func)


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--json``: print one JSON object on stdout; also makes errors JSON."""

    def remember(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
        ctx.meta[JSON_KEY] = value
        return value

    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        callback=remember,
        expose_value=True,
        is_eager=True,
        help="Print one JSON object on stdout.",
    )(func)


def emit_json(payload: Mapping[str, Any], *, indent: int | None = None) -> None:
    """Print ``payload`` as one JSON object (one line unless ``indent``; UTF-8, not ASCII-escaped).

    Under ``git memzoi`` the object is printed when the command ends, with ``"ok"`` as its first key: true exactly
    when the exit code is 0 (a value the payload gave ``ok`` is replaced). Elsewhere it is printed at once as is.
    Documents that are not results (the ``.mcp.json`` of ``mcp config``) use :func:`emit_document`.
    """
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.meta.get(_ENVELOPE_KEY):
        ctx.meta.setdefault(_PENDING_KEY, []).append((payload, indent))
        return
    click.echo(jsonout.dumps(payload, indent=indent))


def emit_document(payload: Mapping[str, Any]) -> None:
    """Print ``payload`` as JSON exactly as given, at once: a file's content (``mcp config``), not a result."""
    click.echo(jsonout.dumps(payload))


def envelope(payload: Mapping[str, Any], exit_code: int) -> dict[str, Any]:
    """``payload`` with ``"ok": exit_code == 0`` as its first key (any ``ok`` it had is replaced)."""
    return {"ok": exit_code == 0, **{key: value for key, value in payload.items() if key != "ok"}}


def _flush_json(ctx: click.Context, exit_code: int | None) -> None:
    """Print what :func:`emit_json` held back, each object under the envelope rule for ``exit_code``."""
    for payload, indent in ctx.meta.pop(_PENDING_KEY, ()):
        click.echo(jsonout.dumps(envelope(payload, exit_code or 0), indent=indent))
