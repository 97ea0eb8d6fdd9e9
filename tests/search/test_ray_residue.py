"""Ray without residue (issue 32): once a run ends, nothing of it is left on any node.

The session's two-node ``ray_cluster``; the last test adds a third node and kills that
one (``extra_node``), so the shared two live on.  "Of the run" is what carries its markers: the
agents and scorers it started carry ``EA_RUN_ID`` (walked for in ``/proc``), the Ray
workers that ran its tasks are found from the agents (their ``ray::`` ancestor), and
its scratch space is ``$EA_RAY_WORKDIR/NODE/RUN_KEY`` on every node, dead ones included.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from evolving_agent.process import pids_with_env
from evolving_agent.search.private import run_key
from evolving_agent.search.runner import RUN_ID_VAR, run_search
from tests.helpers.ray_cluster import RayCluster, extra_node
from tests.helpers.search import config, make_candidate, make_task, records, write_agent

pytestmark = pytest.mark.slow
PY = sys.executable


# What every agent turn notes: its pid, the Ray worker running it, and a grandchild it
# leaves behind in a session of its own (an agent's forgotten background job).
NOTE = """
def ray_worker():
    pid = os.getppid()
    while pid > 1:
        if pathlib.Path(f"/proc/{{pid}}/cmdline").read_bytes().startswith(b"ray::"):
            return pid
        pid = int(pathlib.Path(f"/proc/{{pid}}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return None

left = subprocess.Popen(["sleep", "600"], start_new_session=True)
note = dict(agent=os.getpid(), worker=ray_worker(), left=left.pid, cwd=os.getcwd())
with open({notes!r}, "a") as fh:
    fh.write(json.dumps(note) + "\\n")
"""


def _notes(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended


def _wait_gone(pids: set[int], what: str) -> None:
    """Wait (for an event: each pid ending) with a guard against a hang only."""
    guard = time.monotonic() + 120
    while live := {pid for pid in pids if _alive(pid)}:
        assert time.monotonic() < guard, f"{what} outlived the run: {sorted(live)}"
        time.sleep(0.05)


def _scorer(tmp: Path) -> str:
    script = tmp / "judge" / "score.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(
        "import os, pathlib\n"
        "print(float(pathlib.Path(os.environ['EA_CANDIDATE'], 'value.txt').read_text()))\n"
    )
    return f"{PY} {script}"


def test_a_cli_run_leaves_no_process_and_no_scratch_on_any_node(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    notes = tmp_path / "notes.jsonl"
    agent = write_agent(tmp_path, NOTE.format(notes=str(notes)) + "write(value() + 1)\n")
    out = tmp_path / "run"
    done = subprocess.run(
        [PY, "-m", "evolving_agent", "search", "run", "--candidate", str(tmp_path / "candidate"),
         "--task", str(tmp_path / "task.md"), "--score", _scorer(tmp_path), "--agent", "command",
         "--agent-cmd", agent, "--policy", "parallel", "--agents", "2", "--turns", "4",
         "--out", str(out), "--sandbox", "none", "--executor", "ray",
         "--ray-address", ray_cluster.address, "--quiet"],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [r["score"] for r in records(out)] and all(r["score"] for r in records(out))

    seen = _notes(notes)
    assert len(seen) == 4 and all(n["worker"] for n in seen)
    _wait_gone({n["agent"] for n in seen} | {n["left"] for n in seen}, "an agent's process")
    _wait_gone({n["worker"] for n in seen}, "a Ray worker of the run")
    assert pids_with_env(RUN_ID_VAR, f"ea-run-{run_key(out)}") == []
    assert not list(ray_cluster.workdir.glob(f"*/{run_key(out)}"))


# The agent on the doomed node leaves a grandchild, says so, and waits for its node to
# die; the test kills the node (no graceful stop: its raylet and workers are SIGKILLed).
DOOMED = """
meet = pathlib.Path({meet!r})
meet.mkdir(exist_ok=True)
if os.environ["EA_TURN"] == "1":
    (meet / os.environ["EA_AGENT"]).touch()
    while not all((meet / str(agent)).exists() for agent in (1, 2, 3)):
        time.sleep(0.05)
if pathlib.Path.cwd().is_relative_to({doomed!r}):
    pathlib.Path({ready!r}).touch()
    time.sleep(600)
write(value() + 1)
"""


def test_a_dead_nodes_scratch_and_orphans_are_gone_when_the_run_ends(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    notes, ready = tmp_path / "notes.jsonl", tmp_path / "ready"
    with extra_node(ray_cluster) as worker:
        doomed = ray_cluster.workdir / worker.node_id[:16]
        body = DOOMED.format(meet=str(tmp_path / "meet"), doomed=str(doomed), ready=str(ready))
        agent = write_agent(tmp_path, NOTE.format(notes=str(notes)) + body)
        # The three first turns wait for each other, so one of them runs on the extra
        # node (three nodes, one CPU each).
        cfg = config(
            tmp_path, score_cmd=_scorer(tmp_path), agent_cmd=agent, policy="parallel",
            agents=3, turns=6, retries=2, sandbox="none", executor="ray", turn_timeout=600,
        )  # fmt: skip

        def kill_the_node() -> None:
            guard = time.monotonic() + 600  # against a hang only
            while not ready.exists() and time.monotonic() < guard:
                time.sleep(0.05)
            ray_cluster.handle.remove_node(worker, allow_graceful=False)

        killer = threading.Thread(target=kill_the_node, daemon=True)
        killer.start()
        summary = run_search(cfg)
        killer.join()

    rows = records(tmp_path / "run")
    assert summary.turns == 6 and summary.failed_turns == 0
    assert any(e.startswith("worker lost") for r in rows for e in r["retried"])
    assert worker.node_id not in {r["node"] for r in rows}
    on_doomed = [n for n in _notes(notes) if Path(n["cwd"]).is_relative_to(doomed)]
    assert on_doomed  # the node died under a turn, which left a grandchild there
    # The dead node's scratch folder is gone, and so is every process the run started.
    key = run_key(tmp_path / "run")
    assert not (doomed / key).exists()
    assert not list(ray_cluster.workdir.glob(f"*/{key}"))
    _wait_gone({n["left"] for n in _notes(notes)}, "an agent's grandchild")
    _wait_gone({n["agent"] for n in on_doomed}, "the dead node's agent")
    assert pids_with_env(RUN_ID_VAR, f"ea-run-{key}") == []
