"""``search plateau-test``: continue the run's last sessions or start fresh, same plateau."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli
from evolving_agent.search.config import SearchConfig
from evolving_agent.search.plateau import plateau_test
from evolving_agent.search.runner import run_search
from tests.helpers.search import (
    PY,
    REPO,
    TSP,
    agent_log,
    config,
    make_candidate,
    make_task,
    records,
    write_agent,
    write_scorer,
)

# A fresh session makes a bold +10 edit on its first turn; a continued one nudges +1.
# It reports what it cost (a fresh turn reads the task: dearer tokens, cheaper dollars,
# whatever: distinct numbers so the sums are checkable).
SESSION_AGENT = """
fresh = os.environ["EA_NEW_SESSION"] == "1"
log(cwd=os.getcwd())
write(value() + (10 if fresh else 1))
print(json.dumps({"cost_usd": 0.05 if fresh else 0.1, "input_tokens": 7, "output_tokens": 3}))
"""


def test_continue_and_fresh_sides_with_a_command_agent(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, SESSION_AGENT)
    run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent_cmd=agent,
            policy="single",
            turns=2,
        )
    )
    run = tmp_path / "run"
    last_session = records(run)[-1]["session"]
    assert [r["score"] for r in records(run)] == [10.0, 11.0]
    calls_before = len(agent_log(tmp_path))

    result = plateau_test(run, turns=2)

    calls = agent_log(tmp_path)[calls_before:]
    cont, fresh = calls[:2], calls[2:]
    # The continue side resumes the run's last session, in the worktree it knew.
    assert [c["EA_NEW_SESSION"] for c in cont] == ["0", "0"]
    assert {c["EA_SESSION_ID"] for c in cont} == {last_session}
    assert {c["cwd"] for c in cont} == {str(run / "rounds" / "r01" / "agent-1")}
    # The fresh side starts a new session in a new one-commit repository of the best.
    assert [c["EA_NEW_SESSION"] for c in fresh] == ["1", "0"]
    assert fresh[0]["EA_SESSION_ID"] != last_session
    assert {c["cwd"] for c in fresh} == {str(run / "plateau-test" / "fresh" / "agent-1")}
    out = run / "plateau-test"
    assert git_log_count(out / "fresh" / "repo") == 3  # the best + 2 turns

    assert result.start_score == 11.0
    c, f = result.side("continue"), result.side("fresh")
    assert (c.best_score, c.best_rescored, c.gain) == (13.0, 13.0, 2.0)
    assert (f.best_score, f.best_rescored, f.gain) == (22.0, 22.0, 11.0)
    assert (c.cost_usd, f.cost_usd) == (pytest.approx(0.2), pytest.approx(0.15))
    assert result.gain_ratio == pytest.approx(5.5)
    assert result.cost_ratio == pytest.approx(0.75)

    data = json.loads((out / "plateau-test.json").read_text())
    assert data["sides"]["fresh"]["gain"] == 11.0
    assert data["gain_ratio_fresh_over_continue"] == pytest.approx(5.5)
    md = (out / "plateau-test.md").read_text()
    assert "| gain | 2 (+18.18%) | 11 (+100.00%) |" in md
    assert "| cost | $0.2000 | $0.1500 |" in md
    assert "Fresh sessions gained 5.50× what continued ones did, at 0.75× the spend." in md
    # Each side's turns are logged like a run's.
    assert [r["new_session"] for r in records(out / "fresh")] == [True, False]
    # The run itself is left as it was.
    assert [r["score"] for r in records(run)] == [10.0, 11.0]


def git_log_count(repo: Path) -> int:
    out = subprocess.run(
        ["git", "rev-list", "--all", "--count"], cwd=repo, capture_output=True, text=True
    )
    return int(out.stdout.strip())


@pytest.fixture(scope="module")
def tsp_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("tsp")
    run = tmp / "run"
    run_search(
        SearchConfig(
            candidate=TSP / "candidate",
            task=TSP / "task.md",
            score_cmd=f"{PY} {TSP / 'score.py'}",
            minimize=True,
            agent="tsp-example",
            policy="forget-team",
            agents=2,
            rounds=2,
            turns=8,
            seed=1,
            out=run,
            workdir=tmp,
        )
    )
    return run


def test_the_cli_on_the_bundled_example_offline(tsp_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "pt"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "evolving_agent",
            "search",
            "plateau-test",
            str(tsp_run),
            "--turns",
            "4",
            "--out",
            str(out),
            "--json",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["direction"] == "minimize" and data["agents"] == 2
    summary = json.loads((tsp_run / "summary.json").read_text())
    # The start is the run's best, scored again (the TSP scorer is deterministic).
    assert data["start_score"] == summary["best_score"]
    for side in ("continue", "fresh"):
        got = data["sides"][side]
        assert got["turns"] == 4 and got["tokens"] > 0
        best = got["best_rescored"] if got["best_rescored"] is not None else data["start_score"]
        assert got["gain"] == pytest.approx(data["start_score"] - best)
        assert got["gain"] >= 0
        assert len(records(out / side)) == 4
    progress = proc.stderr.splitlines()
    assert len(progress) == 8 and progress[0].startswith("[continue] agent ")
    assert (out / "plateau-test.md").is_file()


def test_refusals_are_one_line(tsp_run: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["search", "plateau-test", str(tsp_run), "--turns", "1"])
    assert res.exit_code == 2
    assert res.stderr == "error: --turns 1 is fewer than the run's 2 agents\n"
    res = runner.invoke(cli, ["search", "plateau-test", str(tmp_path / "nope"), "--turns", "4"])
    assert res.exit_code == 4 and len(res.stderr.splitlines()) == 1
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("")
    res = runner.invoke(
        cli, ["search", "plateau-test", str(tsp_run), "--turns", "4", "--out", str(busy)]
    )
    assert res.exit_code == 2 and "output directory is not empty" in res.stderr


def test_an_unfinished_run_is_refused(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent_cmd=write_agent(tmp_path, "write(value() + 1)"),
            policy="single",
            turns=1,
        )
    )
    (tmp_path / "run" / "summary.json").unlink()
    res = CliRunner().invoke(cli, ["search", "plateau-test", str(tmp_path / "run"), "--turns", "2"])
    assert res.exit_code == 2
    assert "the run is not finished (no summary.json)" in res.stderr
    assert not (tmp_path / "run" / "plateau-test").exists()
