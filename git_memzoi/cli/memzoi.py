"""``git memzoi``: the Memzoi model's command line (governed records, recall, capture, integrations)."""

from __future__ import annotations

import click

from git_memzoi import __version__
from git_memzoi.cli.app import AppGroup


@click.group(cls=AppGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="git-memzoi")
def cli() -> None:
    """Governed project memory kept in the repository: records, proposals, recall and capture.

    Exit codes: 0 ok, 1 findings or a failed gate, 2 usage or input error (nothing written).
    """


def main() -> None:
    """Console script ``git-memzoi``."""
    cli(prog_name="git-memzoi")
