"""drift: the drift watch in the terminal (the review page shows the same report), and
``drift ack``, the human's look at what holds a hypothesis."""

from __future__ import annotations

import os
from datetime import date, datetime

import click

from evolving_agent.cli._common import DAY, echo_json, json_option, root_from
from evolving_agent.cli._output import echo
from evolving_agent.memory.root import require_root
from evolving_agent.review.drift import DriftReport, watch
from evolving_agent.review.hold import ack_command, acknowledge

_DAY = DAY


def _print(report: DriftReport) -> None:
    echo(f"drift watch {report.start} .. {report.end}: {len(report.flags)} flag(s)")
    if not report.flags:
        echo("  nothing to flag")
    held = report.held
    for f in report.flags:
        echo(f"- {f.kind}: {f.title}")
        echo(f"    {f.detail}")
        echo(f"    evidence: {', '.join(f.evidence_ids)}")
        for hid in f.hypotheses if f.holds else []:
            state = f"held until you look ('{ack_command(hid)}')" if hid in held else "looked at"
            echo(f"    {hid}: {state}")


@click.group("drift", invoke_without_command=True)
@click.option("--since", type=_DAY, default=None, help="First day (default: 6 weeks back).")
@click.option("--until", type=_DAY, default=None, help="Last day (default: last Evidence day).")
@json_option(help="Print JSON (start, end, flags with evidence_ids, held).")
@click.pass_context
def drift_cmd(
    ctx: click.Context, since: datetime | None, until: datetime | None, as_json: bool
) -> None:
    """Look for drift: pendulums, a monopolised carry, friction that stopped or floods,
    proposals waiting over a month, model fallbacks.  Each flag cites its evidence.

    A pendulum, state-flip or monopoly flag holds the hypotheses it names: the
    monthly job does not queue them and their reviews cannot be approved until
    you acknowledge the flag with 'drift ack'.

    \b
    Example:
      evolving-agent drift --since 2026-11-01 --json
      evolving-agent drift ack h-3c638afd
    """
    if ctx.invoked_subcommand is not None:
        return
    start: date | None = since.date() if since else None
    end: date | None = until.date() if until else None
    report = watch(root_from(ctx), start=start, end=end)
    if as_json:
        echo_json(report.to_json())
    else:
        _print(report)


@drift_cmd.command("ack")
@click.argument("hypothesis", metavar="HYPOTHESIS_ID")
@click.option("--approver", default=None, metavar="NAME", help="Who looked (default: $USER).")
@click.pass_context
def ack_cmd(ctx: click.Context, hypothesis: str, approver: str | None) -> None:
    """Record that you have looked at the drift flags holding a hypothesis.

    Releases its review for approval and its proposals for the next monthly
    queue; a later flag with new evidence holds it again.  Recorded as a human
    decision (signed when signing is on) and in Evidence.

    \b
    Example:
      evolving-agent drift ack h-3c638afd
    """
    root = require_root(root_from(ctx))
    result = acknowledge(root, hypothesis, by=approver or os.environ.get("USER") or "human")
    for flag in result.hold.flags:
        echo(f"looked at: {flag.kind}: {flag.title}")
    echo(
        f"acknowledged {hypothesis}: {len(result.hold.evidence_ids)} evidence id(s), "
        f"recorded as Evidence {result.record_id}"
    )


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    group.add_command(drift_cmd)
