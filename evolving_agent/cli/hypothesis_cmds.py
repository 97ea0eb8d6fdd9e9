"""Commands: hypothesis add / edit / retire / split / list / show.

States are qualitative; there is no score.  Each command parses, calls one function of
``memory/ops/hypotheses.py`` and prints; every change is an Evidence record.
"""

from __future__ import annotations

import click

from evolving_agent.cli._common import echo_json, json_option, root_from
from evolving_agent.cli._output import echo, paged
from evolving_agent.memory.base.authority_table import Actor
from evolving_agent.memory.ops.hypotheses import (
    Hypothesis,
    add_hypothesis,
    edit_hypothesis,
    list_hypotheses,
    propose_shape,
    retire_hypothesis,
    show_hypothesis,
    split_hypothesis,
)
from evolving_agent.textsafe import one_line

STAKES = click.Choice(["low", "high"])


def _shape(h: Hypothesis) -> str:
    parts = [f"when: {h.when}" if h.when else "", f"do: {h.do}" if h.do else ""]
    if h.stakes == "high":
        parts.append("stakes: high")
    shown = "; ".join(p for p in parts if p)
    return f" ({shown})" if shown else ""


@click.group("hypothesis")
def hypothesis_group() -> None:
    """Hypotheses: beliefs under test, changed only by evidence."""


@hypothesis_group.command("add")
@click.argument("text")
@click.option("--when", "when", metavar="TRIGGER", help="When it matters (the trigger).")
@click.option("--do", "do", metavar="COUNTER-MOVE", help="What to do then (the counter-move).")
@click.option(
    "--stakes",
    type=STAKES,
    default="low",
    show_default=True,
    help="high = hard to undo or seen by others (destructive commands, sent messages).",
)
@click.option(
    "--as",
    "actor",
    type=click.Choice(["human", "session"]),
    default="human",
    show_default=True,
    help="Who adds it; the assistant is 'session' (recorded, adopted by the next nightly run).",
)
@click.pass_context
def hypothesis_add(
    ctx: click.Context, text: str, when: str | None, do: str | None, stakes: str, actor: Actor
) -> None:
    """Register a hypothesis (state: emerging), as the human or the session.

    \b
    Example:
      evolving-agent hypothesis add "one answer, not a menu" --do "recommend one"
    """
    h = add_hypothesis(root_from(ctx), text, when=when, do=do, stakes=stakes, actor=actor)
    echo(f"{h.id} {h.state}: {h.text}{_shape(h)}")
    if actor == "session":
        echo("recorded in Evidence; the next nightly run adds it to the register")


@hypothesis_group.command("edit")
@click.argument("hid", metavar="ID")
@click.option("--text", help="A new wording of the claim (the id stays).")
@click.option("--when", "when", metavar="TRIGGER", help="New trigger ('' clears it).")
@click.option("--do", "do", metavar="COUNTER-MOVE", help="New counter-move ('' clears it).")
@click.option("--stakes", type=STAKES, help="low or high.")
@click.option(
    "--adopt",
    is_flag=True,
    help="Take on the session's words: its hypothesis, or its proposed trigger/counter-move.",
)
@click.pass_context
def hypothesis_edit(
    ctx: click.Context,
    hid: str,
    text: str | None,
    when: str | None,
    do: str | None,
    stakes: str | None,
    adopt: bool,
) -> None:
    """Reshape a hypothesis, as the human; its evidence and state stay.

    Editing a hypothesis the session wrote adopts it: it can be carried without
    waiting for friction.  --adopt takes on the session's proposal as it stands.

    \b
    Examples:
      evolving-agent hypothesis edit h-1a2b3c4d --stakes high --when "about to force-push"
      evolving-agent hypothesis edit h-1a2b3c4d --adopt
    """
    h = edit_hypothesis(
        root_from(ctx), hid, text=text, when=when, do=do, stakes=stakes, adopt=adopt
    )
    echo(f"{h.id} {h.state}: {h.text}{_shape(h)}")


@hypothesis_group.command("propose")
@click.argument("hid", metavar="ID")
@click.option("--when", "when", metavar="TRIGGER", help="The moment it happens.")
@click.option("--do", "do", metavar="COUNTER-MOVE", help="What to do then.")
@click.pass_context
def hypothesis_propose(ctx: click.Context, hid: str, when: str | None, do: str | None) -> None:
    """Propose a trigger / counter-move for a hypothesis, as the session.

    Recorded as the session's proposal: it reaches the bias only once friction
    supports the hypothesis on 2 distinct days, or when the human adopts it
    ('hypothesis edit ID --adopt').

    \b
    Example:
      evolving-agent hypothesis propose h-1a2b3c4d --do "stop at what was asked"
    """
    rec = propose_shape(root_from(ctx), hid, when=when, do=do)
    echo(f"{rec.id}: proposed for {hid} (recorded as the session's proposal)")
    echo(
        "it is used once friction supports the hypothesis on 2 distinct days, "
        "or when the human adopts it"
    )


@hypothesis_group.command("retire")
@click.argument("hid", metavar="ID")
@click.option("--reason", required=True, help="Why it no longer holds (recorded).")
@click.pass_context
def hypothesis_retire(ctx: click.Context, hid: str, reason: str) -> None:
    """Retire a hypothesis, as the human, saying why.

    \b
    Example:
      evolving-agent hypothesis retire h-1a2b3c4d --reason "the user changed how they work"
    """
    h = retire_hypothesis(root_from(ctx), hid, reason)
    echo(f"{h.id} retired: {h.reason}")


@hypothesis_group.command("split")
@click.argument("hid", metavar="ID")
@click.argument("text_a")
@click.argument("text_b")
@click.pass_context
def hypothesis_split(ctx: click.Context, hid: str, text_a: str, text_b: str) -> None:
    """Split a hypothesis into two narrower ones (the evidence stays with the parent).

    \b
    Example:
      evolving-agent hypothesis split h-1a2b3c4d "short for quick questions" "full for proofs"
    """
    parent, children = split_hypothesis(root_from(ctx), hid, text_a, text_b)
    echo(f"{parent.id} split into {children[0].id} and {children[1].id}")
    for c in children:
        echo(f"{c.id} {c.state}: {c.text}")


@hypothesis_group.command("list")
@json_option(help="Print a JSON list of objects with an id.")
@click.pass_context
@paged
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
        echo("(no hypotheses yet: add one with 'evolving-agent hypothesis add TEXT')")
    for h in hyps:
        echo(one_line(f"{h.id}  {h.state:<9}  {h.text}{_shape(h)}"))


@hypothesis_group.command("show")
@click.argument("hid", metavar="ID")
@json_option
@click.pass_context
@paged
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
    echo(f"{h.id}: {one_line(h.text)}")
    echo(f"state: {h.state} (since evidence of {h.updated})")
    pending = " (session's words: listed, not carried until friction backs them)"
    echo(f"origin: {h.origin}; stakes: {h.stakes}{pending if not h.ready else ''}")
    if h.proposal is not None:
        p = h.proposal
        echo(one_line(f"session proposal ({p.day}): when: {p.when or '-'}; do: {p.do or '-'}"))
    if h.when or h.do:
        echo(one_line(f"when: {h.when or '-'}; do: {h.do or '-'}"))
    days = ", ".join(d.isoformat() for d in h.supported_on) or "-"
    echo(f"supported on: {days}")
    days = ", ".join(d.isoformat() for d in h.contradicted_on) or "-"
    echo(f"contradicted on: {days}")
    echo(f"evidence: {', '.join(h.supports + h.contradicts) or '-'}")
    echo("history:")
    for step in detail.history:
        was = f"{step.previous} -> " if step.previous else ""
        echo(one_line(f"  {step.day} {was}{step.state}: {step.reason} [{step.evidence_id}]"))


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    group.add_command(hypothesis_group)
