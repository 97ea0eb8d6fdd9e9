"""The ``ray`` executor: every agent turn and every score is a Ray task on a cluster.

The driver (the machine running ``search run``) keeps the run directory; workers never
see its filesystem.  Per turn the driver ships the round's start bundle, a bundle of
the commits the agent may look at, and a copy of ``agent-state/``
(:mod:`~evolving_agent.search.executors.worker`); the task returns the turn's commit as
a bundle, which the driver verifies and fetches into the round repository before the
runner records anything.  A score is another task that gets a self-contained bundle of
the candidate, exports it and runs the score command there (so ``num_gpus=1`` scorers
land on GPU nodes).

Tasks are not retried by Ray (``max_retries=0``): a worker that dies mid-turn comes
back as a lost turn, which the runner records as failed; the agent's next turn starts
again from the same base.  An agent's next turn prefers the node its last turn ran on
(soft affinity), so CLI sessions kept on that node can continue; if that node is gone
the turn runs elsewhere.  ``cancel`` (Ctrl-C) cancels every task in flight; the
task's process runner then kills the agent's or scorer's process tree.

Ray is imported only here, and only when this executor is built.
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path
from typing import Any

from evolving_agent.errors import EvolvingAgentError, InvalidInput
from evolving_agent.search.agents.base import TurnResult
from evolving_agent.search.executors.base import Executor, TurnCancelled, TurnOutcome, TurnSpec
from evolving_agent.search.executors.bundles import BundleRefused, make_bundle, receive_turn
from evolving_agent.search.executors.worker import (
    Returned,
    Shipment,
    cleanup,
    state_snapshot,
    worker_score,
    worker_turn,
    write_state,
)
from evolving_agent.search.judge import Judge, Verdict
from evolving_agent.search.workspace import TurnCommit

# Resource names Ray takes as their own keyword; anything else is a custom resource.
_TOP_LEVEL = ("num_cpus", "num_gpus", "memory")
# How long past the turn timeout the driver waits for a silent worker.
_GRACE_S = 120.0


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InvalidInput(
            "--executor ray needs Ray, which is not installed: pip install 'evolving-agent[ray]'"
        ) from None
    return ray


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


def _turn_task(spec: TurnSpec, shipment: Shipment) -> Returned:
    import ray

    return worker_turn(spec, shipment, ray.get_runtime_context().get_node_id())


def _score_task(judge: Judge, bundle: bytes, commit: str) -> Verdict:
    return worker_score(judge, bundle, commit)


def _cleanup_task(run_key: str) -> None:
    import ray

    cleanup(run_key, ray.get_runtime_context().get_node_id())


class RayExecutor(Executor):
    name = "ray"

    def __init__(
        self,
        *,
        run_dir: Path,
        address: str | None = None,
        agent_resources: dict[str, float] | None = None,
        score_resources: dict[str, float] | None = None,
        max_scorers: int | None = None,
    ) -> None:
        super().__init__(max_scorers=max_scorers)
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
        self.run_key = hashlib.sha1(str(run_dir).encode()).hexdigest()[:12]
        self.state_dir = run_dir / "agent-state"
        self.turn_fn = ray.remote(max_retries=0)(_turn_task)
        self.score_fn = ray.remote(max_retries=0)(_score_task)
        self.agent_options = task_options(agent_resources)
        self.score_options = task_options(score_resources)
        self.lock = threading.Lock()
        # Bundling updates refs/ea/ship/* in the driver's repository; two threads
        # updating the same ref at once would trip over git's ref lock.
        self.bundle_lock = threading.Lock()
        self.in_flight: set[Any] = set()
        self.cancelled = False
        self.last_node: dict[int, str] = {}  # agent -> node of its last turn
        self.start_bundles: dict[tuple[str, str], bytes] = {}

    # -- turns -------------------------------------------------------------------

    def run_turn(self, *, spec: TurnSpec) -> TurnOutcome:
        started = time.perf_counter()
        request = spec.request
        needed = {spec.base, *(v.commit for v in request.visible)}
        with self.bundle_lock:
            start_bundle = self.start_bundles.get((str(spec.repo), spec.start))
            if start_bundle is None:
                start_bundle = make_bundle(spec.repo, [spec.start])
                assert start_bundle is not None
                self.start_bundles[(str(spec.repo), spec.start)] = start_bundle
            history = make_bundle(spec.repo, needed, exclude=[spec.start])
        with self.lock:
            state = state_snapshot(self.state_dir)
        shipment = Shipment(
            run_key=self.run_key,
            start_bundle=start_bundle,
            history_bundle=history,
            state_files=state,
        )
        options = dict(self.agent_options)
        node = self.last_node.get(request.agent)
        if node is not None:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node, soft=True)
        shipped = time.perf_counter()
        try:
            returned: Returned = self._get(
                self.turn_fn.options(**options).remote(spec, shipment), request.timeout
            )
        except _Lost as exc:  # the worker died, its node left, or the harness failed there
            return self._lost(spec, f"worker lost: {exc}", node=None)
        back = time.perf_counter()
        outcome = returned.outcome
        assert outcome.node is not None
        self.last_node[request.agent] = outcome.node
        try:
            change = receive_turn(
                spec.repo,
                returned.bundle,
                commit=outcome.change.commit,
                base=spec.base,
                label=spec.label,
            )
        except BundleRefused as exc:
            return self._lost(spec, f"commit refused: {exc}", node=outcome.node)
        with self.lock:
            write_state(self.state_dir, returned.state_files)
        laps = {
            **outcome.laps,
            "ship": shipped - started,
            "remote": back - shipped,
            "verify": time.perf_counter() - back,
        }
        return TurnOutcome(outcome.result, change, laps, outcome.node)

    def _lost(self, spec: TurnSpec, error: str, *, node: str | None) -> TurnOutcome:
        self.last_node.pop(spec.request.agent, None)
        result = TurnResult(session_id=spec.request.session_id, error=error)
        return TurnOutcome(result, TurnCommit(spec.base, True, 0), {}, node, lost=True)

    # -- scores ------------------------------------------------------------------

    def score(self, *, judge: Judge, repo: Path, commit: str) -> Verdict:
        with self.bundle_lock:
            bundle = make_bundle(repo, [commit])
        assert bundle is not None
        try:
            verdict: Verdict = self._get(
                self.score_fn.options(**self.score_options).remote(judge, bundle, commit),
                judge.timeout * judge.repeats,
            )
        except _Lost as exc:
            return Verdict(None, [], f"scorer lost: {exc}")
        return verdict

    # -- plumbing ----------------------------------------------------------------

    def _get(self, ref: Any, timeout: float) -> Any:
        with self.lock:
            if self.cancelled:
                self.ray.cancel(ref, force=False)
                raise TurnCancelled()
            self.in_flight.add(ref)
        try:
            return self.ray.get(ref, timeout=timeout + _GRACE_S)
        except self.ray.exceptions.GetTimeoutError as exc:
            self.ray.cancel(ref, force=True)
            raise _Lost(_first_line(exc)) from None
        except self.ray.exceptions.TaskCancelledError:
            raise TurnCancelled() from None
        except self.ray.exceptions.RayError as exc:
            if self.cancelled:
                raise TurnCancelled() from None
            raise _Lost(_first_line(exc)) from None
        except KeyboardInterrupt:  # Ctrl-C while this thread waits (the seed's score)
            self.cancel()
            raise
        finally:
            with self.lock:
                self.in_flight.discard(ref)

    def cancel(self) -> None:
        with self.lock:
            self.cancelled = True
            refs = list(self.in_flight)
        for ref in refs:
            # Not force: the task gets a KeyboardInterrupt, so the process runner kills
            # the agent's (or scorer's) whole process tree before the worker lets go.
            self.ray.cancel(ref, force=False)

    def close(self) -> None:
        """Remove the run's scratch space on every live node, then let go of Ray."""
        if not self.cancelled:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            remote = self.ray.remote(max_retries=0, num_cpus=0)(_cleanup_task)
            refs = [
                remote.options(
                    scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
                ).remote(self.run_key)
                for n in self.ray.nodes()
                if n.get("Alive")
            ]
            try:
                self.ray.get(refs, timeout=60)
            except self.ray.exceptions.RayError:
                pass  # scratch space left on a node that went away: harmless
        if self.owns_ray:
            self.ray.shutdown()


class _Lost(Exception):
    """A task that will not return: its worker died, its node left, it raised, or it
    outlived the turn timeout plus a grace period."""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]
