"""``search report`` and ``search compare``: each parses, calls one core function, prints."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from evolving_agent.cli._common import echo_json
from evolving_agent.cli._search_options import task_options

if TYPE_CHECKING:
    from evolving_agent.search.compare import Progress

# Like search_run_cmds: the core (matplotlib, GitPython) is imported inside the commands,
# because every CLI start pays for module imports and most commands never report.


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
      evolving-agent search report runs/search-20260101-120000-forget-team
    """
    from evolving_agent.search.report import write_report

    files = write_report(run_dir, out=out)
    for path in (files.png, files.markdown, files.html):
        click.echo(str(path))


def _render_progress(event: Progress) -> None:
    head = f"[{event.index}/{event.total}] {event.policy} seed {event.seed}"
    if event.outcome is None:
        click.echo(f"{head}: running ...", err=True)
        return
    o = event.outcome
    best = "no scored candidate" if o.best_score is None else f"best {o.best_score:.6g}"
    click.echo(f"{head}: {best} ({o.turns} turns, ${o.cost_usd:.4f}, {o.wall_s:.1f} s)", err=True)


@click.command("compare")
@task_options
@click.option(
    "--policies",
    default="single,parallel,forget-team",
    show_default=True,
    help="Comma-separated policies to compare.",
)
@click.option(
    "--agents",
    default=4,
    show_default=True,
    type=int,
    help="Agents for the multi-agent policies (single and forget use 1).",
)
@click.option(
    "--rounds",
    default=4,
    show_default=True,
    type=int,
    help="Rounds for the forgetting policies (the others run 1).",
)
@click.option(
    "--turns",
    default=48,
    show_default=True,
    type=int,
    help="Total turn budget of every run, whatever its policy.",
)
@click.option(
    "--repeats",
    default=3,
    show_default=True,
    type=int,
    help="Runs per policy, with seeds SEED, SEED+1, ...",
)
@click.option("--seed", default=0, show_default=True, type=int, help="First seed.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory for the runs, compare.md and compare.json (default: runs/compare-TIMESTAMP).",
)
@click.option("--json", "as_json", is_flag=True, help="Print compare.json instead of the table.")
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
def compare_cmd(
    settings: dict[str, Any],
    policies: str,
    agents: int,
    rounds: int,
    turns: int,
    repeats: int,
    seed: int,
    out: Path | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Run several policies on one task at the same total budget, REPEATS seeds each.

    Prints a table of mean ± sd best score per policy and its improvement over
    `single` and `parallel` (positive = better, whichever the direction), like the
    paper's Table 1, and writes it to OUT/compare.md and OUT/compare.json.  Progress
    goes to stderr.

    \b
    Example (the bundled example, offline, a few minutes):
      evolving-agent search compare --candidate examples/tsp/candidate \\
        --task examples/tsp/task.md --score "python examples/tsp/score.py" --minimize \\
        --agent builtin --policies single,parallel,forget-team \\
        --agents 4 --rounds 4 --turns 48 --repeats 3
    """
    from evolving_agent.search.compare import compare_policies, format_table, parse_policies
    from evolving_agent.search.config import SearchConfig
    from evolving_agent.search.runner import new_dir

    names = parse_policies(policies)
    if out is None:  # a folder of its own, even for two comparisons started together
        out = new_dir(Path("runs") / f"compare-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}")
    base = SearchConfig(
        **settings, policy=names[0], agents=agents, rounds=rounds, turns=turns, seed=seed
    )
    result = compare_policies(
        base,
        policies=names,
        repeats=repeats,
        out=out,
        progress=None if quiet else _render_progress,
    )
    if as_json:
        echo_json(result.to_json())
        return
    click.echo(format_table(result), nl=False)
    click.echo(f"\n{result.out / 'compare.md'}\n{result.out / 'compare.json'}")


def register(group: click.Group) -> None:
    """Add this module's subcommands to the search group."""
    group.add_command(report_cmd)
    group.add_command(compare_cmd)
