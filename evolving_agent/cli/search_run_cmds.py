"""``search run`` and ``search resume``: parse, call the runner, print the summary.

Progress goes to stderr as one status line per event (round, turns done, best score,
spend); the summary goes to stdout, as text or ``--json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from evolving_agent.cli._common import echo_json
from evolving_agent.errors import UsageError

if TYPE_CHECKING:
    from evolving_agent.search.runner import ProgressEvent
    from evolving_agent.search.state import SearchSummary

# The search core (GitPython, pydantic models) is imported inside the commands:
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
    elif event.message:
        line += f"  | {event.message}"
    click.echo(line, err=True)


def _print(summary: SearchSummary, as_json: bool) -> None:
    if as_json:
        echo_json(summary.model_dump(mode="json"))
        return
    gain = summary.best_score - summary.seed_score
    click.echo(
        f"best {summary.best_score:g} (seed {summary.seed_score:g}, {gain:+g}) after "
        f"{summary.turns}/{summary.planned_turns} turns, {summary.rounds} round(s), "
        f"{summary.agents} agent(s), ${summary.cost_usd:.4f}"
    )
    click.echo(f"run directory: {summary.run_dir}")


def _token_prices(value: str | None) -> dict[str, float] | None:
    if value is None:
        return None
    text = Path(value).read_text() if Path(value).is_file() else value
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--token-prices must be JSON or a JSON file: {exc.msg}") from None
    if not isinstance(data, dict) or not all(isinstance(v, int | float) for v in data.values()):
        raise UsageError('--token-prices must map names to numbers, e.g. {"output": 10}')
    return {str(k): float(v) for k, v in data.items()}


@click.command("run")
@click.option(
    "--candidate",
    required=True,
    type=click.Path(path_type=Path),
    help="Directory holding the seed candidate.",
)
@click.option(
    "--task",
    required=True,
    type=click.Path(path_type=Path),
    help="File with the task instructions every agent gets.",
)
@click.option(
    "--score",
    "score_cmd",
    required=True,
    help="Score command; run outside the workspace with $EA_CANDIDATE set to a "
    "clean export ({candidate} is replaced too); last stdout line = score.",
)
@click.option("--minimize", is_flag=True, help="Lower scores are better.")
@click.option(
    "--agent", default="builtin", show_default=True, help="claude | codex | command | builtin."
)
@click.option(
    "--agent-cmd",
    default=None,
    help="Command for --agent command (or the claude/codex executable).",
)
@click.option(
    "--agent-args",
    default=None,
    help='Extra arguments for the agent, e.g. "--permission-mode acceptEdits" '
    'for claude or "--full-auto" for codex.',
)
@click.option(
    "--policy",
    default="forget-team",
    show_default=True,
    help="single | parallel | team | forget | forget-team | fork-and-flush.",
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
@click.option("--budget-usd", default=None, type=float, help="Dollar cap, split over rounds.")
@click.option("--budget-tokens", default=None, type=int, help="Token cap, split over rounds.")
@click.option(
    "--forget-on-plateau",
    default=None,
    type=int,
    metavar="K",
    help="Also forget after K turns without team improvement, or when edits shrink to empty turns.",
)
@click.option(
    "--out",
    default=None,
    type=click.Path(path_type=Path),
    help="Run directory (default: ./runs/search-TIMESTAMP-POLICY).",
)
@click.option("--score-timeout", default=60.0, show_default=True, type=float)
@click.option("--turn-timeout", default=600.0, show_default=True, type=float)
@click.option(
    "--score-repeats",
    default=1,
    show_default=True,
    type=int,
    help="Score each candidate N times and keep the median; the seed's spread "
    "is the noise floor an improvement must beat.",
)
@click.option(
    "--seed",
    default=0,
    show_default=True,
    type=int,
    help="Seeds the builtin agent (EA_SEED for command agents).",
)
@click.option(
    "--token-prices",
    default=None,
    help="JSON (or JSON file) of USD per million tokens for codex: "
    '{"input": 1.25, "cached_input": 0.125, "output": 10}.',
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
def run_cmd(
    candidate: Path,
    task: Path,
    score_cmd: str,
    minimize: bool,
    agent: str,
    agent_cmd: str | None,
    agent_args: str | None,
    policy: str,
    agents: int,
    rounds: int,
    turns: int,
    budget_usd: float | None,
    budget_tokens: int | None,
    forget_on_plateau: int | None,
    out: Path | None,
    score_timeout: float,
    turn_timeout: float,
    score_repeats: int,
    seed: int,
    token_prices: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Run a scored improvement search with forgetting rounds.

    \b
    Example (the bundled example, offline, lower is better):
      evolving-agent search run --candidate examples/tsp/candidate \\
        --task examples/tsp/task.md --score "python examples/tsp/score.py" \\
        --minimize --agent builtin --policy forget-team --agents 2 --rounds 3 --turns 12
    """
    from evolving_agent.search.config import SearchConfig
    from evolving_agent.search.runner import run_search

    config = SearchConfig(
        candidate=candidate,
        task=task,
        score_cmd=score_cmd,
        minimize=minimize,
        agent=agent,
        agent_cmd=agent_cmd,
        agent_args=agent_args,
        policy=policy,
        agents=agents,
        rounds=rounds,
        turns=turns,
        budget_usd=budget_usd,
        budget_tokens=budget_tokens,
        forget_on_plateau=forget_on_plateau,
        out=out,
        score_timeout=score_timeout,
        turn_timeout=turn_timeout,
        score_repeats=score_repeats,
        seed=seed,
        token_prices=_token_prices(token_prices),
    )
    summary = run_search(config, progress=None if quiet else _progress)
    _print(summary, as_json)


@click.command("resume")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
def resume_cmd(run_dir: Path, as_json: bool, quiet: bool) -> None:
    """Finish an interrupted search run from its directory, repeating no turn.

    \b
    Example:
      evolving-agent search resume runs/search-20260101-120000-forget-team
    """
    from evolving_agent.search.runner import resume_search

    summary = resume_search(run_dir, progress=None if quiet else _progress)
    _print(summary, as_json)


def register(group: click.Group) -> None:
    """Add ``search run`` and ``search resume`` to the search group."""
    group.add_command(run_cmd)
    group.add_command(resume_cmd)
