"""The console scripts ``git-memzoi`` and ``git-memkeep``: the top-level ``-h``/``--help`` and ``--version`` are
answered before click is imported (issue 17, "Start-up": ``--help`` ≤ 40 ms, and click alone costs 25–40 ms).

The help text is the one click prints, generated at build time into ``resources/help/<tool>.txt`` by
``make man`` (``scripts/man_pages.py``) and kept in step by ``tests/test_man_pages.py``. It is the text click
formats for a terminal of 80 columns or more (click caps help at 78 characters); a narrower terminal, or any
other argument, runs the click command as before, so nothing but the timing differs.
"""

from __future__ import annotations

import os
import sys

# os.path, not pathlib: importing pathlib alone costs several ms of a 20 ms answer
HELP_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "resources", "help")
_CLICK_MAX_WIDTH = 80  # click.formatting.HelpFormatter's max_width: wider terminals get the same text
_BROKEN_PIPE = 141  # as git_memzoi.errors.ExitCode.BROKEN_PIPE; not imported, to stay light


def memzoi() -> None:
    """Console script ``git-memzoi``."""
    _run("git-memzoi", "git_memzoi.cli.memzoi")


def memkeep() -> None:
    """Console script ``git-memkeep``."""
    _run("git-memkeep", "git_memzoi.cli.memkeep")


def _run(prog: str, module: str) -> None:
    """Answer ``-h``/``--help``/``--version`` from stored text when that is exactly what click would print,
    otherwise run the click command of ``module``."""
    args = sys.argv[1:]
    text = None
    if args == ["--version"]:
        from git_memzoi import __version__

        text = f"{prog}, version {__version__}\n"
    elif args in (["-h"], ["--help"]) and _wide_enough():
        text = stored_help(prog)
    if text is not None:
        raise SystemExit(_print(text))
    import importlib

    importlib.import_module(module).main()


def stored_help(prog: str) -> str | None:
    """The generated top-level help of ``prog`` (``None`` when the file is missing: a checkout before
    ``make man``, and click answers instead)."""
    try:
        with open(os.path.join(HELP_DIR, f"{prog}.txt"), encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return None


def _wide_enough() -> bool:
    """Whether click would format help at its full width: ``COLUMNS`` first, then the terminal, then 80 — the
    order of :func:`shutil.get_terminal_size`, which click calls."""
    import shutil

    return shutil.get_terminal_size().columns >= _CLICK_MAX_WIDTH


def _print(text: str) -> int:
    """Write ``text`` to stdout: 0, or 141 without a word when the reader went away (``| head -1``)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the exit-time flush must not raise into the closed pipe again
        return _BROKEN_PIPE
    return 0
