"""Budgets are not overshot by more than one turn when agents run in parallel."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from evolving_agent.cli import cli
from evolving_agent.search.budget import Admission, TurnLedger
from evolving_agent.search.reducer import RoundPlan
from evolving_agent.search.rundir import TurnRecord
from evolving_agent.search.runner import run_search
from tests.helpers.search import (
    config,
    hostile_task,
    make_candidate,
    make_task,
    records,
    write_agent,
    write_scorer,
)


def _record(seq: int, cost: float, round: int = 1, tokens: int = 0) -> TurnRecord:
    return TurnRecord(
        seq=seq,
        round=round,
        agent=1,
        turn=seq,
        round_turn=seq,
        session="s",
        new_session=seq == 1,
        base_commit="a",
        commit="b",
        score=1.0,
        empty=False,
        lines_changed=1,
        cost_usd=cost,
        input_tokens=tokens,
        wall_s=0.1,
        ts="2026-01-01T00:00:00.000+00:00",
    )


PLAN = RoundPlan(1, "a", 0.0, (10, 10, 10), budget_usd=5.5)


def test_without_a_money_budget_everything_is_admitted() -> None:
    ledger = TurnLedger()
    plan = RoundPlan(1, "a", 0.0, (10,))
    assert [ledger.admit(plan, []) for _ in range(5)] == [Admission.GO] * 5
    assert ledger.in_flight == 5


def test_the_first_turn_runs_alone_until_a_cost_is_known() -> None:
    ledger = TurnLedger()
    assert ledger.admit(PLAN, []) is Admission.GO
    assert ledger.admit(PLAN, []) is Admission.WAIT
    ledger.release()
    assert ledger.admit(PLAN, [_record(1, 1.0)]) is Admission.GO


def test_reservations_at_the_mean_cost_hold_back_turns() -> None:
    ledger = TurnLedger()
    done = [_record(1, 1.0), _record(2, 1.0), _record(3, 1.0)]  # $3 spent, mean $1
    assert ledger.admit(PLAN, done) is Admission.GO  # 3 + 0 < 5.5
    assert ledger.admit(PLAN, done) is Admission.GO  # 3 + 1 < 5.5
    assert ledger.admit(PLAN, done) is Admission.GO  # 3 + 2 < 5.5
    assert ledger.admit(PLAN, done) is Admission.WAIT  # 3 + 3 >= 5.5, turns in flight
    for _ in range(3):
        ledger.release()
    spent = [*done, _record(4, 1.0), _record(5, 1.0), _record(6, 1.0)]
    assert ledger.admit(PLAN, spent) is Admission.STOP  # $6 spent, nothing in flight


def test_token_budgets_and_earlier_rounds() -> None:
    ledger = TurnLedger()
    plan = RoundPlan(2, "a", 0.0, (10,), budget_tokens=100)
    earlier = [_record(1, 0.0, round=1, tokens=500)]  # another round: mean only
    assert ledger.admit(plan, earlier) is Admission.GO  # 0 spent in round 2
    assert ledger.admit(plan, earlier) is Admission.WAIT  # 0 + 500 reserved >= 100


def test_parallel_run_overshoots_by_at_most_one_turn(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(
        tmp_path,
        """
        write(value() + 1)
        time.sleep(0.2)
        print(json.dumps({"cost_usd": 1.0, "input_tokens": 10, "output_tokens": 5}))
    """,
    )
    summary = run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent_cmd=agent,
            policy="parallel",
            agents=4,
            turns=40,
            budget_usd=5.5,
        )
    )
    rows = records(tmp_path / "run")
    # Checking only what was spent would let all four agents start with $4 or $5 spent:
    # up to $8.  Reserving the mean cost stops at the first turn past the budget.
    assert summary.cost_usd <= 5.5 + 1.0
    assert summary.cost_usd >= 5.5
    assert len(rows) == 6 and summary.stopped == "budget"


# Regression: an attack an outside review of `search run` got through.
def test_a_nan_or_negative_reported_cost_does_not_defeat_the_budget(tmp_path: Path) -> None:
    """``{"cost_usd": NaN}`` (valid to Python's json) made the spend NaN, so no budget
    check ever failed and the summary said ``$nan``; ``-5`` made the spend negative
    (``$-30``), buying turns; ``"input_tokens": NaN`` failed an otherwise good turn.
    Such reports count as "not reported"."""
    for report in ('{"cost_usd": NaN, "input_tokens": NaN}', '{"cost_usd": -5}'):
        case = tmp_path / str(len(report))
        case.mkdir()
        _, args = hostile_task(case, f"echo $(( $(cat n.txt) + 1 )) > n.txt\necho '{report}'\n")
        args[args.index("--turns") + 1] = "3"
        result = CliRunner().invoke(cli, [*args, "--budget-usd", "1", "--out", str(case / "r")])
        assert result.exit_code == 0, result.output
        assert "best 4 (seed 1, +3) after 3/3 turns" in result.output
        assert "$nan" not in result.output and "$-" not in result.output, result.output
        assert "$0.0000" in result.output


# Regression: an attack an outside review of `search run` got through.
def test_turns_that_report_no_cost_do_not_shrink_the_reservation() -> None:
    """An agent reporting its cost only sometimes: the turns without a cost counted as
    $0 in the mean a new turn reserves, so three agents were let in at once and a $1
    budget ended at $1.60 (``--policy parallel --agents 3``, $0.40 every other turn),
    more than one turn's cost over.  The mean is over the turns that reported one."""
    from evolving_agent.search.budget import Admission, TurnLedger
    from evolving_agent.search.reducer import RoundPlan
    from evolving_agent.search.rundir import TurnRecord

    first = TurnRecord(
        seq=1, round=1, agent=1, turn=1, round_turn=1, session="s", new_session=True,
        base_commit="a", commit="b", score=1.0, empty=False, lines_changed=1,
        cost_usd=0.4, wall_s=0.1, ts="2026-01-01T00:00:00.000+00:00",
    )  # fmt: skip
    second = first.model_copy(update={"seq": 2, "turn": 2, "round_turn": 2, "cost_usd": None})
    records = [first, second]
    plan = RoundPlan(1, "a", 0.0, (4, 4, 4), budget_usd=1.0)
    ledger = TurnLedger()
    admitted = []
    while (answer := ledger.admit(plan, records)) is Admission.GO:
        admitted.append(answer)
    # spent 0.40 + 0.40 reserved per turn in flight: a second turn fits, a third not.
    assert (len(admitted), answer) == (2, Admission.WAIT)
