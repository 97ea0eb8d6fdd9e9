"""The ``ray`` executor: every agent turn and every score is a Ray task on a cluster.

The driver (the machine running ``search run``) keeps the run directory; workers never
see its filesystem.  Per turn the driver ships the round's start bundle, a bundle of
the commits the agent may look at, and a copy of ``agent-state/``
(:mod:`~evolving_agent.search.executors.worker`); the task returns the turn's commit as
a bundle, which the driver verifies and fetches into the round repository before the
runner records anything.  The turn's task judges its commit too (in a repository of the
harness's own on that node, see ``worker._judge_here``) and :meth:`RayExecutor.score`
hands that verdict over once git confirmed the commit; with score resources or
``max_scorers`` a score is a task of its own that gets a self-contained bundle of the
candidate, exports it and runs the score command there (so ``num_gpus=1`` scorers land
on GPU nodes).  A turn ships no history when the driver knows the agent's workspace on
that node holds it (a task that lands elsewhere says so and gets it).

Nothing of a run outlives it: :meth:`RayExecutor.close` has every live node kill the
processes carrying the run's mark and remove the run's scratch in every node folder on
that machine (a dead node's too); a worker lost under a turn has that turn's processes
swept before the retry.

The task runs the search's one turn function,
:func:`~evolving_agent.search.turn.execute_turn` (the agent, its retries of transient
errors, the commit), with the agent backend, the :class:`TurnJob` and the sealed
:class:`Judge` shipped as pickled plain values.  Tasks are not retried by Ray
(``max_retries=0``): a worker that dies mid-turn is a transient failure (``worker
lost: ...``) that this executor retries by the run's retry policy, from the same base
on a fresh workspace; once the retries are spent the turn is recorded as failed and
the run goes on.  An agent's next turn prefers the node its last turn ran on
(soft affinity), so CLI sessions kept on that node can continue; if that node is gone
the turn runs elsewhere.  ``cancel`` (Ctrl-C) cancels every task in flight; the
task's process runner then kills the agent's or scorer's process tree.

Ray is imported only here, and only when this executor is built.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from evolving_agent.errors import EvolvingAgentError, UsageError
from evolving_agent.extras import require
from evolving_agent.search.agents.base import (
    TURN_TIMEOUT_PREFIX,
    WORKER_LOST_PREFIX,
    Agent,
    TurnResult,
)
from evolving_agent.search.executors.base import Executor, ExecutorSettings, TurnCancelled
from evolving_agent.search.executors.bundles import BundleRefused, make_bundle, receive_turn
from evolving_agent.search.executors.worker import (
    Missing,
    Returned,
    Shipment,
    cleanup,
    state_snapshot,
    sweep,
    worker_score,
    worker_turn,
    write_state,
)
from evolving_agent.search.judge import Judge, Verdict
from evolving_agent.search.private import run_ident, run_key
from evolving_agent.search.turn import (
    TurnJob,
    TurnOutcome,
    TurnPlace,
    fresh_attempt,
    retry_delay,
)
from evolving_agent.search.workspace import TurnCommit

# Resource names Ray takes as their own keyword; anything else is a custom resource.
_TOP_LEVEL = ("num_cpus", "num_gpus", "memory")
# Each attempt's mark in its agent's environment: a worker lost under it is swept by it.
ATTEMPT_VAR = "EA_RAY_ATTEMPT"
# How long past the turn timeout the driver waits for a silent worker.
_GRACE_S = 120.0


def import_ray() -> Any:
    return require("ray", "--executor ray")


def task_options(resources: dict[str, float] | None) -> dict[str, Any]:
    """Ray task options for ``--agent-resources`` / ``--score-resources``."""
    given = dict(resources or {})
    options: dict[str, Any] = {"num_cpus": given.pop("num_cpus", 1)}
    for key in _TOP_LEVEL[1:]:
        if key in given:
            options[key] = given.pop(key)
    if given:
        options["resources"] = given
    return options


def _turn_task(
    agent: Agent, job: TurnJob, shipment: Shipment, judge: Judge | None
) -> Returned | Missing:
    import ray

    node = ray.get_runtime_context().get_node_id()
    return worker_turn(agent, job, shipment, node, judge)


def _score_task(judge: Judge, bundle: bytes, commit: str) -> Verdict:
    return worker_score(judge, bundle, commit)


def _cleanup_task(run_key: str, run_id: str) -> None:
    cleanup(run_key, run_id)


def _sweep_task(var: str, value: str) -> list[int]:
    return sweep(var, value)


class RayExecutor(Executor):
    name = "ray"

    @classmethod
    def from_settings(cls, config: ExecutorSettings) -> Executor:
        return cls(
            address=config.ray_address,
            agent_resources=config.agent_resources,
            score_resources=config.score_resources,
            max_scorers=config.max_scorers,
            env_forward=config.env_forward,
        )

    def __init__(
        self,
        *,
        address: str | None = None,
        agent_resources: dict[str, float] | None = None,
        score_resources: dict[str, float] | None = None,
        max_scorers: int | None = None,
        env_forward: list[str] | None = None,
    ) -> None:
        super().__init__(max_scorers=max_scorers)
        missing = [name for name in env_forward or [] if name not in os.environ]
        if missing:
            raise UsageError(f"--env {missing[0]}: not set in this environment")
        ray = import_ray()
        self.ray = ray
        self.owns_ray = not ray.is_initialized()
        if self.owns_ray:
            try:
                ray.init(
                    address=address,
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = f" at {address}" if address else ""
                raise EvolvingAgentError(
                    f"cannot start or join a Ray cluster{where}: {_first_line(exc)}"
                ) from None
        self.run_key: str | None = None  # set by bind(), once the run directory exists
        self.run_id = ""  # the run's mark in its agents' environment (RUN_ID_VAR)
        self.turn_fn = ray.remote(max_retries=0)(_turn_task)
        self.score_fn = ray.remote(max_retries=0)(_score_task)
        self.agent_options = task_options(agent_resources)
        self.score_options = task_options(score_resources)
        # A turn's commit is judged in the turn's own task (no second task, no second
        # bundle) unless scores want resources of their own or a bound on how many run.
        self.judge_with_turn = score_resources is None and max_scorers is None
        self.verdicts: dict[tuple[str, str], Verdict] = {}  # (repo, commit) -> judged
        # Workers run with the raylet's environment, not the driver's: --env NAME
        # forwards the driver's value through the tasks' runtime_env.
        forwarded = {name: os.environ[name] for name in env_forward or []}
        if forwarded:
            for options in (self.agent_options, self.score_options):
                options["runtime_env"] = {"env_vars": forwarded}
        self.lock = threading.Lock()
        # Bundling updates refs/ea/ship/* in the driver's repository; two threads
        # updating the same ref at once would trip over git's ref lock.
        self.bundle_lock = threading.Lock()
        self.in_flight: set[Any] = set()
        self.cancelled_event = threading.Event()
        self.last_node: dict[int, str] = {}  # agent -> node of its last turn
        self.start_bundles: dict[tuple[str, str], bytes] = {}
        # (node, repo, agent) -> the commits that agent's workspace on that node holds:
        # a turn whose base and visible commits are all there ships no history.
        self.held: dict[tuple[str, str, int], set[str]] = {}
        self.heads: dict[tuple[str, str, int], str] = {}  # ... and where it was left

    def bind(self, run_dir: Path) -> None:
        """Name the run's scratch space on every node after its run directory."""
        self.run_key = run_key(run_dir)
        self.run_id = run_ident(run_dir)

    # -- turns -------------------------------------------------------------------

    def run_turn(self, agent: Agent, job: TurnJob, place: TurnPlace) -> TurnOutcome:
        """``execute_turn`` on a worker; a worker lost under it is a transient failure,
        retried by the same policy (attempts and backoff shared with the agent's own
        retries on the worker).  With ``judge`` (and no score resources or bound of
        their own) the worker judges the commit too; :meth:`score` hands that over."""
        judge = place.judge if self.judge_with_turn else None
        repo, start, label = place.repo, place.start, place.label
        started = time.perf_counter()
        attempt, lost = job, 0
        errors: list[str] = []  # the lost workers' errors, kept on the record
        while True:
            try:
                outcome = self._turn_once(
                    agent, attempt, repo=repo, start=start, label=label, judge=judge
                )
            except _Lost as exc:
                lost += 1
                error = str(exc)
                # What the dead worker was running lives on (its runner never swept it):
                # end it before a retry can land in the same workspace beside it.
                self._on_every_node(_sweep_task, ATTEMPT_VAR, self._mark(label))
                delay = retry_delay(job, lost, error)
                if delay is None:
                    failed = self._failed(job, error, lost, time.perf_counter() - started)
                    return replace(failed, retried=tuple(errors))
                errors.append(error)
                self._sleep(delay)
                request = fresh_attempt(attempt.request)
                attempt = replace(job, request=request, retries=job.retries - lost)
                continue
            return replace(
                outcome, attempts=outcome.attempts + lost, retried=(*errors, *outcome.retried)
            )

    def _turn_once(
        self, agent: Agent, job: TurnJob, *, repo: Path, start: str, label: str, judge: Judge | None
    ) -> TurnOutcome:
        started = time.perf_counter()
        request = job.request
        mark = {ATTEMPT_VAR: self._mark(label)}
        job = replace(job, request=replace(request, env={**request.env, **mark}))
        needed = {job.base, *(v.commit for v in request.visible)} - {start}
        node = self.last_node.get(request.agent)
        there = (node or "", str(repo), request.agent)
        skip = bool(needed) and needed <= self.held.get(there, set())  # all there
        assert self.run_key is not None, "bind() the run directory first"
        state_dir = request.state_dir  # the driver's agent-state/ (backend sessions)
        with self.lock:
            state = state_snapshot(state_dir) if state_dir else {}
        while True:
            shipment = Shipment(
                run_key=self.run_key,
                start_bundle=self._start_bundle(repo, start),
                history_bundle=None if skip else self._bundle(repo, needed, exclude=[start]),
                state_files=state,
                held=skip,
                at_base=skip and self.heads.get(there) == job.base,
            )
            shipped = time.perf_counter()
            returned = self._dispatch(agent, job, shipment, judge, node)
            if isinstance(returned, Returned):
                break
            skip = False  # not where the driver thought: the same turn, history shipped
        back = time.perf_counter()
        outcome = returned.outcome
        assert outcome.node is not None
        self.last_node[request.agent] = outcome.node
        key = (outcome.node, str(repo), request.agent)
        kept = set() if returned.rebuilt else self.held.get(key, set())
        self.held[key] = kept | needed | {outcome.change.commit}
        self.heads[key] = outcome.change.commit
        try:
            change = receive_turn(
                repo, returned.bundle, commit=outcome.change.commit, base=job.base, label=label
            )
        except BundleRefused as exc:
            failed = self._failed(job, f"commit refused: {exc}", outcome.attempts, back - started)
            return replace(failed, node=outcome.node)
        with self.lock:
            if returned.verdict is not None:  # the commit git just confirmed, judged there
                self.verdicts[(str(repo), change.commit)] = returned.verdict
            if state_dir is not None:
                write_state(state_dir, returned.state_files)
        laps = {
            **outcome.laps,
            "ship": shipped - started,
            "remote": back - shipped,
            "verify": time.perf_counter() - back,
        }
        return replace(outcome, change=change, laps=laps)

    def _dispatch(
        self, agent: Agent, job: TurnJob, shipment: Shipment, judge: Judge | None, node: str | None
    ) -> Returned | Missing:
        """One turn task, near the agent's last node; its answer, or :class:`_Lost`."""
        request = job.request
        options = dict(self.agent_options)
        if node is not None:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node, soft=True)
        # The worker's execute_turn may use every retry, with its backoff.
        longest = request.timeout * (job.retries + 1)
        longest += job.retry_backoff * (2**job.retries - 1)
        longest += judge.timeout * judge.repeats if judge is not None else 0.0
        try:
            returned: Returned | Missing = self._get(
                self.turn_fn.options(**options).remote(agent, job, shipment, judge),
                longest,
                what=TURN_TIMEOUT_PREFIX.removesuffix(" timed out"),  # not retried
            )
        except _Lost:  # the worker died, its node left, or the task never returned
            self.last_node.pop(request.agent, None)
            raise
        return returned

    def _start_bundle(self, repo: Path, start: str) -> bytes:
        with self.bundle_lock:
            bundle = self.start_bundles.get((str(repo), start))
            if bundle is None:
                bundle = make_bundle(repo, [start])
                assert bundle is not None
                self.start_bundles[(str(repo), start)] = bundle
            return bundle

    def _bundle(self, repo: Path, commits: set[str], *, exclude: list[str]) -> bytes | None:
        # Bundling updates refs/ea/ship/* in the driver's repository; two threads
        # updating the same ref at once would trip over git's ref lock.
        with self.bundle_lock:
            return make_bundle(repo, commits, exclude=exclude)

    def _mark(self, label: str) -> str:
        """A turn's mark, unique on the cluster (other runs' turns have the same labels)."""
        return f"{self.run_key}-{label}"

    def _failed(self, job: TurnJob, error: str, attempts: int, elapsed: float) -> TurnOutcome:
        """A turn that left nothing in the driver's repository: a failed, empty turn."""
        request = job.request
        # A new session may never have been created (its worker died): start fresh next.
        session = None if request.new_session else request.session_id
        result = TurnResult(session_id=session, error=error)
        laps = {"agent": elapsed, "commit": 0.0}
        return TurnOutcome(result, TurnCommit(job.base, True, 0), attempts, laps)

    def _sleep(self, seconds: float) -> None:
        """Back off before a retry; Ctrl-C meanwhile cancels the turn."""
        if self.cancelled_event.wait(seconds):
            raise TurnCancelled()

    # -- scores ------------------------------------------------------------------

    def score(self, *, judge: Judge, repo: Path, commit: str) -> Verdict:
        with self.lock:
            judged = self.verdicts.pop((str(repo), commit), None)
        if judged is not None:
            return judged
        bundle = self._bundle(repo, {commit}, exclude=[])
        assert bundle is not None
        try:
            verdict: Verdict = self._get(
                self.score_fn.options(**self.score_options).remote(judge, bundle, commit),
                judge.timeout * judge.repeats,
                what="score",
            )
        except _Lost as exc:
            return Verdict(None, [], f"{exc} (scoring)")
        return verdict

    # -- plumbing ----------------------------------------------------------------

    def _get(self, ref: Any, timeout: float, *, what: str) -> Any:
        """The task's result; raises :class:`_Lost` with the error to record."""
        with self.lock:
            if self.cancelled_event.is_set():
                self.ray.cancel(ref, force=False)
                raise TurnCancelled()
            self.in_flight.add(ref)
        try:
            return self.ray.get(ref, timeout=timeout + _GRACE_S)
        except self.ray.exceptions.GetTimeoutError:
            self.ray.cancel(ref, force=True)
            waited = timeout + _GRACE_S
            why = f"{what} timed out after {waited:g}s: its Ray task never returned"
            raise _Lost(why) from None
        except self.ray.exceptions.TaskCancelledError:
            raise TurnCancelled() from None
        except self.ray.exceptions.RayTaskError as exc:
            if self.cancelled_event.is_set():
                raise TurnCancelled() from None
            # The harness code raised on the worker (not a dead worker): not retried.
            cause = getattr(exc, "cause", None) or exc
            raise _Lost(f"worker failed: {_first_line(cause)}") from None
        except self.ray.exceptions.RayError as exc:
            if self.cancelled_event.is_set():
                raise TurnCancelled() from None
            # The worker process died, its node left, its object was lost: transient.
            raise _Lost(f"{WORKER_LOST_PREFIX}: {_first_line(exc)}") from None
        except KeyboardInterrupt:  # Ctrl-C while this thread waits (the seed's score)
            self.cancel()
            raise
        finally:
            with self.lock:
                self.in_flight.discard(ref)

    def cancel(self) -> None:
        with self.lock:
            self.cancelled_event.set()
            refs = list(self.in_flight)
        for ref in refs:
            # Not force: the task gets a KeyboardInterrupt, so the process runner kills
            # the agent's (or scorer's) whole process tree before the worker lets go.
            self.ray.cancel(ref, force=False)

    def close(self) -> None:
        """End the run on every live node -- the processes carrying its mark killed, its
        scratch space removed, a dead node's folder too -- then let go of Ray."""
        try:
            if self.run_key is not None:
                with self.lock:
                    refs = list(self.in_flight)
                if refs:  # cancelled (Ctrl-C): let the tasks end their process trees first
                    self.ray.wait(refs, num_returns=len(refs), timeout=_GRACE_S)
                self._on_every_node(_cleanup_task, self.run_key, self.run_id)
        finally:
            if self.owns_ray:
                self.ray.shutdown()

    def _on_every_node(self, fn: Any, *args: Any) -> None:
        """Run ``fn(*args)`` once on every live node (no CPU asked, so a busy node takes
        it too) and wait for them; a node that leaves meanwhile is skipped."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        remote = self.ray.remote(max_retries=0, num_cpus=0)(fn)
        refs = [
            remote.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
            ).remote(*args)
            for n in self.ray.nodes()
            if n.get("Alive")
        ]
        try:
            self.ray.get(refs, timeout=_GRACE_S)
        except self.ray.exceptions.RayError:
            pass  # a node that went away took its processes with it


class _Lost(Exception):
    """A task that will not return: its worker died, its node left, it raised, or it
    outlived the turn timeout plus a grace period.  The message is the error to record
    (``worker lost: ...`` is transient, see ``is_transient``)."""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]
