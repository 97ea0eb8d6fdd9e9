"""``search report`` and ``search compare``: each parses, calls one core function, prints."""

from __future__ import annotations

from pathlib import Path

import click

from evolving_agent.search.report import write_report


@click.command("report")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write the report here instead of into RUN_DIR.",
)
def report_cmd(run_dir: Path, out: Path | None) -> None:
    """Plot and summarise a search run: report.png, report.md and report.html.

    The plot shows best-so-far against turns and against spend (dollars, else tokens,
    else wall time), one line per agent plus the team, with forgets marked.  The
    markdown adds per-round gains, empty turns, edit sizes around each forget and the
    best candidate's diff from the seed; the HTML page embeds both.

    \b
    Example:
      evolving-agent search report runs/tsp-forget-team
    """
    files = write_report(run_dir, out=out)
    for path in (files.png, files.markdown, files.html):
        click.echo(str(path))


def register(group: click.Group) -> None:
    """Add this module's subcommands to the search group."""
    group.add_command(report_cmd)
