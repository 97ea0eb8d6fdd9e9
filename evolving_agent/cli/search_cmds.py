"""Commands: placeholder until its issue lands."""

from __future__ import annotations

import click


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
