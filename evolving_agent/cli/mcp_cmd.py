"""``mcp``: the stdio MCP server an assistant talks to.  It always acts as ``session``.

``evolving-agent [--root R] mcp`` is normally served before this module loads (the fast
start in ``launch.py``); this command is the same server for every other spelling
(``python -m evolving_agent``, options in other places) and carries the ``--help``.
"""

from __future__ import annotations

import click

from evolving_agent.cli._common import root_from
from evolving_agent.memory.root import require_root


@click.command("mcp")
@click.pass_context
def mcp_cmd(ctx: click.Context) -> None:
    """Serve the session's tools over stdio (MCP): friction, live_set, boot, hypotheses,
    hypothesis_add.

    Every tool acts as 'session': no tool can change Canon or Today.  Nothing but
    protocol is written to stdout; errors and logs go to stderr.  Put the root in the
    arguments: Codex starts MCP servers with a fixed environment, so
    $EVOLVING_AGENT_ROOT does not reach the server there.
    'evolving-agent integrations show claude|codex' prints the tested set-ups.

    \b
    Example (the command a client starts):
      evolving-agent mcp --root ~/assistant-memory
    Registered with Claude Code, for every project:
      claude mcp add --scope user evolving-agent -- evolving-agent --root ~/assistant-memory mcp
    """
    # Checked before serving so a wrong root is one line on stderr and exit 4, not a
    # server that starts and then fails every call.
    root = require_root(root_from(ctx))
    from evolving_agent.integrations.mcp_server import serve_stdio

    serve_stdio(root)


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    group.add_command(mcp_cmd)
