"""Commands: schedule run / show / print-cron, for one or several memory roots."""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

import click

from evolving_agent.cli._common import echo_json, json_option, root_from
from evolving_agent.cli._output import echo, paged
from evolving_agent.jobs.cronprint import print_cron
from evolving_agent.jobs.scheduler import JobScheduler, validate_roots
from evolving_agent.paths import MemoryRoot


def _roots_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--roots",
        default=None,
        metavar="PATH,PATH",
        help="Serve several memory roots (comma-separated) instead of --root.",
    )(fn)


def _roots(ctx: click.Context, roots: str | None) -> list[MemoryRoot]:
    if not roots:
        return [root_from(ctx)]
    return [MemoryRoot.resolve(p.strip()) for p in roots.split(",") if p.strip()]


@click.group("schedule")
def schedule_group() -> None:
    """Run the jobs on the cron lines of each root's schedule.yaml."""


@schedule_group.command("run")
@_roots_option
@click.pass_context
def schedule_run(ctx: click.Context, roots: str | None) -> None:
    """Run the scheduler in the foreground; missed runs catch up once (coalesced).

    \b
    Example:
      evolving-agent schedule run --roots ~/memory/work,~/memory/home
    """
    sched = JobScheduler(_roots(ctx, roots), log=click.echo)
    # Another scheduler on these roots is refused before anything is announced.
    sched.acquire()

    def on_ctrl_c(_signum: int, _frame: object) -> None:
        sched.request_stop()  # kept even if a job's code swallows the interrupt
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGINT, on_ctrl_c)
    except ValueError:  # not the main thread (an embedding program): keep its handler
        previous = None
    # From here on a Ctrl-C stops the scheduler cleanly, so "scheduler running" is only
    # announced once it does.
    try:
        for r in sched.next_runs():
            nxt = f"{r.next_run:%a %Y-%m-%d %H:%M %Z}" if r.next_run else "never"
            echo(f"{r.root}: {r.job} next at {nxt}")
        echo("scheduler running (Ctrl-C to stop)")
        sched.run()  # releases the roots' locks when it ends
    except KeyboardInterrupt:
        echo("scheduler stopped")
    finally:
        sched.release()  # if stopped before start() took over (a no-op after it)
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


@schedule_group.command("show")
@_roots_option
@json_option
@click.pass_context
@paged
def schedule_show(ctx: click.Context, roots: str | None, as_json: bool) -> None:
    """List each job's cron line, next run (with its weekday), last run and last problem.

    A job whose last run failed, or fell back from the requested reflector, gets a
    second line saying why ("fell back" or "failed").  Day-of-week numbers mean what
    cron means: 0 and 7 are Sunday.

    \b
    Example:
      evolving-agent schedule show
    """
    runs = JobScheduler(_roots(ctx, roots)).next_runs()
    if as_json:
        echo_json([r.model_dump(mode="json") for r in runs])
        return
    for r in runs:
        nxt = f"{r.next_run:%a %Y-%m-%d %H:%M %Z}" if r.next_run else "never"
        last = f"{r.last_run:%Y-%m-%d %H:%M}" if r.last_run else "never"
        echo(f"{r.root}  {r.job:<8} {r.cron:<16} next {nxt}  last {last}")
        if r.fallback:
            echo(f"  last run fell back: {r.fallback}")
        elif r.last_error:
            echo(f"  last run failed: {r.last_error}")


@schedule_group.command("print-cron")
@_roots_option
@click.pass_context
def schedule_print_cron(ctx: click.Context, roots: str | None) -> None:
    """Print equivalent crontab lines and systemd timer/service units.

    \b
    Example:
      evolving-agent schedule print-cron >> my-crontab.txt
    """
    echo(print_cron(validate_roots(_roots(ctx, roots))), nl=False)


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    group.add_command(schedule_group)
