"""``search run`` and ``search resume``: parse, call the runner, print the summary.

Progress goes to stderr as one status line per event (round, turns done, best score,
spend); the summary goes to stdout, as text or ``--json``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from evolving_agent.cli._common import echo_json, json_option
from evolving_agent.cli._output import echo
from evolving_agent.cli._search_options import task_options

if TYPE_CHECKING:
    from evolving_agent.search.rundir import SearchSummary
    from evolving_agent.search.runner import ProgressEvent

F = TypeVar("F", bound=Callable[..., Any])

# The search core (pydantic models and all) is imported inside the commands:
# every CLI start pays for module imports, and most commands never search.


def _progress(event: ProgressEvent) -> None:
    best = "-" if event.best_score is None else f"{event.best_score:g}"
    line = (
        f"[round {event.round}] turns {event.turns_done}/{event.turns_planned}  "
        f"best {best}  spend ${event.cost_usd:.4f} / {event.tokens} tok"
    )
    record = event.record
    if record is not None:
        score = "failed" if record.score is None else f"{record.score:g}"
        what = "empty" if record.empty else f"{record.lines_changed} lines"
        mark = " *improved*" if record.improved else ""
        line += f"  | agent {record.agent} turn {record.turn}: {score} ({what}){mark}"
        if record.attempts > 1:
            line += f" after {record.attempts} attempts"
        if record.error:
            line += f"  ERROR: {record.error[:300]}"
    elif event.message:
        line += f"  | {event.message}"
    echo(line, err=True)


def _canaries_option(help: str) -> Callable[[F], F]:
    """``--canaries K`` of ``search run --certify`` and ``search certify``."""
    return click.option(
        "--canaries", default=24, show_default=True, type=int, metavar="K", help=help
    )


def _print_search(
    search: Callable[[Callable[[ProgressEvent], None] | None], SearchSummary],
    as_json: bool,
    quiet: bool,
) -> None:
    """Run ``search`` (a run or a resume) with progress unless ``quiet`` and print its
    summary -- also when every turn failed: what a script reads, before the exit 4."""
    from evolving_agent.search.runner import TurnsFailed

    try:
        summary = search(None if quiet else _progress)
    except TurnsFailed as exc:
        _print(exc.summary, as_json)
        raise
    _print(summary, as_json)


def _print(summary: SearchSummary, as_json: bool) -> None:
    if as_json:
        echo_json(summary.model_dump(mode="json"))
        return
    gain = summary.best_score - summary.seed_score
    echo(
        f"best {summary.best_score:g} (seed {summary.seed_score:g}, {gain:+g}) after "
        f"{summary.turns}/{summary.planned_turns} turns, {summary.rounds} round(s), "
        f"{summary.agents} agent(s), ${summary.cost_usd:.4f}"
    )
    if summary.failed_turns:
        echo(
            f"failed turns: {summary.failed_turns} of {summary.turns} "
            f"(first: {summary.first_error})"
        )
    if summary.denied_calls or summary.failed_commands:
        echo(
            f"denied calls: {summary.denied_calls}, failed commands: "
            f"{summary.failed_commands} (per round and agent in `search report`)"
        )
    if summary.improved_flagged:
        echo(
            f"improved despite a denial or error: {summary.improved_flagged} turn(s) "
            "(recorded as improved; the run counts them as results)"
        )
    echo(f"run directory: {summary.run_dir}")
    if summary.best_rescored is not None:
        n = len(summary.best_rescores)
        echo(f"best re-scored: {summary.best_rescored:g} (median of {n} fresh score(s))")
    if summary.forgotten is False:
        echo(f"isolation: {summary.isolation}; its rounds were restarts, not forgetting")
    for notice in summary.notices:
        if notice.startswith("HOLDOUT ALARM"):  # the holdout's verdict on the run (holdout.py)
            echo(notice)
    if summary.certify is not None:
        _print_certify(summary.certify)


def _print_certify(result: dict[str, Any]) -> None:
    echo(result["line"])
    for item in result["found"]:
        echo(
            f"  round {item['round']}: canary from {item['place']} (planted at "
            f"{item['planted']}) found by {item['channel']} at {item['found']}"
        )
    for number, error in result.get("errors", {}).items():
        echo(f"  round {number}: the probe failed: {error}")


@click.command("run")
@task_options
@click.option(
    "--policy",
    default="forget-team",
    show_default=True,
    help="single | parallel | team | forget | forget-team | fork-and-flush | keep-notes "
    "(rounds that keep sessions, history and a shared notes file: the arm against forgetting).",
)
@click.option(
    "--agents",
    default=1,
    show_default=True,
    type=int,
    help="Agents per round (single and forget always run one).",
)
@click.option(
    "--rounds",
    default=1,
    show_default=True,
    type=int,
    help="Fixed rounds (forgetting policies only).",
)
@click.option(
    "--turns",
    default=12,
    show_default=True,
    type=int,
    help="Total agent turns for the whole run, split over agents and rounds.",
)
@click.option(
    "--out",
    default=None,
    type=click.Path(path_type=Path),
    help="Run directory (default: ./runs/search-TIMESTAMP-POLICY).",
)
@click.option(
    "--seed",
    default=0,
    show_default=True,
    type=int,
    help="Seeds the tsp-example agent (EA_SEED for command agents).",
)
@click.option(
    "--executor",
    default="local",
    show_default=True,
    help="local (threads on this machine) | ray (agents and scorers as tasks on a Ray cluster).",
)
@click.option(
    "--ray-address",
    default=None,
    metavar="ADDR",
    help="Ray cluster to join, e.g. 10.0.0.1:6379 (default: $RAY_ADDRESS, else a local Ray).",
)
@click.option(
    "--agent-resources",
    default=None,
    metavar="NAME=N,...",
    help="Ray resources per agent turn, e.g. claude=1 (default num_cpus=1).",
)
@click.option(
    "--score-resources",
    default=None,
    metavar="NAME=N,...",
    help="Ray resources per score, e.g. num_gpus=1 (default num_cpus=1).",
)
@click.option(
    "--max-scorers",
    default=None,
    type=int,
    metavar="N",
    help="At most N scores at once (any executor; default: one per agent).",
)
@click.option(
    "--env",
    "env_forward",
    multiple=True,
    metavar="NAME",
    help="On Ray, give agents and scorers this driver environment variable (repeatable), "
    "e.g. --env ANTHROPIC_API_KEY; workers otherwise see the raylet's environment.",
)
@click.option(
    "--certify",
    is_flag=True,
    help="Canary rounds: plant canaries at every round's start and probe for them as an "
    "agent would; the summary says whether forgetting was certified (docs/search.md).",
)
@_canaries_option("Canaries planted per round with --certify (at least 20).")
@json_option(help="Print the summary as JSON.")
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
def run_cmd(
    settings: dict[str, Any],
    policy: str,
    agents: int,
    rounds: int,
    turns: int,
    out: Path | None,
    seed: int,
    executor: str,
    ray_address: str | None,
    agent_resources: str | None,
    score_resources: str | None,
    max_scorers: int | None,
    env_forward: tuple[str, ...],
    certify: bool,
    canaries: int,
    as_json: bool,
    quiet: bool,
) -> None:
    """Run a scored improvement search with forgetting rounds.

    \b
    Example (the bundled example, offline, lower is better):
      evolving-agent search run --candidate examples/tsp/candidate \\
        --task examples/tsp/task.md --score "python examples/tsp/score.py" \\
        --minimize --agent tsp-example --policy forget-team --agents 2 --rounds 3 --turns 12

    A failed agent turn (cannot start, exits non-zero, times out, reports an error) is
    retried when transient and recorded with its error; a run whose turns all failed
    exits 4.  The judge refuses to score (exit 5) if a file it trusts changes.

    \b
    On a Ray cluster, one GPU per score:
      evolving-agent search run --candidate examples/tsp/candidate \\
        --task examples/tsp/task.md --score "python examples/tsp/score.py" \\
        --minimize --agent tsp-example --executor ray --score-resources num_gpus=1
    """
    from evolving_agent.search.config import SearchConfig
    from evolving_agent.search.executors import parse_resources
    from evolving_agent.search.runner import run_search
    from evolving_agent.search.sandbox import hide_command_line, make_undumpable

    config = SearchConfig(
        **settings,
        policy=policy,
        agents=agents,
        rounds=rounds,
        turns=turns,
        out=out,
        seed=seed,
        executor=executor,
        ray_address=ray_address,
        agent_resources=parse_resources(agent_resources, flag="--agent-resources"),
        score_resources=parse_resources(score_resources, flag="--score-resources"),
        max_scorers=max_scorers,
        env_forward=list(env_forward),
        certify=certify,
        canaries=canaries,
    )
    hide_command_line("evolving-agent search run")  # agents must not read the score command
    make_undumpable()  # nor its open files and folder (/proc/PID/fd, cwd)
    _print_search(lambda progress: run_search(config, progress=progress), as_json, quiet)


@click.command("resume")
@click.argument("run_dir", type=click.Path(path_type=Path))
@json_option(help="Print the summary as JSON.")
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
def resume_cmd(run_dir: Path, as_json: bool, quiet: bool) -> None:
    """Finish an interrupted search run from its directory, repeating no turn.

    \b
    Example:
      evolving-agent search resume runs/search-20260101-120000-forget-team
    """
    from evolving_agent.search.runner import resume_search
    from evolving_agent.search.sandbox import hide_command_line, make_undumpable

    hide_command_line("evolving-agent search resume")  # it names the run directory
    make_undumpable()
    _print_search(lambda progress: resume_search(run_dir, progress=progress), as_json, quiet)


@click.command("certify")
@click.argument("run_dir", type=click.Path(path_type=Path))
@_canaries_option("Canaries planted per round (at least 20).")
@json_option(help="Print the verdict as JSON.")
def certify_cmd(run_dir: Path, canaries: int, as_json: bool) -> None:
    """Probe every round of an existing run for canaries, as its agents ran.

    At each round's start, K fresh canaries are planted in everything that round's
    agents must not see, a probe runs as agent 1 would (same executor, sandbox and
    binds) and every canary it finds is named with where; the verdict goes to
    certify.json and summary.json.  Exit 0 whether or not it is certified.

    \b
    Example:
      evolving-agent search certify runs/search-20260101-120000-forget-team
    """
    from evolving_agent.search.certify_run import certify_run
    from evolving_agent.search.sandbox import hide_command_line, make_undumpable

    hide_command_line("evolving-agent search certify")  # it names the run directory
    make_undumpable()
    result = certify_run(run_dir, k=canaries)
    if as_json:
        echo_json(result)
    else:
        _print_certify(result)


def register(group: click.Group) -> None:
    """Add ``search run``, ``search resume`` and ``search certify`` to the search group."""
    group.add_command(run_cmd)
    group.add_command(resume_cmd)
    group.add_command(certify_cmd)
