"""The Ray executor on a real two-node cluster on this machine (issue 15).

The session's ``ray_cluster`` (``tests/helpers/ray_cluster.py``: a head and one worker
node, one CPU each, no dashboard), shared with the other Ray files.  With one CPU per node
and every agent turn asking for one CPU, two turns that must run at the same time (the
agents below wait for each other) can only run on two nodes.

Worker scratch space goes to ``EA_RAY_WORKDIR`` (set before the nodes start), so the
tests can see where each turn ran.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from evolving_agent.search.config import SearchConfig
from evolving_agent.search.runner import ProgressEvent, resume_search, run_search
from tests.helpers import run_cli
from tests.helpers.ray_cluster import RayCluster
from tests.helpers.search import (
    PY,
    SEES_PEERS,
    TSP,
    agent_log,
    config,
    make_candidate,
    make_task,
    records,
    run_fingerprint,
    write_agent,
    write_scorer,
)

pytestmark = pytest.mark.slow


def _ray(tmp: Path, **overrides: Any) -> SearchConfig:
    return config(tmp, executor="ray", **overrides)


# Both agents' first turns wait for each other, so they run at the same time.
MEET = """
meet = pathlib.Path({meet!r})
meet.mkdir(exist_ok=True)
if os.environ["EA_TURN"] == "1":
    (meet / os.environ["EA_AGENT"]).touch()
    for _ in range(600):
        if (meet / "1").exists() and (meet / "2").exists():
            break
        time.sleep(0.05)
"""
# A scorer that fails when another score is running (the lock is on the shared disk).
ONE_AT_A_TIME = """
import os, pathlib, sys, time
lock = pathlib.Path({lock!r})
try:
    lock.mkdir()
except FileExistsError:
    sys.exit("two scores at once")
time.sleep(0.2)
lock.rmdir()
print(float((pathlib.Path(os.environ["EA_CANDIDATE"]) / "value.txt").read_text()))
"""
# Logs where it runs and how many commits its repository holds, then edits.
COUNT = """
count = subprocess.run(["git", "rev-list", "--all", "--count"], capture_output=True, text=True)
log(cwd=os.getcwd(), commits=int(count.stdout.strip() or 0))
write(value() + 1)
"""


def test_turns_land_on_both_nodes_in_node_local_workspaces(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, MEET.format(meet=str(tmp_path / "meet")) + COUNT)
    # The two agents finish together, so their scores would overlap: --max-scorers 1
    # must queue them (the scorer fails if another score is running).
    scorer = write_scorer(tmp_path, ONE_AT_A_TIME.format(lock=str(tmp_path / "scoring")))
    cfg = _ray(
        tmp_path, score_cmd=scorer, agent_cmd=agent, policy="parallel", agents=2, turns=4,
        max_scorers=1,
    )  # fmt: skip
    summary = run_search(cfg)

    rows = records(tmp_path / "run")
    assert summary.turns == 4 and summary.failed_turns == 0
    assert all(r["score"] is not None for r in rows)
    assert {r["node"] for r in rows} == set(ray_cluster.nodes)
    # Each turn ran in a workspace under its own node's scratch space, not the run dir.
    told = agent_log(tmp_path)
    used = []
    for row in rows:
        cwd = next(
            Path(t["cwd"])
            for t in told
            if (t["EA_AGENT"], t["EA_TURN"]) == (str(row["agent"]), str(row["turn"]))
        )
        used.append(cwd)
        assert cwd.is_relative_to(ray_cluster.workdir / row["node"][:16])
        assert not cwd.is_relative_to(tmp_path / "run")
    # The driver holds no workspace at all (they are private, on the nodes); the
    # commits reached its repository.
    repo = tmp_path / "run" / "rounds" / "r01" / "repo"
    for agent_no in (1, 2):
        assert not (tmp_path / "run" / "rounds" / "r01" / f"agent-{agent_no}").exists()
    for row in rows:
        shown = subprocess.run(
            ["git", "show", f"{row['commit']}:value.txt"], cwd=repo, capture_output=True, text=True
        )
        assert float(shown.stdout) == row["score"]
    assert (tmp_path / "run" / "best" / "value.txt").read_text().strip() == "2.0"
    # Scratch space is removed from every node when the run ends: each workspace this
    # run's turns worked in (the cluster's scratch is shared with the other Ray files).
    assert used and not [cwd for cwd in used if cwd.exists()]


def test_a_fresh_round_is_a_one_commit_repository_on_the_worker(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, COUNT)
    cfg = _ray(
        tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=agent, policy="forget", rounds=2,
        turns=4,
    )  # fmt: skip
    run_search(cfg)

    told = [(t["EA_ROUND"], t["EA_NEW_SESSION"], t["commits"]) for t in agent_log(tmp_path)]
    # Round 1 starts from the seed (one commit) and grows; round 2 forgets it all.
    assert told == [("1", "1", 1), ("1", "0", 2), ("2", "1", 1), ("2", "0", 2)]
    assert [r["score"] for r in records(tmp_path / "run")] == [1.0, 2.0, 3.0, 4.0]


# Plants attributes in its workspace's .git that would hide value.txt from an export of
# that repository, and notes whether the harness's own scoring repository is beside it.
PLANT = """
pathlib.Path(".git/info").mkdir(exist_ok=True)
pathlib.Path(".git/info/attributes").write_text("value.txt export-ignore\\n")
log(beside=pathlib.Path("../score-agent-1.git/HEAD").is_file())
write(value() + 1)
"""


def test_the_turns_task_judges_from_its_own_repository_not_the_agents(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    cfg = _ray(
        tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=write_agent(tmp_path, PLANT),
        policy="single", turns=3,
    )  # fmt: skip
    summary = run_search(cfg)

    # Every turn scored what it committed: the agent's attributes never reached the export.
    assert [r["score"] for r in records(tmp_path / "run")] == [1.0, 2.0, 3.0]
    assert summary.best_rescored == 3.0
    # Judged in the turn's task: its node keeps a scoring repository for the agent's round.
    assert [t["beside"] for t in agent_log(tmp_path)][1:] == [True, True]


KILL_WORKER = """
def kill_my_worker():
    pid = os.getppid()
    while pid > 1:  # find the Ray worker running this turn, and SIGKILL it
        if b"ray::" in pathlib.Path(f"/proc/{{pid}}/cmdline").read_bytes():
            os.kill(pid, signal.SIGKILL)
            break
        pid = int(pathlib.Path(f"/proc/{{pid}}/stat").read_text().rsplit(")", 1)[1].split()[1])
    time.sleep(30)

kills = pathlib.Path({kills!r})
done = kills.read_text().count(os.environ["EA_TURN"]) if kills.exists() else 0
# Turn 2's worker dies once (the retry succeeds), turn 3's on every attempt.
if (os.environ["EA_TURN"] == "2" and done < 1) or os.environ["EA_TURN"] == "3":
    with kills.open("a") as fh:
        fh.write(os.environ["EA_TURN"])
    kill_my_worker()
log()
write(value() + 1)
"""


def test_a_killed_worker_is_a_transient_failure_retried_by_the_retry_policy(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    kills = tmp_path / "kills"
    body = "import signal\n" + KILL_WORKER.format(kills=str(kills))
    cfg = _ray(
        tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=write_agent(tmp_path, body),
        policy="single", turns=4, retries=1,
    )  # fmt: skip
    summary = run_search(cfg)

    first, retried, lost, after = records(tmp_path / "run")
    assert kills.read_text() == "233"  # turn 3 was tried 1 + retries times
    # Turn 2: its worker died, the same turn ran again (same base) and counted.
    assert (retried["attempts"], retried["error"], retried["score"]) == (2, None, 2.0)
    # ... and its record says what the first attempt hit (it showed attempts=2, no error).
    assert [e.split(":")[0] for e in retried["retried"]] == ["worker lost"]
    assert retried["base_commit"] == first["commit"] and not retried["empty"]
    # Turn 3: every attempt lost its worker; recorded as failed, nothing committed.
    assert lost["attempts"] == 2 and lost["error"].startswith("worker lost: ")
    assert len(lost["retried"]) == 1 and lost["retried"][0].startswith("worker lost: ")
    assert lost["commit"] == lost["base_commit"] == retried["commit"] and lost["empty"]
    # The run goes on: turn 4 starts again from the same candidate.
    assert after["base_commit"] == retried["commit"] and after["score"] == 3.0
    assert summary.turns == 4 and summary.failed_turns == 1 and summary.best_score == 3.0


def test_forget_on_the_bundled_example_scores_as_the_local_executor_does(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    def run(executor: str) -> list[tuple[object, ...]]:
        out = tmp_path / executor
        cfg = config(
            tmp_path, candidate=TSP / "candidate", task=TSP / "task.md",
            score_cmd=f"{PY} {TSP / 'score.py'}", minimize=True, agent="tsp-example",
            policy="forget", rounds=2, turns=4, seed=3, out=out, executor=executor,
        )  # fmt: skip
        run_search(cfg)
        return [
            (r["round"], r["turn"], r["new_session"], r["score"], r["empty"], r["lines_changed"])
            for r in records(out)
        ]

    local, ray = run("local"), run("ray")
    assert ray == local
    assert local[0][3] is not None and local[0][3] < 20000  # the agent really worked


SLOW_SECOND = """
if os.environ["EA_AGENT"] == "2":
    pathlib.Path({pidfile!r}).write_text(str(os.getpid()))
    time.sleep(60)
log()
write(value() + 1)
"""


def test_ctrl_c_cancels_tasks_in_flight_and_resume_finishes_the_run(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    pidfile = tmp_path / "agent2.pid"
    agent = write_agent(tmp_path, SLOW_SECOND.format(pidfile=str(pidfile)))
    cfg = _ray(
        tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=agent, policy="parallel", agents=2,
        turns=4,
    )  # fmt: skip

    def interrupt(event: ProgressEvent) -> None:
        if event.kind == "turn":
            # Ctrl-C once agent 2's turn is under way: its agent wrote its pid.  Waiting on
            # that event, not a clock, so a loaded machine only makes the test slower.
            guard = time.monotonic() + 600  # against a hang only
            while not pidfile.exists():
                assert time.monotonic() < guard, "agent 2's turn never started"
                time.sleep(0.05)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_search(cfg, progress=interrupt)

    # Agent 2's turn was cancelled, not awaited: its process tree is gone, no record.
    pid = int(pidfile.read_text())
    guard = time.monotonic() + 120  # the cancel kills the group; only a hang waits this long
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        if time.monotonic() > guard:
            os.kill(pid, signal.SIGKILL)
            pytest.fail("the cancelled agent's process outlived the run")
        time.sleep(0.05)
    assert [(r["agent"], r["turn"]) for r in records(tmp_path / "run")] == [(1, 1)]
    assert not (tmp_path / "run" / "summary.json").exists()

    # Resume (still on Ray, from run.json); agent 2 is quick now.
    pidfile.unlink()
    agent_file = Path(agent.split(" ", 1)[1])
    agent_file.write_text(agent_file.read_text().replace("time.sleep(60)", "pass"))
    summary = resume_search(tmp_path / "run")
    rows = records(tmp_path / "run")
    assert sorted((r["agent"], r["turn"]) for r in rows) == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert all(r["node"] in ray_cluster.nodes for r in rows)
    assert summary.complete and summary.best_score == 2.0


# -- without a cluster --------------------------------------------------------------


def test_max_scorers_bounds_concurrent_scores_on_the_local_executor(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    scorer = write_scorer(tmp_path, ONE_AT_A_TIME.format(lock=str(tmp_path / "scoring")))
    agent = write_agent(tmp_path, "write(value() + 1)\n")
    cfg = config(
        tmp_path, score_cmd=scorer, agent_cmd=agent, policy="parallel", agents=2, turns=4,
        max_scorers=1,
    )  # fmt: skip
    summary = run_search(cfg)
    assert summary.failed_turns == 0
    assert sorted(r["score"] for r in records(tmp_path / "run")) == [1.0, 1.0, 2.0, 2.0]


def test_ray_without_ray_installed_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` sees without Ray
    monkeypatch.chdir(tmp_path)
    result = run_cli(
        "search", "run", "--candidate", "candidate", "--task", "task.md", "--score", "echo 1",
        "--agent", "command", "--agent-cmd", "true", "--executor", "ray", "--out", "run",
        "--turns", "1",
    )  # fmt: skip
    assert result.exit_code == 4
    assert result.output == (
        "error: --executor ray needs Ray, which is not installed: "
        "pip install 'evolving-agent[ray]'\n"
    )
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--executor", "slurm"], "unknown executor 'slurm'; choose one of: local, ray"),
        (["--agent-resources", "claude"], "--agent-resources takes NAME=AMOUNT"),
        (["--score-resources", "num_gpus=-1"], "--score-resources takes NAME=AMOUNT"),
        (["--max-scorers", "0"], "--max-scorers must be positive, got 0"),
    ],
)
def test_bad_executor_options_are_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str], message: str
) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = run_cli(
        "search", "run", "--candidate", "candidate", "--task", "task.md", "--score", "echo 1",
        "--agent", "tsp-example", "--out", "run", "--turns", "1", *flags,
    )  # fmt: skip
    assert result.exit_code == 2
    assert message in result.output and len(result.output.splitlines()) == 1


def test_resources_map_onto_ray_task_options() -> None:
    from evolving_agent.search.executors import parse_resources
    from evolving_agent.search.executors.ray_exec import task_options

    given = parse_resources("num_gpus=1, claude=1,memory=2e9", flag="--score-resources")
    assert given == {"num_gpus": 1.0, "claude": 1.0, "memory": 2e9}
    assert task_options(given) == {
        "num_cpus": 1,
        "num_gpus": 1.0,
        "memory": 2e9,
        "resources": {"claude": 1.0},
    }
    assert task_options({"num_cpus": 0.5}) == {"num_cpus": 0.5}


def test_the_driver_records_only_commits_git_confirms(tmp_path: Path) -> None:
    from evolving_agent.gitcmd import git
    from evolving_agent.search.executors.bundles import (
        BundleRefused,
        fetch_bundle,
        init_repo,
        make_bundle,
        receive_turn,
        turn_bundle,
    )

    driver, worker, stranger = tmp_path / "driver", tmp_path / "worker", tmp_path / "stranger"
    for repo in (driver, stranger):
        init_repo(repo)
        (repo / "value.txt").write_text(f"{repo.name}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "start")
    start = git(driver, "rev-parse", "HEAD").text
    init_repo(worker)  # the worker gets the start as a bundle, edits and commits
    fetch_bundle(worker, make_bundle(driver, [start]) or b"", "+refs/ea/ship/*:refs/ea/ship/*")
    git(worker, "checkout", "-q", "-B", "work", start)
    (worker / "value.txt").write_text("one\ntwo\n")
    git(worker, "commit", "-q", "-am", "turn")
    commit = git(worker, "rev-parse", "HEAD").text
    bundle = turn_bundle(worker, commit, start)

    with pytest.raises(BundleRefused, match="worker announced"):
        receive_turn(driver, bundle, commit=start, base=start, label="lie")
    change = receive_turn(driver, bundle, commit=commit, base=start, label="r01-a1-t001")
    assert (change.commit, change.empty, change.lines_changed) == (commit, False, 3)
    # A bundle built on history the driver never had is refused, not recorded.
    foreign = git(stranger, "rev-parse", "HEAD").text
    (stranger / "value.txt").write_text("x\n")
    git(stranger, "commit", "-q", "-am", "more")
    alien = git(stranger, "rev-parse", "HEAD").text
    with pytest.raises(BundleRefused):
        receive_turn(
            driver, turn_bundle(stranger, alien, foreign), commit=alien, base=start, label="x"
        )
    # A tip that is no commit (the turn's tree, announced as the commit) is refused.
    tree = git(worker, "rev-parse", "HEAD^{tree}").text
    git(worker, "update-ref", "refs/ea/turn", tree)
    git(worker, "bundle", "create", "-q", str(tmp_path / "tree.bundle"), "refs/ea/turn")
    with pytest.raises(BundleRefused):
        receive_turn(driver, (tmp_path / "tree.bundle").read_bytes(), commit=tree, base=start,
                     label="z")  # fmt: skip
    # No bundle at all is only fine for a commit the driver already has.
    with pytest.raises(BundleRefused):
        receive_turn(driver, None, commit=alien, base=start, label="y")


def test_the_agent_program_is_looked_for_on_the_workers_not_the_driver(tmp_path: Path) -> None:
    from evolving_agent.errors import NotFound
    from evolving_agent.search.agents import check_agent
    from evolving_agent.search.agents.base import is_transient

    make_candidate(tmp_path)
    make_task(tmp_path)
    missing = config(tmp_path, score_cmd="echo 1", agent="claude", agent_cmd="/nowhere/claude")
    with pytest.raises(NotFound, match="claude not found: /nowhere/claude"):
        check_agent(missing)
    check_agent(missing.model_copy(update={"executor": "ray"}))  # the workers have it
    # A worker lost under a turn is retried like a rate limit; a turn timeout is not.
    assert is_transient("worker lost: WorkerCrashedError: The worker died unexpectedly")
    assert not is_transient("turn timed out after 780s: its Ray task never returned")


def test_a_team_run_on_ray_is_the_local_run_and_resumes_into_it(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    # The agent builds on what its prompt shows and sleeps a random while: a schedule
    # driven by which worker finishes first would show at once (test_schedule.py).
    make_candidate(tmp_path)
    make_task(tmp_path)
    score, agent = write_scorer(tmp_path), write_agent(tmp_path, SEES_PEERS.format(jitter=0.2))
    team = {"policy": "forget-team", "agents": 2, "rounds": 2, "turns": 8, "seed": 5}

    def fingerprint(out: Path) -> str:
        found = run_fingerprint(out, tmp_path / "agent.py")
        (tmp_path / "agent.py.log").unlink()
        return found

    run_search(config(tmp_path, score_cmd=score, agent_cmd=agent, out=tmp_path / "l", **team))
    local = fingerprint(tmp_path / "l")
    on_ray = _ray(tmp_path, score_cmd=score, agent_cmd=agent, out=tmp_path / "r", **team)
    run_search(on_ray)
    assert fingerprint(tmp_path / "r") == local
    assert all(r["node"] in ray_cluster.nodes for r in records(tmp_path / "r"))

    # Ctrl-C after the k-th record, turns in flight cancelled; resume; again.
    out = tmp_path / "i"
    cut = on_ray.model_copy(update={"out": out})
    for k in (1, 4, 6):

        def interrupt(event: ProgressEvent, k: int = k) -> None:
            if event.kind == "turn" and event.turns_done >= k:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            if k == 1:
                run_search(cut, progress=interrupt)
            else:
                resume_search(out, progress=interrupt)
    resume_search(out)
    assert fingerprint(out) == local
