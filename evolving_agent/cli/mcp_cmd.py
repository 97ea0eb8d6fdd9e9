"""``mcp``: the stdio MCP server an assistant talks to.  It always acts as ``session``."""

from __future__ import annotations

import click

from evolving_agent.cli._common import root_from
from evolving_agent.extras import require
from evolving_agent.memory.root import require_root


@click.command("mcp")
@click.pass_context
def mcp_cmd(ctx: click.Context) -> None:
    """Serve the session's tools over stdio (MCP): friction, live_set, boot, hypotheses.

    Every tool acts as 'session': no tool can change Canon or Today.  Nothing but
    protocol is written to stdout; errors and logs go to stderr.

    \b
    Example (register with Claude Code):
      claude mcp add evolving-agent -- evolving-agent mcp
    """
    # Checked before serving so a wrong root is one line on stderr and exit 4, not a
    # server that starts and then fails every call.
    root = require_root(root_from(ctx))
    require("mcp", "the MCP server")  # the [mcp] extra: one line if it is missing
    from evolving_agent.integrations.mcp_server import serve_stdio  # the SDK is heavy

    serve_stdio(root)


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    group.add_command(mcp_cmd)
