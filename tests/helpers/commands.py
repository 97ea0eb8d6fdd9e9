"""The CLI's command tree, walked once: every command path and the command at a path.

Shared by the docs test (every command has --help, every quoted line parses) and the CLI
tests (every option of every command); commands load lazily, so the walk imports them all.
"""

from __future__ import annotations

from collections.abc import Iterator

import click

from evolving_agent.cli import cli


def walk(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command path below ``group``, groups included, in ``--help`` order."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        assert sub is not None
        yield (*path, name)
        if isinstance(sub, click.Group):
            yield from walk(sub, (*path, name))


ALL_COMMANDS = [(), *walk(cli)]


def command_at(path: tuple[str, ...]) -> click.Command:
    """The command ``evolving-agent PATH...`` runs (``()``: the top-level group)."""
    cmd: click.Command = cli
    for name in path:
        assert isinstance(cmd, click.Group)
        sub = cmd.get_command(click.Context(cmd), name)
        assert sub is not None
        cmd = sub
    return cmd
