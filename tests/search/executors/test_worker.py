"""A turn on a worker node (``search/executors/worker.py``), without Ray: the shipment in,
the turn's commit and changed agent state out, the node's scratch private and removable."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.search.agents.base import TurnRequest
from evolving_agent.search.executors.bundles import make_bundle, receive_turn
from evolving_agent.search.executors.worker import (
    Shipment,
    cleanup,
    node_root,
    state_snapshot,
    worker_turn,
    write_state,
)
from evolving_agent.search.turn import TurnJob
from tests.helpers.turn_agents import Scripted, git_in, git_workspace

NODE = "a1b2c3d4e5f6a7b8c9d0"


@pytest.fixture(autouse=True)
def _workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EA_RAY_WORKDIR", str(tmp_path / "ray"))


def test_a_turn_runs_in_the_nodes_scratch_and_comes_back_as_a_bundle(tmp_path: Path) -> None:
    driver = tmp_path / "driver"
    base = git_workspace(driver)
    state = {"scripted/old.txt": b"kept", "scripted/s-1.txt": b"before"}
    shipment = Shipment("run-1", make_bundle(driver, [base]) or b"", None, state)
    request = TurnRequest(
        workspace=tmp_path / "unused",
        prompt="p",
        session_id="s-1",
        new_session=False,
        round=2,
        agent=3,
        turn=5,
        timeout=60,
    )
    back = worker_turn(Scripted([], value="7\n"), TurnJob(request, base, "turn 5"), shipment, NODE)
    assert back.workspace == str(node_root(NODE) / "run-1" / "r02" / "agent-3")
    assert node_root(NODE) == tmp_path / "ray" / NODE[:16]
    assert stat.S_IMODE((node_root(NODE) / "run-1").stat().st_mode) == 0o700
    assert back.state_files == {"scripted/s-1.txt": b"wrote 7\n"}  # only what changed
    assert back.outcome.node == NODE and "worker_setup" in back.outcome.laps
    change = receive_turn(
        driver, back.bundle, commit=back.outcome.change.commit, base=base, label="r2-a3-t5"
    )
    assert git_in(driver, "show", f"{change.commit}:value.txt") == "7"
    cleanup("run-1", NODE)
    assert not (node_root(NODE) / "run-1").exists()


def test_agent_state_travels_both_ways_but_never_leaves_its_folder(tmp_path: Path) -> None:
    state = tmp_path / "agent-state"
    write_state(state, {"a/b.json": b"1", "../escaped.txt": b"x", "/tmp/abs.txt": b"y"})
    assert state_snapshot(state) == {"a/b.json": b"1"}
    assert not (tmp_path / "escaped.txt").exists()
    assert state_snapshot(tmp_path / "none") == {}


@settings(max_examples=30, deadline=None)
@given(
    st.dictionaries(
        st.lists(st.sampled_from(["a", "b", "..", "c.json"]), min_size=1, max_size=4).map("/".join),
        st.binary(max_size=8),
        max_size=4,
    )
)
def test_write_state_writes_inside_or_not_at_all(files: dict[str, bytes]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "s" / "agent-state"
        state.mkdir(parents=True)
        try:
            write_state(state, files)
        except (IsADirectoryError, NotADirectoryError, FileExistsError):
            pass  # a name used both as a file and a folder: not a path question
        outside = [p for p in Path(tmp).rglob("*") if p.is_file() and state not in p.parents]
        assert outside == []


def test_a_state_path_naming_the_folder_itself_is_ignored(tmp_path: Path) -> None:
    # Hypothesis found it: "a/.." resolved to agent-state/ itself, which passed the
    # containment check; its temporary file was written beside the folder, outside it,
    # and replacing the folder with it failed (IsADirectoryError).
    state = tmp_path / "s" / "agent-state"
    state.mkdir(parents=True)
    write_state(state, {"a/..": b"", ".": b"x"})
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == ["agent-state"]
    assert state_snapshot(state) == {}
