"""Failures are first-class: recorded, retried when transient, counted, and fatal when
every turn fails; agents that cannot run (or cannot do the task) are refused up front."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli
from evolving_agent.search.agents import make_agent
from evolving_agent.search.agents.base import TurnRequest, is_transient
from evolving_agent.search.runner import TurnJob, execute_turn, run_search
from evolving_agent.search.workspace import init_round_repo
from tests.helpers.search import (
    PY,
    TSP,
    config,
    make_candidate,
    make_task,
    records,
    write_agent,
    write_scorer,
)


def _run_args(tmp: Path, *extra: str) -> list[str]:
    return [
        "search", "run", "--candidate", str(tmp / "candidate"), "--task", str(tmp / "task.md"),
        "--score", write_scorer(tmp), "--out", str(tmp / "run"), *extra,
    ]  # fmt: skip


def test_builtin_refuses_a_task_it_cannot_work_on(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    result = CliRunner().invoke(cli, _run_args(tmp_path, "--agent", "tsp-example"))
    assert result.exit_code == 4
    assert result.output == (
        "error: the tsp-example agent only works on the bundled TSP example (a candidate whose "
        "solve.py it can read); use --agent claude, codex or command\n"
    )
    assert not (tmp_path / "run").exists()


def test_builtin_accepts_the_bundled_example_wherever_it_lives(tmp_path: Path) -> None:
    # Detected by the candidate's shape, not its path: a copy elsewhere works too.
    shutil.copytree(TSP / "candidate", tmp_path / "candidate")
    make_task(tmp_path)
    summary = run_search(
        config(
            tmp_path,
            score_cmd=f"{PY} {TSP / 'score.py'}",
            agent="tsp-example",
            minimize=True,
            policy="single",
            turns=1,
        )
    )
    assert summary.failed_turns == 0 and summary.best_score < summary.seed_score


def test_agent_is_required_on_the_command_line(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    result = CliRunner().invoke(cli, _run_args(tmp_path))
    assert result.exit_code == 2 and "Missing option '--agent'" in result.output


def test_a_run_whose_turns_all_fail_exits_4_and_says_why(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = f"{PY} {tmp_path / 'no-such-agent.py'}"
    result = CliRunner().invoke(
        cli, _run_args(tmp_path, "--agent", "command", "--agent-cmd", agent, "--turns", "2",
                       "--policy", "single"),
    )  # fmt: skip
    assert result.exit_code == 4
    last = result.output.strip().splitlines()[-1]
    assert last.startswith(f"error: {tmp_path / 'run'}: every turn failed (2 of 2); the first: ")
    assert "agent command exited 2" in last and "no-such-agent.py" in last
    # Progress showed each failure as it happened, not as an "(empty)" turn.
    assert result.output.count("ERROR: agent command exited 2") == 2
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (summary["failed_turns"], summary["empty_turns"], summary["turns"]) == (2, 0, 2)


def test_a_failing_run_stops_early_and_resume_can_finish_it(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    flag = tmp_path / "fixed"
    agent = write_agent(
        tmp_path,
        f"""
        if not pathlib.Path({str(flag)!r}).exists():
            sys.exit("invalid API key")
        write(value() + 1)
        """,
    )
    cfg = config(tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=agent, policy="single",
                 turns=10)  # fmt: skip
    with pytest.raises(Exception, match="every turn failed \\(3 of 3\\)"):
        run_search(cfg)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (summary["stopped"], summary["complete"], summary["turns"]) == ("failed", False, 3)
    assert all(r["attempts"] == 1 for r in records(tmp_path / "run"))  # not transient
    flag.write_text("")  # the user fixes the key and resumes
    result = CliRunner().invoke(cli, ["search", "resume", str(tmp_path / "run"), "--json",
                                      "--quiet"])  # fmt: skip
    assert result.exit_code == 0, result.output
    done = json.loads(result.output)
    assert (done["turns"], done["failed_turns"], done["best_score"]) == (10, 3, 7.0)
    assert "failed turns: 3 of 10" not in result.output  # --json prints only the JSON


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        ('claude reported an error: API Error: 529 {"type":"overloaded_error"}', True),
        ("agent command exited 1: 429 Too Many Requests", True),
        ("codex error: stream disconnected: connection reset by peer", True),
        ("agent command could not start: agent: command not found", False),
        ("turn timed out after 600s (claude)", False),
        ("agent command exited 2: invalid API key", False),
    ],
)
def test_which_errors_are_retried(error: str, transient: bool) -> None:
    assert is_transient(error) is transient


def test_retries_back_off_and_start_from_the_turns_base(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "value.txt").write_text("0\n")
    workspace = tmp_path / "ws"
    base = init_round_repo(workspace, src, "seed")
    counter = tmp_path / "attempts"
    agent = make_agent(
        "command",
        command=write_agent(
            tmp_path,
            f"""
            n = int(pathlib.Path({str(counter)!r}).read_text() or 0) if pathlib.Path(
                {str(counter)!r}).exists() else 0
            pathlib.Path({str(counter)!r}).write_text(str(n + 1))
            log(value=value(), session=os.environ["EA_SESSION_ID"])
            write(value() + 1)
            if n < 2:
                sys.exit("HTTP 429 Too Many Requests")
            """,
        ),
    )
    request = TurnRequest(workspace=workspace, prompt="go", session_id="s-1", new_session=True,
                          round=1, agent=1, turn=1, timeout=30)  # fmt: skip
    slept: list[float] = []
    outcome = execute_turn(
        agent, TurnJob(request, base, "turn 1", retries=3, retry_backoff=2.0), sleep=slept.append
    )
    assert outcome.attempts == 3 and outcome.result.error is None
    assert slept == [2.0, 4.0]
    rows = [json.loads(line) for line in (tmp_path / "agent.py.log").read_text().splitlines()]
    assert [r["value"] for r in rows] == [0.0, 0.0, 0.0]  # every attempt from the base
    assert len({r["session"] for r in rows}) == 3  # a new session gets a new id each try
    assert outcome.change.lines_changed == 2 and not outcome.change.empty

    # Bounded: with one retry allowed, the third failure is never reached.
    counter.write_text("0")
    limited = execute_turn(
        agent, TurnJob(request, outcome.change.commit, "t2", retries=1, retry_backoff=0),
        sleep=slept.append,
    )  # fmt: skip
    assert limited.attempts == 2 and "429" in (limited.result.error or "")


def test_score_cwd_runs_the_scorer_elsewhere_with_the_candidate_still_named(
    tmp_path: Path,
) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    scorer_home = tmp_path / "scorer-home"
    scorer_home.mkdir()
    (scorer_home / "offset.txt").write_text("100\n")
    agent = write_agent(tmp_path, "write(value() + 1)\n")
    score = (
        f'{PY} -c "import os, pathlib; '
        "print(float(pathlib.Path('offset.txt').read_text()) + "
        "float((pathlib.Path(os.environ['EA_CANDIDATE']) / 'value.txt').read_text()))\""
    )
    result = CliRunner().invoke(cli, [
        "search", "run", "--candidate", str(tmp_path / "candidate"), "--task",
        str(tmp_path / "task.md"), "--score", score, "--score-cwd", str(scorer_home),
        "--agent", "command", "--agent-cmd", agent, "--policy", "single", "--turns", "1",
        "--out", str(tmp_path / "run"), "--json", "--quiet",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["best_score"] == 101.0
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["score_cwd"] == str(scorer_home)


def test_turn_execution_and_judging_travel_as_plain_values(tmp_path: Path) -> None:
    """An executor (threads here, Ray workers elsewhere) can ship a turn and a judge."""
    import pickle

    from evolving_agent.search.judge import Judge, Seal

    src = tmp_path / "src"
    src.mkdir()
    (src / "value.txt").write_text("1\n")
    workspace = tmp_path / "ws"
    base = init_round_repo(workspace, src, "seed")
    scorer = tmp_path / "score.sh"
    scorer.write_text("cat value.txt\n")
    judge = Judge(f"sh {scorer}", tmp_path, 30, seal=Seal({str(scorer): "0" * 64}))
    agent = make_agent("command", command="echo 5 > value.txt")
    request = TurnRequest(workspace=workspace, prompt="go", session_id="s", new_session=True,
                          round=1, agent=1, turn=1, timeout=30)  # fmt: skip
    job = TurnJob(request, base, "turn 1")
    shipped_agent, shipped_job, shipped_judge = pickle.loads(pickle.dumps((agent, job, judge)))
    outcome = execute_turn(shipped_agent, shipped_job)
    assert outcome.change.lines_changed == 2
    verdict = shipped_judge.judge(workspace, outcome.change.commit)
    assert verdict.tampered and verdict.score is None  # the seal travelled too


def test_a_backend_that_raises_fails_its_turn_not_the_run(tmp_path: Path) -> None:
    from evolving_agent.search.agents.base import Agent, TurnResult

    class Broken(Agent):
        name = "broken"

        def run_turn(self, *, request: TurnRequest) -> TurnResult:
            raise OSError("disk on fire")

    src = tmp_path / "src"
    src.mkdir()
    (src / "value.txt").write_text("1\n")
    base = init_round_repo(tmp_path / "ws", src, "seed")
    request = TurnRequest(workspace=tmp_path / "ws", prompt="go", session_id="s",
                          new_session=True, round=1, agent=1, turn=1, timeout=30)  # fmt: skip
    outcome = execute_turn(Broken(), TurnJob(request, base, "t"))
    assert outcome.result.error == "broken agent raised OSError: disk on fire"
    assert outcome.change.empty and outcome.result.session_id is None
