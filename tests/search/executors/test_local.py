"""The ``local`` executor (``search/executors/local.py``): a turn in a private workspace
built from the round repository, its commit brought back into that repository."""

from __future__ import annotations

import shutil
from pathlib import Path

from evolving_agent.search.agents.base import TurnRequest
from evolving_agent.search.executors.local import LocalExecutor
from evolving_agent.search.private import is_intact
from evolving_agent.search.reducer import Visible
from evolving_agent.search.turn import TurnJob, TurnPlace
from tests.helpers.turn_agents import Scripted, git_in, git_workspace


def _job(ws: Path, base: str, turn: int, visible: tuple[Visible, ...] = ()) -> TurnJob:
    request = TurnRequest(
        workspace=ws,
        prompt="p",
        session_id="s-1",
        new_session=turn == 1,
        round=1,
        agent=1,
        turn=turn,
        timeout=60,
        visible=visible,
    )
    return TurnJob(request, base, f"turn {turn}")


def test_turns_build_the_workspace_once_and_bring_each_commit_back(tmp_path: Path) -> None:
    repo = tmp_path / "round"
    base = git_workspace(repo)
    ws = tmp_path / "private" / "r01" / "agent-1"
    executor = LocalExecutor()
    first = executor.run_turn(
        Scripted([], "2\n"), _job(ws, base, 1), TurnPlace(repo, base, "r1-a1-t1")
    )
    assert is_intact(ws) and ws.resolve() != repo.resolve()
    commit = first.change.commit
    assert git_in(repo, "show", f"{commit}:value.txt") == "2"  # fetched into the round repo
    second = executor.run_turn(
        Scripted([], "3\n"), _job(ws, commit, 2), TurnPlace(repo, base, "r1-a1-t2")
    )
    assert git_in(repo, "rev-parse", f"{second.change.commit}^") == commit


def test_a_workspace_the_agent_deleted_is_rebuilt_at_its_base(tmp_path: Path) -> None:
    repo = tmp_path / "round"
    base = git_workspace(repo)
    ws = tmp_path / "private" / "r01" / "agent-1"
    executor = LocalExecutor()
    executor.run_turn(Scripted([]), _job(ws, base, 1), TurnPlace(repo, base, "t1"))
    shutil.rmtree(ws)
    again = executor.run_turn(Scripted([], "5\n"), _job(ws, base, 2), TurnPlace(repo, base, "t2"))
    assert is_intact(ws) and git_in(repo, "show", f"{again.change.commit}:value.txt") == "5"


def test_a_peers_visible_commit_is_in_the_workspace_before_the_turn(tmp_path: Path) -> None:
    repo = tmp_path / "round"
    base = git_workspace(repo)
    (repo / "value.txt").write_text("peer\n")
    git_in(repo, "commit", "-qam", "peer's best")
    peer = git_in(repo, "rev-parse", "HEAD")
    ws = tmp_path / "private" / "r01" / "agent-1"
    seen = (Visible(kind="peer-best", commit=peer, score=1.0, round=1, agent=2, turn=1),)
    LocalExecutor().run_turn(Scripted([]), _job(ws, base, 1, seen), TurnPlace(repo, base, "t1"))
    assert git_in(ws, "show", f"{peer}:value.txt") == "peer"
