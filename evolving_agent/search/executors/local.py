"""The ``local`` executor: turns run in the runner's threads, on the driver's worktrees.

This *is* the search's plain behaviour: :func:`execute_turn` on the agent's worktree,
the judge in the same thread (at most ``max_scorers`` at once, if given).
"""

from __future__ import annotations

from pathlib import Path

from evolving_agent.search.agents.base import Agent
from evolving_agent.search.executors.base import Executor
from evolving_agent.search.judge import Judge, Verdict
from evolving_agent.search.turn import TurnJob, TurnOutcome, execute_turn


class LocalExecutor(Executor):
    name = "local"

    def run_turn(
        self, agent: Agent, job: TurnJob, *, repo: Path, start: str, label: str
    ) -> TurnOutcome:
        return execute_turn(agent, job)

    def score(self, *, judge: Judge, repo: Path, commit: str) -> Verdict:
        return judge.judge(repo, commit)
