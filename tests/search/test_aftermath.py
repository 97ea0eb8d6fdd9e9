"""One turn record and one best (issue 33): ``turn_record`` and the ``Tally`` fold."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.search.aftermath import PlayedTurn, Tally, turn_record
from evolving_agent.search.agents.base import TurnResult
from evolving_agent.search.judge import Verdict
from evolving_agent.search.plateau import plateau_test
from evolving_agent.search.reducer import Decision, Visible
from evolving_agent.search.report import best_so_far, round_stats, run_best_steps
from evolving_agent.search.rundir import TurnRecord
from evolving_agent.search.runner import run_search
from evolving_agent.search.schedule import Slot
from evolving_agent.search.turn import Played, TurnOutcome
from evolving_agent.search.workspace import TurnCommit
from tests.helpers.search import (
    config,
    make_candidate,
    make_task,
    records,
    write_agent,
    write_scorer,
)

SLOT = Slot(
    step=2, agent=1, turn=2, round_turn=2, last=None,
    decision=Decision(run_turn=True, visible=(
        Visible("start", "s", 0.0, 1), Visible("peer-best", "p", 3.0, 1, 2, 1),
    )),
)  # fmt: skip


def _turn(score: float | None, *, tampered: bool = False, commit: str = "c1") -> PlayedTurn:
    verdict = Verdict(score, [] if score is None else [score], "fb", 0.1, 0.2, tampered)
    outcome = TurnOutcome(TurnResult(session_id="s", denied=1), TurnCommit(commit, False, 2), 1)
    error = "judge-tampered: x" if tampered else None
    return PlayedTurn(Played(outcome, verdict, error), "base", {"agent": 1.0, "judge": 0.3}, 1.5)


def test_the_record_carries_the_slot_the_verdict_and_what_the_turn_was_shown() -> None:
    tally = Tally.start(1.0, "seed", minimize=False, floor=0.5)
    record = turn_record(_turn(2.0), slot=SLOT, seq=3, number=1, tally=tally)
    assert (record.seq, record.step, record.agent, record.turn, record.round_turn) == (
        3, 2, 1, 2, 2,
    )  # fmt: skip
    assert record.peers == ["r1-a2-t1"] and record.visible == 2
    assert record.improved and record.judge_s == 0.3 and record.denied == 1
    # Within the noise floor: not an improvement.
    assert not turn_record(_turn(1.4), slot=SLOT, seq=3, number=1, tally=tally).improved


def test_a_tampered_turn_never_improves_and_its_commit_stays_unknown() -> None:
    tally = Tally.start(1.0, "seed", minimize=False, floor=0.0)
    record = turn_record(_turn(9.0, tampered=True), slot=SLOT, seq=1, number=1, tally=tally)
    tally.add(record)
    assert record.tampered and not record.improved
    assert tally.best_score == 1.0 and tally.known_score("c1") == (False, None)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-9, 9).map(float)), max_size=12),
       st.booleans(), st.sampled_from([0.0, 1.0, 2.5]))  # fmt: skip
def test_the_tally_rebuilt_from_the_log_is_the_live_one(
    scores: list[float | None], minimize: bool, floor: float
) -> None:
    # Resume folds the records it reads back; the live run folded them as they came.
    live = Tally.start(0.0, "seed", minimize=minimize, floor=floor)
    written = []
    for seq, score in enumerate(scores, start=1):
        record = turn_record(_turn(score, commit=f"c{seq}"), slot=SLOT, seq=seq, number=1,
                             tally=live)  # fmt: skip
        live.add(record)
        written.append(record)
    again = Tally.start(0.0, "seed", minimize=minimize, floor=floor, records=written)
    assert again == live
    # The best is never beaten by more than the floor by any later score.
    for record in written:
        if record.score is not None and record.seq > (live.best.seq if live.best else 0):
            assert not live.improves(record.score)


def test_plateau_and_the_runner_write_the_same_record(tmp_path: Path) -> None:
    # Guards plateau-test's own record, which dropped tampered, timing, judge_s, node,
    # retried, denied and failed_commands.
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, 'write(value() + 1)\nprint(json.dumps({"input_tokens": 3}))')
    run_search(
        config(tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=agent, policy="parallel",
               agents=2, turns=4, sandbox="none")
    )  # fmt: skip
    plateau_test(tmp_path / "run", turns=2, repeats=1, force=True, out=tmp_path / "pt")
    ran = records(tmp_path / "run")[-1]
    measured = [
        json.loads(line)
        for line in (tmp_path / "pt" / "repeat-1" / "fresh" / "log.jsonl").read_text().splitlines()
    ][-1]
    assert set(ran) == set(measured)
    for key in ("timing", "judge_s", "step"):
        assert measured[key] and ran[key]
    assert set(measured["timing"]) == {"agent", "commit", "judge"}


SCORES = st.lists(
    st.one_of(st.none(), st.integers(-9, 9).map(float), st.just(float("inf"))), max_size=14
)


@settings(max_examples=300, deadline=None)
@given(SCORES, st.booleans(), st.sampled_from([0.0, 1.0, 2.5]), st.integers(1, 4))
def test_the_reports_best_is_the_runs_tally(
    scores: list[float | None], minimize: bool, floor: float, per_round: int
) -> None:
    # The report reads the best from the log with the tally's fold: its curve, its
    # per-round bests and its run steps end where the live run's tally ended.
    live = Tally.start(0.0, "seed", minimize=minimize, floor=floor)
    written, bests = [], []
    for seq, score in enumerate(scores, start=1):
        record = turn_record(_turn(score, commit=f"c{seq}"), slot=SLOT, seq=seq,
                             number=1 + (seq - 1) // per_round, tally=live)  # fmt: skip
        live.add(record)
        written.append(record)
        bests.append(live.best_score)
    assert run_best_steps(written, 0.0, minimize=minimize) == [0.0, *bests]
    team = best_so_far(written, list(range(1, len(written) + 1)), minimize=minimize,
                       seed_score=0.0, label="team")  # fmt: skip
    assert team.values == [0.0, *bests]
    rounds = round_stats(written, minimize=minimize, seed_score=0.0)
    if written:
        assert rounds[-1].end_best == live.best_score
    # A log older than the marks: the fold marks as it goes (strictly better, floor 0).
    legacy = [TurnRecord(**r.model_dump(exclude={"improved"})) for r in written]
    finite = [s for s in scores if s is not None and s != float("inf")]
    running, want = 0.0, [0.0]
    for s in scores:
        if s is not None and s != float("inf"):
            running = min(running, s) if minimize else max(running, s)
        want.append(running)
    assert run_best_steps(legacy, 0.0, minimize=minimize) == want
    assert not finite or want[-1] == (min if minimize else max)([0.0, *finite])
