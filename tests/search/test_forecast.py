"""The budget forecaster's arithmetic (its calibration is benchmarks/bench_forecast.py)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.search.forecast import Z10, Z90, forecast, quantile, ratio, round_bests
from evolving_agent.search.report_render import write_report
from evolving_agent.search.rundir import TurnRecord
from evolving_agent.search.runner import run_search
from evolving_agent.search.text import fmt_number
from tests.helpers.search import config, make_candidate, make_task, write_agent, write_scorer


def _rec(seq: int, rnd: int, score: float, improved: bool) -> TurnRecord:
    return TurnRecord(
        seq=seq, round=rnd, agent=1, turn=seq, round_turn=seq, session="s", new_session=False,
        base_commit="b", commit=f"c{seq}", score=score, empty=False, lines_changed=1,
        wall_s=0.1, ts="t", improved=improved,
    )  # fmt: skip


def test_round_bests_follow_the_runs_own_improvements() -> None:
    records = [
        _rec(1, 1, 90, True), _rec(2, 1, 95, False), _rec(3, 2, 80, True),
        _rec(4, 3, 85, False),
    ]  # fmt: skip
    assert round_bests(records, 100, minimize=True) == [100, 90, 80, 80]


def test_the_interval_scales_the_last_rounds_gain_by_the_rounds_left() -> None:
    f = forecast([200, 90, 80], rounds=4, turns_per_round=8, minimize=True, z10=0.1, z90=0.5)
    assert f is not None
    assert (f.low, f.high) == (80 - 0.5 * 10 * 2, 80 - 0.1 * 10 * 2)
    # maximising, the same shape upwards
    g = forecast([1, 3, 4], rounds=3, turns_per_round=8, minimize=False, z10=0.0, z90=1.0)
    assert g is not None and (g.low, g.high) == (4, 5)


def test_turns_to_a_target() -> None:
    f = forecast(
        [100, 90, 80], rounds=5, turns_per_round=8, minimize=True, target=75, z10=0.25, z90=1.0
    )
    assert f is not None
    # 5 to gain: 0.5 round at 10 a round (4 turns), 2 rounds at 2.5 a round (16 turns)
    assert f.turns_to_target == (4, 16)
    assert "target 75 in 4 to 16 more turns" in f.line()
    far = forecast(
        [100, 90, 80], rounds=3, turns_per_round=8, minimize=True, target=10, z10=0.25, z90=1.0
    )
    assert far is not None and far.turns_to_target is None and "not within" in far.line()
    done = forecast([100, 90, 80], rounds=3, turns_per_round=8, minimize=True, target=85)
    assert done is not None and done.turns_to_target == (0, 0)


def test_no_forecast_before_round_two_or_after_the_last() -> None:
    assert forecast([100, 90], rounds=4, turns_per_round=8, minimize=True) is None
    assert forecast([100, 90, 80], rounds=2, turns_per_round=8, minimize=True) is None


@settings(max_examples=200, deadline=None)
@given(
    curve=st.lists(st.integers(0, 50), min_size=3, max_size=3),
    final_gain=st.integers(0, 100),
    rounds=st.integers(3, 6),
)
def test_a_run_whose_z_is_inside_the_calibration_range_is_inside_the_interval(
    curve: list[int], final_gain: int, rounds: int
) -> None:
    """The interval and the calibration ratio agree: z in [z10, z90] <=> final inside."""
    up = [float(sum(curve[: i + 1])) for i in range(3)]  # a rising curve, maximising
    final = up[-1] + final_gain
    z = ratio(up, final, minimize=False, rounds=rounds)
    f = forecast(up, rounds=rounds, turns_per_round=4, minimize=False, z10=0.2, z90=0.8)
    assert f is not None
    if z is not None:
        assert (0.2 <= z <= 0.8) == (f.low - 1e-9 <= final <= f.high + 1e-9)


def test_quantile() -> None:
    assert quantile([3, 1, 2], 0.5) == 2
    assert quantile([0, 10], 0.9) == 9


def test_a_run_says_its_forecast_when_round_three_starts_and_the_report_keeps_it(
    tmp_path: Path,
) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, "write(value() + 1)\n")
    cfg = config(
        tmp_path, agent_cmd=agent, score_cmd=write_scorer(tmp_path), policy="forget",
        rounds=4, turns=8, sandbox="none",
    )  # fmt: skip
    messages: list[str] = []
    summary = run_search(cfg, progress=lambda e: messages.append(e.message))
    said = [m for m in messages if "forecast after round 2 of 4" in m]
    assert len(said) == 1 and said[0].startswith("round 3 starts; ")
    # 2 a round so far, 2 rounds left: the final is 4 + 4 * z10 to 4 + 4 * z90.
    low, high = fmt_number(4 + 4 * Z10), fmt_number(4 + 4 * Z90)
    assert f"final best {low} to {high} (80% interval; now 4)" in said[0]
    md = write_report(summary.run_dir).markdown.read_text()
    where = "inside" if 8 <= 4 + 4 * Z90 else "outside"
    assert "## Forecast" in md and f"The run ended at 8 after 4 round(s): {where}" in md
