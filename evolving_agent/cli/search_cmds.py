"""The ``search`` command group: run/resume (search_run_cmds) and report/compare
(search_report_cmds) live in their own modules and attach here."""

from __future__ import annotations

import click


@click.group("search")
def search_group() -> None:
    """Scored improvement tasks run by coding agents in rounds, with forgetting.

    \b
    Example (the bundled example, offline):
      evolving-agent search run --candidate examples/tsp/candidate \\
        --task examples/tsp/task.md --score "python examples/tsp/score.py" --minimize \\
        --agent tsp-example --policy forget-team --agents 2 --rounds 3 --turns 24
    """


def register(group: click.Group) -> None:
    from evolving_agent.cli import search_report_cmds, search_run_cmds

    search_run_cmds.register(search_group)
    search_report_cmds.register(search_group)
    group.add_command(search_group)
