"""Commands: remote add / show, sync, clone, device show / take-today (one self, many machines)."""

from __future__ import annotations

from pathlib import Path

import click

from evolving_agent.cli._common import echo_json, json_option, root_from
from evolving_agent.cli._output import echo
from evolving_agent.memory.evidence.devices import device_status, take_today
from evolving_agent.memory.root import require_root
from evolving_agent.memory.sync import add_remote, clone, remote_status, sync


@click.group("remote")
def remote_group() -> None:
    """The git remotes this device syncs with (any git URL; a bare repository will do)."""


@remote_group.command("add")
@click.argument("name")
@click.argument("url")
@click.pass_context
def remote_add(ctx: click.Context, name: str, url: str) -> None:
    """Add a remote; the first one added is the one 'sync' uses by default.

    \b
    Example:
      git init --bare /srv/git/me.git
      evolving-agent remote add origin /srv/git/me.git     # or ssh://host/srv/git/me.git
      evolving-agent sync
    """
    root = require_root(root_from(ctx))
    remotes = add_remote(root, name, url)
    echo(
        f"remote {name} -> {remotes.remotes[name]}"
        + (" (default)" if remotes.default == name else "")
    )


@remote_group.command("show")
@json_option
@click.pass_context
def remote_show(ctx: click.Context, as_json: bool) -> None:
    """List the remotes and how many of this device's events each has not received.

    \b
    Example:
      evolving-agent remote show
    """
    rows = remote_status(require_root(root_from(ctx)))
    if as_json:
        echo_json(rows)
        return
    if not rows:
        echo("no remotes (add one: evolving-agent remote add origin URL)")
    for row in rows:
        mark = " (default)" if row["default"] else ""
        waiting = row["unpushed_events"]
        echo(f"{row['name']}{mark}: {row['url']} - {waiting} local event(s) not yet pushed")


@click.command("sync")
@click.option(
    "--remote",
    "remote_name",
    default=None,
    metavar="NAME",
    help="Remote to sync with (default: the first added).",
)
@json_option
@click.pass_context
def sync_cmd(ctx: click.Context, remote_name: str | None, as_json: bool) -> None:
    """Exchange this device's Evidence, Live Bus, reviews and Canon with a remote.

    Fetches, checks everything received with verify's rules, merges (Evidence is a
    union of per-device chains; Live Bus newest per key; Today from the today writer;
    Canon fast-forward only), then pushes - never a force-push.  A rewritten remote or
    a Canon commit without provenance is refused (exit 5, nothing changed here).
    Offline it says so and exits 0.

    \b
    Example:
      evolving-agent sync
      evolving-agent sync --remote backup --json
    """
    result = sync(require_root(root_from(ctx)), remote_name)
    if as_json:
        echo_json(result.__dict__)
    else:
        echo(result.summary())


@click.command("clone")
@click.argument("url")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--name", default=None, help="A name for this device (default: the host name).")
def clone_cmd(url: str, directory: Path, name: str | None) -> None:
    """Set up a new device of the self held at URL, in DIRECTORY.

    Everything received is verified first; on any refusal DIRECTORY is left as it was.

    \b
    Example:
      evolving-agent clone ssh://desktop/srv/git/me.git ~/memory --name laptop
      export EVOLVING_AGENT_ROOT=~/memory
    """
    root, result = clone(url, directory, name=name)
    echo(f"cloned into {root.path} as device {result.device}; {result.summary()}")


@click.group("device")
def device_group() -> None:
    """This device: its id, the other devices, and which one writes Today."""


@device_group.command("show")
@json_option
@click.pass_context
def device_show(ctx: click.Context, as_json: bool) -> None:
    """Show this device, the devices it knows and the today writer.

    \b
    Example:
      evolving-agent device show
    """
    status = device_status(require_root(root_from(ctx)))
    writer = status.today_writer.device if status.today_writer else status.here.id
    if as_json:
        echo_json(
            {
                "device": status.here.model_dump(mode="json"),
                "today_writer": writer,
                "devices": [d.model_dump(mode="json") for d in status.devices],
                "chains": status.chains,
            }
        )
        return
    echo(f"this device: {status.here.id} ({status.here.name})")
    echo(f"today writer: {writer}" + (" (this device)" if writer == status.here.id else ""))
    for dev in status.devices:
        days = status.chains.get(dev.id, 0)
        echo(f"  {dev.id} {dev.name}: {days} day file(s) held here")


@device_group.command("take-today")
@click.pass_context
def device_take_today(ctx: click.Context) -> None:
    """Make this device the one that writes Today (runs nightly/weekly/monthly).

    Takes effect here at once and on the other devices at their next sync; their
    jobs then refuse to run (exit 3) and say where Today is written.

    \b
    Example:
      evolving-agent device take-today && evolving-agent sync
    """
    writer = take_today(require_root(root_from(ctx)))
    echo(f"this device ({writer.device}) writes Today from now on; sync to tell the others")


def register(cli: click.Group) -> None:
    cli.add_command(remote_group)
    cli.add_command(sync_cmd)
    cli.add_command(clone_cmd)
    cli.add_command(device_group)
