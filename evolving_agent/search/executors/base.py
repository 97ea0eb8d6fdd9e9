"""The executor contract: where an agent turn and a score run.

The runner decides *what* happens (the reducer, the record, best/); an executor
decides *where*.  It is handed plain data — a :class:`TurnSpec` naming the agent
backend, the turn request, the base commit and the driver's round repository — and
returns a :class:`TurnOutcome` whose commit is already present (and verified) in that
repository.  Scoring goes through :meth:`Executor.judge`, which honours
``max_scorers`` for every executor.

:func:`run_agent_turn` is the pure turn both executors call: run the agent in a
workspace at ``base``, commit what it left, measure the change.  The local executor
calls it on the driver's worktree; the Ray executor calls it on a worker, in a
node-local workspace rebuilt from git bundles.
"""

from __future__ import annotations

import abc
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

from evolving_agent.search.agents import make_agent
from evolving_agent.search.agents.base import TurnRequest, TurnResult
from evolving_agent.search.judge import Judge, Verdict
from evolving_agent.search.workspace import TurnCommit, commit_turn


@dataclass(frozen=True)
class AgentSpec:
    """How to build the agent backend wherever the turn runs."""

    name: str
    command: str | None = None
    args: str | None = None
    prices: dict[str, float] | None = None


@dataclass(frozen=True)
class TurnSpec:
    """One agent turn, as plain data (picklable: it travels to Ray workers)."""

    agent: AgentSpec
    request: TurnRequest  # ``workspace`` is the driver's worktree for this agent
    base: str  # the commit the workspace starts the turn at
    start: str  # the round's starting commit
    repo: Path  # the driver's round repository (the commit must end up here)
    message: str  # the commit message for what the agent leaves
    label: str  # unique per turn, e.g. "r02-a1-t007" (names the fetched ref)


@dataclass(frozen=True)
class TurnOutcome:
    """What came back from a turn: the agent's report and the verified commit."""

    result: TurnResult
    change: TurnCommit
    laps: dict[str, float] = field(default_factory=dict)  # seconds: agent, commit, ship...
    node: str | None = None  # where it ran (a Ray node id); None on the driver
    lost: bool = False  # the worker died or its commit was refused: nothing to judge


class TurnCancelled(Exception):
    """The run is being interrupted; the turn was cancelled and must not be recorded."""


def run_agent_turn(spec: TurnSpec, *, workspace: Path | None = None) -> TurnOutcome:
    """Run the agent of ``spec`` in ``workspace`` (default: the request's) and commit.

    Pure in the sense the executors need: plain inputs, plain outputs, no access to
    the run directory beyond what ``spec.request`` names.
    """
    request = spec.request if workspace is None else replace(spec.request, workspace=workspace)
    agent = make_agent(
        spec.agent.name, command=spec.agent.command, args=spec.agent.args, prices=spec.agent.prices
    )
    started = time.perf_counter()
    result = agent.run_turn(request=request)
    ran = time.perf_counter()
    change = commit_turn(request.workspace, spec.base, spec.message)
    laps = {"agent": ran - started, "commit": time.perf_counter() - ran}
    return TurnOutcome(result, change, laps)


class Executor(abc.ABC):
    """Runs agent turns and scores.  Subclasses set ``name`` and implement both."""

    name: ClassVar[str]

    def __init__(self, *, max_scorers: int | None = None) -> None:
        self.max_scorers = max_scorers
        self._slots = threading.BoundedSemaphore(max_scorers) if max_scorers else None

    @abc.abstractmethod
    def run_turn(self, *, spec: TurnSpec) -> TurnOutcome:
        """Run one agent turn and bring its commit into ``spec.repo``.

        Contract:
        * the returned ``change.commit`` exists in ``spec.repo`` (``base`` when the
          turn produced nothing or was lost);
        * a worker that dies, or a commit that fails verification, is an outcome with
          ``lost=True`` and ``result.error`` set, never an exception;
        * raise :class:`TurnCancelled` only after :meth:`cancel` was called.
        """

    @abc.abstractmethod
    def score(self, *, judge: Judge, repo: Path, commit: str) -> Verdict:
        """Export ``commit`` of ``repo`` and score it with ``judge`` (a failed score is a
        Verdict with ``score=None``, never an exception)."""

    def judge(self, *, judge: Judge, repo: Path, commit: str) -> Verdict:
        """:meth:`score`, at most ``max_scorers`` at a time."""
        if self._slots is None:
            return self.score(judge=judge, repo=repo, commit=commit)
        with self._slots:
            return self.score(judge=judge, repo=repo, commit=commit)

    def cancel(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Ctrl-C: stop what is in flight, if the executor can."""

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release what the executor holds (connections, worker scratch space)."""
