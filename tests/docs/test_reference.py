"""The command reference in docs/ matches the two click command trees, both ways.

The convention, checked here:

- A command is documented by its *entries*. An entry is a Markdown block that begins by naming the command's
  full path in code: a heading, a list item, a table row (its first cell) or a paragraph whose first code span
  starts with ``git memzoi capture plan`` (words may come before that span, another code span may not), or a
  line of a fenced code block that starts with it (after an optional ``$``; ``\\``-continued lines join).
  A path names the longest command it spells: ``git memzoi capture plan --source x.md`` names
  ``git memzoi capture plan``, not ``git memzoi capture``.
- An entry covers its block; a heading's entry covers its whole section, down to the next heading of the
  same or a higher level.
- Every command that ``--help`` lists has an entry in docs/*.md (a group may have its entries through its
  commands': ``git memzoi local add`` spells ``git memzoi local`` too), and every option its ``--help`` lists
  appears as ``--option`` (``-C`` for a short-only one) in one of its own entries. An option a command shares
  with its group (memkeep's ``--store``, ``--store-dir``, ``-C``) is checked once, on the group. Hidden
  commands and ``-h``/``--help`` are exempt.
- The other way round, docs/*.md, README.md and CONTRIBUTING.md name, in code, no ``git memzoi X`` or
  ``git memkeep X`` (nor ``git-memzoi X``) command that does not exist, and no option after a command that
  the command does not have.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from git_memzoi.cli import memkeep
from git_memzoi.cli.memzoi import cli as memzoi_cli

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = sorted((ROOT / "docs").glob("*.md"))
MENTIONS = [*REFERENCE, *(p for p in (ROOT / "README.md", ROOT / "CONTRIBUTING.md") if p.is_file())]
HELP = {"-h", "--help"}


# ------------------------------------------------------------------------------------------------ the commands


@dataclass
class Command:
    """One node of a click tree: its full path, the options ``--help`` lists, its subcommands."""

    path: str
    options: list[str]
    hidden: bool
    inherited: set[str] = field(default_factory=set)
    subcommands: dict[str, Command] = field(default_factory=dict)

    @property
    def own_options(self) -> list[str]:
        return [o for o in self.options if o not in self.inherited]


def option_name(param: click.Option) -> str:
    """The option's long name (``--plan-file``), or its short one when it has no long one (``-C``)."""
    names = [*param.opts, *param.secondary_opts]
    return next((n for n in names if n.startswith("--")), names[0])


def walk(
    command: click.Command, path: str, parent: click.Context | None = None, inherited: frozenset[str] = frozenset()
) -> Command:
    """The tree below ``command``, with the options each ``--help`` lists (``--help`` itself left out)."""
    # The command's own context settings, as click's make_context would apply them: a command caches its help
    # option on first use, so a context without them would leave `-h` broken for every later caller.
    ctx = click.Context(command, info_name=path.rsplit(" ", 1)[-1], parent=parent, **command.context_settings)
    listed = [p for p in command.get_params(ctx) if isinstance(p, click.Option) and p.get_help_record(ctx)]
    options = [option_name(p) for p in listed if not HELP & {*p.opts, *p.secondary_opts}]
    node = Command(path, options, command.hidden, set(options) & inherited)
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None
            node.subcommands[name] = walk(sub, f"{path} {name}", ctx, inherited | set(options))
    return node


ROOTS = {"git memzoi": walk(memzoi_cli, "git memzoi"), "git memkeep": walk(memkeep.cli, "git memkeep")}


def every_command(node: Command | None = None) -> Iterator[Command]:
    for top in [node] if node else ROOTS.values():
        yield top
        for sub in top.subcommands.values():
            yield from every_command(sub)


def documented_commands() -> list[Command]:
    """What ``--help`` shows: every command that is not hidden and does not sit below a hidden one."""

    def visible(node: Command) -> Iterator[Command]:
        if not node.hidden:
            yield node
            for sub in node.subcommands.values():
                yield from visible(sub)

    return [c for top in ROOTS.values() for c in visible(top)]


# ------------------------------------------------------------------------------------------------ the docs

ROOT_NAME = re.compile(r"(?<![\w/.-])git[ -](memzoi|memkeep)(?![\w-])")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
WORD = re.compile(r"[a-z][a-z0-9-]*")
OPTION = re.compile(r"--?[A-Za-z][\w-]*")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
LIST_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s+")
COMMENT = re.compile(r"(?:^|\s)#")
CELL = re.compile(r"(?<!\\)\|")  # a table cell ends at a pipe that is not escaped


@dataclass
class Block:
    """A piece of a Markdown file: ``kind`` is heading, item, row, paragraph or code; ``text`` its lines."""

    kind: str
    path: Path
    line: int
    text: str
    level: int = 0

    @property
    def where(self) -> str:
        name = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path.name
        return f"{name}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """Split a Markdown file into headings, list items, table rows, paragraphs and code-block lines."""
    found: list[Block] = []
    current: Block | None = None
    fenced = False
    for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced, current = not fenced, None
        elif fenced:
            if current and current.kind == "code" and current.text.endswith("\\"):
                current.text = current.text[:-1] + " " + line.strip()
            else:
                current = Block("code", path, number, line.strip())
                found.append(current)
        elif not line.strip():
            current = None
        elif heading := HEADING.match(line):
            found.append(Block("heading", path, number, heading.group(2), level=len(heading.group(1))))
            current = None
        elif line.lstrip().startswith("|"):
            found.append(Block("row", path, number, line))
            current = None
        elif LIST_ITEM.match(line):
            current = Block("item", path, number, line)
            found.append(current)
        elif current and current.kind in ("item", "paragraph"):
            current.text += "\n" + line
        else:
            current = Block("paragraph", path, number, line)
            found.append(current)
    return found


def resolve(text: str) -> tuple[Command, list[str]] | None:
    """The command a text starting with ``git memzoi …`` names, and the words after it; None for no command.

    An unknown word where a group expects a subcommand is returned as the first remaining word.
    """
    words = text.split()
    if words[:2] in (["git", "memzoi"], ["git", "memkeep"]):
        node, rest = ROOTS[" ".join(words[:2])], words[2:]
    elif words[:1] in (["git-memzoi"], ["git-memkeep"]):
        node, rest = ROOTS[words[0].replace("-", " ")], words[1:]
    else:
        return None
    while rest and node.subcommands and rest[0] in node.subcommands:
        node, rest = node.subcommands[rest[0]], rest[1:]
    return node, rest


def first_code(block: Block) -> str | None:
    """The code a block begins with: the whole line of a code block, else its first code span."""
    if block.kind == "code":
        return block.text.removeprefix("$ ")
    text = CELL.split(block.text)[1] if block.kind == "row" else block.text  # a row's first cell
    span = CODE_SPAN.search(text)
    return " ".join(span.group(2).split()) if span else None


def entries(paths: list[Path] = REFERENCE) -> dict[str, list[str]]:
    """Full command path → the text of each of its entries in docs/*.md."""
    found: dict[str, list[str]] = {}
    for path in paths:
        parts = blocks(path)
        for i, block in enumerate(parts):
            code = first_code(block)
            named = resolve(code) if code and code.startswith("git") else None
            if named is None:
                continue
            text = block.text
            if block.kind == "heading":
                section = [block]
                for later in parts[i + 1 :]:
                    if later.kind == "heading" and later.level <= block.level:
                        break
                    section.append(later)
                text = "\n".join(b.text for b in section)
            found.setdefault(named[0].path, []).append(text)
    return found


def mentioned(option: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


# ------------------------------------------------------------------------------------------------ the checks


def has_entry(command: Command, found: dict[str, list[str]]) -> bool:
    """A command has an entry of its own; a group may instead have one through any of its commands."""
    return command.path in found or any(has_entry(sub, found) for sub in command.subcommands.values())


def missing_commands(commands: list[Command], found: dict[str, list[str]]) -> list[str]:
    return [c.path for c in commands if not has_entry(c, found)]


def missing_options(commands: list[Command], found: dict[str, list[str]]) -> list[str]:
    gaps = []
    for command in commands:
        if not has_entry(command, found):
            continue  # reported as a missing command
        texts = found.get(command.path, [])
        absent = [o for o in command.own_options if not any(mentioned(o, t) for t in texts)]
        if absent:
            gaps.append(f"{command.path}: {', '.join(absent)}")
    return gaps


def code_texts(path: Path) -> Iterator[tuple[Block, str]]:
    """Every piece of code in a Markdown file: each code-block line and each code span, with its block."""
    for block in blocks(path):
        if block.kind == "code":
            yield block, COMMENT.split(block.text)[0]  # a shell or YAML comment is prose
        else:
            for span in CODE_SPAN.finditer(block.text):
                yield block, " ".join(span.group(2).split())


def mentions() -> Iterator[tuple[Block, Command, list[str]]]:
    """Each ``git memzoi …`` named in code, as (block, the command it names, the words after it)."""
    for path in MENTIONS:
        for block, code in code_texts(path):
            for start in ROOT_NAME.finditer(code):
                named = resolve(code[start.start() :])
                if named:
                    yield block, *named


def unknown_commands() -> list[str]:
    found = []
    for block, command, rest in mentions():
        word = rest[0].rstrip(".,;:)'\"") if rest else ""
        if command.subcommands and WORD.fullmatch(word):
            found.append(f"{block.where}: `{command.path} {word}` (no such command)")
    return found


def unknown_options() -> list[str]:
    found = []
    for block, command, rest in mentions():
        if command.subcommands:  # a group: what follows is a subcommand (checked above) or a global option
            continue
        known = {*command.options, *command.inherited, *HELP}
        for i, word in enumerate(rest):
            after = rest[i + 1] if i + 1 < len(rest) else ""
            piped = word == "|" and not after.startswith("-")
            if word in ("&&", "||", ";", ">", "2>", "<") or piped:
                break  # a redirection or another command (`| head`, not `--task T | --path P`): not this one's
            option = OPTION.match(word.lstrip("[("))
            if option and option.group() not in known:
                found.append(f"{block.where}: `{command.path}` has no option {option.group()}")
            if word.endswith(";"):  # `… --hook Stop; else …`: the next word starts another command
                break
    return found


def report(title: str, items: list[str]) -> str:
    return title + "\n  " + "\n  ".join(items)


def test_the_walk_sees_both_trees() -> None:
    paths = {c.path for c in every_command()}
    assert {"git memzoi capture plan", "git memkeep verify", "git memzoi hook run"} <= paths
    plan = ROOTS["git memzoi"].subcommands["capture"].subcommands["plan"]
    assert "--source-bytes" in plan.options and "--help" not in plan.options
    for tree in (memkeep.cli, memzoi_cli):  # walking the trees left their help options as they were
        assert CliRunner().invoke(tree, ["capture" if tree is memzoi_cli else "lint", "-h"]).exit_code == 0
    assert ROOTS["git memkeep"].subcommands["status"].own_options == ["--json", "--hook", "--format"]


def test_every_command_has_an_entry() -> None:
    missing = missing_commands(documented_commands(), entries())
    assert not missing, report(
        "commands without an entry in docs/*.md (a heading, list item, table row or paragraph whose first code "
        "span starts with the command, or a code-block line that does):",
        missing,
    )


def test_every_option_appears_in_an_entry_of_its_command() -> None:
    missing = missing_options(documented_commands(), entries())
    assert not missing, report("options --help lists that no entry of their command in docs/*.md names:", missing)


def test_docs_name_no_command_that_does_not_exist() -> None:
    unknown = unknown_commands()
    assert not unknown, report("docs name commands that do not exist:", unknown)


def test_docs_name_no_option_a_command_does_not_have() -> None:
    unknown = unknown_options()
    assert not unknown, report("docs give commands options they do not have:", unknown)


@pytest.mark.parametrize(
    ("markdown", "commands", "options"),
    [
        ("## `git memkeep lint`\n\n`--fix` and `--json`.\n", [], []),
        ("## `git memkeep lint`\n\n`--fix`.\n\n# Other\n\n`--json`\n", [], ["git memkeep lint: --json"]),
        ("| `git memkeep lint [--json]` | x |\n| `y` | `--fix` |\n", [], ["git memkeep lint: --fix"]),
        ("- see `git memkeep lint --fix --json`\n", [], []),
        ("- `other` and `git memkeep lint --fix --json`\n", ["git memkeep lint"], []),
        ("```\n$ git memkeep lint --fix \\\n    --json\n```\n", [], []),
        ("`git memkeep status --json`\n", ["git memkeep lint"], []),
    ],
    ids=[
        "heading-section",
        "section-ends-at-a-higher-heading",
        "table-row",
        "words-before-the-span",
        "another-span-first",
        "continued-code-line",
        "another-command",
    ],
)
def test_the_convention_finds_what_is_missing(
    tmp_path: Path, markdown: str, commands: list[str], options: list[str]
) -> None:
    doc = tmp_path / "x.md"
    doc.write_text(markdown, "utf-8")
    lint = [ROOTS["git memkeep"].subcommands["lint"]]
    assert missing_commands(lint, entries([doc])) == commands
    assert missing_options(lint, entries([doc])) == options
