"""The ``Example:`` blocks of a click command's docstring, as argument lists.

A command's ``--help`` ends with a copyable example; these tests parse each one with the
command's own parser, so an example that names a renamed or removed option fails.
"""

from __future__ import annotations

import shlex

import click


def examples(command: click.Command, prog: str = "evolving-agent") -> list[list[str]]:
    """Each example line of ``command``'s help that runs ``prog``, continuation lines
    joined, split as a shell would (without the program's own name)."""
    text = (command.help or "").split("Example", 1)[-1]
    joined = text.replace("\\\n", " ")
    out = []
    for line in joined.splitlines():
        words = shlex.split(line.strip())
        if words[:1] == [prog]:
            out.append(words[1:])
    return out


def parses(group: click.Group, args: list[str]) -> click.Context:
    """Parse ``args`` (``SUBCOMMAND OPTIONS...``) with the subcommand's own parser, without
    running it: unknown options, bad choices and missing required options raise."""
    name, *rest = args
    command = group.get_command(click.Context(group), name)
    assert command is not None, f"no command {name!r} in {group.name}"
    return command.make_context(name, rest, parent=click.Context(group))
