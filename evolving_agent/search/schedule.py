"""The logical clock: which turns run at each step of a round, the same every time.

A round runs in *steps*.  At step ``s`` every agent the reducer lets go (and the
budget admits, in agent order) takes one turn, and every one of those turns is
decided -- its session, what it may see -- from the records of steps before ``s``
alone, never from a teammate's result of the same step, whichever thread finishes
first.  The runner appends a step's records in agent order and starts step ``s + 1``
once step ``s`` is recorded, so ``log.jsonl`` is the same sequence on every run of the
same seed, task and agents, on any executor and under any load.

Resume continues the schedule: the step a run stopped in is planned again from the
records before it (the same plan, since it depends on nothing else) and only its
slots still missing run.  Records carry their ``step``; a log written before steps
existed reads each record's ``round_turn`` as its step.

Pure functions over records, like the reducer they call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evolving_agent.search.budget import Admission, TurnLedger
from evolving_agent.search.config import SearchConfig
from evolving_agent.search.presets import Preset
from evolving_agent.search.reducer import Decision, RoundPlan, SearchState, decide
from evolving_agent.search.rundir import ForgetReason, TurnRecord, forget_reason

# A caller's last word on a slot's decision (plateau-test's continued sessions).
Adjust = Callable[[int, Decision, Sequence[TurnRecord]], Decision]


@dataclass(frozen=True)
class Rules:
    """What a step is planned by besides the records: the preset, the number of agents,
    which way is better, forgetting on a plateau, and the caller's extras
    (``first_turn`` offsets agents' turn numbers, ``adjust`` has the last word on a
    slot's decision: plateau-test)."""

    preset: Preset
    agents: int
    minimize: bool
    forget_on_plateau: int | None = None
    first_turn: dict[int, int] | None = None
    adjust: Adjust | None = None


def run_rules(config: SearchConfig) -> Rules:
    """A run's rules, as its configuration says them (plateau-test adds its own extras)."""
    return Rules(
        config.preset, config.effective_agents, config.minimize,
        forget_on_plateau=config.forget_on_plateau,
    )  # fmt: skip


@dataclass(frozen=True)
class Slot:
    """One turn of one step: who plays, what the reducer decided, where it starts."""

    step: int
    agent: int
    decision: Decision
    turn: int  # the agent's turn number over the run (or the measurement)
    round_turn: int  # its turn number within the round
    last: TurnRecord | None  # its last record of this round (None: its first turn)


@dataclass(frozen=True)
class Step:
    number: int
    slots: tuple[Slot, ...]
    end_round: ForgetReason | None = None  # the round ends before this step


def step_of(record: TurnRecord) -> int:
    """A record's step (``round_turn`` for logs written before steps existed)."""
    return record.step if record.step is not None else record.round_turn


def plan_step(
    records: Sequence[TurnRecord], plan: RoundPlan, rules: Rules, *, number: int | None = None
) -> Step:
    """The step after every record in ``records`` (or step ``number``), decided from
    ``records`` alone."""
    in_round = [r for r in records if r.round == plan.number]
    if number is None:
        number = max((step_of(r) for r in in_round), default=0) + 1
    state = SearchState(tuple(records), plan)
    wanted: list[tuple[int, Decision]] = []
    adjust = rules.adjust
    for agent in range(1, rules.agents + 1):
        decision = decide(
            state, preset=rules.preset, agent=agent, minimize=rules.minimize,
            forget_on_plateau=rules.forget_on_plateau,
        )  # fmt: skip
        if decision.end_round is not None:
            return Step(number, (), forget_reason(decision.end_round))
        if decision.run_turn:
            wanted.append((agent, adjust(agent, decision, records) if adjust else decision))
    # The budget admits in agent order, as if the step's earlier turns were in flight:
    # a turn it would make wait runs at the next step; if it admits none, the round ends.
    ledger = TurnLedger()
    slots: list[Slot] = []
    for agent, decision in wanted:
        admission = ledger.admit(plan, records)
        if admission is Admission.STOP:
            return Step(number, (), "budget")
        if admission is Admission.WAIT:
            break
        mine = [r for r in records if r.agent == agent]
        ours = [r for r in in_round if r.agent == agent]
        offset = (rules.first_turn or {}).get(agent, 0)
        slots.append(
            Slot(number, agent, decision, offset + len(mine) + 1, len(ours) + 1,
                 ours[-1] if ours else None)
        )  # fmt: skip
    return Step(number, tuple(slots))


def next_step(records: Sequence[TurnRecord], plan: RoundPlan, rules: Rules) -> Step:
    """What runs next in round ``plan.number``: the rest of a step a run stopped in, or
    the next step.  ``records`` are in log order (every step's before the next's)."""

    def planned(done: Sequence[TurnRecord], number: int | None = None) -> Step:
        return plan_step(done, plan, rules, number=number)

    in_round = [r for r in records if r.round == plan.number]
    last = max((step_of(r) for r in in_round), default=0)
    if last:
        before = [r for r in records if r.round != plan.number or step_of(r) < last]
        again = planned(before, number=last)
        done = {r.agent for r in in_round if step_of(r) == last}
        missing = tuple(s for s in again.slots if s.agent not in done)
        if missing:
            return Step(last, missing)
    return planned(records)
