"""deploy: set a memory root up for two OS users (the human's and the assistant's)."""

from __future__ import annotations

import click

from evolving_agent.cli._common import echo_json, json_option, root_from
from evolving_agent.cli._output import echo
from evolving_agent.memory.sync.deploy import deploy_os_users


@click.group("deploy")
def deploy_group() -> None:
    """Deployments that make "human" hold by the OS: the assistant as its own user."""


@deploy_group.command("os-users")
@click.option("--human", required=True, metavar="USER", help="Your OS user: owns the root.")
@click.option(
    "--assistant",
    required=True,
    metavar="USER",
    help="The OS user the assistant (hooks, MCP server) runs as.",
)
@click.option(
    "--group",
    metavar="GROUP",
    default=None,
    help="The group both users share (default: the assistant's primary group).",
)
@json_option
@click.pass_context
def os_users_cmd(
    ctx: click.Context, human: str, assistant: str, group: str | None, as_json: bool
) -> None:
    """Give the root to the human's user; let the assistant's user append Evidence and
    write the Live Bus, and nothing else.

    canon/, crons/, schedule.yaml, today/, reviews/, .git and .ea/ become the human's
    (the group may read them); evidence/, .ea/evidence/, live/ and .ea/locks/ are
    setgid to GROUP and group-writable, evidence/ sticky.  The writer keeps new files
    that way.  Run it as root (or as the human, for a root the human owns), then run
    the jobs from the human's crontab and the assistant as its user.  Idempotent.

    \b
    Example:
      sudo evolving-agent deploy os-users --root /home/alice/memory \\
          --human alice --assistant assistant --group ea
    """
    report = deploy_os_users(root_from(ctx), human=human, assistant=assistant, group=group)
    if as_json:
        echo_json(report.to_json())
        return
    echo(
        f"deployed {report.root} for two OS users: {report.human} owns it; "
        f"{report.assistant} (group {report.group}) may append evidence/ and write live/ "
        f"({report.changed} change(s))"
    )
    for warning in report.warnings:
        echo(f"warning: {warning}", err=True)


def register(group: click.Group) -> None:
    group.add_command(deploy_group)
