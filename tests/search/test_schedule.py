"""Seeded, reproducible teams (issue 32): a run is the same run, whatever the threads.

The agent here (``SEES_PEERS``) builds on whatever its prompt shows and sleeps a truly
random while first, so on a schedule driven by thread timing two runs differ at once;
on the logical clock (``schedule.py``) they are identical, run after run, and a run
interrupted with SIGINT and resumed is the same run as one left alone.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.search.aftermath import Tally
from evolving_agent.search.presets import preset_for
from evolving_agent.search.reducer import RoundPlan
from evolving_agent.search.rundir import TurnRecord
from evolving_agent.search.runner import run_search
from evolving_agent.search.schedule import Rules, Slot, next_step, plan_step
from tests.helpers.search import (
    PY,
    SEES_PEERS,
    agent_log,
    config,
    make_candidate,
    make_task,
    records,
    run_fingerprint,
    write_agent,
    write_scorer,
)

TEAM = {"policy": "forget-team", "agents": 3, "rounds": 2, "turns": 18, "seed": 7}


def _setup(tmp: Path, jitter: float = 0.3) -> tuple[str, str]:
    make_candidate(tmp)
    make_task(tmp)
    return write_scorer(tmp), write_agent(tmp, SEES_PEERS.format(jitter=jitter))


@pytest.mark.slow
def test_the_same_team_run_four_times_is_the_same_run(tmp_path: Path) -> None:
    score, agent = _setup(tmp_path)
    prints, bests = [], []
    for n in range(4):
        out = tmp_path / f"run-{n}"
        summary = run_search(config(tmp_path, score_cmd=score, agent_cmd=agent, out=out, **TEAM))
        bests.append(summary.best_score)
        prints.append(run_fingerprint(out))
        (tmp_path / "agent.py.log").rename(tmp_path / f"agent-{n}.log")
    assert len(set(prints)) == 1, (bests, prints)
    rows = records(tmp_path / "run-0")
    # The run really was a team's: later turns were shown teammates' results.
    assert any(r["peers"] for r in rows)
    assert len(rows) == 18 and all(r["error"] is None for r in rows)


def _cli(*args: str) -> list[str]:
    return [PY, "-m", "evolving_agent", "search", *args, "--quiet"]


def _started(tmp: Path) -> int:
    return len(agent_log(tmp))


@pytest.mark.slow
def test_a_run_resumed_after_sigint_at_random_points_is_the_same_run(tmp_path: Path) -> None:
    score, agent = _setup(tmp_path, jitter=0.2)
    cfg = config(tmp_path, score_cmd=score, agent_cmd=agent, out=tmp_path / "alone", **TEAM)
    run_search(cfg)
    alone = run_fingerprint(tmp_path / "alone", tmp_path / "agent.py")
    (tmp_path / "agent.py.log").unlink()

    out = tmp_path / "interrupted"
    args = [
        "run", "--candidate", str(cfg.candidate), "--task", str(cfg.task), "--score", score,
        "--agent", "command", "--agent-cmd", agent, "--policy", "forget-team", "--agents",
        "3", "--rounds", "2", "--turns", "18", "--seed", "7", "--out", str(out),
        "--score-timeout", "30", "--turn-timeout", "30",
    ]  # fmt: skip
    # Ctrl-C once the k-th turn has started (an event, not a clock): mid-step, with
    # turns in flight; then resume, and again, until the run finishes.
    rng = random.Random(32)
    points = sorted(rng.sample(range(2, 17), 3))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    interrupts = 0
    for k in points:
        if _started(tmp_path) >= k:
            continue  # the last leg's turns in flight got past this point
        cmd = _cli(*args) if interrupts == 0 else _cli("resume", str(out))
        proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stderr=subprocess.PIPE)
        guard = time.monotonic() + 300  # against a hang only, never a speed assertion
        while _started(tmp_path) < k and proc.poll() is None:
            assert time.monotonic() < guard, "the run never reached its k-th turn"
            time.sleep(0.01)
        if proc.poll() is not None:
            continue  # it got past k before we looked: finished this leg normally
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 130, err
        interrupts += 1
    if not (out / "summary.json").is_file():
        done = subprocess.run(_cli("resume", str(out)), cwd=tmp_path, env=env, timeout=600)
        assert done.returncode == 0
    assert interrupts >= 1
    assert run_fingerprint(out, tmp_path / "agent.py") == alone


# -- the schedule itself, on hand-written records -------------------------------------


def _rec(seq: int, step: int, agent: int, score: float, round: int = 1) -> TurnRecord:
    return TurnRecord(
        seq=seq, step=step, round=round, agent=agent, turn=step, round_turn=step,
        session=f"s{agent}", new_session=step == 1, base_commit="a", commit=f"c{seq}",
        score=score, empty=False, lines_changed=1, wall_s=0.1, ts="2026-01-01T00:00:00Z",
    )  # fmt: skip


PLAN = RoundPlan(1, "start", 0.0, (3, 3))


def test_a_step_sees_every_earlier_step_and_nothing_of_its_own() -> None:
    preset = preset_for("forget-team")
    done = [_rec(1, 1, 1, 5.0), _rec(2, 1, 2, 9.0)]
    step = plan_step(done, PLAN, Rules(preset, 2, False))
    assert step.number == 2 and [s.agent for s in step.slots] == [1, 2]
    peers = [[(v.agent, v.score) for v in s.decision.visible if v.kind == "peer-best"]
             for s in step.slots]  # fmt: skip
    assert peers == [[(2, 9.0)], [(1, 5.0)]]
    # Half of step 2 recorded (a resume): the rest of step 2 is planned from step 1
    # alone, exactly as before -- agent 2 is not shown agent 1's step-2 result.
    half = [*done, _rec(3, 2, 1, 50.0)]
    rest = next_step(half, PLAN, Rules(preset, 2, False))
    assert rest.number == 2 and [s.agent for s in rest.slots] == [2]
    assert rest.slots[0].decision == step.slots[1].decision


def test_a_round_with_every_quota_spent_plans_no_slot() -> None:
    preset = preset_for("forget-team")
    done = [_rec(i * 2 + a, i + 1, a, 1.0) for i in range(3) for a in (1, 2)]
    step = next_step(done, PLAN, Rules(preset, 2, False))
    assert step.slots == () and step.end_round is None


@st.composite
def _schedules(draw: st.DrawFn) -> tuple[list[TurnRecord], RoundPlan, Rules, set[int]]:
    """Some steps of a round played by the schedule itself (scores drawn), and which of
    the next step's agents had also been recorded when the run stopped."""
    agents = draw(st.integers(1, 3))
    plan = RoundPlan(1, "start", 0.0, tuple(draw(st.integers(1, 4)) for _ in range(agents)))
    options = Rules(
        preset=preset_for(draw(st.sampled_from(["forget-team", "parallel", "forget"]))),
        agents=agents,
        minimize=draw(st.booleans()),
        forget_on_plateau=draw(st.sampled_from([None, 1, 2, 3])),
    )
    tally = Tally.start(0.0, "start", minimize=options.minimize, floor=0.0)
    records: list[TurnRecord] = []
    for _ in range(draw(st.integers(0, 4))):
        step = plan_step(records, plan, options)
        for slot in step.slots:
            records.append(_played(draw, slot, len(records) + 1, tally))
    done = draw(st.sets(st.integers(1, agents)))
    return records, plan, options, done


def _played(draw: st.DrawFn, slot: Slot, seq: int, tally: Tally) -> TurnRecord:
    score = draw(st.one_of(st.none(), st.integers(-5, 5).map(float)))
    record = TurnRecord(
        seq=seq, step=slot.step, round=1, agent=slot.agent, turn=slot.turn,
        round_turn=slot.round_turn, session=f"s{slot.agent}-{seq}",
        new_session=slot.decision.new_session, base_commit="a", commit=f"c{seq}",
        score=score, empty=draw(st.booleans()), lines_changed=draw(st.integers(0, 3)),
        wall_s=0.1, ts="2026-01-01T00:00:00Z", improved=tally.improves(score),
    )  # fmt: skip
    tally.add(record)
    return record


@settings(max_examples=300, deadline=None)
@given(_schedules())
def test_a_step_is_planned_alike_however_much_of_it_was_recorded(
    case: tuple[list[TurnRecord], RoundPlan, Rules, set[int]],
) -> None:
    # The logical clock's invariant: what a slot is told depends on earlier steps only,
    # so a resume that finds part of a step recorded runs the rest exactly as planned.
    records, plan, options, done = case
    step = plan_step(records, plan, options)
    finished = [s for s in step.slots if s.agent in done]
    partial = list(records)
    for slot in finished:
        partial.append(
            TurnRecord(
                seq=len(partial) + 1,
                step=slot.step,
                round=1,
                agent=slot.agent,
                turn=slot.turn,
                round_turn=slot.round_turn,
                session="x",
                new_session=False,
                base_commit="a",
                commit=f"x{slot.agent}",
                score=99.0,
                empty=False,
                lines_changed=9,
                wall_s=0.1,
                ts="2026-01-01T00:00:00Z",
                improved=True,
            )  # fmt: skip
        )
    rest = next_step(partial, plan, options)
    expected = tuple(s for s in step.slots if s.agent not in done)
    if expected:
        assert rest.number == step.number and rest.slots == expected
    else:
        assert rest.number == step.number + 1 or not step.slots
