"""Canary rounds on a real two-node Ray cluster (the session's ``ray_cluster``): the
probe is shipped to a worker like any agent turn and runs there under bwrap."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evolving_agent.search.runner import run_search
from tests.helpers.ray_cluster import RayCluster
from tests.helpers.search import PY, config, make_candidate, make_task, records, write_scorer
from tests.search.test_certify import BUMP_INLINE

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
]


def test_a_probe_that_tries_every_channel_finds_none_under_bwrap_on_ray(
    tmp_path: Path,
    ray_cluster: RayCluster,
) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    cfg = config(
        tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=f'{PY} -c "{BUMP_INLINE}"',
        executor="ray", agents=2, rounds=2, turns=4, sandbox="bwrap", sandbox_net=False,
        certify=True,
    )  # fmt: skip
    summary = run_search(cfg)
    assert summary.certify is not None
    assert summary.certify["certified"] is True, summary.certify
    assert summary.certify["line"] == (
        "forgetting certified: 0/48 canaries found in 2 rounds (24 a round)"
    )
    # The turns ran on the cluster's nodes (so did the probes: same executor).
    assert all(r["node"] in ray_cluster.nodes for r in records(tmp_path / "run"))
    assert [r["score"] for r in records(tmp_path / "run")] == [1.0, 1.0, 2.0, 2.0]
