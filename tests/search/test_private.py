"""Private agent workspaces (``search/private.py``): outside the run, 0700, one round on
disk at a time, and a repository of the harness's own before harness git runs in it."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from evolving_agent.errors import UsageError
from evolving_agent.search.private import (
    WORKSPACES_VAR,
    enter_round,
    is_intact,
    prepare_workspace,
    private_root,
    run_key,
    secure,
    workspace_path,
)
from evolving_agent.search.workspace import HARNESS_CONFIG
from tests.helpers.turn_agents import git_in, git_workspace


def test_the_key_is_the_runs_wherever_it_is_asked_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "runs" / "r1"
    run.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert run_key(run) == run_key(Path("runs/r1")) == run_key(run / ".." / "r1")
    assert run_key(run) != run_key(tmp_path / "runs")
    monkeypatch.setenv(WORKSPACES_VAR, str(tmp_path / "ws"))
    root = private_root(run)
    assert root == tmp_path / "ws" / f"ea-ws-{run_key(run)}"
    assert stat.S_IMODE(root.stat().st_mode) == 0o700


def test_workspaces_may_not_live_inside_the_run_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(WORKSPACES_VAR, str(tmp_path / "run" / "inside"))
    with pytest.raises(UsageError, match="must not be inside the run directory"):
        private_root(tmp_path / "run")


def test_entering_a_round_removes_every_other_round(tmp_path: Path) -> None:
    for n in (1, 2):
        workspace_path(tmp_path, n, 1).mkdir(parents=True)
    (tmp_path / "stray-link").symlink_to(tmp_path / "r01")
    enter_round(tmp_path, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r02"]
    assert workspace_path(tmp_path, 2, 1).is_dir()
    enter_round(tmp_path, 2, fresh=True)  # a reopened round starts again
    assert list((tmp_path / "r02").iterdir()) == []


def test_a_planted_pointer_is_not_a_workspace_and_planted_config_is_undone(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    git_workspace(ws)
    elsewhere = tmp_path / "elsewhere"
    git_workspace(elsewhere)
    (ws / ".git" / "config").write_text("[core]\n\thooksPath = /tmp/evil\n")
    (ws / ".git" / "commondir").write_text(str(elsewhere / ".git"))
    assert secure(ws)
    assert (ws / ".git" / "config").read_text() == HARNESS_CONFIG
    assert not (ws / ".git" / "commondir").exists()
    pointer = tmp_path / "pointer"
    pointer.mkdir()
    (pointer / ".git").write_text(f"gitdir: {elsewhere / '.git'}\n")
    assert not is_intact(pointer) and not secure(pointer)
    (tmp_path / "linked").symlink_to(ws)
    assert not is_intact(tmp_path / "linked")


def test_a_broken_workspace_is_rebuilt_at_its_base_from_the_round_repo(tmp_path: Path) -> None:
    base = git_workspace(tmp_path / "round")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "junk.txt").write_text("left by an agent")
    fetched = prepare_workspace(ws, tmp_path / "round", base=base, branch="agent-1")
    assert base in fetched and is_intact(ws)
    assert (ws / "value.txt").read_text() == "1\n" and not (ws / "junk.txt").exists()
    head = git_in(ws, "rev-parse", "HEAD")
    assert head == base
    assert "remote" not in (ws / ".git" / "config").read_text()  # nothing names the run
