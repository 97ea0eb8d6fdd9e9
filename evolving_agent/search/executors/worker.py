"""What a Ray worker does, without Ray: rebuild a workspace from bundles, run, ship back.

Workspaces are node-local: ``$EA_RAY_WORKDIR`` (default ``$TMPDIR/ea-ray``) /
node / run / ``rNN`` / ``agent-K``.  A fresh round means a new repository built from
the round's start bundle — for a forgetting round that bundle holds exactly one commit,
so forgetting stays exact on whichever node the agent lands — and older rounds' scratch
space of the run on that node is removed.  Within a round the workspace is reused
when the agent lands on the same node again; either way it is reset to the turn's base
before the agent starts.

Agent backend state (the tsp-example agent's sessions) lives on the driver: each turn gets
a copy of ``agent-state/`` and returns the files it changed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from evolving_agent.gitcmd import GitError, git
from evolving_agent.process import kill_with_env
from evolving_agent.search.agents.base import Agent
from evolving_agent.search.executors.bundles import (
    SHIP_PREFIX,
    TURN_REF,
    fetch_bundle,
    init_repo,
    turn_bundle,
)
from evolving_agent.search.judge import Judge, Verdict
from evolving_agent.search.private import RUN_ID_VAR
from evolving_agent.search.turn import TurnJob, TurnOutcome, execute_turn
from evolving_agent.search.workspace import restore_config


@dataclass(frozen=True)
class Shipment:
    """What travels to the worker with a turn besides the agent and the job."""

    run_key: str  # names the run's scratch space on every node
    start_bundle: bytes  # the round's start commit with its history
    history_bundle: bytes | None  # base and visible commits, minus the start's history
    state_files: dict[str, bytes]  # agent-state/ relpath -> content
    # No history bundle although the turn needs commits past the start: the driver
    # knows this node's workspace holds them (it made or was sent them earlier).
    held: bool = False
    # ... and its last turn there left it at this turn's base: no reset needed (as a
    # local workspace, whose files an agent's next turn finds as its last turn left them).
    at_base: bool = False


@dataclass(frozen=True)
class Returned:
    outcome: TurnOutcome
    bundle: bytes | None  # base..commit, None when the commit is base
    state_files: dict[str, bytes]  # changed or new agent-state files
    workspace: str  # where the turn ran, for the record of where things happen
    verdict: Verdict | None = None  # the commit judged here, when a judge came along
    rebuilt: bool = False  # the workspace was made anew (it holds the start's history)


@dataclass(frozen=True)
class Missing:
    """The turn did not run: the workspace the driver counted on is not here (the task
    landed on another node, or the workspace was lost); send the history."""

    node: str


def scratch_base() -> Path:
    """Where every node of this machine keeps its scratch space (one folder a node)."""
    return Path(os.environ.get("EA_RAY_WORKDIR") or str(Path(tempfile.gettempdir()) / "ea-ray"))


def node_root(node: str) -> Path:
    return scratch_base() / node[:16]


def worker_turn(
    agent: Agent, job: TurnJob, shipment: Shipment, node: str, judge: Judge | None = None
) -> Returned | Missing:
    """Take ``job``'s turn on this node (the search's one turn function,
    :func:`execute_turn`, retries included) and return the commit as a bundle -- judged
    here too when ``judge`` is given and the turn made a commit (:func:`_judge_here`)."""
    started = time.perf_counter()
    request = job.request
    run_root = node_root(node) / shipment.run_key
    # The run's scratch on this node is private to the user running the worker.
    for level in (node_root(node).parent, node_root(node), run_root):
        level.mkdir(mode=0o700, parents=True, exist_ok=True)
    round_name = f"r{request.round:02d}"
    workspace = run_root / round_name / f"agent-{request.agent}"
    rebuilt = not (workspace / ".git").is_dir()
    if rebuilt and shipment.held:
        return Missing(node)
    try:
        _prepare(workspace, run_root, round_name, job, shipment)
    except GitError:
        # A workspace left broken (a worker killed mid-git, a stale lock): start over.
        shutil.rmtree(workspace, ignore_errors=True)
        if shipment.held:
            return Missing(node)
        rebuilt = True
        _prepare(workspace, run_root, round_name, job, shipment)
    state = Path(tempfile.mkdtemp(prefix="ea-state-"))
    try:
        for rel, content in shipment.state_files.items():
            target = state / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        job = replace(job, request=replace(request, workspace=workspace, state_dir=state))
        prepared = time.perf_counter()
        outcome = execute_turn(agent, job)
        bundle = turn_bundle(workspace, outcome.change.commit, job.base)
        changed = {
            rel: content
            for rel, content in _files(state).items()
            if shipment.state_files.get(rel) != content
        }
    finally:
        shutil.rmtree(state, ignore_errors=True)
    verdict = None
    if judge is not None and bundle is not None:
        score_repo = run_root / round_name / f"score-agent-{request.agent}.git"
        verdict = _judge_here(judge, score_repo, bundle, outcome.change.commit, shipment)
    laps = {**outcome.laps, "worker_setup": prepared - started}
    outcome = replace(outcome, laps=laps, node=node)
    return Returned(outcome, bundle, changed, str(workspace), verdict, rebuilt)


def _judge_here(
    judge: Judge, repo: Path, bundle: bytes, commit: str, shipment: Shipment
) -> Verdict | None:
    """Judge the turn's ``commit`` on this node, saving the driver a score task (None:
    the commit could not be brought in; the driver's score task judges it).

    Never from the agent's workspace (the agent wrote its ``.git``): from a bare
    repository of the harness's own, kept for the agent's round on this node, into
    which the turn's bundle is fetched -- git checks every object it indexes, as the
    driver's fetch does.  It already holds the turn's base when the agent's last turn
    was judged here; otherwise the shipped history goes first.
    """
    try:
        try:
            _bring(repo, bundle, commit, shipment, fresh=not (repo / "HEAD").is_file())
        except GitError:  # a repository left broken (a worker killed mid-fetch)
            _bring(repo, bundle, commit, shipment, fresh=True)
    except GitError:
        return None
    return judge.judge(repo, commit)


def _bring(repo: Path, bundle: bytes, commit: str, shipment: Shipment, *, fresh: bool) -> None:
    ships = f"+{SHIP_PREFIX}*:{SHIP_PREFIX}*"
    turn = f"+{TURN_REF}:refs/ea/scored/{commit}"  # a ref each: prerequisites stay reachable
    if fresh:
        init_repo(repo, bare=True)
        fetch_bundle(repo, shipment.start_bundle, ships)
    try:
        fetch_bundle(repo, bundle, turn)
    except GitError:
        if shipment.history_bundle is None:
            raise
        fetch_bundle(repo, shipment.history_bundle, ships)  # the base came from elsewhere
        fetch_bundle(repo, bundle, turn)


def _prepare(
    workspace: Path, run_root: Path, round_name: str, job: TurnJob, shipment: Shipment
) -> None:
    if (workspace / ".git").is_dir():
        restore_config(workspace)  # an agent's planted config never runs in harness git
        if shipment.at_base and shipment.held:
            return
    else:
        # A new round on this node: forget the earlier rounds' scratch space here.
        if run_root.is_dir():
            for old in run_root.iterdir():
                if old.name != round_name:
                    shutil.rmtree(old, ignore_errors=True)
        init_repo(workspace)
        fetch_bundle(workspace, shipment.start_bundle, f"+{SHIP_PREFIX}*:{SHIP_PREFIX}*")
    if shipment.history_bundle is not None:
        fetch_bundle(workspace, shipment.history_bundle, f"+{SHIP_PREFIX}*:{SHIP_PREFIX}*")
    branch = f"{round_name}-agent-{job.request.agent}"
    git(workspace, "checkout", "-q", "-f", "-B", branch, job.base)  # tracked files reset
    git(workspace, "clean", "-q", "-fdx")


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def state_snapshot(state_dir: Path) -> dict[str, bytes]:
    """The driver's agent-state files, to ship with a turn."""
    return _files(state_dir) if state_dir.is_dir() else {}


def write_state(state_dir: Path, files: dict[str, bytes]) -> None:
    """Apply a worker's changed agent-state files on the driver (atomically per file)."""
    for rel, content in files.items():
        target = (state_dir / rel).resolve()
        if state_dir.resolve() not in target.parents:
            # A path leaving agent-state/ is ignored, never written; so is one naming the
            # folder itself ("a/.."), whose temporary file would land beside it.
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_bytes(content)
        tmp.replace(target)


def worker_score(judge: Judge, bundle: bytes, commit: str) -> Verdict:
    """Score ``commit`` from a self-contained bundle in a throwaway repository."""
    repo = Path(tempfile.mkdtemp(prefix="ea-score-"))
    try:
        init_repo(repo, bare=True)
        fetch_bundle(repo, bundle, f"+{SHIP_PREFIX}*:{SHIP_PREFIX}*")
        return judge.judge(repo, commit)
    finally:
        shutil.rmtree(repo, ignore_errors=True)


def sweep(var: str, value: str) -> list[int]:
    """Kill every process on this machine whose environment carries ``var=value``: what
    a worker that died under a turn left running (its process runner never swept it)."""
    return kill_with_env(var, value)


def cleanup(run_key: str, run_id: str) -> None:
    """End a finished run on this machine: kill every process that carries the run's
    mark, and remove the run's scratch space in *every* node's folder here -- a node that
    died under a turn (its raylet killed, its machine still up) never cleans its own."""
    sweep(RUN_ID_VAR, run_id)
    base = scratch_base()
    for root in sorted(base.iterdir()) if base.is_dir() else []:
        shutil.rmtree(root / run_key, ignore_errors=True)
        try:
            root.rmdir()  # only if no other run's scratch is left in it
        except OSError:
            pass
