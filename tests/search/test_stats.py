"""The statistics behind `search compare` and the noise floor, against known answers."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from evolving_agent.search import stats


def test_permutation_separated_samples_reach_the_smallest_possible_p() -> None:
    # 3 vs 3: 20 splits; only the observed one and its mirror are as extreme.
    assert stats.permutation_p([10, 11, 12], [1, 2, 3]) == pytest.approx(2 / 20)
    assert stats.min_permutation_p(3, 3) == pytest.approx(0.1)
    # 5 vs 5: 252 splits -> 2/252.
    p = stats.permutation_p([10, 11, 12, 13, 14], [1, 2, 3, 4, 5])
    assert p == pytest.approx(2 / 252)
    assert p < 0.01


def test_permutation_identical_samples_give_p_one() -> None:
    assert stats.permutation_p([5, 5, 5], [5, 5, 5]) == 1.0
    assert stats.permutation_p([1, 2, 3], [3, 2, 1]) == 1.0


def test_permutation_hand_computed_case() -> None:
    # a = [1, 4], b = [2, 3]: observed |2.5 - 2.5| = 0 -> every split is as extreme.
    assert stats.permutation_p([1, 4], [2, 3]) == 1.0
    # a = [1, 2], b = [3, 4]: |1.5 - 3.5| = 2; splits {1,2},{3,4} give 2 -> 2 of 6.
    assert stats.permutation_p([1, 2], [3, 4]) == pytest.approx(2 / 6)


def test_permutation_monte_carlo_is_seeded_and_close_to_exact() -> None:
    rng = random.Random(1)
    a = [rng.gauss(0.6, 1) for _ in range(12)]
    b = [rng.gauss(0, 1) for _ in range(12)]  # C(24, 12) > EXACT_LIMIT: Monte Carlo
    p1 = stats.permutation_p(a, b, seed=3)
    assert p1 == stats.permutation_p(a, b, seed=3)
    assert p1 is not None and 0 < p1 <= 1
    # A large separation drives it to the floor of 1 / (rounds + 1).
    far = stats.permutation_p([x + 100 for x in a], b, rounds=999)
    assert far == pytest.approx(1 / 1000)


def test_bootstrap_interval_covers_the_mean_and_narrows_with_n() -> None:
    rng = random.Random(7)
    small = [rng.gauss(50, 5) for _ in range(8)]
    large = [rng.gauss(50, 5) for _ in range(200)]
    ci_small = stats.bootstrap_ci(small)
    ci_large = stats.bootstrap_ci(large, rounds=2000)
    assert ci_small is not None and ci_large is not None
    assert ci_small.covers(statistics.fmean(small))
    assert ci_large.covers(statistics.fmean(large))
    assert ci_large.covers(50)  # the true mean, for a sample this large
    assert (ci_large.high - ci_large.low) < (ci_small.high - ci_small.low)
    # ~ 2 * 1.96 * 5 / sqrt(200) = 1.39
    assert 1.0 < ci_large.high - ci_large.low < 1.8
    assert stats.bootstrap_ci(small) == ci_small  # seeded: reproducible


def test_bootstrap_degenerate_samples() -> None:
    assert stats.bootstrap_ci([]) is None
    one = stats.bootstrap_ci([3.0])
    assert one is not None and (one.low, one.high) == (3.0, 3.0)


def test_bootstrap_relative_gain_interval_signs_by_direction() -> None:
    policy, base = [80.0, 82.0, 81.0], [100.0, 101.0, 99.0]
    lower = stats.bootstrap_diff_ci(policy, base, minimize=True)
    assert lower is not None and lower.low > 15 and lower.high < 23  # ~ +19%
    higher = stats.bootstrap_diff_ci(policy, base, minimize=False)
    assert higher is not None and higher.high < 0
    assert stats.relative_gain(80, 100, minimize=True) == pytest.approx(20)
    assert stats.bootstrap_diff_ci([1.0], [0.0], minimize=True) is None


def test_noise_floor_formula() -> None:
    assert stats.noise_floor([]) == 0.0
    assert stats.noise_floor([4.0]) == 0.0
    assert stats.noise_floor([4.0, 4.0, 4.0]) == 0.0
    scores = [10.0, 12.0, 14.0]  # sd 2
    assert stats.noise_floor(scores) == pytest.approx(1.6448536 * 2 * math.sqrt(2 / 3))


def test_noise_floor_tracks_known_noise_not_the_range() -> None:
    """For a scorer with sd 2, the floor sits near z * 2 * sqrt(2/n) on average,
    while the old floor (the range) grows with n."""
    sigma = 2.0
    rng = random.Random(42)
    for n in (3, 10):
        floors, ranges = [], []
        for _ in range(2000):
            xs = [100 + rng.gauss(0, sigma) for _ in range(n)]
            floors.append(stats.noise_floor(xs))
            ranges.append(max(xs) - min(xs))
        expected = stats.Z_ONE_SIDED_95 * sigma * math.sqrt(2 / n)
        # E[sample sd] = c4(n) * sigma, c4(3) = 0.886, c4(10) = 0.973.
        c4 = {3: 0.8862, 10: 0.9727}[n]
        assert statistics.fmean(floors) == pytest.approx(expected * c4, rel=0.05)
        if n == 10:
            assert statistics.fmean(floors) < statistics.fmean(ranges) / 3
    # The false-positive rate of "gain > floor" with equal candidates is ~5-10%.
    false = 0
    trials = 2000
    n = 5
    for _ in range(trials):
        seed_scores = [rng.gauss(0, sigma) for _ in range(n)]
        floor = stats.noise_floor(seed_scores)
        best = statistics.median(rng.gauss(0, sigma) for _ in range(n))
        cand = statistics.median(rng.gauss(0, sigma) for _ in range(n))
        false += cand - best > floor
    assert 0.03 < false / trials < 0.15


def _plain_diff_ci(a: list[float], b: list[float], minimize: bool) -> stats.Interval | None:
    """``bootstrap_diff_ci`` as first written: ``rng.choices`` and ``fmean`` each round."""
    rng = random.Random(0)
    gains: list[float] = []
    for _ in range(stats.BOOTSTRAP_ROUNDS):
        ma = statistics.fmean(rng.choices(a, k=len(a)))
        mb = statistics.fmean(rng.choices(b, k=len(b)))
        gain = stats.relative_gain(ma, mb, minimize=minimize)
        assert gain is not None  # the reference is never 0 here
        gains.append(gain)
    gains.sort()
    tail = (1 - 0.95) / 2
    return stats.Interval(stats._percentile(gains, tail), stats._percentile(gains, 1 - tail))


@pytest.mark.parametrize("sizes", [(1, 2), (3, 3), (6, 5), (7, 12)])
def test_the_fast_resampling_draws_what_choices_draws_to_the_last_bit(
    sizes: tuple[int, int],
) -> None:
    rng = random.Random(sum(sizes))
    a = [rng.uniform(-50, 50) for _ in range(sizes[0])]
    b = [rng.uniform(1, 90) for _ in range(sizes[1])]
    for minimize in (False, True):
        assert stats.bootstrap_diff_ci(a, b, minimize=minimize) == _plain_diff_ci(a, b, minimize)
    plain = random.Random(4)
    means = sorted(statistics.fmean(plain.choices(a, k=len(a))) for _ in range(500))
    tail = (1 - 0.95) / 2
    ci = stats.bootstrap_ci(a, rounds=500, seed=4)
    assert ci is not None
    assert (ci.low, ci.high) == (stats._percentile(means, tail), stats._percentile(means, 1 - tail))
