"""``demo``: the first thing a newcomer runs."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("demo")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="New or empty directory for the demo (default: a fresh temporary directory).",
)
def demo_cmd(directory: Path | None) -> None:
    """Simulate a month of an assistant's life, then run a short forget-team search.

    Offline (no model, no network) and done in about a minute: creates a memory root,
    shows a denied write, runs a month of friction through the nightly, weekly and
    monthly jobs, approves and reverts an identity diff, and searches the bundled
    200-city example with two agents and three forget rounds.

    \b
    Example:
      evolving-agent demo --dir ./demo
    """
    from evolving_agent.demo import run_demo

    run_demo(directory, say=click.echo)


def register(group: click.Group) -> None:
    group.add_command(demo_cmd)
