"""Search subcommands: placeholder until its issue lands."""

from __future__ import annotations

import click


def register(group: click.Group) -> None:
    """Add this module's subcommands to the search group."""
