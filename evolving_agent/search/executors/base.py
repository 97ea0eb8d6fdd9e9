"""The executor contract: where an agent turn and a score run.

The runner decides *what* happens (the reducer, the record, best/); an executor
decides *where*.  It is handed the agent backend and a
:class:`~evolving_agent.search.turn.TurnJob` (plain, picklable values) and returns a
:class:`~evolving_agent.search.turn.TurnOutcome` whose commit is already present in
the driver's round repository.  Every executor runs the same turn,
:func:`~evolving_agent.search.turn.execute_turn`, with its retry policy: ``local``
calls it on the driver's worktree, ``ray`` on a worker in a node-local workspace
rebuilt from git bundles.  Scoring goes through :meth:`Executor.judge`, which honours
``max_scorers`` for every executor.
"""

from __future__ import annotations

import abc
import threading
from pathlib import Path
from typing import ClassVar, Protocol

from evolving_agent.search.agents.base import Agent
from evolving_agent.search.judge import Judge, Verdict
from evolving_agent.search.turn import TurnJob, TurnOutcome, TurnPlace


class TurnCancelled(Exception):
    """The run is being interrupted; the turn was cancelled and must not be recorded."""


class ExecutorSettings(Protocol):
    """What building an executor reads of a run's config (``SearchConfig`` has it all);
    a protocol, so executors never import the config that names them."""

    @property
    def executor(self) -> str: ...
    @property
    def ray_address(self) -> str | None: ...
    @property
    def agent_resources(self) -> dict[str, float] | None: ...
    @property
    def score_resources(self) -> dict[str, float] | None: ...
    @property
    def max_scorers(self) -> int | None: ...
    @property
    def env_forward(self) -> list[str]: ...


class Executor(abc.ABC):
    """Runs agent turns and scores.  Subclasses set ``name`` and implement both."""

    name: ClassVar[str]

    @classmethod
    def from_settings(cls, config: ExecutorSettings) -> Executor:
        """Build this executor from a run's config (the registry calls this)."""
        return cls(max_scorers=config.max_scorers)

    def __init__(self, *, max_scorers: int | None = None) -> None:
        self.max_scorers = max_scorers
        self._slots = threading.BoundedSemaphore(max_scorers) if max_scorers else None

    def bind(self, run_dir: Path) -> None:  # noqa: B027 - optional hook, a no-op by default
        """The run directory exists now (called before the first turn or score)."""

    @abc.abstractmethod
    def run_turn(self, agent: Agent, job: TurnJob, place: TurnPlace) -> TurnOutcome:
        """Run one agent turn (``execute_turn``) and bring its commit into
        ``place.repo`` (:class:`~evolving_agent.search.turn.TurnPlace`).  An executor
        may score the commit with ``place.judge`` where the turn ran and hand that
        verdict to :meth:`judge` for the same commit, never another.

        Contract:
        * the returned ``change.commit`` exists in ``place.repo`` (``job.base`` when the
          turn produced nothing or was lost);
        * transient failures are retried per ``job.retries`` / ``job.retry_backoff``,
          a worker that dies being one of them; a failure left after the retries is an
          outcome with ``result.error`` set, never an exception;
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
