"""The executor contract (search/executors/base.py): what every executor inherits.

``Executor.judge`` runs :meth:`score` at most ``max_scorers`` at a time, for every
executor; ``from_settings`` reads only that of a run's config; the optional hooks are
no-ops.  Real threads, synchronised by a condition (never sleeps).  What ``local`` and
``ray`` do with a turn: test_local.py, test_ray_exec.py.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from evolving_agent.search.agents.base import Agent
from evolving_agent.search.executors.base import Executor
from evolving_agent.search.executors.local import LocalExecutor
from evolving_agent.search.judge import Judge, Verdict
from evolving_agent.search.turn import TurnJob, TurnOutcome, TurnPlace

WAIT = 60.0  # a bound on a hang, never a measure: every wait below ends on an event


class Gate(Executor):
    """Scores by holding the caller until released; counts who is inside at once."""

    name = "gate"

    def __init__(self, *, max_scorers: int | None = None) -> None:
        super().__init__(max_scorers=max_scorers)
        self.cond = threading.Condition()
        self.inside = self.most = self.arrived = 0
        self.released = False

    def run_turn(self, agent: Agent, job: TurnJob, place: TurnPlace) -> TurnOutcome:
        raise NotImplementedError

    def score(self, *, judge: Judge, repo: Path, commit: str) -> Verdict:
        with self.cond:
            self.inside += 1
            self.most = max(self.most, self.inside)
            self.cond.notify_all()
            assert self.cond.wait_for(lambda: self.released, WAIT)
            self.inside -= 1
        return Verdict(score=float(commit))

    def call(self, judge: Judge, commit: str, out: list[Verdict]) -> None:
        with self.cond:
            self.arrived += 1
            self.cond.notify_all()
        out.append(self.judge(judge=judge, repo=Path("."), commit=commit))


def scores_at_once(executor: Gate, n: int, inside: int, tmp_path: Path) -> list[Verdict]:
    """``n`` threads ask for a score; once all have asked and ``inside`` are scoring,
    release them all."""
    judge = Judge("true", tmp_path, timeout=30)
    out: list[Verdict] = []
    threads = [threading.Thread(target=executor.call, args=(judge, str(i), out)) for i in range(n)]
    for t in threads:
        t.start()
    with executor.cond:
        assert executor.cond.wait_for(
            lambda: executor.arrived == n and executor.inside == inside, WAIT
        ), (executor.arrived, executor.inside)
        executor.released = True
        executor.cond.notify_all()
    for t in threads:
        t.join(WAIT)
    return out


def test_judge_scores_at_most_max_scorers_at_a_time_and_every_caller_gets_its_verdict(
    tmp_path: Path,
) -> None:
    executor = Gate(max_scorers=2)
    out = scores_at_once(executor, 5, 2, tmp_path)
    assert executor.most == 2
    assert sorted(v.score for v in out if v.score is not None) == [0.0, 1.0, 2.0, 3.0, 4.0]
    # The slots were all given back: a later score does not wait.
    executor.released = True
    judge = Judge("true", tmp_path, timeout=30)
    for _ in range(3):
        assert executor.judge(judge=judge, repo=tmp_path, commit="7").score == 7.0


def test_without_max_scorers_every_score_runs_at_once(tmp_path: Path) -> None:
    executor = Gate()
    scores_at_once(executor, 5, 5, tmp_path)
    assert executor.most == 5


def test_a_score_that_raises_gives_its_slot_back(tmp_path: Path) -> None:
    class Broken(Gate):
        def score(self, *, judge: Judge, repo: Path, commit: str) -> Verdict:
            raise RuntimeError("the scorer's host went away")

    executor = Broken(max_scorers=1)
    judge = Judge("true", tmp_path, timeout=30)
    for _ in range(2):  # a slot kept by the first failure would hang the second
        with pytest.raises(RuntimeError, match="went away"):
            executor.judge(judge=judge, repo=tmp_path, commit="1")
    assert executor._slots is not None and executor._slots.acquire(blocking=False)


@dataclass
class Settings:
    executor: str = "local"
    ray_address: str | None = None
    agent_resources: dict[str, float] | None = None
    score_resources: dict[str, float] | None = None
    max_scorers: int | None = None
    env_forward: list[str] = field(default_factory=list)


@pytest.mark.parametrize("limit", [None, 1, 3])
def test_from_settings_builds_the_executor_with_the_runs_max_scorers(limit: int | None) -> None:
    executor = LocalExecutor.from_settings(Settings(max_scorers=limit))
    assert isinstance(executor, LocalExecutor) and executor.max_scorers == limit
    assert Gate.from_settings(Settings(max_scorers=limit)).max_scorers == limit


def test_an_executor_must_say_how_it_runs_a_turn_and_a_score() -> None:
    class Half(Executor):
        name = "half"

        def score(self, *, judge: Judge, repo: Path, commit: str) -> Verdict:
            return Verdict(score=0.0)

    with pytest.raises(TypeError, match="run_turn"):
        Half()  # type: ignore[abstract]


def test_the_optional_hooks_do_nothing_by_default(tmp_path: Path) -> None:
    executor = Gate(max_scorers=1)
    executor.bind(tmp_path)
    executor.cancel()
    executor.close()
    assert list(tmp_path.iterdir()) == []
