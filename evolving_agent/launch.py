"""The console script and ``python -m evolving_agent``: boot's fast path, else the CLI.

``evolving-agent boot`` runs on every session start, so it is served, when it can be,
by :mod:`evolving_agent.memory.bootcache` with the standard library only; click, pydantic
and ruamel are imported only when that path declines (any other command or option, or
anything unusual about the root), and then the full CLI runs as if nothing had happened.
"""

from __future__ import annotations

import sys


def main() -> None:
    argv = sys.argv[1:]
    if "boot" in argv:
        from evolving_agent.memory.bootcache import try_boot

        code = try_boot(argv)
        if code is not None:
            sys.exit(code)
    from evolving_agent.cli import main as cli_main

    cli_main()
