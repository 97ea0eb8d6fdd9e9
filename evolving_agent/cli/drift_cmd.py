"""drift: the drift watch in the terminal (the review page shows the same report)."""

from __future__ import annotations

from datetime import date, datetime

import click

from evolving_agent.cli._common import echo_json, json_option, root_from
from evolving_agent.cli._output import echo
from evolving_agent.review.drift import DriftReport, watch

_DAY = click.DateTime(["%Y-%m-%d"])


def _print(report: DriftReport) -> None:
    echo(f"drift watch {report.start} .. {report.end}: {len(report.flags)} flag(s)")
    if not report.flags:
        echo("  nothing to flag")
    held = report.held
    for f in report.flags:
        echo(f"- {f.kind}: {f.title}")
        echo(f"    {f.detail}")
        echo(f"    evidence: {', '.join(f.evidence_ids)}")
        for hid in f.hypotheses:
            state = "held until you look (review serve)" if hid in held else "looked at"
            echo(f"    {hid}: {state}")


@click.command("drift")
@click.option("--since", type=_DAY, default=None, help="First day (default: 6 weeks back).")
@click.option("--until", type=_DAY, default=None, help="Last day (default: last Evidence day).")
@json_option(help="Print JSON (start, end, flags with evidence_ids, held).")
@click.pass_context
def drift_cmd(
    ctx: click.Context, since: datetime | None, until: datetime | None, as_json: bool
) -> None:
    """Look for drift: pendulums, a monopolised carry, friction that stopped or floods,
    proposals waiting over a month, model fallbacks.  Each flag cites its evidence.

    \b
    Example:
      evolving-agent drift --since 2026-11-01 --json
    """
    start: date | None = since.date() if since else None
    end: date | None = until.date() if until else None
    report = watch(root_from(ctx), start=start, end=end)
    if as_json:
        echo_json(report.to_json())
    else:
        _print(report)


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    group.add_command(drift_cmd)
