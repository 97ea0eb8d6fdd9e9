"""Calibrate the budget forecaster and measure its coverage on held-out runs.

Run:  python benchmarks/bench_forecast.py [--runs 16] [--rounds 4] [--turns 32] [--agents 2]

Runs ``--runs`` forget-team searches of the bundled TSP example with the tsp-example
agent (seeds 100, 101, ...).  The first half calibrates: for each run seen after round
2, ``z = (final - best after round 2) / (ref * rounds left)`` (``search/forecast.py``),
and z10/z90 are its 10th and 90th percentiles.  The second half is held out: the
coverage is the share of its runs whose final best lies inside the 80% interval the
calibrated forecaster gave after round 2, and likewise for the turns to a target (the
calibration runs' median final best).  Prints the constants to put in forecast.py and
both coverages.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from evolving_agent.search.config import SearchConfig
from evolving_agent.search.forecast import forecast, quantile, ratio, round_bests
from evolving_agent.search.rundir import RunDir
from evolving_agent.search.runner import run_search

REPO = Path(__file__).resolve().parents[1]
TSP = REPO / "examples" / "tsp"


def one_run(out: Path, seed: int, args: argparse.Namespace) -> tuple[list[float], int, float]:
    config = SearchConfig(
        candidate=TSP / "candidate", task=TSP / "task.md",
        score_cmd=f"{sys.executable} {TSP / 'score.py'}", minimize=True, agent="tsp-example",
        policy="forget-team", agents=args.agents, rounds=args.rounds, turns=args.turns,
        seed=seed, out=out / f"seed-{seed}", workdir=REPO,
    )  # fmt: skip
    summary = run_search(config)
    records = RunDir(summary.run_dir).read_log()
    assert summary.seed_score is not None
    curve = round_bests(records, summary.seed_score, minimize=True)
    return curve, summary.turns, curve[-1]


def reached_at(run_dir: Path, target: float) -> int | None:
    """The turn count at which the team's best first reached ``target`` (minimising)."""
    for index, r in enumerate(sorted(RunDir(run_dir).read_log(), key=lambda r: r.seq), 1):
        if r.improved and r.score is not None and r.score <= target:
            return index
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--turns", type=int, default=32)
    parser.add_argument("--agents", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-forecast-"))
    runs = []
    for k in range(args.runs):
        curve, turns, final = one_run(out, 100 + k, args)
        runs.append((100 + k, curve, final))
        print(f"  seed {100 + k}: round bests {[round(c, 1) for c in curve]}", file=sys.stderr)
    half = args.runs // 2
    calib, held = runs[:half], runs[half:]
    per_round = args.turns // args.rounds
    zs = [
        z
        for _, curve, final in calib
        if (z := ratio(curve[:3], final, minimize=True, rounds=args.rounds)) is not None
    ]
    z10, z90 = (quantile(zs, 0.1), quantile(zs, 0.9)) if zs else (0.0, 0.0)
    target = statistics.median(final for _, _, final in calib)
    inside = turns_inside = 0
    for seed, curve, final in held:
        f = forecast(
            curve[:3], rounds=args.rounds, turns_per_round=per_round, minimize=True,
            target=target, z10=z10, z90=z90,
        )  # fmt: skip
        assert f is not None
        inside += f.low <= final <= f.high
        done = 2 * per_round
        hit = reached_at(out / f"seed-{seed}", target)
        extra = None if hit is None else max(0, hit - done)
        if f.turns_to_target is None:
            turns_inside += extra is None
        else:
            soon, late = f.turns_to_target
            turns_inside += extra is not None and soon <= extra and (late is None or extra <= late)
        print(f"  held-out seed {seed}: {f.line()}; final {final:g}, target hit {extra}")
    print(f"calibrated on {len(calib)} runs ({len(zs)} with a gain to scale): "
          f"Z10 = {z10:.3f}, Z90 = {z90:.3f}")  # fmt: skip
    print(f"coverage of the 80% final-best interval on {len(held)} held-out runs: "
          f"{inside}/{len(held)}")  # fmt: skip
    print(f"coverage of the turns-to-target interval (target {target:g}): "
          f"{turns_inside}/{len(held)}")  # fmt: skip


if __name__ == "__main__":
    main()
