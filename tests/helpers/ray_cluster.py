"""One real two-node Ray cluster for all the Ray files (``ray_cluster`` in conftest).

Starting one (a head and a worker node, one CPU each, no dashboard) costs ~10 s of wall
time on a quiet 2-core machine and 25 s under load, and each Ray test file used to start
its own.  The files in ``RAY_FILES`` now share one: ``tests/conftest.py`` hands them to
one xdist worker together, one after another, so the cluster starts once per suite
(``SharedCluster``).  A test whose subject is a node dying kills a node of its own
(``extra_node``), never one of the shared two.

With one CPU per node and every agent turn asking for one CPU, two turns that must run at
the same time (agents that wait for each other) can only run on two nodes.  Worker scratch
space goes to ``EA_RAY_WORKDIR`` (set before the nodes start), so tests can see where each
turn ran.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Run on one worker, in one scope: every one of them uses the session's cluster.
RAY_FILES = frozenset(
    {
        "tests/search/executors/test_ray_exec.py",
        "tests/search/test_certify_ray.py",
        "tests/search/test_isolation_disk.py",
        "tests/search/test_ray_env.py",
        "tests/search/test_ray_residue.py",
    }
)


# A killed node is declared dead after 5 failed health checks: one a second, not every
# 3 s (Ray's default), so a test that kills one waits ~5 s for it, not 15.  A slow but
# live node is not at risk: each check still waits Ray's full 10 s for its answer.
_HEAD = {
    "num_cpus": 1,
    "include_dashboard": False,
    "_system_config": {"health_check_period_ms": 1000},
}


@dataclass(frozen=True)
class RayCluster:
    address: str
    workdir: Path  # EA_RAY_WORKDIR of every node
    nodes: tuple[str, ...]  # the shared head and worker node (never killed)
    handle: Any  # ray.cluster_utils.Cluster


@contextmanager
def _scratch_in(workdir: Path) -> Iterator[None]:
    """``EA_RAY_WORKDIR`` for the nodes started inside (they inherit it) and only them."""
    old = os.environ.get("EA_RAY_WORKDIR")
    os.environ["EA_RAY_WORKDIR"] = str(workdir)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("EA_RAY_WORKDIR", None)
        else:
            os.environ["EA_RAY_WORKDIR"] = old


@contextmanager
def two_node_cluster(workdir: Path) -> Iterator[RayCluster]:
    """Start the cluster, connect this process as its driver, and stop both at the end."""
    import ray
    from ray.cluster_utils import Cluster

    with _scratch_in(workdir):
        handle = Cluster(initialize_head=True, head_node_args=_HEAD)
        handle.add_node(num_cpus=1)
    try:
        handle.wait_for_nodes()
        ray.init(address=handle.address, log_to_driver=False, include_dashboard=False)
        nodes = tuple(n["NodeID"] for n in ray.nodes() if n["Alive"])
        assert len(nodes) == 2
        yield RayCluster(handle.address, workdir, nodes, handle)
    finally:
        ray.shutdown()
        handle.shutdown()


class SharedCluster:
    """The session's cluster, started by the first test that asks for it and stopped as
    soon as the worker moves past the Ray files (an idle cluster costs ~5 % of a core),
    or at the session's end.  A later test asking again (a ``-n 0`` run orders files by
    cost, so the Ray files need not be next to each other) starts it again."""

    def __init__(self) -> None:
        self.running: ExitStack | None = None
        self.cluster: RayCluster | None = None

    def get(self, workdir: Callable[[], Path]) -> RayCluster:
        if self.cluster is None:
            stack = ExitStack()
            self.cluster = stack.enter_context(two_node_cluster(workdir()))
            self.running = stack
        return self.cluster

    def close(self) -> None:
        running, self.running, self.cluster = self.running, None, None
        if running is not None:
            running.close()


@contextmanager
def extra_node(cluster: RayCluster) -> Iterator[Any]:
    """A third node (one CPU, the same scratch base) for a test to kill; removed at the
    end if the test did not, so the shared two are all that is left."""
    with _scratch_in(cluster.workdir):
        node = cluster.handle.add_node(num_cpus=1)
    try:
        cluster.handle.wait_for_nodes()
        yield node
    finally:
        if node in cluster.handle.worker_nodes:
            cluster.handle.remove_node(node, allow_graceful=False)
