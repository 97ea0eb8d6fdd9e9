"""``--env NAME``: a driver variable reaches agents and scorers on Ray workers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evolving_agent.errors import UsageError
from evolving_agent.search.config import SearchConfig
from evolving_agent.search.runner import run_search
from tests.helpers.ray_cluster import RayCluster

PY = sys.executable
pytestmark = pytest.mark.slow

AGENT = (
    "import os, pathlib\n"
    "pathlib.Path('value.txt').write_text(str(len(os.environ.get('EA_TEST_SECRET', ''))))\n"
)
SCORER = (
    "import os, pathlib\n"
    "print('scorer sees', len(os.environ.get('EA_TEST_SECRET', '')))\n"
    "print(float(pathlib.Path(os.environ['EA_CANDIDATE'], 'value.txt').read_text()))\n"
)


def _config(tmp: Path, name: str, env: list[str]) -> SearchConfig:
    (tmp / "candidate").mkdir(exist_ok=True)
    (tmp / "candidate" / "value.txt").write_text("0\n")
    (tmp / "task.md").write_text("t\n")
    (tmp / "agent.py").write_text(AGENT)
    (tmp / "score.py").write_text(SCORER)
    return SearchConfig(
        candidate=tmp / "candidate", task=tmp / "task.md", score_cmd=f"{PY} {tmp / 'score.py'}",
        agent="command", agent_cmd=f"{PY} {tmp / 'agent.py'}", policy="single", turns=1,
        out=tmp / name, workdir=tmp, executor="ray", env_forward=env, retries=0,
    )  # fmt: skip


def test_a_forwarded_variable_reaches_the_workers_and_only_then(
    tmp_path: Path, ray_cluster: RayCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Set after the workers started: they cannot have inherited it.
    monkeypatch.setenv("EA_TEST_SECRET", "xyz")
    forwarded = run_search(_config(tmp_path, "with", ["EA_TEST_SECRET"]))
    assert forwarded.best_score == 3.0
    plain = run_search(_config(tmp_path, "without", []))
    assert plain.best_score == 0.0  # the seed's 0: the agent saw nothing


def test_forwarding_an_unset_variable_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--env EA_NOT_SET_ANYWHERE: not set"):
        run_search(_config(tmp_path, "x", ["EA_NOT_SET_ANYWHERE"]))
