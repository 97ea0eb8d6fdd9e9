"""Small, pure statistics for comparing search policies: standard library only.

Everything takes plain lists of floats and, where randomness is involved, a seed, so a
table printed twice is printed identically.

* ``bootstrap_ci``: a percentile bootstrap interval of a statistic of one sample (the
  mean by default).  With very few runs (3 seeds) it is narrower than the truth: it
  cannot see more spread than the sample shows.  Read it as "what these runs say".
* ``bootstrap_diff_ci``: the same for the relative difference of two samples' means,
  each resampled on its own.
* ``permutation_p``: a two-sided permutation test of "the two samples come from the same
  distribution", statistic = difference of means.  Exact (every split enumerated) when
  there are at most ``EXACT_LIMIT`` splits, otherwise ``rounds`` random splits with the
  usual ``(hits + 1) / (rounds + 1)`` so p is never 0.  With 3 runs against 3 there are
  only 20 splits, so p cannot go below 0.1: a small comparison *cannot* be significant,
  and the table says so rather than pretend.
* ``noise_floor``: how much better a candidate must score to count as better (see its
  docstring).
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import repeat, starmap

EXACT_LIMIT = 20_000
BOOTSTRAP_ROUNDS = 10_000
PERMUTATION_ROUNDS = 10_000
# One-sided 95% point of the standard normal: the noise floor's confidence.
Z_ONE_SIDED_95 = 1.6448536269514722


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    level: float = 0.95

    def covers(self, value: float) -> bool:
        return self.low <= value <= self.high


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default method)."""
    if not sorted_values:
        raise ValueError("no values")
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _resample_mean(values: list[float], draw: Callable[[], float]) -> float:
    """``fmean(rng.choices(values, k=len(values)))`` with ``draw = rng.random``: the same
    draws in the same order, so the same float, without choices' Python loop per element
    (a comparison's table draws millions)."""
    n = len(values)
    # the loop this is, in C: [math.floor(draw() * n) for _ in range(n)] (choices' own index)
    picks = map(math.floor, map(float(n).__mul__, starmap(draw, repeat((), n))))
    return math.fsum(map(values.__getitem__, picks)) / n


def bootstrap_ci(
    sample: Sequence[float],
    *,
    stat: Callable[[Sequence[float]], float] = statistics.fmean,
    level: float = 0.95,
    rounds: int = BOOTSTRAP_ROUNDS,
    seed: int = 0,
) -> Interval | None:
    """Percentile bootstrap interval of ``stat(sample)``; None for an empty sample."""
    values = list(sample)
    if not values:
        return None
    if len(set(values)) == 1:
        return Interval(values[0], values[0], level)
    if stat is statistics.fmean:
        return _mean_ci(tuple(values), level, rounds, seed)
    rng = random.Random(seed)
    n = len(values)
    stats = sorted(stat(rng.choices(values, k=n)) for _ in range(rounds))
    tail = (1 - level) / 2
    return Interval(_percentile(stats, tail), _percentile(stats, 1 - tail), level)


@functools.lru_cache(maxsize=1024)
def _mean_ci(sample: tuple[float, ...], level: float, rounds: int, seed: int) -> Interval:
    values = list(sample)
    rng = random.Random(seed)
    stats = sorted(_resample_mean(values, rng.random) for _ in range(rounds))
    tail = (1 - level) / 2
    return Interval(_percentile(stats, tail), _percentile(stats, 1 - tail), level)


def relative_gain(value: float, reference: float, *, minimize: bool) -> float | None:
    """How much better ``value`` is than ``reference`` in percent of ``|reference|``.

    Positive is better in either direction: minimising 80 against 100 is +20%.
    """
    if reference == 0:
        return None
    diff = reference - value if minimize else value - reference
    return diff / abs(reference) * 100


def bootstrap_diff_ci(
    sample: Sequence[float],
    reference: Sequence[float],
    *,
    minimize: bool,
    level: float = 0.95,
    rounds: int = BOOTSTRAP_ROUNDS,
    seed: int = 0,
) -> Interval | None:
    """Bootstrap interval of the relative gain (%) of ``sample``'s mean over ``reference``'s.

    Both samples are resampled independently.  None when either is empty or the
    reference mean is 0.
    """
    return _diff_ci(tuple(sample), tuple(reference), minimize, level, rounds, seed)


# A comparison re-aggregates after every run, and all but a few of its samples and pairs
# are unchanged since the last time: each is computed once (an Interval is frozen, safe
# to share).
@functools.lru_cache(maxsize=1024)
def _diff_ci(
    sample: tuple[float, ...],
    reference: tuple[float, ...],
    minimize: bool,
    level: float,
    rounds: int,
    seed: int,
) -> Interval | None:
    a, b = list(sample), list(reference)
    if not a or not b or statistics.fmean(b) == 0:
        return None
    rng = random.Random(seed)
    gains: list[float] = []
    for _ in range(rounds):
        ma = _resample_mean(a, rng.random)
        mb = _resample_mean(b, rng.random)
        gain = relative_gain(ma, mb, minimize=minimize)
        if gain is not None:
            gains.append(gain)
    if not gains:
        return None
    gains.sort()
    tail = (1 - level) / 2
    return Interval(_percentile(gains, tail), _percentile(gains, 1 - tail), level)


def permutation_p(
    a: Sequence[float],
    b: Sequence[float],
    *,
    rounds: int = PERMUTATION_ROUNDS,
    seed: int = 0,
) -> float | None:
    """Two-sided permutation p-value for a difference in means; None if a side is empty."""
    xs, ys = list(a), list(b)
    if not xs or not ys:
        return None
    pooled = xs + ys
    n, total = len(xs), sum(xs) + sum(ys)
    m = len(pooled) - n
    observed = abs(statistics.fmean(xs) - statistics.fmean(ys))
    # Float sums of the same numbers in another order differ in the last bits.
    tolerance = 1e-9 * max(1.0, max(abs(v) for v in pooled))

    def diff(first_sum: float) -> float:
        return abs(first_sum / n - (total - first_sum) / m)

    if math.comb(len(pooled), n) <= EXACT_LIMIT:
        hits = splits = 0
        for chosen in itertools.combinations(range(len(pooled)), n):
            splits += 1
            if diff(sum(pooled[i] for i in chosen)) >= observed - tolerance:
                hits += 1
        return hits / splits
    rng = random.Random(seed)
    hits = 0
    for _ in range(rounds):
        picked = rng.sample(range(len(pooled)), n)
        if diff(sum(pooled[i] for i in picked)) >= observed - tolerance:
            hits += 1
    return (hits + 1) / (rounds + 1)


def min_permutation_p(n: int, m: int) -> float:
    """The smallest two-sided p an exact test of ``n`` against ``m`` runs can give."""
    # With equal sizes the mirrored split gives the same |difference|: two hits at least.
    return min(1.0, (2 if n == m else 1) / math.comb(n + m, n))


def noise_floor(scores: Sequence[float], *, z: float = Z_ONE_SIDED_95) -> float:
    """The gain a candidate must exceed to count as better than the best so far.

    ``scores`` are the seed's ``n`` repeated scores; their sample sd ``s`` estimates the
    scorer's noise.  Every candidate is scored ``n`` times too and compared by its
    median, so the difference of two candidates' scores has a standard deviation of
    about ``s * sqrt(2 / n)``; the floor is the one-sided 95% point of that,
    ``z * s * sqrt(2 / n)`` with ``z = 1.645``.  A candidate no better than the best
    then passes by noise alone about 5% of the time (somewhat more, since a median is
    a little noisier than a mean).  One score (or identical scores) gives 0: no
    noise is visible, so any strict gain counts.
    """
    values = list(scores)
    if len(values) < 2:
        return 0.0
    sd = statistics.stdev(values)
    return z * sd * math.sqrt(2 / len(values))


def mean_sd(sample: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean and sample sd (None where undefined)."""
    values = list(sample)
    if not values:
        return None, None
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else None)
