"""Invariants of the holdout's gate and alarm, searched with Hypothesis.

* an honest holdout (it gives every candidate the reported score) never raises the
  alarm, whatever the run's curve;
* a holdout that stays put while the reported best climbs past the floor always does;
* the restart seed the gate picks passes the gate against the seed in force, or *is*
  the seed in force; it is never a candidate the holdout gave no number.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.search.holdout import Check, Holdout, Restart, alarm, passes
from evolving_agent.search.rundir import TurnRecord

gains = st.lists(st.integers(0, 5), min_size=1, max_size=6)


def _checks(reported: list[float], held: list[float | None]) -> list[Check]:
    out = [Check("seed", 0, "c0", reported[0], held[0], True, True)]
    for n, (r, h) in enumerate(zip(reported[1:], held[1:], strict=True), 1):
        role = "final" if n == len(reported) - 1 else "restart"
        out.append(Check(role, n, f"c{n}", r, h, h is not None, role != "final"))
    return out


def _curve(steps: list[int], minimize: bool) -> list[float]:
    sign = -1 if minimize else 1
    values = [100.0]
    for step in steps:
        values.append(values[-1] + sign * step)
    return values


@settings(max_examples=200, deadline=None)
@given(steps=gains, minimize=st.booleans(), floor=st.sampled_from([0.0, 0.5, 2.0]))
def test_an_honest_holdout_never_raises_the_alarm(
    steps: list[int], minimize: bool, floor: float
) -> None:
    curve = _curve(steps, minimize)
    assert alarm(_checks(curve, list(curve)), minimize=minimize, floor=floor) is None


@settings(max_examples=200, deadline=None)
@given(steps=gains, minimize=st.booleans())
def test_a_holdout_that_stays_put_while_the_reported_best_climbs_always_does(
    steps: list[int], minimize: bool
) -> None:
    curve = _curve(steps, minimize)
    flat: list[float | None] = [100.0] * len(curve)
    warn = alarm(_checks(curve, flat), minimize=minimize, floor=0.0)
    assert (warn is not None) == (sum(steps) > 0)


def _record(seq: int, score: float) -> TurnRecord:
    return TurnRecord(
        seq=seq, round=1, agent=1, turn=seq, round_turn=seq, session="s", new_session=False,
        base_commit="c0", commit=f"k{seq}", score=score, empty=False, lines_changed=1,
        wall_s=0.1, ts="t", improved=True,
    )  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(st.integers(0, 20), min_size=1, max_size=8),
    verdicts=st.lists(st.one_of(st.none(), st.integers(0, 20)), min_size=8, max_size=8),
    margin=st.sampled_from([0.0, 1.0, 3.0]),
)
def test_the_gate_picks_a_seed_that_passes_or_keeps_the_one_in_force(
    tmp_path_factory: object, scores: list[int], verdicts: list[int | None], margin: float
) -> None:
    run_dir = Path(tmp_path_factory.mktemp("run"))  # type: ignore[attr-defined]
    held = {f"k{i + 1}": v for i, v in enumerate(verdicts)}
    held["c0"] = 10

    def judge(repo: Path, commit: str) -> tuple[float | None, str]:
        value = held[commit]
        return (None if value is None else float(value)), "verdict"

    gate = Holdout(run_dir, judge, minimize=False, margin=margin, repo_of=lambda n: run_dir)
    seed = gate.check_seed("c0", 5.0)
    records = [_record(i + 1, float(s)) for i, s in enumerate(scores)]
    top = max(records, key=lambda r: (r.score, -r.seq))
    assert top.score is not None
    best = Restart(top.commit, top.score, 1)
    start = gate.restart_seed(2, records, best)
    if start.commit == "c0":
        assert start.score == 5.0  # the seed in force, again
    else:
        verdict = held[start.commit]
        assert verdict is not None
        assert passes(float(verdict), seed.holdout, minimize=False, margin=margin)
        assert start.score > 5.0
    chosen = [c for c in gate.checks if c.chosen and c.round == 1]
    assert len(chosen) == 1 and chosen[0].commit == start.commit
