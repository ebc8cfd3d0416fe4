"""Commands load lazily and the console scripts answer ``--help``/``--version`` without click (issue 17,
"Start-up": ``--help`` ≤ 40 ms; the timing is measured in ``evals/bench/startup.py``, never here)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import click
import pytest

from git_memzoi.cli import entry
from git_memzoi.cli.memzoi import LAZY
from tests.support.repos import Repo

SCRIPTS = {"git-memzoi": "memzoi", "git-memkeep": "memkeep"}


def test_the_lazy_map_names_exactly_what_each_module_registers() -> None:
    registered: dict[str, str] = {}
    for module in sorted(set(LAZY.values())):
        group = click.Group("probe")
        importlib.import_module(module).register(group)
        registered.update(dict.fromkeys(group.commands, module))
    assert registered == LAZY


def _python(code: str, *args: str, columns: str = "100") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": columns}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=False)


def test_naming_one_command_loads_only_its_own_module() -> None:
    code = (
        "import sys\nfrom git_memzoi.cli.memzoi import cli\nimport click\n"
        "cli.get_command(click.Context(cli), 'search')\n"
        "print(sorted(m for m in sys.modules if m.startswith('git_memzoi.cli.memzoi_')))"
    )
    assert _python(code).stdout.strip() == "['git_memzoi.cli.memzoi_recall']"


@pytest.mark.parametrize("prog", sorted(SCRIPTS))
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_stored_help_is_what_click_prints_at_full_width(prog: str, flag: str) -> None:
    module = "memzoi" if prog == "git-memzoi" else "memkeep"
    by_click = _python(f"from git_memzoi.cli.{module} import main; main()", flag)
    assert by_click.returncode == 0
    assert entry.stored_help(prog) == by_click.stdout


@pytest.mark.parametrize("prog", sorted(SCRIPTS))
def test_the_console_script_answers_help_and_version_without_importing_click(prog: str) -> None:
    code = (
        "import sys\nfrom git_memzoi.cli import entry\nsys.argv = ['x', sys.argv[1]]\n"
        f"try:\n    entry.{SCRIPTS[prog]}()\nexcept SystemExit as exc:\n"
        "    print('click' in sys.modules, exc.code, file=sys.stderr)"
    )
    helped = _python(code, "--help")
    assert (helped.stdout, helped.stderr) == (entry.stored_help(prog), "False 0\n")
    from git_memzoi import __version__

    version = _python(code, "--version")
    assert (version.stdout, version.stderr) == (f"{prog}, version {__version__}\n", "False 0\n")


def test_a_narrow_terminal_gets_click_s_own_layout() -> None:
    code = "import sys\nfrom git_memzoi.cli import entry\nsys.argv = ['x', '--help']\nentry.memzoi()"
    narrow = _python(code, columns="60")
    by_click = _python("from git_memzoi.cli.memzoi import main; main()", "--help", columns="60")
    assert narrow.returncode == 0 and narrow.stdout == by_click.stdout != entry.stored_help("git-memzoi")


def test_help_into_a_closed_pipe_exits_141_quietly() -> None:
    code = (
        "import os, sys\nread, write = os.pipe()\nos.close(read)\nos.dup2(write, 1)\n"
        "from git_memzoi.cli import entry\nsys.argv = ['x', '--help']\nentry.memzoi()"
    )
    done = _python(code)
    assert (done.returncode, done.stderr) == (141, "")


def test_a_search_loads_no_git_view_and_without_a_config_no_toml_parser(repo: Repo) -> None:
    # finding the repository is a .git entry read (core/gitroot.py); .memzoi/config.toml is parsed only if it exists
    from git_memzoi.memzoi.layout import Layout, init

    init(Layout(repo.root))
    code = (
        "import contextlib, io, sys\nsys.argv = ['git-memzoi', '-C', sys.argv[1], 'search', 'anything']\n"
        "from git_memzoi.cli.entry import memzoi\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n    memzoi()\n"
        "watched = ('pygit2', 'tomllib', 'git_memzoi.core.gitview_pygit2', 'git_memzoi.memzoi.records.policy')\n"
        "print([m for m in watched if m in sys.modules])"
    )
    assert _python(code, str(repo.root)).stdout.strip() == "[]"
    (repo.root / ".memzoi" / "config.toml").write_text('[recall]\nmode = "lexical"\n')
    assert _python(code, str(repo.root)).stdout.strip() == "['tomllib']"  # the policy module only for an error
