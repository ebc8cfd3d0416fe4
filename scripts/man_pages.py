"""Write the man pages ``man/git-memzoi.1`` and ``man/git-memkeep.1`` from the click commands (``make man``),
and the top-level help texts the console scripts print without importing click (``resources/help/``).

``git memzoi --help`` is turned by git into ``man git-memzoi``, so each tool ships one page holding every
subcommand with its options, help text and examples. click-man writes one page per subcommand, so this small
generator walks click's own command tree instead; it is a development script, never a runtime dependency.
Run ``python scripts/man_pages.py`` to rewrite the pages, ``--check`` to fail when they are out of step.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
_ASCII = {"…": "...", "→": "->", "←": "<-", "×": "x", "—": "\\-\\-", "–": "\\-", "‘": "'", "’": "'", "“": '"', "”": '"'}
PAGES = {"git-memzoi": "git_memzoi.cli.memzoi", "git-memkeep": "git_memzoi.cli.memkeep"}


def escape(text: str) -> str:
    """``text`` as roff body text: backslashes and hyphens escaped, a leading ``.`` or ``'`` guarded by ``\\&``."""
    out = text.replace("\\", "\\e").replace("-", "\\-")
    # man renders in the C locale too: typographic characters become plain ASCII that every device has
    for char, plain in _ASCII.items():
        out = out.replace(char, plain)
    lines = [("\\&" + line) if line.startswith((".", "'")) else line for line in out.split("\n")]
    return "\n".join(lines)


def _paragraphs(help_text: str) -> list[str]:
    """The blank-line separated paragraphs of a click help text, each joined to one line."""
    text = click.unstyle(help_text or "").split("\f")[0]
    blocks = [" ".join(line.strip() for line in block.splitlines()) for block in text.strip().split("\n\n")]
    return [b for b in blocks if b]


def _options(ctx: click.Context, command: click.Command) -> list[str]:
    out: list[str] = []
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None or getattr(param, "hidden", False):
            continue
        out += [".TP", f"\\fB{escape(record[0])}\\fR", escape(record[1] or "")]
    return out


def _walk(ctx: click.Context, command: click.Command, path: list[str]) -> list[str]:
    """The ``.SS`` section of ``command`` and of every command below it, in name order."""
    out: list[str] = []
    if path:
        out += [f".SS {escape(' '.join(path))}", ".B " + escape(" ".join([ctx.find_root().info_name or "", *path]))]
        out[-1] += " " + escape(" ".join(command.collect_usage_pieces(ctx)))
        for block in _paragraphs(command.help or ""):
            out += [".PP", escape(block)]
        out += _options(ctx, command)
    if isinstance(command, click.Group):
        for name in sorted(command.list_commands(ctx)):
            sub = command.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            out += _walk(_context(sub, name, ctx), sub, [*path, name])
    return out


def _context(command: click.Command, name: str, parent: click.Context | None) -> click.Context:
    """The context a real run gives ``command``: its ``context_settings`` applied (``-h`` beside ``--help``), as
    click's ``make_context`` does; a bare ``click.Context`` skips them, and the page then depended on which
    commands had already run in the process (click keeps each command's help option once made)."""
    return command.make_context(name, [], parent=parent, resilient_parsing=True)


def render(name: str, cli: click.Command, version: str) -> str:
    """The roff source of the man page of the tool ``name`` (section 1) whose root command is ``cli``."""
    ctx = _context(cli, name, None)
    summary = _paragraphs(cli.help or "")
    lines = [
        f'.TH {escape(name.upper())} 1 "" "{escape(name)} {version}" "git-memzoi manual"',
        ".SH NAME",
        f"{escape(name)} \\- {escape(summary[0] if summary else name)}",
        ".SH SYNOPSIS",
        f".B {escape(name)}",
        "[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]...",
        ".SH DESCRIPTION",
    ]
    for block in summary[1:]:
        lines += [".PP", escape(block)]
    lines += [".PP", escape(f"Run as git {name.removeprefix('git-')} COMMAND; -h prints a command's help.")]
    lines += [".SH OPTIONS", *_options(ctx, cli), ".SH COMMANDS", *_walk(ctx, cli, [])]
    return "\n".join(lines) + "\n"


def help_text(name: str, cli: click.Command) -> str:
    """The top-level help click prints for ``name --help`` on a terminal of 80 columns or more (click caps help
    at 78 characters), which the console script answers without importing click (git_memzoi/cli/entry.py)."""
    ctx = cli.make_context(name, [], resilient_parsing=True, terminal_width=78)
    return ctx.get_help() + "\n"


def pages() -> dict[Path, str]:
    """Each committed generated file's path → its text as the commands give it now: the man pages and the
    stored top-level help texts (``git_memzoi/resources/help/<tool>.txt``)."""
    import importlib

    from git_memzoi import __version__

    out: dict[Path, str] = {}
    for name, module in PAGES.items():
        cli = importlib.import_module(module).cli
        out[ROOT / "man" / f"{name}.1"] = render(name, cli, __version__)
        out[ROOT / "git_memzoi" / "resources" / "help" / f"{name}.txt"] = help_text(name, cli)
    return out


def main(argv: list[str]) -> int:
    """Rewrite the pages (exit 0), or with ``--check`` report the ones out of step (exit 1)."""
    stale = [path for path, text in pages().items() if not path.is_file() or path.read_text("utf-8") != text]
    if "--check" in argv:
        for path in stale:
            print(f"{path.relative_to(ROOT)} is out of step with the commands: run make man", file=sys.stderr)
        return 1 if stale else 0
    for path, text in pages().items():
        path.write_text(text, "utf-8")  # a development script writing its own output, not memory
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
