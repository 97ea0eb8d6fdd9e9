"""Keeping parallel turns within a round's money and token budget.

The reducer stops a round once what its finished turns cost reaches the budget, but
agents run in parallel: with four turns in flight, checking only what has been spent
overshoots by up to four turns.  The ledger closes that gap: before a turn starts it
*reserves* the running mean cost of a turn (over every finished turn of the run), and
a turn may start only while

    spent in the round + reserved for turns in flight  <  the round's budget

so the round ends at most about one turn's cost over its budget.  While nothing is
known about what a turn costs (no turn has finished yet), only one turn runs at a
time; the others wait for it, then decide.  When the check fails, an agent waits if
turns are still in flight (they may cost less than reserved) and stops otherwise.

Budgets in dollars and in tokens are checked the same way.  Without a money or token
budget the ledger admits everything.  The schedule (``schedule.py``) asks a fresh
ledger for each step's turns in agent order, so "in flight" means "admitted earlier in
this step" and the admissions are the same on every run; a turn told to wait runs at
the next step.  The ledger is plain data.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from evolving_agent.search.reducer import RoundPlan
from evolving_agent.search.rundir import TurnRecord


class Admission(Enum):
    GO = "go"  # start the turn (a reservation has been made: release it when done)
    WAIT = "wait"  # turns in flight may leave room: wait for one to finish, then ask again
    STOP = "stop"  # the round's budget is spent


@dataclass
class TurnLedger:
    in_flight: int = 0

    def admit(self, plan: RoundPlan, records: Sequence[TurnRecord]) -> Admission:
        """May one more turn of round ``plan.number`` start now?  ``GO`` reserves it."""
        if plan.budget_usd is None and plan.budget_tokens is None:
            self.in_flight += 1
            return Admission.GO
        if not records:
            # Nothing known about a turn's cost yet: one probe turn at a time.
            if self.in_flight:
                return Admission.WAIT
            self.in_flight += 1
            return Admission.GO
        in_round = [r for r in records if r.round == plan.number]
        checks: list[tuple[float, float, float]] = []  # (spent, mean per turn, budget)
        if plan.budget_usd is not None:
            # A turn whose agent reported no cost is unknown, not free: the mean is over
            # the turns that reported one (an agent may report only sometimes).
            known = [r.cost_usd for r in records if r.cost_usd is not None]
            checks.append(
                (
                    sum(r.cost_usd or 0.0 for r in in_round),
                    statistics.fmean(known) if known else 0.0,
                    plan.budget_usd,
                )
            )
        if plan.budget_tokens is not None:
            checks.append(
                (
                    float(sum(r.tokens for r in in_round)),
                    statistics.fmean(float(r.tokens) for r in records),
                    float(plan.budget_tokens),
                )
            )
        for spent, mean, budget in checks:
            if spent + mean * self.in_flight >= budget:
                return Admission.WAIT if self.in_flight else Admission.STOP
        self.in_flight += 1
        return Admission.GO

    def release(self) -> None:
        """A turn admitted with ``GO`` has finished (recorded or not)."""
        self.in_flight = max(0, self.in_flight - 1)
