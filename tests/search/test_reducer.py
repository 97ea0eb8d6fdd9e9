"""The reducer alone: pure decisions from hand-written records, one policy at a time."""

from __future__ import annotations

from typing import Any

import pytest

from evolving_agent.search.presets import PRESETS
from evolving_agent.search.reducer import (
    RoundPlan,
    SearchState,
    better,
    decide,
    plan_round,
    plateau_signal,
)
from evolving_agent.search.rundir import TurnRecord


def rec(
    seq: int,
    *,
    round: int = 1,
    agent: int = 1,
    score: float | None = 1.0,
    improved: bool = False,
    lines: int = 3,
    session: str | None = "s",
    **kw: Any,
) -> TurnRecord:
    return TurnRecord(
        seq=seq,
        round=round,
        agent=agent,
        turn=seq,
        round_turn=seq,
        session=session,
        new_session=False,
        base_commit="b",
        commit=f"c{seq}",
        score=score,
        empty=lines == 0,
        lines_changed=lines,
        wall_s=0.1,
        ts="t",
        improved=improved,
        **kw,
    )


def plan(number: int = 1, quotas: tuple[int, ...] = (5, 5), **kw: Any) -> RoundPlan:
    return RoundPlan(number, "start", 0.0, quotas, **kw)


def state(records: list[TurnRecord], **kw: Any) -> SearchState:
    return SearchState(tuple(records), plan(**kw))


def test_first_turn_of_a_round_is_a_new_session_that_sees_only_the_start() -> None:
    old = [rec(1, round=1, agent=1, session="old", improved=True, score=5.0)]
    d = decide(state(old, number=2), preset=PRESETS["forget-team"], agent=1, minimize=False)
    assert d.run_turn and d.new_session and d.session_id is None
    assert [v.kind for v in d.visible] == ["start"]


def test_later_turns_continue_the_rounds_session() -> None:
    rs = [rec(1, agent=1, session="s1"), rec(2, agent=2, session="s2")]
    d = decide(state(rs), preset=PRESETS["forget-team"], agent=1, minimize=False)
    assert d.run_turn and not d.new_session and d.session_id == "s1"


@pytest.mark.parametrize(
    ("policy", "kinds"),
    [
        ("parallel", ["start", "own"]),
        ("single", ["start", "own"]),
        ("team", ["start", "own", "peer-best"]),
        ("forget-team", ["start", "own", "peer-best"]),
    ],
)
def test_peers_best_is_visible_only_to_sharing_policies(policy: str, kinds: list[str]) -> None:
    rs = [
        rec(1, agent=1, score=1.0),
        rec(2, agent=2, score=9.0),
        rec(3, agent=2, score=4.0),
    ]
    d = decide(state(rs), preset=PRESETS[policy], agent=1, minimize=False)
    assert [v.kind for v in d.visible] == kinds
    if "peer-best" in kinds:
        peer = d.visible[-1]
        assert (peer.agent, peer.score, peer.commit) == (2, 9.0, "c2")


def test_peer_best_respects_direction() -> None:
    rs = [rec(1, agent=1), rec(2, agent=2, score=9.0), rec(3, agent=2, score=4.0)]
    d = decide(state(rs), preset=PRESETS["team"], agent=1, minimize=True)
    assert d.visible[-1].score == 4.0


def test_forget_hides_earlier_rounds_but_fork_and_flush_keeps_them() -> None:
    rs = [rec(1, round=1, agent=1), rec(2, round=2, agent=1)]
    forget = decide(state(rs, number=2), preset=PRESETS["forget-team"], agent=1, minimize=False)
    keep = decide(state(rs, number=2), preset=PRESETS["fork-and-flush"], agent=1, minimize=False)
    assert [v.commit for v in forget.visible if v.kind == "own"] == ["c2"]
    assert [v.commit for v in keep.visible if v.kind == "own"] == ["c1", "c2"]
    assert keep.new_session is False  # second turn of round 2 continues round 2's session


def test_quota_stops_an_agent_and_closing_stops_everyone() -> None:
    rs = [rec(1, agent=1), rec(2, agent=1)]
    assert not decide(
        state(rs, quotas=(2, 2)), preset=PRESETS["team"], agent=1, minimize=False
    ).run_turn
    assert decide(
        state(rs, quotas=(2, 2)), preset=PRESETS["team"], agent=2, minimize=False
    ).run_turn
    closing = SearchState(tuple(rs), plan(quotas=(5, 5)), closing="plateau")
    assert not decide(closing, preset=PRESETS["team"], agent=2, minimize=False).run_turn


def test_budget_ends_the_round() -> None:
    rs = [rec(1, cost_usd=0.6), rec(2, agent=2, cost_usd=0.5)]
    d = decide(state(rs, budget_usd=1.0), preset=PRESETS["forget-team"], agent=1, minimize=False)
    assert (d.run_turn, d.end_round) == (False, "budget")
    d = decide(state(rs, budget_usd=1.2), preset=PRESETS["forget-team"], agent=1, minimize=False)
    assert d.run_turn


def test_plateau_fires_exactly_after_k_turns_without_improvement() -> None:
    rs = [rec(1, improved=True), rec(2, improved=True), rec(3), rec(4)]
    assert plateau_signal(rs[:3], 2) is None  # one non-improving turn so far
    assert plateau_signal(rs, 2) == "plateau"
    assert plateau_signal(rs, 3) is None
    d = decide(state(rs), preset=PRESETS["forget"], agent=1, minimize=False, forget_on_plateau=2)
    assert (d.run_turn, d.end_round) == (False, "plateau")


def test_shrinking_edits_ending_in_an_empty_turn_fire() -> None:
    # K=4 -> window of 2: a non-empty turn followed by an empty one.
    shrinking = [rec(1, improved=True, lines=40), rec(2, improved=True, lines=6), rec(3, lines=0)]
    assert plateau_signal(shrinking, 4) == "shrinking"
    growing = [
        rec(1, improved=True, lines=2),
        rec(2, improved=True, lines=0),
        rec(3, improved=True, lines=30),
    ]
    assert plateau_signal(growing, 4) is None


def test_plateau_is_ignored_by_policies_that_never_forget() -> None:
    rs = [rec(1), rec(2), rec(3)]
    d = decide(state(rs), preset=PRESETS["team"], agent=1, minimize=False, forget_on_plateau=1)
    assert d.run_turn


def test_plan_round_splits_what_is_left_over_the_remaining_rounds() -> None:
    first = plan_round(
        number=1, previous=[], shares=[5, 4], rounds=3, start_commit="s", start_score=0.0
    )
    assert first is not None and first.quotas == (2, 2)
    # Round 1 ended early (plateau) after one turn of agent 1: round 2 gets more.
    second = plan_round(
        number=2,
        previous=[rec(1, agent=1)],
        shares=[5, 4],
        rounds=3,
        start_commit="s",
        start_score=0.0,
    )
    assert second is not None and second.quotas == (2, 2)
    beyond = plan_round(
        number=4,
        previous=[rec(i, agent=1) for i in range(1, 5)],
        shares=[5, 4],
        rounds=3,
        start_commit="s",
        start_score=0.0,
    )
    assert beyond is not None and beyond.quotas == (1, 4)
    done = plan_round(
        number=2,
        previous=[rec(1, agent=1)],
        shares=[1],
        rounds=2,
        start_commit="s",
        start_score=0.0,
    )
    assert done is None


def test_plan_round_splits_money_and_stops_when_spent() -> None:
    p = plan_round(
        number=2,
        previous=[rec(1, cost_usd=1.0)],
        shares=[9],
        rounds=3,
        start_commit="s",
        start_score=0.0,
        budget_usd=3.0,
    )
    assert p is not None and p.budget_usd == pytest.approx(1.0)
    assert (
        plan_round(
            number=2,
            previous=[rec(1, cost_usd=3.0)],
            shares=[9],
            rounds=3,
            start_commit="s",
            start_score=0.0,
            budget_usd=3.0,
        )
        is None
    )


def test_better_needs_to_beat_the_noise_floor() -> None:
    assert better(10.5, 10.0, minimize=False)
    assert not better(10.5, 10.0, minimize=False, floor=0.8)
    assert better(11.0, 10.0, minimize=False, floor=0.8)
    assert better(9.0, 10.0, minimize=True, floor=0.8)
    assert not better(10.0, 10.0, minimize=True)


def test_token_budget_ends_the_round() -> None:
    rs = [rec(1, input_tokens=600, output_tokens=100), rec(2, agent=2, input_tokens=300)]
    d = decide(
        state(rs, budget_tokens=1000), preset=PRESETS["forget-team"], agent=1, minimize=False
    )
    assert (d.run_turn, d.end_round) == (False, "budget")
    assert decide(
        state(rs, budget_tokens=1001), preset=PRESETS["forget-team"], agent=1, minimize=False
    ).run_turn
