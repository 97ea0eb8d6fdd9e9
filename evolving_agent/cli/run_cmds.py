"""Commands: run nightly / weekly / monthly for a date, by hand."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import click

from evolving_agent.cli._common import DAY, echo_json, json_option, reflector_options, root_from
from evolving_agent.cli._output import echo
from evolving_agent.jobs.dispatch import check_strict, fallback_of, run_job
from evolving_agent.jobs.monthly import MonthlyResult, held_line
from evolving_agent.jobs.nightly import NightlyResult
from evolving_agent.jobs.settings import REFLECTOR_NAMES
from evolving_agent.jobs.weekly import WeeklyResult

R = TypeVar("R", NightlyResult, WeeklyResult, MonthlyResult)


def _options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option(
        "--strict",
        is_flag=True,
        help="Exit 4 if the job fell back from the requested reflector (it still ran).",
    )(fn)
    fn = json_option(help="Print the result as JSON.")(fn)
    fn = reflector_options(
        REFLECTOR_NAMES,
        which="Who writes the words (default: schedule.yaml, else rules).",
        cmd="Command for the 'command' reflector (prompt on stdin, JSON on stdout).",
    )(fn)
    fn = click.option(
        "--date",
        "day",
        type=DAY,
        default=None,
        help="Date to run for (YYYY-MM-DD).",
    )(fn)
    return fn


def _run(
    ctx: click.Context,
    job: str,
    result_type: type[R],
    day: datetime | None,
    as_json: bool,
    reflector: str | None = None,
    reflector_cmd: str | None = None,
    strict: bool = False,
    redo: datetime | None = None,
) -> R | None:
    """Run ``job``; with --json print the result and return None, else return it."""
    if redo is not None and day is not None:
        raise click.UsageError("--redo DATE names the day: leave --date out")
    chosen = redo or day
    result = run_job(
        root_from(ctx),
        job,
        chosen.date() if chosen is not None else None,
        reflector=reflector,
        reflector_cmd=reflector_cmd,
        redo=redo is not None,
    )
    assert isinstance(result, result_type)
    if as_json:
        # The Today files a run started from are the redo's business, not the reader's.
        echo_json(result.model_dump(mode="json", exclude={"plan": {"before"}}))
        if strict:
            check_strict(job, result)
        return None
    return result


def _status(job: str, what: str, result: Any, reflector: str | None = None) -> None:
    """The result line: status, the reflector used and, if it fell back, why."""
    fallback = fallback_of(result)
    used = ""
    if reflector:
        why = f"; {fallback}" if fallback else ""
        used = f" (reflector: {reflector}{why})"
    note = " (nothing changed)" if result.status == "already done" else ""
    echo(f"{job} {what}: {result.status}{note}{used}")


@click.group("run")
def run_group() -> None:
    """Run a job by hand for a date (idempotent: a second run changes nothing)."""


def _nightly_lines(result: NightlyResult) -> None:
    plan = result.plan
    _status("nightly", plan.day.isoformat(), result, plan.reflector)
    for note in plan.notes:  # catch-up after downtime, and its bound
        echo(f"note: {note}")
    if plan.outcome is not None:
        o = plan.outcome
        about = f" on {o.hypothesis}" if o.hypothesis else ""
        echo(f"yesterday's {o.carry_type}{about}: {o.outcome}")
    for c in plan.changes:
        h = c.hypothesis
        echo(f"{h.id}: {c.previous} -> {h.state} ({c.reason})")
    if plan.raised is not None:
        echo(f"raised {plan.raised.id} (emerging, from recurring friction): {plan.raised.text}")
    if plan.carry is None or plan.bias is None:
        echo("quiet day: no hypothesis to carry and no friction; bias and carry unchanged")
        _old_bias(result)
        return
    about = f" on {plan.carry.hypothesis}" if plan.carry.hypothesis else ""
    echo(f"carry: {plan.carry.type}{about}: {plan.carry.text}")
    echo("bias:")
    for line in plan.bias.splitlines():
        echo(f"  {line}")
    _old_bias(result)


def _old_bias(result: NightlyResult) -> None:
    if result.superseded is None:
        return
    if not result.old_bias:
        echo(f"the superseded run {result.superseded} carried nothing (a quiet day)")
        return
    echo(f"the superseded run's bias (kept in Evidence, run {result.superseded}):")
    for line in result.old_bias.splitlines():
        echo(f"  {line}")


def _weekly_lines(result: WeeklyResult) -> None:
    plan = result.plan
    _status("weekly", f"week ending {plan.week_end}", result, plan.reflector)
    if not plan.proposals:
        echo("no proposals this week")
    for p in plan.proposals:
        echo(f"{p.id}: {p.diff.op} to {p.diff.section}: {p.diff.text}")
        echo(f"  evidence: {', '.join(p.evidence_ids)}")


def _monthly_lines(result: MonthlyResult) -> None:
    plan = result.plan
    _status("monthly", f"proposals of {plan.month}", result)
    if not plan.reviews:
        echo(f"nothing queued (limit {plan.limit} per month)")
    for r in plan.reviews:
        echo(f"{r.id}: {r.diff.op} to {r.diff.section}: {r.diff.text or r.diff.old_text}")
    if plan.deferred:
        echo(f"note: {len(plan.deferred)} proposal(s) over the limit wait for next month")
    if plan.refused:
        echo(
            f"note: refused {', '.join(plan.refused)}: no weekly run wrote them as they are "
            "(planted or edited; run 'evolving-agent verify')"
        )
    for h in plan.held:
        echo(f"held: {held_line(h)}")
    if plan.reviews:
        echo("next: evolving-agent review list")


def _say_unused_reflector(job: str, result: Any, asked: str | None) -> None:
    """A day that already ran keeps its words: say so when another reflector was asked
    for (it was silently ignored: "already done (nothing changed) (reflector: rules)")."""
    used = getattr(result.plan, "reflector", None)
    if result.status != "already done" or asked is None or used is None or asked == used:
        return
    echo(
        f"note: --reflector {asked} was not used: this {job} run already happened with "
        f"{used}; a day is reflected once"
        + (
            f" ('run nightly --redo {result.plan.day} --reflector {asked}' reflects it again)"
            if job == "nightly"
            else ", and its words stay as they are"
        ),
        err=True,
    )


def _job_command(job: str, result_type: type[R], render: Callable[[R], None], doc: str) -> None:
    """Add ``run <job>``: the same options for every job, its own docstring and renderer."""

    def command(
        ctx: click.Context,
        day: datetime | None,
        reflector: str | None,
        reflector_cmd: str | None,
        as_json: bool,
        strict: bool,
        redo: datetime | None = None,
    ) -> None:
        result = _run(ctx, job, result_type, day, as_json, reflector, reflector_cmd, strict, redo)
        if result is None:
            return
        render(result)
        _say_unused_reflector(job, result, reflector)
        if strict:
            check_strict(job, result)

    command.__doc__ = doc
    fn = _options(click.pass_context(command))
    if job == "nightly":
        fn = click.option(
            "--redo",
            type=DAY,
            default=None,
            metavar="DATE",
            help="Reflect a day already run again (the last one reflected); its old bias "
            "stays in Evidence.",
        )(fn)
    run_group.command(job)(fn)


_job_command(
    "nightly",
    NightlyResult,
    _nightly_lines,
    """Reflect on one day (default: yesterday): new bias, one typed carry, states.

    A reflector that fails falls back to rules and the first line says why; with
    --strict that exits 4.  A command reflector that changes Canon fails the job (exit 5).

    --redo DATE reflects the last reflected day again, as if its first run had never
    happened: a new bias for that morning, the old one kept in Evidence.

    \b
    Example:
      evolving-agent run nightly --date 2026-11-29
      evolving-agent run nightly --strict --reflector command --reflector-cmd "claude -p"
      evolving-agent run nightly --redo 2026-11-29 --reflector claude
    """,
)
_job_command(
    "weekly",
    WeeklyResult,
    _weekly_lines,
    """Propose identity diffs from the week ending on a date (default: yesterday).

    \b
    Example:
      evolving-agent run weekly --date 2026-11-29
      evolving-agent run weekly --strict --reflector openai
    """,
)
_job_command(
    "monthly",
    MonthlyResult,
    _monthly_lines,
    """Queue the previous month's proposals for human review (at most the monthly limit).

    Consolidation is deterministic, so --reflector (and --strict) are accepted but not used.

    \b
    Example:
      evolving-agent run monthly --date 2026-11-01
    """,
)


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    group.add_command(run_group)
