"""Commands: hypothesis add / list / show.  States are qualitative; there is no score."""

from __future__ import annotations

import click

from evolving_agent.cli._common import echo_json, root_from
from evolving_agent.memory.hypotheses import add_hypothesis, list_hypotheses, show_hypothesis


@click.group("hypothesis")
def hypothesis_group() -> None:
    """Hypotheses: beliefs under test, changed only by evidence."""


@hypothesis_group.command("add")
@click.argument("text")
@click.pass_context
def hypothesis_add(ctx: click.Context, text: str) -> None:
    """Register a hypothesis (state: emerging), as the human.

    \b
    Example:
      evolving-agent hypothesis add "the user wants one answer, not a menu of options"
    """
    h = add_hypothesis(root_from(ctx), text)
    click.echo(f"{h.id} {h.state}: {h.text}")


@hypothesis_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of objects with an id.")
@click.pass_context
def hypothesis_list(ctx: click.Context, as_json: bool) -> None:
    """List hypotheses with their state (the fold over Evidence).

    \b
    Example:
      evolving-agent hypothesis list --json
    """
    hyps = list_hypotheses(root_from(ctx), from_evidence=True)
    if as_json:
        echo_json([h.model_dump(mode="json") for h in hyps])
        return
    if not hyps:
        click.echo("(no hypotheses yet: add one with 'evolving-agent hypothesis add TEXT')")
    for h in hyps:
        click.echo(f"{h.id}  {h.state:<9}  {h.text}")


@hypothesis_group.command("show")
@click.argument("hid", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def hypothesis_show(ctx: click.Context, hid: str, as_json: bool) -> None:
    """Show one hypothesis, its evidence and its history of state changes.

    \b
    Example:
      evolving-agent hypothesis show h-1a2b3c4d
    """
    detail = show_hypothesis(root_from(ctx), hid)
    if as_json:
        echo_json(detail.model_dump(mode="json"))
        return
    h = detail.hypothesis
    click.echo(f"{h.id}: {h.text}")
    click.echo(f"state: {h.state} (since evidence of {h.updated})")
    days = ", ".join(d.isoformat() for d in h.supported_on) or "-"
    click.echo(f"supported on: {days}")
    days = ", ".join(d.isoformat() for d in h.contradicted_on) or "-"
    click.echo(f"contradicted on: {days}")
    click.echo(f"evidence: {', '.join(h.supports + h.contradicts) or '-'}")
    click.echo("history:")
    for step in detail.history:
        was = f"{step.previous} -> " if step.previous else ""
        click.echo(f"  {step.day} {was}{step.state}: {step.reason} [{step.evidence_id}]")


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    group.add_command(hypothesis_group)
