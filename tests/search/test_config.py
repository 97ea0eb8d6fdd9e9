"""A search run's configuration (``search/config.py``): what ``run.json`` keeps, the
checks made before any work starts (each one line, its own exit code, nothing
written), the agents' and scorers' confinement, and how the turn budget is split."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evolving_agent.errors import EXIT_INVALID, EXIT_USAGE, InvalidInput, NotFound, UsageError
from evolving_agent.search.config import (
    MIN_CANARIES,
    SearchConfig,
    agent_turn_shares,
    split_evenly,
    validate_config,
)
from evolving_agent.search.private import WORKSPACES_VAR
from tests.helpers.search import config, make_candidate, make_task


@pytest.fixture
def ready(tmp_path: Path) -> Path:
    make_candidate(tmp_path)
    make_task(tmp_path)
    return tmp_path


def _valid(tmp: Path, **overrides: Any) -> SearchConfig:
    base: dict[str, Any] = {"score_cmd": "python score.py", "agent_cmd": "agent", "turns": 12}
    return config(tmp, **{**base, **overrides})


def test_run_json_round_trips_and_refuses_a_field_it_does_not_know(tmp_path: Path) -> None:
    cfg = _valid(tmp_path, agent_resources={"num_gpus": 1.0}, sandbox_ro=["/opt"])
    again = SearchConfig.model_validate_json(cfg.model_dump_json())
    assert again == cfg
    with pytest.raises(pydantic.ValidationError, match="extra"):
        SearchConfig.model_validate({**cfg.model_dump(), "agnets": 3})


def test_an_old_agent_name_is_stored_as_the_current_one(tmp_path: Path) -> None:
    assert _valid(tmp_path, agent="builtin").agent == "tsp-example"
    assert _valid(tmp_path, agent="claude").agent == "claude"


@pytest.mark.parametrize(
    ("policy", "agents", "rounds"),
    [
        ("single", 1, 1),
        ("parallel", 3, 1),
        ("team", 3, 1),
        ("forget", 1, 4),
        ("forget-team", 3, 4),
        ("fork-and-flush", 3, 4),
        ("keep-notes", 3, 4),
    ],
)
def test_a_policy_decides_how_many_agents_and_rounds_run(
    tmp_path: Path, policy: str, agents: int, rounds: int
) -> None:
    cfg = _valid(tmp_path, policy=policy, agents=3, rounds=4)
    assert (cfg.effective_agents, cfg.effective_rounds) == (agents, rounds)


def test_a_valid_config_passes_every_check(ready: Path) -> None:
    validate_config(_valid(ready))  # no exception


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"policy": "forgot"}, "unknown policy 'forgot'; choose one of: single,"),
        ({"agent": "gpt"}, "unknown agent 'gpt'; choose one of: tsp-example,"),
        ({"executor": "k8s"}, "unknown executor 'k8s'; choose one of: local, ray"),
        ({"agent_cmd": None}, "--agent command needs --agent-cmd CMD"),
        ({"agents": 0}, "--agents must be positive, got 0"),
        ({"score_timeout": -1.5}, "--score-timeout must be positive, got -1.5"),
        ({"budget_usd": 0.0}, "--budget-usd must be positive, got 0"),
        ({"max_scorers": 0}, "--max-scorers must be positive, got 0"),
        (
            {"policy": "team", "forget_on_plateau": 3},
            "--forget-on-plateau needs a forgetting policy (forget, forget-team, fork-and-flush)",
        ),
        ({"agents": 2, "rounds": 4, "turns": 7}, "--turns 7 is fewer than agents x"),
        ({"score_cmd": "   "}, "--score must be a non-empty command"),
        ({"certify": True, "canaries": MIN_CANARIES - 1}, "--canaries must be at"),
        ({"holdout_cmd": ""}, "--holdout must be a non-empty command"),
        ({"holdout_margin": -0.1}, "--holdout-margin must not be negative"),
        ({"retries": -1}, "--retries and --retry-backoff must not be negative"),
        ({"sandbox": "docker"}, "docker"),
        (
            {"policy": "keep-notes", "executor": "ray"},
            "--policy keep-notes runs on the local executor only",
        ),
    ],
)
def test_a_config_that_cannot_run_is_refused_in_one_line(
    ready: Path, overrides: dict[str, Any], message: str
) -> None:
    before = sorted(p.name for p in ready.iterdir())
    with pytest.raises(UsageError) as caught:
        validate_config(_valid(ready, **overrides))
    text = str(caught.value)
    assert message in text and "\n" not in text
    assert caught.value.exit_code == EXIT_USAGE
    assert sorted(p.name for p in ready.iterdir()) == before  # nothing written


def test_missing_files_are_not_found_and_a_binary_task_is_invalid(ready: Path) -> None:
    with pytest.raises(NotFound, match="candidate directory not found"):
        validate_config(_valid(ready, candidate=ready / "nope"))
    with pytest.raises(NotFound, match="task file not found"):
        validate_config(_valid(ready, task=ready / "nope.md"))
    with pytest.raises(NotFound, match="--score-cwd directory not found"):
        validate_config(_valid(ready, score_cwd=ready / "nope"))
    (ready / "task.md").write_bytes(b"\xff\xfe not text")
    with pytest.raises(InvalidInput, match="not UTF-8 text") as caught:
        validate_config(_valid(ready))
    assert caught.value.exit_code == EXIT_INVALID and caught.value.file == str(ready / "task.md")


def test_the_agents_never_see_the_run_the_workspaces_or_the_scorers_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(WORKSPACES_VAR, str(tmp_path / "spaces"))
    judge = tmp_path / "judge"
    judge.mkdir()
    (judge / "score.py").write_text("print(1)\n")
    (judge / "holdout.py").write_text("print(1)\n")
    cwd = tmp_path / "score-here"
    cwd.mkdir()
    cfg = _valid(
        tmp_path,
        score_cmd="python judge/score.py --quick",
        holdout_cmd="python 'judge/holdout.py'",
        score_cwd=cwd,
        sandbox="bwrap",
        sandbox_ro=["/opt/tools"],
    )
    run = tmp_path / "run"
    sandbox = cfg.agent_confinement(run)
    hidden = set(sandbox.hide)
    assert str(run.resolve()) in hidden and str(cwd.resolve()) in hidden
    assert str(judge.resolve()) in hidden  # the scripts' folder, named once
    assert len(sandbox.hide) == len(hidden)
    assert any(h.startswith(str(tmp_path / "spaces")) for h in hidden)  # the private root
    assert (sandbox.kind, sandbox.ro, sandbox.script_folders) == ("bwrap", ("/opt/tools",), True)
    # The scorers' own sandbox hides only what it is told to, and never gets a network.
    assert cfg.confinement(hide=("/x",)).hide == ("/x",)
    assert _valid(tmp_path).confinement().kind == "none"


def test_an_unparsable_score_command_still_hides_the_scripts_it_names(tmp_path: Path) -> None:
    (tmp_path / "judge").mkdir()
    (tmp_path / "judge" / "score.py").write_text("print(1)\n")
    cfg = _valid(tmp_path, score_cmd="python judge/score.py 'unclosed")
    hidden = cfg.agent_confinement(tmp_path / "run").hide
    assert str((tmp_path / "judge").resolve()) in hidden


@given(total=st.integers(1, 500), n=st.integers(1, 40))
def test_the_turn_budget_is_split_as_evenly_as_it_goes(total: int, n: int) -> None:
    shares = split_evenly(total, n)
    assert len(shares) == n and sum(shares) == total
    assert max(shares) - min(shares) <= 1
    assert shares == sorted(shares, reverse=True)  # earlier ones get the remainder


def test_each_agent_gets_its_share_of_the_whole_runs_turns(tmp_path: Path) -> None:
    assert agent_turn_shares(_valid(tmp_path, agents=3, turns=10)) == [4, 3, 3]
    # single runs one agent whatever --agents says: it gets every turn.
    assert agent_turn_shares(_valid(tmp_path, policy="single", agents=3, turns=10)) == [10]
