"""The ``local`` executor: turns run in the runner's threads, in private workspaces.

Each agent works in a standalone repository of its own outside the run directory
(:mod:`evolving_agent.search.private`): built from the round repository on the agent's
first turn of a round (or after it broke it), given the commits the reducer lets it see
before each turn, and its turn's commit fetched back into the round repository before
anything is recorded.  The turn itself is :func:`execute_turn`; the judge runs in the
same thread (at most ``max_scorers`` at once, if given).
"""

from __future__ import annotations

import threading
from pathlib import Path

from evolving_agent.search.agents.base import Agent
from evolving_agent.search.executors.base import Executor
from evolving_agent.search.judge import Judge, Verdict
from evolving_agent.search.private import (
    import_turn,
    is_intact,
    prepare_workspace,
    rebuild_keeping_files,
)
from evolving_agent.search.turn import TurnJob, TurnOutcome, TurnPlace, execute_turn


class LocalExecutor(Executor):
    name = "local"

    def __init__(self, *, max_scorers: int | None = None) -> None:
        super().__init__(max_scorers=max_scorers)
        self._lock = threading.Lock()
        # Commits each workspace already holds: a turn fetches only what is new to it.
        self._held: dict[Path, set[str]] = {}

    def run_turn(self, agent: Agent, job: TurnJob, place: TurnPlace) -> TurnOutcome:
        # place.judge is not used here: judge() scores the commit in this thread next.
        request = job.request
        workspace, repo = request.workspace, place.repo
        wanted = {job.base, *(v.commit for v in request.visible)}
        with self._lock:
            held = self._held.get(workspace, set())
        branch = f"r{request.round:02d}-agent-{request.agent}"
        if not is_intact(workspace):
            held = set()
        if not wanted <= held:
            held = held | prepare_workspace(
                workspace, repo, base=job.base, branch=branch, wanted=wanted - held
            )

        rebuilt: list[bool] = []

        def repair(path: Path, base: str) -> bool:
            rebuilt.append(True)
            return rebuild_keeping_files(path, repo, base=base, branch=branch)

        outcome = execute_turn(agent, job, repair=repair)
        commit = outcome.change.commit
        if rebuilt:
            held = {job.base}
        if commit != job.base:
            import_turn(repo, workspace, commit=commit, label=place.label)
            held = held | {commit}
        with self._lock:
            self._held[workspace] = held
        return outcome

    def score(self, *, judge: Judge, repo: Path, commit: str) -> Verdict:
        return judge.judge(repo, commit)
