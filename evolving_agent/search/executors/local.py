"""The ``local`` executor: turns run in the runner's threads, on the driver's worktrees."""

from __future__ import annotations

from pathlib import Path

from evolving_agent.search.executors.base import Executor, TurnOutcome, TurnSpec, run_agent_turn
from evolving_agent.search.judge import Judge, Verdict


class LocalExecutor(Executor):
    name = "local"

    def run_turn(self, *, spec: TurnSpec) -> TurnOutcome:
        return run_agent_turn(spec)

    def score(self, *, judge: Judge, repo: Path, commit: str) -> Verdict:
        return judge.judge(repo, commit)
