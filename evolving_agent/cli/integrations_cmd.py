"""``integrations show CLIENT``: print the tested set-ups with the root filled in."""

from __future__ import annotations

import os

import click

from evolving_agent.cli._common import echo_json, json_option, root_from
from evolving_agent.cli._output import echo
from evolving_agent.integrations.setups import CLIENTS, render, setups_for
from evolving_agent.paths import root_problem


@click.group("integrations")
def integrations_group() -> None:
    """Set-ups for the assistant's client (Claude Code, Codex, Gemini, OpenCode)."""


@integrations_group.command("show")
@click.argument("client", type=click.Choice(CLIENTS))
@click.option(
    "--program",
    default=None,
    metavar="PATH",
    help="The program the client should start [default: the absolute path of this "
    "evolving-agent, so the set-up works from any shell].",
)
@json_option(help="Print the set-ups as JSON (key, title, where, lang, text, note).")
@click.pass_context
def show_cmd(ctx: click.Context, client: str, program: str | None, as_json: bool) -> None:
    """Print the set-ups for CLIENT (claude, codex, gemini, opencode), root filled in.

    Each is what the tests run against the real CLI: the SessionStart hook and
    permissions for Claude Code, the MCP server (root in its arguments, so it arrives
    even where the client passes no environment), the approval settings for Codex.
    Every command names this evolving-agent by its absolute path; merge each settings
    file into the one you have, do not replace it.

    \b
    Example:
      evolving-agent integrations show codex --root ~/assistant-memory
    """
    root = root_from(ctx)
    setups = setups_for(client, str(root.path), program)
    if program is not None and not os.path.isabs(program):
        echo(
            f"warning: --program {program!r} is not an absolute path; a client started "
            "from another shell may not find it",
            err=True,
        )
    if as_json:
        echo_json([s.__dict__ for s in setups])
    else:
        echo(render(setups), nl=False)
    problem = root_problem(root)
    if problem is not None:
        echo(f"warning: {problem}", err=True)


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    group.add_command(integrations_group)
