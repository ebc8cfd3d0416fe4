"""The committed man pages equal what the click commands generate, and are well-formed roff (issue 20)."""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import subprocess

import pytest

from tests.support.repos import PROJECT

_spec = importlib.util.spec_from_file_location("man_pages", PROJECT / "scripts" / "man_pages.py")
assert _spec is not None and _spec.loader is not None
man_pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(man_pages)


@pytest.mark.parametrize("name", sorted(man_pages.PAGES))
def test_pages_are_in_step_with_the_commands(name: str) -> None:
    path = PROJECT / "man" / f"{name}.1"
    expected = man_pages.pages()[path]
    assert path.is_file() and path.read_text("utf-8") == expected, f"{path.name} is out of step: run make man"


@pytest.mark.parametrize("name", sorted(man_pages.PAGES))
def test_pages_have_the_man_structure_and_every_command(name: str) -> None:
    import click

    text = (PROJECT / "man" / f"{name}.1").read_text("utf-8")
    assert text.startswith(f".TH {name.upper().replace('-', chr(92) + '-')} 1 ")
    assert "\n.SH NAME\n" in text and "\n.SH COMMANDS\n" in text
    cli = importlib.import_module(man_pages.PAGES[name]).cli
    ctx = click.Context(cli, info_name=name)
    for command in cli.list_commands(ctx):
        if not cli.get_command(ctx, command).hidden:
            assert f"\n.SS {man_pages.escape(command)}\n" in text


def test_man_renders_the_page_without_warnings() -> None:
    if shutil.which("man") is None:
        pytest.skip("man (man-db) is not installed: only the roff structure is checked")
    done = subprocess.run(
        ["man", "-l", str(PROJECT / "man" / "git-memzoi.1")],
        capture_output=True,
        text=True,
        env={"MANWIDTH": "100", "MANPAGER": "cat", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0 and done.stderr == ""
    assert "GIT-MEMZOI(1)" in done.stdout and "capture review" in done.stdout
