"""``search report`` and ``search compare``: each parses, calls one core function, prints."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from evolving_agent.cli._common import echo_json, json_option
from evolving_agent.cli._output import echo, paged
from evolving_agent.cli._search_options import task_options

if TYPE_CHECKING:
    from evolving_agent.search.compare import Progress
    from evolving_agent.search.report import RunReport
    from evolving_agent.search.rundir import TurnRecord

# Like search_run_cmds: the core (matplotlib and all) is imported inside the commands,
# because every CLI start pays for module imports and most commands never report.


def report_summary(report: RunReport) -> list[str]:
    """What the report found, in a few lines before the paths of the files it wrote."""
    from evolving_agent.search.report import score_gain
    from evolving_agent.search.text import fmt_number

    gain = score_gain(report.seed_score, report.best_score, report.minimize)
    pct = (
        f", {gain / abs(report.seed_score) * 100:+.1f}%"
        if gain is not None and report.seed_score
        else ""
    )
    better = "lower" if report.minimize else "higher"
    forgets = len(report.forgets)
    return [
        f"{report.run_dir.name}: policy {report.policy}, {len(report.records)} turns, "
        f"{forgets} forget{'s' if forgets != 1 else ''}",
        f"best {fmt_number(report.best_score)} from a seed of {fmt_number(report.seed_score)} "
        f"({better} is better; gain {fmt_number(gain)}{pct})",
        *(f"warning: {w}" for w in report.warnings),
    ]


@click.command("report")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write the report here instead of into RUN_DIR.",
)
@paged
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
    from evolving_agent.search.report_render import write_report

    files = write_report(run_dir, out=out)
    for line in report_summary(files.report):
        echo(line)
    for label, path in (("plot", files.png), ("markdown", files.markdown), ("page", files.html)):
        echo(f"{label + ':':10}{path}")


def _render_progress(event: Progress) -> None:
    head = f"[{event.index}/{event.total}] {event.policy} seed {event.seed}"
    if event.outcome is None:
        echo(f"{head}: running ...", err=True)
        return
    o = event.outcome
    best = "no scored candidate" if o.best_score is None else f"best {o.best_score:.6g}"
    echo(f"{head}: {best} ({o.turns} turns, ${o.cost_usd:.4f}, {o.wall_s:.1f} s)", err=True)


@click.command("compare")
@task_options
@click.option(
    "--policies",
    default="single,parallel,forget-team",
    show_default=True,
    help="Comma-separated policies to compare; NAME+plateau runs a forgetting policy "
    "with --forget-on-plateau K beside its fixed-round self. Every row is measured "
    "against single, parallel and keep-notes when they run (the four arms: "
    "forget-team,keep-notes,parallel,single).",
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
@json_option(help="Print compare.json instead of the table.")
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

    Prints a table like the paper's Table 1: per policy the mean ± sd of the runs'
    final bests (re-scored after each search) with a 95% bootstrap interval, and its
    improvement over `single` and `parallel` (positive = better, whichever the
    direction) with a 95% bootstrap interval and a permutation-test p-value.  Writes
    OUT/compare.md, OUT/compare.json and OUT/compare.png (each policy's final results
    with their mean and 95% interval, then the median best-so-far curves against turns
    and spend).  Progress goes to stderr.

    Plateau forgetting beside the baselines: add `forget-team+plateau` to --policies
    with --forget-on-plateau K.

    \b
    Example (the bundled example, offline, a few minutes):
      evolving-agent search compare --candidate examples/tsp/candidate \\
        --task examples/tsp/task.md --score "python examples/tsp/score.py" --minimize \\
        --agent tsp-example --policies single,parallel,forget-team \\
        --agents 4 --rounds 4 --turns 48 --repeats 3
    """
    from evolving_agent.search.compare import compare_policies, format_table, parse_policies
    from evolving_agent.search.config import SearchConfig

    names = parse_policies(policies)
    base = SearchConfig(
        **settings,
        policy=names[0].removesuffix("+plateau"),
        agents=agents,
        rounds=rounds,
        turns=turns,
        seed=seed,
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
    echo(format_table(result), nl=False)
    echo(f"\n{result.out / 'compare.md'}\n{result.out / 'compare.json'}")
    if result.plot is not None:
        echo(str(result.plot))


@click.command("plateau-test")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option(
    "--turns",
    required=True,
    type=int,
    help="Turns for each side, per repeat (total over the run's agents).",
)
@click.option(
    "--repeats",
    default=3,
    show_default=True,
    type=int,
    help="Times each side runs, each from fresh copies (intervals need at least 2).",
)
@click.option(
    "--window",
    default=None,
    type=int,
    metavar="K",
    help="Plateau rule: none of the run's last K turns improved (default max(4, 2 x agents)).",
)
@click.option(
    "--session-age",
    default=4,
    show_default=True,
    type=int,
    metavar="K",
    help="Plateau rule: every session to continue has taken at least K turns.",
)
@click.option("--force", is_flag=True, help="Measure even if the run has not plateaued.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory for the results (default: RUN_DIR-plateau beside the run).",
)
@json_option(help="Print plateau-test.json instead.")
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
def plateau_test_cmd(
    run_dir: Path,
    turns: int,
    repeats: int,
    window: int | None,
    session_age: int,
    force: bool,
    out: Path | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Continue or forget from the same plateau: the gain and cost of each.

    Checks the run plateaued (none of its last K turns improved and every session is
    at least --session-age turns old; else it refuses and says why), then from its
    best candidate runs each side --repeats times on copies (the run is never
    modified): N turns continuing the sessions the run ended with
    (told truthfully what their workspace now holds) and N turns with fresh sessions.
    Prints each side's mean gain with a 95% interval, cost and edit sizes, and an exact
    permutation test of fresh against continued gains; the ratio of gains only when
    that test is significant at the 5% level (and a warning below 5 repeats).  Writes
    OUT/plateau-test.json and .md.

    \b
    Example:
      evolving-agent search plateau-test runs/search-20260101-120000-forget-team \\
        --turns 8 --repeats 3
    """
    from evolving_agent.search.plateau import format_table, plateau_test, verdict_line

    if turns < 1:
        raise click.UsageError(f"--turns must be at least 1, got {turns}")

    def show(side: str, record: TurnRecord) -> None:
        score = "failed" if record.score is None else f"{record.score:g}"
        what = "empty" if record.empty else f"{record.lines_changed} lines"
        mark = " *improved*" if record.improved else ""
        echo(f"[{side}] agent {record.agent} turn {record.turn}: {score} ({what}){mark}", err=True)

    result = plateau_test(
        run_dir, turns=turns, repeats=repeats, out=out, window=window,
        session_age=session_age, force=force,
        progress=None if quiet else show,
    )  # fmt: skip
    if as_json:
        echo_json(result.to_json())
        return
    echo(f"plateau: {result.check.describe()}" + (" (forced)" if result.forced else ""))
    echo(format_table(result), nl=False)
    echo(f"\n{verdict_line(result)}")
    echo(f"\n{result.out / 'plateau-test.md'}\n{result.out / 'plateau-test.json'}")


def register(group: click.Group) -> None:
    """Add this module's subcommands to the search group."""
    group.add_command(report_cmd)
    group.add_command(compare_cmd)
    group.add_command(plateau_test_cmd)
