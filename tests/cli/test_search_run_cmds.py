"""The ``search run`` / ``search resume`` commands: SIGKILL and resume, bad input, help."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, tzinfo
from pathlib import Path

import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli
from tests.helpers import run_cli
from tests.helpers.search import (
    PY,
    REPO,
    TSP,
    agent_log,
    make_candidate,
    make_task,
    records,
    write_agent,
    write_scorer,
)


def _wait_for_records(log: Path, count: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120  # a guard against hanging, not an assertion on speed
    while time.monotonic() < deadline:
        if log.exists() and log.read_text().count("\n") >= count:
            return
        if proc.poll() is not None:
            raise AssertionError(f"run ended early: {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.05)
    raise AssertionError("no progress")


def test_sigkill_then_resume_finishes_every_planned_turn_exactly_once(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(
        tmp_path,
        """
        log(pid=os.getpid())
        write(value() + 1)
        time.sleep(0.3)
    """,
    )
    out = tmp_path / "run"
    argv = [
        PY,
        "-m",
        "evolving_agent",
        "search",
        "run",
        "--candidate",
        "candidate",
        "--task",
        "task.md",
        "--score",
        write_scorer(tmp_path),
        "--agent",
        "command",
        "--agent-cmd",
        agent,
        "--policy",
        "forget-team",
        "--agents",
        "2",
        "--rounds",
        "2",
        "--turns",
        "10",
        "--out",
        str(out),
        "--quiet",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        argv,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    _wait_for_records(out / "log.jsonl", 3, proc)
    os.killpg(proc.pid, signal.SIGKILL)  # the harness and its agents die mid-run
    proc.communicate()
    before = records(out)
    assert 3 <= len(before) < 10
    assert not (out / "summary.json").exists()

    result = CliRunner().invoke(cli, ["search", "resume", str(out), "--json", "--quiet"])
    assert result.exit_code == 0, result.output
    rows = records(out)
    assert len(rows) == 10
    keys = [(r["round"], r["agent"], r["turn"]) for r in rows]
    assert len(set(keys)) == 10
    assert sorted(r["seq"] for r in rows) == list(range(1, 11))
    assert rows[: len(before)] == before  # nothing recorded before the kill was redone
    assert sorted((r["agent"], r["turn"]) for r in rows) == [
        (a, t) for a in (1, 2) for t in range(1, 6)
    ]
    summary = json.loads(result.output)
    assert (summary["turns"], summary["complete"], summary["rounds"]) == (10, True, 2)
    # The resumed agents continued from the recorded candidates: every turn added one.
    assert summary["best_score"] == max(r["score"] for r in rows)
    assert len(agent_log(tmp_path)) >= 10


def test_resume_of_a_finished_run_does_nothing_more(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, "write(value() + 1)\n")
    runner = CliRunner()
    args = [
        "search",
        "run",
        "--candidate",
        str(tmp_path / "candidate"),
        "--task",
        str(tmp_path / "task.md"),
        "--score",
        write_scorer(tmp_path),
        "--agent",
        "command",
        "--agent-cmd",
        agent,
        "--policy",
        "forget",
        "--rounds",
        "2",
        "--turns",
        "2",
        "--out",
        str(tmp_path / "run"),
        "--quiet",
    ]
    first = runner.invoke(cli, args)
    assert first.exit_code == 0, first.output
    assert first.output.startswith("best 2 (seed 0, +2) after 2/2 turns, 2 round(s)")
    again = runner.invoke(cli, ["search", "resume", str(tmp_path / "run"), "--quiet"])
    assert again.exit_code == 0 and len(records(tmp_path / "run")) == 2
    rerun = runner.invoke(cli, args)
    assert rerun.exit_code == 2 and "use `search resume" in rerun.output


def _base_args(tmp: Path, **swap: str) -> list[str]:
    opts = {
        "--candidate": str(tmp / "candidate"),
        "--task": str(tmp / "task.md"),
        "--score": f"{PY} {TSP / 'score.py'}",
        "--agent": "tsp-example",
        "--policy": "forget-team",
        "--out": str(tmp / "run"),
    }
    opts.update(swap)
    args = ["search", "run", "--minimize"]
    for key, value in opts.items():
        args += [key, value]
    return args


@pytest.mark.parametrize(
    ("swap", "code", "message"),
    [
        ({"--candidate": "missing"}, 4, "error: candidate directory not found: missing"),
        ({"--task": "nope.md"}, 4, "error: task file not found: nope.md"),
        (
            {"--score": "echo no number here"},
            4,
            "error: score command gave no number on the seed candidate "
            "(last line is not a number: 'no number here'): echo no number here",
        ),
        (
            {"--agent": "gpt"},
            2,
            "error: unknown agent 'gpt'; choose one of: tsp-example, claude, codex, gemini, "
            "opencode, command, circles-example",
        ),
        (
            {"--policy": "swarm"},
            2,
            "error: unknown policy 'swarm'; choose one of: single, "
            "parallel, team, forget, forget-team, fork-and-flush, keep-notes",
        ),
        ({"--turns": "0"}, 2, "error: --turns must be positive, got 0"),
        ({"--agents": "-1"}, 2, "error: --agents must be positive, got -1"),
        ({"--score-repeats": "0"}, 2, "error: --score-repeats must be positive, got 0"),
        (
            {"--agents": "3", "--rounds": "2", "--turns": "5"},
            2,
            "error: --turns 5 is fewer than agents x rounds (6); every agent needs at least "
            "one turn per round",
        ),
        (
            {"--policy": "team", "--forget-on-plateau": "3"},
            2,
            "error: --forget-on-plateau needs a forgetting policy (forget, forget-team, "
            "fork-and-flush), not 'team'",
        ),
        ({"--agent": "command"}, 2, "error: --agent command needs --agent-cmd CMD"),
    ],
)
def test_bad_input_is_one_line_and_starts_no_work(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    swap: dict[str, str],
    code: int,
    message: str,
) -> None:
    (tmp_path / "candidate").mkdir()
    # The bundled seed: the tsp-example agent works on it (any other candidate it refuses).
    (tmp_path / "candidate" / "solve.py").write_text((TSP / "candidate" / "solve.py").read_text())
    make_task(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, _base_args(tmp_path, **swap))
    assert (result.exit_code, result.output) == (code, message + "\n")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("command", ["run", "compare"])
@pytest.mark.parametrize(
    ("prices", "message"),
    [
        (
            "{oops",
            "error: --token-prices must be JSON or a JSON file: Expecting property name "
            "enclosed in double quotes\n",
        ),
        (
            '{"output": "ten"}',
            'error: --token-prices must map names to numbers, e.g. {"output": 10}\n',
        ),
    ],
)
def test_run_and_compare_parse_token_prices_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, prices: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["search", command, "--candidate", "c", "--task", "t.md", "--score", "true"]
    result = CliRunner().invoke(cli, [*args, "--agent", "codex", "--token-prices", prices])
    assert (result.exit_code, result.output) == (2, message)
    assert list(tmp_path.iterdir()) == []


def test_compare_hands_token_prices_to_every_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evolving_agent.search.compare as compare_mod
    from evolving_agent.errors import UsageError
    from evolving_agent.search.config import SearchConfig

    seen: list[SearchConfig] = []

    def capture(base: SearchConfig, **_kw: object) -> None:
        seen.append(base)
        raise UsageError("stopped before running")

    monkeypatch.setattr(compare_mod, "compare_policies", capture)
    prices = tmp_path / "prices.json"
    prices.write_text('{"input": 2, "output": 8}')
    args = ["search", "compare", "--candidate", "c", "--task", "t.md", "--score", "true"]
    result = CliRunner().invoke(cli, [*args, "--agent", "codex", "--token-prices", str(prices)])
    assert (result.exit_code, result.output) == (2, "error: stopped before running\n")
    assert [c.token_prices for c in seen] == [{"input": 2.0, "output": 8.0}]


def test_resume_of_something_that_is_not_a_run(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["search", "resume", str(tmp_path)])
    assert result.exit_code == 4
    assert result.output == f"error: not a search run directory (no run.json): {tmp_path}\n"


@pytest.mark.parametrize("command", ["run", "resume"])
def test_help(command: str) -> None:
    result = CliRunner().invoke(cli, ["search", command, "--help"])
    assert result.exit_code == 0 and "Example" in result.output


def test_progress_lines_go_to_stderr(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, "write(value() + 1)\n")
    proc = subprocess.run(
        [
            PY,
            "-m",
            "evolving_agent",
            "search",
            "run",
            "--candidate",
            "candidate",
            "--task",
            "task.md",
            "--score",
            write_scorer(tmp_path),
            "--agent",
            "command",
            "--agent-cmd",
            agent,
            "--policy",
            "single",
            "--turns",
            "2",
            "--out",
            "run",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[-2].startswith("[round 1] turns 2/2  best 2  spend $0.0000 / 0 tok  | agent 1")
    assert "*improved*" in lines[-2]
    assert proc.stdout.splitlines()[1] == f"run directory: {tmp_path / 'run'}"


def _run_with_first_record_changed(tmp_path: Path, change: dict[str, object]) -> Path:
    """A finished two-turn run whose first log record then gets ``change``; the log path."""
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, "write(value() + 1)\n")
    args = [
        "search",
        "run",
        "--candidate",
        str(tmp_path / "candidate"),
        "--task",
        str(tmp_path / "task.md"),
        "--score",
        write_scorer(tmp_path),
        "--agent",
        "command",
        "--agent-cmd",
        agent,
        "--policy",
        "single",
        "--turns",
        "2",
        "--out",
        str(tmp_path / "run"),
        "--quiet",
    ]
    assert CliRunner().invoke(cli, args).exit_code == 0
    log = tmp_path / "run" / "log.jsonl"
    rows = log.read_text().splitlines()
    changed = json.loads(rows[0]) | change
    log.write_text("\n".join([json.dumps(changed), *rows[1:]]) + "\n")
    return log


def test_a_log_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    log = _run_with_first_record_changed(tmp_path, {"schema_version": 99})
    result = CliRunner().invoke(cli, ["search", "resume", str(tmp_path / "run")])
    assert result.exit_code == 4
    assert result.output == (
        f"error: {log}:1: schema_version 99 is newer than this tool "
        "understands (1); upgrade evolving-agent\n"
    )


def test_a_damaged_record_is_named_in_one_line(tmp_path: Path) -> None:
    log = _run_with_first_record_changed(tmp_path, {"score": "very good"})
    result = CliRunner().invoke(cli, ["search", "resume", str(tmp_path / "run")])
    assert result.exit_code == 4
    assert result.output == (
        f"error: {log}:1: bad record: score: Input should be a valid number, "
        "unable to parse string as a number\n"
    )


# Bad input a new user typed during QA.
def test_search_run_with_a_non_utf8_task_file_is_a_one_line_error(tmp_path: Path) -> None:
    candidate = tmp_path / "cand"
    candidate.mkdir()
    (candidate / "x.txt").write_text("1\n")
    task = tmp_path / "task.md"
    task.write_bytes(b"\xff\xfe improve x\n")
    out = tmp_path / "run"
    result = run_cli(
        "search", "run", "--candidate", str(candidate), "--task", str(task),
        "--score", "cat {candidate}/x.txt", "--agent", "builtin", "--policy", "single",
        "--turns", "1", "--out", str(out), "--quiet",
    )  # fmt: skip
    assert result.exit_code == 4
    assert result.output == f"error: {task}: not UTF-8 text\n"
    assert not out.exists()


# A newcomer's snag.
@pytest.mark.slow
def test_two_search_runs_started_in_the_same_second_get_two_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evolving_agent.demo import example_dir
    from evolving_agent.search import runner

    class SameSecond(datetime):
        @classmethod
        def now(cls, tz: tzinfo | None = None) -> SameSecond:
            return cls(2026, 11, 30, 12, 0, 0, tzinfo=tz)

    monkeypatch.setattr(runner, "datetime", SameSecond)
    monkeypatch.chdir(tmp_path)
    example = example_dir()
    args = [
        "search", "run", "--quiet",
        "--candidate", str(example / "candidate"), "--task", str(example / "task.md"),
        "--score", f"{sys.executable} {example / 'score.py'}", "--minimize",
        "--agent", "builtin", "--policy", "single", "--rounds", "1", "--turns", "1",
    ]  # fmt: skip
    for _ in range(2):
        result = run_cli(*args)
        assert result.exit_code == 0, result.output
    runs = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert runs == ["search-20261130-120000-single", "search-20261130-120000-single-2"]
    for name in runs:
        assert (tmp_path / "runs" / name / "summary.json").is_file()


def test_json_summary_is_printed_even_when_every_turn_failed(tmp_path: Path) -> None:
    # Regression: `search run --json` printed nothing once every turn had failed, so a
    # script reading stdout had no summary to read.
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, "sys.exit('the agent broke')\n")
    result = CliRunner().invoke(
        cli,
        [
            "search", "run", "--candidate", str(tmp_path / "candidate"),
            "--task", str(tmp_path / "task.md"), "--score", write_scorer(tmp_path),
            "--agent", "command", "--agent-cmd", agent, "--policy", "single", "--turns", "2",
            "--out", str(tmp_path / "run"), "--json", "--quiet", "--retries", "0",
        ],
    )  # fmt: skip
    assert result.exit_code == 4
    summary = json.loads(result.stdout)
    assert (summary["turns"], summary["failed_turns"]) == (2, 2)
    assert summary["first_error"].endswith("the agent broke")
    assert result.stderr.startswith("error: ") and "every turn failed (2 of 2)" in result.stderr


@pytest.mark.slow
def test_ctrl_c_exits_130_and_names_the_resume_command(tmp_path: Path) -> None:
    # Newcomer snag: Ctrl-C printed click's "Aborted!", exit 1, and no word of resume.
    make_candidate(tmp_path)
    make_task(tmp_path)
    started, go = tmp_path / "turn-started", tmp_path / "go"
    agent = write_agent(
        tmp_path,
        f"""
        pathlib.Path({str(started)!r}).write_text("1")
        while not pathlib.Path({str(go)!r}).exists():  # released by the test
            time.sleep(0.02)
        write(value() + 1)
        """,
    )
    out = tmp_path / "run"
    argv = [
        PY, "-m", "evolving_agent", "search", "run", "--candidate", "candidate",
        "--task", "task.md", "--score", write_scorer(tmp_path), "--agent", "command",
        "--agent-cmd", agent, "--policy", "single", "--turns", "3", "--out", str(out),
        "--quiet",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120  # a guard against hanging, not a speed assertion
    while not started.exists():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline, "the first turn never started"
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    go.write_text("1")  # the turn in flight finishes and is recorded
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.decode().splitlines()[-1] == (
        "interrupted: every finished turn is kept; finish the run with: "
        f"evolving-agent search resume {out}"
    )
    assert len(records(out)) == 1
    resumed = subprocess.run(
        [PY, "-m", "evolving_agent", "search", "resume", str(out), "--quiet"],
        cwd=tmp_path, env=env, capture_output=True, timeout=120,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert [r["turn"] for r in records(out)] == [1, 2, 3]
