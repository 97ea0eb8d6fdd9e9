"""The console script and ``python -m evolving_agent``: boot's fast path, else the CLI.

``evolving-agent boot`` runs on every session start, so it is served, when it can be,
by :mod:`evolving_agent.memory.boot.bootfast` with the standard library only; click, pydantic
and ruamel are imported only when that path declines (any other command or option, or
anything unusual about the root), and then the full CLI runs as if nothing had happened.
``evolving-agent friction TEXT`` is appended by :mod:`evolving_agent.memory.evidence.frictionfast`
the same way (the standard library only, else the full CLI), and
``evolving-agent [--root R] mcp`` likewise starts the MCP server without the CLI
(:func:`evolving_agent.integrations.mcp_server.try_serve`).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs boot's fast path a few ms; mypy reads the name as typing's
if TYPE_CHECKING:
    from typing import Any


def main() -> None:
    argv = sys.argv[1:]
    if "boot" in argv:
        from evolving_agent.memory.boot.bootfast import try_boot

        code = try_boot(argv, write_file=_write_boot_file)
        if code is not None:
            sys.exit(code)
    if "friction" in argv:
        # The command hooks and assistants run most: appended without click or pydantic.
        from evolving_agent.memory.evidence.frictionfast import try_friction

        code = try_friction(argv)
        if code is not None:
            sys.exit(code)
    if "mcp" in argv:
        # The MCP server's fast start: clients wait only briefly for a server's tools.
        from evolving_agent.integrations.mcp_server import try_serve

        code = try_serve(argv)
        if code is not None:
            sys.exit(code)
    from evolving_agent.cli import main as cli_main

    cli_main()


def _write_boot_file(root: Any, path: str, view: Any) -> None:
    """``boot --write-file``'s copy, for the fast path (integrations sit above memory)."""
    from pathlib import Path

    from evolving_agent.integrations.bootfile import write_boot_file

    write_boot_file(root, Path(path), view)
