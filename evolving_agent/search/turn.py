"""One agent turn as a plain function: run the agent (with retries), commit its work.

:func:`execute_turn` is *the* turn, wherever it runs: the ``local`` executor calls it
in the runner's thread on the driver's worktree, the ``ray`` executor calls it on a
worker in a node-local workspace (:mod:`evolving_agent.search.executors`).  Its inputs
(:class:`TurnJob`, the agent backend) and its output (:class:`TurnOutcome`) are plain,
picklable values.

The retry policy lives here too (:func:`retry_delay`), so the Ray executor retries a
turn whose worker died by the same rule as a turn whose agent hit a rate limit.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from evolving_agent.search.agents.base import Agent, TurnRequest, TurnResult, is_transient
from evolving_agent.search.config import SearchConfig
from evolving_agent.search.judge import Judge, Verdict
from evolving_agent.search.private import is_intact, secure
from evolving_agent.search.prompt import build_prompt
from evolving_agent.search.reducer import Decision
from evolving_agent.search.rundir import TurnRecord
from evolving_agent.search.sandbox import Sandbox
from evolving_agent.search.workspace import (
    TurnCommit,
    commit_turn,
    pin_git_pointer,
    reset_worktree,
    restore_git_pointer,
)

BROKEN_WORKSPACE = "the agent broke its workspace"


@dataclass(frozen=True)
class TurnJob:
    """Everything one agent turn needs, as plain values (an executor may ship it)."""

    request: TurnRequest
    base: str  # the commit the workspace is at when the turn starts
    message: str  # the commit message for what the agent leaves
    retries: int = 0
    retry_backoff: float = 0.0


@dataclass(frozen=True)
class TurnOutcome:
    """What one agent turn produced: the agent's report and the committed change."""

    result: TurnResult
    change: TurnCommit
    attempts: int
    laps: dict[str, float] = field(default_factory=dict)  # agent, commit (seconds)
    node: str | None = None  # the Ray node the turn ran on; None: on the driver
    retried: tuple[str, ...] = ()  # errors of the attempts that were tried again


def turn_request(
    config: SearchConfig,
    *,
    task: str,
    decision: Decision,
    last: TurnRecord | None,
    workspace: Path,
    round: int,
    agent: int,
    turn: int,
    state_dir: Path,
    env: dict[str, str] | None = None,
    sandbox: Sandbox | None = None,
    prompt: str | None = None,
) -> TurnRequest:
    """What an agent is asked on one turn: the prompt the reducer's decision calls for,
    the session to start or continue, and the run's limits.  (The runner and plateau-test
    ask the same way.)"""
    return TurnRequest(
        workspace=workspace,
        prompt=prompt
        or build_prompt(task=task, decision=decision, minimize=config.minimize, last=last),
        session_id=decision.session_id or str(uuid.uuid4()),
        new_session=decision.new_session,
        round=round,
        agent=agent,
        turn=turn,
        timeout=config.turn_timeout,
        visible=decision.visible,
        state_dir=state_dir,
        seed=config.seed,
        minimize=config.minimize,
        env=env or {},
        sandbox=sandbox or Sandbox(),
    )


def retry_delay(job: TurnJob, attempts: int, error: str | None) -> float | None:
    """Seconds to wait before attempt ``attempts + 1``, or None: record the failure.

    A transient error (rate limit, overload, network, a lost worker) is tried again up
    to ``job.retries`` times, waiting ``retry_backoff`` seconds, doubling each time.
    """
    if error is None or attempts > job.retries or not is_transient(error):
        return None
    return job.retry_backoff * 2 ** (attempts - 1)


def fresh_attempt(request: TurnRequest) -> TurnRequest:
    """The request for another attempt: a new session is retried as a new session."""
    return replace(request, session_id=str(uuid.uuid4())) if request.new_session else request


def execute_turn(
    agent: Agent,
    job: TurnJob,
    *,
    sleep: Callable[[float], None] = time.sleep,
    repair: Callable[[Path, str], bool] | None = None,
) -> TurnOutcome:
    """Run the agent (retrying transient failures with backoff), then commit its work.

    Before a retry the workspace goes back to ``job.base``, so every attempt starts
    where the first did; a new session is retried as a new session with a fresh id.
    ``repair(workspace, base)`` rebuilds a private workspace whose repository the agent
    deleted or replaced, keeping its files (True if it could).
    """
    request = job.request
    started = time.perf_counter()
    attempts = 0
    pointer = pin_git_pointer(request.workspace)
    standalone = is_intact(request.workspace)  # a private repository (not a worktree)
    retried: list[str] = []
    while True:
        attempts += 1
        try:
            result = agent.run_turn(request=request)
        except Exception as exc:  # noqa: BLE001 - a broken backend fails its turn, not the run
            result = TurnResult(error=f"{agent.name} agent raised {type(exc).__name__}: {exc}")
        restore_git_pointer(request.workspace, pointer)
        if standalone and not secure(request.workspace):
            # The agent deleted or replaced its repository (a symlink, a pointer to
            # another one): the executor rebuilds it at the base around the files the
            # agent left, or the turn fails; no harness git runs in what it planted.
            if repair is None or not repair(request.workspace, job.base):
                broken = replace(result, error=f"{BROKEN_WORKSPACE}: its .git was replaced")
                laps = {"agent": time.perf_counter() - started, "commit": 0.0}
                return TurnOutcome(broken, TurnCommit(job.base, True, 0), attempts, laps)
        delay = retry_delay(job, attempts, result.error)
        if delay is None:
            break
        retried.append(str(result.error))
        reset_worktree(request.workspace, job.base)
        sleep(delay)
        request = fresh_attempt(request)
    agent_s = time.perf_counter() - started
    change = commit_turn(request.workspace, job.base, job.message)
    laps = {"agent": agent_s, "commit": time.perf_counter() - started - agent_s}
    return TurnOutcome(result, change, attempts, laps, retried=tuple(retried))


@dataclass(frozen=True)
class TurnPlace:
    """Where a turn's commit goes: ``repo``, the driver's round repository; ``start``,
    the round's starting commit; ``label``, the turn's own name (``r02-a1-t007``);
    ``judge``, the judge that scores the commit next (an executor may score it where
    the turn ran and hand that verdict to ``judge()`` for the same commit)."""

    repo: Path
    start: str
    label: str
    judge: Judge | None = None


class TurnRunner(Protocol):
    """What :func:`play_turn` needs of an executor (``executors.base.Executor`` has it;
    a protocol, so this module never imports the executors that import it)."""

    def run_turn(self, agent: Agent, job: TurnJob, place: TurnPlace) -> TurnOutcome: ...

    def judge(self, *, judge: Judge, repo: Path, commit: str) -> Verdict: ...


@dataclass(frozen=True)
class Played:
    """One turn played and judged: what the caller records."""

    outcome: TurnOutcome
    verdict: Verdict
    error: str | None  # the agent's error, or the judge's refusal (tampered)


def play_turn(
    executor: TurnRunner,
    agent: Agent,
    job: TurnJob,
    *,
    judge: Judge,
    repo: Path,
    start: str,
    label: str,
    known: Callable[[str], tuple[bool, float | None]],
) -> Played:
    """*The* turn step of every caller (the runner, ``plateau-test``): run the agent
    through the executor, then judge the commit -- unless nothing changed and the
    commit's score is ``known`` -- with the seal checked and a refusal recorded as the
    turn's error."""
    outcome = executor.run_turn(agent, job, TurnPlace(repo, start, label, judge))
    change = outcome.change
    seen, prior = known(change.commit) if change.empty else (False, None)
    if seen:  # nothing changed: the candidate keeps its score, no need to re-judge
        verdict = Verdict(prior, [prior] if prior is not None else [], "no edit")
    else:
        verdict = executor.judge(judge=judge, repo=repo, commit=change.commit)
    error = verdict.feedback if verdict.tampered else outcome.result.error
    return Played(outcome, verdict, error)
