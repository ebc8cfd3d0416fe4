"""`git memzoi` commands of the packets area (registered onto the group by :func:`register`)."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    """Add this area's commands to ``cli``."""
