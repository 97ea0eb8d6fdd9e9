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
@click.option(
    "--keep",
    "keep_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Like --dir, but leave the month's review pending: a root to continue in.",
)
def demo_cmd(directory: Path | None, keep_dir: Path | None) -> None:
    """Simulate a month of an assistant's life, then run a short forget-team search.

    Offline (no model, no network) and done in about a minute: creates a memory root,
    shows a denied write, runs a month of friction through the nightly, weekly and
    monthly jobs, approves and reverts an identity diff, and searches the bundled
    200-city example with two agents and three forget rounds.

    --keep DIR leaves the review pending instead, so DIR/memory is a root that has
    lived a month with a decision waiting: the README's slow-clock tour runs there.

    \b
    Example:
      evolving-agent demo --keep ./demo
    """
    from evolving_agent.demo import run_demo

    if directory is not None and keep_dir is not None:
        raise click.UsageError("give either --dir or --keep, not both")
    run_demo(keep_dir or directory, say=click.echo, keep=keep_dir is not None)


def register(group: click.Group) -> None:
    group.add_command(demo_cmd)
