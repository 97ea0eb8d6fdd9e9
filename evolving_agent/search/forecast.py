"""A budget forecaster: after round 2, where the run will end and when it reaches a target.

From the team's best at the end of each round so far (the seed first), the forecaster
takes the last round's gain ``ref`` (direction-aware: positive is better; the first
round's jump from the seed is no guide to later rounds, so from round 2 on) and the
rounds still to run ``k``, and says:

* **the final best**, an 80% interval: ``current + z10 * ref * k`` to
  ``current + z90 * ref * k``, where ``z10``/``z90`` are the 10th and 90th percentiles
  of ``z = (final - current) / (ref * k)`` over held-out runs (:data:`CALIBRATION`);
  a run whose last round gained nothing is forecast to stay where it is;
* **the turns to a target** (``target``), an 80% interval: the rounds a gain of
  ``z90 * ref`` and of ``z10 * ref`` a round would need, times the turns a round
  gets -- or "not within the budget" when even ``z90`` does not reach it in time.

It is a rule of thumb read off the run's own curve, not a model of the agents: the
interval says how far runs *like the held-out ones* went from the same position.
:data:`CALIBRATION` names the runs it was calibrated on and the coverage measured on
others (``benchmarks/bench_forecast.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from evolving_agent.search.rundir import TurnRecord
from evolving_agent.search.text import fmt_number

# z10 and z90, and where they come from: `python benchmarks/bench_forecast.py --runs 16`
# (forget-team, tsp-example, 2 agents x 4 rounds, 32 turns, seeds 100-107 calibrate,
# 108-115 are held out).  Measured coverage on the held-out runs: 4/8 for the final
# best (a round 2 without gain gives a zero-width interval, and later rounds still
# found some), 6/8 for the turns to a target.  It under-covers: read it as a guide.
Z10 = 0.0
Z90 = 0.67
CALIBRATION = "z10 0, z90 0.67 from 8 TSP runs; held-out coverage 4/8"


@dataclass(frozen=True)
class Forecast:
    after_round: int
    rounds: int
    current: float
    low: float  # the 80% interval of the final best, in score units
    high: float
    target: float | None = None
    turns_to_target: tuple[int, int | None] | None = None  # (soonest, latest); None: never

    def line(self) -> str:
        text = (
            f"forecast after round {self.after_round} of {self.rounds}: final best "
            f"{fmt_number(self.low)} to {fmt_number(self.high)} (80% interval; now "
            f"{fmt_number(self.current)})"
        )
        if self.target is not None:
            if self.turns_to_target is None:
                text += f"; target {fmt_number(self.target)} not within the budget"
            else:
                soon, late = self.turns_to_target
                later = "beyond the budget" if late is None else f"{late}"
                text += f"; target {fmt_number(self.target)} in {soon} to {later} more turns"
        return text + f" [{CALIBRATION}]"


def round_bests(
    records: Sequence[TurnRecord], seed_score: float, *, minimize: bool
) -> list[float]:
    """The team's best at the end of each round, the seed first (improved turns only:
    the run's own bookkeeping)."""
    best = seed_score
    out = [seed_score]
    rounds = max((r.round for r in records), default=0)
    for number in range(1, rounds + 1):
        for r in sorted((r for r in records if r.round == number), key=lambda r: r.seq):
            if r.improved and r.score is not None:
                best = r.score
        out.append(best)
    return out


def ratio(curve: Sequence[float], final: float, *, minimize: bool, rounds: int) -> float | None:
    """``z`` of a finished run seen after its round ``len(curve) - 1``; None: no gain to
    scale by (the calibration leaves such runs out)."""
    sign = -1.0 if minimize else 1.0
    m = len(curve) - 1
    ref = sign * (curve[m] - curve[m - 1])
    left = rounds - m
    if ref <= 0 or left <= 0:
        return None
    return sign * (final - curve[m]) / (ref * left)


def forecast(
    curve: Sequence[float],
    *,
    rounds: int,
    turns_per_round: int,
    minimize: bool,
    target: float | None = None,
    z10: float = Z10,
    z90: float = Z90,
) -> Forecast | None:
    """The forecast after round ``len(curve) - 1`` (None before round 2, or at the end)."""
    m = len(curve) - 1
    if m < 2 or m >= rounds:
        return None
    sign = -1.0 if minimize else 1.0
    current = curve[m]
    ref = max(0.0, sign * (curve[m] - curve[m - 1]))
    left = rounds - m
    low = current + sign * z10 * ref * left
    high = current + sign * z90 * ref * left
    turns: tuple[int, int | None] | None = None
    if target is not None:
        need = sign * (target - current)
        if need <= 0:
            turns = (0, 0)
        elif ref > 0 and z90 > 0 and need <= z90 * ref * left:
            soon = math.ceil(need / (z90 * ref) * turns_per_round)
            late_rounds = need / (z10 * ref) if z10 > 0 else math.inf
            late = math.ceil(late_rounds * turns_per_round) if late_rounds <= left else None
            turns = (soon, late)
    return Forecast(m, rounds, current, min(low, high), max(low, high), target, turns)


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (linear between order statistics)."""
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def report_lines(
    records: Sequence[TurnRecord],
    *,
    seed_score: float | None,
    rounds: int | None,
    minimize: bool,
) -> list[str]:
    """The report's forecast section: what the forecaster said after round 2, and where
    the run ended; [] for a run with fewer than 3 planned rounds or 2 run."""
    if seed_score is None or rounds is None or rounds < 3:
        return []
    curve = round_bests(records, seed_score, minimize=minimize)
    if len(curve) < 3:
        return []
    per_round = sum(1 for r in records if r.round == 2)
    made = forecast(curve[:3], rounds=rounds, turns_per_round=per_round, minimize=minimize)
    if made is None:
        return []
    final = curve[-1]
    where = "inside" if made.low <= final <= made.high else "outside"
    ended = (
        f"The run ended at {fmt_number(final)} after {len(curve) - 1} round(s): {where} "
        "the interval."
        if len(curve) - 1 >= rounds
        else f"The run is at {fmt_number(final)} after {len(curve) - 1} round(s)."
    )
    return ["## Forecast", "", made.line() + ".", "", ended, ""]
