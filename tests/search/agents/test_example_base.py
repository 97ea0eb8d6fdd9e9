"""What the two example agents share (``search/agents/example_base.py``): a session's
memory file under the run's agent state, and the best visible candidate's file."""

from __future__ import annotations

import json
from pathlib import Path

from evolving_agent.search.agents.base import TurnRequest, TurnResult
from evolving_agent.search.agents.example_base import ExampleAgent
from evolving_agent.search.reducer import Visible
from tests.helpers.turn_agents import git_in, git_workspace


class Probe(ExampleAgent):
    name = "probe"
    STATE_DIR = "probe"

    def run_turn(self, *, request: TurnRequest) -> TurnResult:  # pragma: no cover
        raise AssertionError("not run")


def request(workspace: Path, state: Path | None, *, new: bool = False, **kw: object) -> TurnRequest:
    return TurnRequest(
        workspace=workspace, prompt="go", session_id="s-1", new_session=new, round=1,
        agent=1, timeout=5.0, state_dir=state, **{"turn": 1, **kw},  # type: ignore[arg-type]
    )  # fmt: skip


def test_a_session_file_round_trips_and_a_new_session_starts_empty(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    git_workspace(ws)
    agent = Probe()
    agent._save(request(ws, state), {"turns": 2, "history": ["a"]})
    assert json.loads((state / "probe" / "s-1.json").read_text()) == {"turns": 2, "history": ["a"]}
    assert agent._load(request(ws, state)) == {"turns": 2, "history": ["a"]}
    assert agent._load(request(ws, state, new=True)) == {}  # a fresh session remembers nothing
    assert not list((state / "probe").glob("*.tmp"))  # written whole, then renamed


def test_no_state_folder_or_a_broken_file_is_an_empty_session(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    git_workspace(ws)
    agent = Probe()
    agent._save(request(ws, None), {"turns": 1})  # nowhere to keep it: nothing written
    assert agent._load(request(ws, None)) == {}
    (state / "probe").mkdir(parents=True)
    for broken in ("{not json", "[1, 2]"):
        (state / "probe" / "s-1.json").write_text(broken)
        assert agent._load(request(ws, state)) == {}


def test_the_best_peer_file_is_read_only_when_it_is_not_head(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    seed = git_workspace(ws, "1\n")
    (ws / "value.txt").write_text("9\n")
    git_in(ws, "commit", "-qam", "better")
    better = git_in(ws, "rev-parse", "HEAD")
    git_in(ws, "checkout", "-q", seed)
    peers = (Visible("start", seed, 1.0, 1), Visible("peer-best", better, 9.0, 1, agent=2))
    agent = Probe()
    assert agent.best_peer_file(request(ws, None, visible=peers), "value.txt") == "9\n"
    # minimising, the seed is best and it is HEAD already: nothing to restart from
    lowest = request(ws, None, visible=peers, minimize=True)
    assert agent.best_peer_file(lowest, "value.txt") is None
    unscored = (Visible("peer-best", better, None, 1),)
    assert agent.best_peer_file(request(ws, None, visible=unscored), "value.txt") is None


def test_a_turns_randomness_repeats_with_the_seed_and_differs_by_turn(tmp_path: Path) -> None:
    agent = Probe()
    draws = {
        (seed, turn): agent.turn_rng(request(tmp_path, None, seed=seed, turn=turn)).random()
        for seed in (0, 1)
        for turn in (1, 2)
    }
    assert len(set(draws.values())) == 4  # every seed and turn draws its own
    again = agent.turn_rng(request(tmp_path, None, seed=1, turn=2)).random()
    assert again == draws[(1, 2)]  # the same seed repeats it


def test_a_workspace_without_the_examples_file_fails_the_turn_by_name(tmp_path: Path) -> None:
    agent = Probe()
    failed = agent.refused(request(tmp_path, None), tmp_path / "solve.py")
    assert failed is not None and failed.session_id == "s-1"
    assert failed.error == "the probe agent only knows its bundled example (no solve.py)"
    (tmp_path / "solve.py").write_text("pass\n")
    assert agent.refused(request(tmp_path, None), tmp_path / "solve.py") is None
