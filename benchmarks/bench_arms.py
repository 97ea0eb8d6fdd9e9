"""The four arms at one budget: forget-team against keep-notes, parallel and single.

Run:  python benchmarks/bench_arms.py [--repeats 6] [--turns 24] [--agents 2] [--rounds 3]
                                      [--tasks tsp,circles] [--out DIR]

For each bundled task (``examples/tsp`` with the ``tsp-example`` agent, lower is
better; ``examples/circles`` with the ``circles-example`` agent and the strict
verifier as ``--holdout``, higher is better) it runs ``search compare`` with the four
arms -- ``forget-team``, ``keep-notes``, ``parallel``, ``single`` -- at the same total
turns, ``--repeats`` seeds each (the same seeds for every arm), with the test agents
(no model, no network), and prints each comparison's table verbatim: every row's mean
± sd, its 95% bootstrap interval, and against ``single``, ``parallel`` and
``keep-notes`` the relative gain with its 95% interval and the exact permutation-test
p-value (printed whether or not it is small).  Each comparison's plot (final results
per arm, best-so-far medians) is written beside its table: ``OUT/TASK/compare.png``.
The test agents report tokens too: the table's "mean tokens" column shows the arms
spent alike.  Tables and the holdout gaps go to ``OUT/arms-table.txt``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from evolving_agent.search.compare import compare_policies, format_table
from evolving_agent.search.config import SearchConfig
from evolving_agent.search.holdout import gap_rows, read_checks

REPO = Path(__file__).resolve().parents[1]
ARMS = ("forget-team", "keep-notes", "parallel", "single")
PY = sys.executable


def task_config(task: str, *, turns: int, agents: int, rounds: int) -> SearchConfig:
    folder = REPO / "examples" / task
    score = f"{PY} {folder / 'score.py'}"
    common = {
        "candidate": folder / "candidate",
        "task": folder / "task.md",
        "score_cmd": score,
        "turns": turns,
        "agents": agents,
        "rounds": rounds,
        "workdir": REPO,
        "score_timeout": 120,
    }
    if task == "tsp":
        return SearchConfig(**common, minimize=True, agent="tsp-example")
    return SearchConfig(
        **common, agent="circles-example", holdout_cmd=f"{score} --strict", holdout_margin=0.0
    )


def holdout_lines(out: Path) -> list[str]:
    """Each run's reported-minus-holdout gap per round end (runs with a holdout)."""
    lines = []
    for run in sorted(out.glob("*/seed-*")):
        rows = gap_rows(read_checks(run))
        if rows:
            gaps = " ".join(f"r{r.round}:{'-' if r.gap is None else f'{r.gap:.3g}'}" for r in rows)
            lines.append(f"  {run.parent.name}/{run.name}: gap {gaps}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--turns", type=int, default=24)
    parser.add_argument("--agents", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", default="tsp,circles")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-arms-"))
    out.mkdir(parents=True, exist_ok=True)
    report: list[str] = []
    for task in [t.strip() for t in args.tasks.split(",") if t.strip()]:
        base = task_config(task, turns=args.turns, agents=args.agents, rounds=args.rounds)
        started = time.monotonic()
        comparison = compare_policies(
            base, policies=list(ARMS), repeats=args.repeats, out=out / task,
            progress=lambda p, task=task: print(
                f"  [{task}] run {p.index}/{p.total} {p.policy} seed {p.seed}"
                + ("" if p.outcome is None else f": {p.outcome.final}"),
                file=sys.stderr,
            ),
        )  # fmt: skip
        wall = time.monotonic() - started
        direction = "lower" if base.minimize else "higher"
        head = (
            f"## {task}: {', '.join(ARMS)} at {args.turns} turns, {args.agents} agents x "
            f"{args.rounds} rounds, seeds {comparison.seeds} ({direction} is better; "
            f"{wall:.0f} s)"
        )
        section = [head, "", format_table(comparison).rstrip("\n"), ""]
        section.append(f"plot: {comparison.plot}")
        gaps = holdout_lines(out / task)
        if gaps:
            section += ["holdout gap (reported - holdout) per round end:", *gaps]
        print("\n".join(section) + "\n", flush=True)
        report += [*section, ""]
    (out / "arms-table.txt").write_text("\n".join(report) + "\n", encoding="utf-8")
    print(f"written: {out / 'arms-table.txt'}")


if __name__ == "__main__":
    main()
