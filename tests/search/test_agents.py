"""Agent backends: one contract test for all of them, plus full runs through fake CLIs.

The fake ``claude`` and ``codex`` executables print the documented output formats:
Claude Code's ``--output-format json`` result object, and Codex's ``exec --json``
JSONL events (``thread.started``, ``turn.completed`` with ``usage``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from evolving_agent.errors import InvalidInput, NotFound, UsageError
from evolving_agent.search.agents import AGENT_NAMES, make_agent
from evolving_agent.search.agents.base import TurnRequest
from evolving_agent.search.runner import run_search
from evolving_agent.search.workspace import init_round_repo
from tests.helpers.search import (
    INCREMENT,
    TSP,
    config,
    make_candidate,
    make_task,
    records,
    write_agent,
    write_scorer,
)
from tests.helpers.search_fakes import calls, fake_env


@pytest.fixture()
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fake ``claude`` and ``codex`` on PATH (``tests.helpers.search_fakes``); returns the log."""
    for key, value in fake_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    return tmp_path / "fake.log"


def _log(path: Path) -> list[dict[str, Any]]:
    return calls(path)


@pytest.mark.parametrize("name", AGENT_NAMES)
def test_backend_contract(name: str, tmp_path: Path, fakes: Path) -> None:
    """Every backend: edits its workspace, keeps a continued session, never reads stdin."""
    src = tmp_path / "src"
    if name == "tsp-example":
        shutil.copytree(TSP / "candidate", src)
        target = "solve.py"
    elif name == "circles-example":
        src.mkdir()  # 26 small circles: room to grow, so the first turn edits
        (src / "pack.py").write_text(
            "for i in range(26):\n    print(f'{0.1 + 0.15 * (i % 6):.6f} "
            "{0.1 + 0.15 * (i // 6):.6f} 0.010000')\n"
        )
        target = "pack.py"
    else:
        src.mkdir()
        (src / "value.txt").write_text("1\n")
        target = "value.txt"
    workspace = tmp_path / "ws"
    init_round_repo(workspace, src, "seed")
    command = (
        write_agent(
            tmp_path,
            INCREMENT
            + """
closed = os.path.samestat(os.fstat(0), os.stat(os.devnull))
with pathlib.Path(os.environ["FAKE_AGENT_LOG"]).open("a") as fh:
    fh.write(json.dumps({"stdin_closed": closed}) + "\\n")
print(json.dumps({"session_id": os.environ["EA_SESSION_ID"], "input_tokens": 3}))
""",
        )
        if name == "command"
        else None
    )
    agent = make_agent(name, command=command)
    before = (workspace / target).read_text()

    def request(session: str, new: bool, turn: int) -> TurnRequest:
        return TurnRequest(
            workspace=workspace,
            prompt="Improve it.",
            session_id=session,
            new_session=new,
            round=1,
            agent=1,
            turn=turn,
            timeout=30,
            state_dir=tmp_path / "state",
            minimize=True,
        )

    first = agent.run_turn(request=request("11111111-1111-4111-8111-111111111111", True, 1))
    assert first.error is None and first.session_id
    assert (workspace / target).read_text() != before
    second = agent.run_turn(request=request(first.session_id, False, 2))
    assert second.error is None and second.session_id == first.session_id
    if name not in ("tsp-example", "circles-example"):
        assert all(row["stdin_closed"] for row in _log(fakes))
        assert len(_log(fakes)) == 2


def test_unknown_agent_lists_the_valid_ones() -> None:
    names = "tsp-example, claude, codex, gemini, opencode, command"
    with pytest.raises(UsageError, match=f"choose one of: {names}"):
        make_agent("gpt")


def test_claude_run_records_sessions_cost_and_tokens(tmp_path: Path, fakes: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent="claude",
            policy="forget",
            rounds=2,
            turns=4,
        )
    )
    rows = sorted(records(tmp_path / "run"), key=lambda r: r["seq"])
    seen = _log(fakes)
    assert rows[0]["session"] == rows[1]["session"] != rows[2]["session"] == rows[3]["session"]
    prompt = seen[0]["prompt"]
    # New and resumed turns: the documented flags, the permission mode by default,
    # and the prompt after "--".
    assert seen[0]["argv"] == [
        "-p", "--output-format", "stream-json", "--verbose", "--session-id", rows[0]["session"],
        "--permission-mode", "acceptEdits", "--", prompt,
    ]  # fmt: skip
    assert seen[1]["argv"] == [
        "-p", "--output-format", "stream-json", "--verbose", "--resume", rows[0]["session"],
        "--permission-mode", "acceptEdits", "--", seen[1]["prompt"],
    ]  # fmt: skip
    assert all(
        r["cost_usd"] == 0.0123
        and r["input_tokens"] == 160
        and r["output_tokens"] == 20
        and r["reasoning_tokens"] is None
        and r["error"] is None
        for r in rows
    )
    assert [r["score"] for r in rows] == [1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize("shape", ["cumulative", "per-turn"])
def test_codex_run_reads_thread_ids_and_prices_each_turn_once(
    tmp_path: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    """Current codex reports the thread's running total, older codex each turn's own:
    either way every turn is charged its own tokens."""
    monkeypatch.setenv("FAKE_CODEX_USAGE", shape)
    make_candidate(tmp_path)
    make_task(tmp_path)
    run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent="codex",
            policy="forget",
            rounds=2,
            turns=6,
            token_prices={"input": 2.0, "cached_input": 0.5, "output": 10.0},
        )
    )
    rows = sorted(records(tmp_path / "run"), key=lambda r: r["seq"])
    assert all(str(r["session"]).startswith("thread-") for r in rows)
    assert rows[0]["session"] == rows[1]["session"] == rows[2]["session"] != rows[3]["session"]
    seen = _log(fakes)
    assert seen[0]["argv"] == [
        "exec", "--json", "-c", 'sandbox_mode="workspace-write"', "--", seen[0]["prompt"],
    ]  # fmt: skip
    assert seen[1]["argv"] == [
        "exec", "resume", "--json", "-c", 'sandbox_mode="workspace-write"',
        rows[0]["session"], "--", seen[1]["prompt"],
    ]  # fmt: skip
    # (600 uncached * 2.0 + 400 cached * 0.5 + 200 out * 10.0) per million tokens.
    assert [r["cost_usd"] for r in rows] == [pytest.approx(0.0034)] * 6
    assert {(r["input_tokens"], r["output_tokens"], r["reasoning_tokens"]) for r in rows} == {
        (1000, 200, 50)
    }
    assert [r["score"] for r in rows] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


def test_codex_resume_arguments_are_derived_or_refused(tmp_path: Path, fakes: Path) -> None:
    """`-s` would break every resumed turn: it becomes `-c sandbox_mode=...`; an
    exec-only option with no resume equivalent is refused before the run starts."""
    make_candidate(tmp_path)
    make_task(tmp_path)
    run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent="codex",
            agent_args="-s workspace-write -m gpt-5",
            policy="single",
            turns=2,
        )
    )
    seen = _log(fakes)
    assert seen[0]["argv"][:6] == ["exec", "--json", "-s", "workspace-write", "-m", "gpt-5"]
    assert seen[1]["argv"][:7] == [
        "exec", "resume", "--json", "-c", 'sandbox_mode="workspace-write"', "-m", "gpt-5",
    ]  # fmt: skip
    assert [r["error"] for r in records(tmp_path / "run")] == [None, None]

    # --full-auto, gone from current codex, becomes its equivalent on both kinds of turn.
    (tmp_path / "fa").mkdir()
    make_candidate(tmp_path / "fa")
    make_task(tmp_path / "fa")
    summary = run_search(
        config(tmp_path / "fa", score_cmd=write_scorer(tmp_path / "fa"), agent="codex",
               agent_args="--full-auto", policy="single", turns=2)
    )  # fmt: skip
    assert summary.failed_turns == 0 and summary.best_score == 2.0
    assert all("--full-auto" not in c["argv"] for c in _log(fakes))

    (tmp_path / "b").mkdir()
    make_candidate(tmp_path / "b")
    make_task(tmp_path / "b")
    with pytest.raises(UsageError, match="codex exec resume does not take -C"):
        run_search(config(tmp_path / "b", score_cmd="true", agent="codex", agent_args="-C /x"))
    assert not (tmp_path / "b" / "run").exists()


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_task_starting_with_front_matter_is_not_an_option(
    tmp_path: Path, fakes: Path, agent: str
) -> None:
    make_candidate(tmp_path)
    (tmp_path / "task.md").write_text("---\ntitle: bigger\n---\nMake value.txt larger.\n")
    summary = run_search(
        config(tmp_path, score_cmd=write_scorer(tmp_path), agent=agent, policy="single", turns=2)
    )
    assert summary.failed_turns == 0 and summary.best_score == 2.0
    assert _log(fakes)[0]["prompt"].startswith("---\ntitle: bigger")


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_rejected_flag_is_a_failed_turn_and_a_failed_run(
    tmp_path: Path, fakes: Path, agent: str
) -> None:
    """A flag the CLI rejects used to look like "no improvement"; now every turn
    records the CLI's error, the summary counts failed turns, and the run exits 4."""
    make_candidate(tmp_path)
    make_task(tmp_path)
    with pytest.raises(InvalidInput, match=r"every turn failed \(2 of 2\); the first: "):
        run_search(
            config(
                tmp_path,
                score_cmd=write_scorer(tmp_path),
                agent=agent,
                agent_args="--bogus-flag",
                # Given explicitly, resume arguments go to codex exec resume unchecked.
                agent_resume_args="--bogus-flag",
                policy="single",
                turns=2,
            )
        )
    rows = records(tmp_path / "run")
    assert all("bogus-flag" in r["error"] and r["attempts"] == 1 for r in rows)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (summary["failed_turns"], summary["empty_turns"]) == (2, 0)
    assert "bogus-flag" in summary["first_error"]


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_an_overloaded_api_is_retried_with_backoff(
    tmp_path: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    monkeypatch.setenv("FAKE_FAIL_FIRST", "2")
    make_candidate(tmp_path)
    make_task(tmp_path)
    summary = run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent=agent,
            policy="single",
            turns=2,
            retries=2,
            retry_backoff=0.01,
        )
    )
    rows = records(tmp_path / "run")
    assert [(r["attempts"], r["error"]) for r in rows] == [(3, None), (1, None)]
    assert summary.failed_turns == 0 and summary.best_score == 2.0
    seen = _log(fakes)
    # The retried first turn started a new session each time, never resumed a dead one.
    flag = "--session-id" if agent == "claude" else "exec"
    assert all(flag in c["argv"] for c in seen[:3])


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_session_never_created_is_started_fresh(
    tmp_path: Path, fakes: Path, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    """Without retries, a failed first turn used to void the round: every later turn
    resumed a session that never existed."""
    monkeypatch.setenv("FAKE_FAIL_FIRST", "1")
    make_candidate(tmp_path)
    make_task(tmp_path)
    run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent=agent,
            policy="single",
            turns=3,
            retries=0,
        )
    )
    rows = sorted(records(tmp_path / "run"), key=lambda r: r["seq"])
    assert "529" in rows[0]["error"] and rows[0]["session"] is None
    assert [r["error"] for r in rows[1:]] == [None, None]
    assert [r["new_session"] for r in rows] == [True, True, False]
    assert rows[1]["session"] == rows[2]["session"] is not None
    assert [r["score"] for r in rows] == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("agent", ["claude", "codex", "command"])
def test_a_missing_agent_program_is_refused_before_anything_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    make_candidate(tmp_path)
    make_task(tmp_path)
    cmd = "/nonexistent/agent --flag" if agent == "command" else None
    with pytest.raises(NotFound, match="not found: (claude|codex|/nonexistent/agent) "):
        run_search(config(tmp_path, score_cmd="true", agent=agent, agent_cmd=cmd))
    assert not (tmp_path / "run").exists()


def test_claude_new_and_resumed_turns_get_their_own_arguments(tmp_path: Path, fakes: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent="claude",
            agent_args="--model sonnet",
            agent_resume_args="--model haiku --permission-mode bypassPermissions",
            policy="single",
            turns=2,
        )
    )
    first, second = (c["argv"] for c in _log(fakes))
    assert first[6:10] == ["--permission-mode", "acceptEdits", "--model", "sonnet"]
    assert second[6:10] == ["--model", "haiku", "--permission-mode", "bypassPermissions"]
    assert "acceptEdits" not in second  # a chosen permission mode replaces the default
    assert [r["score"] for r in records(tmp_path / "run")] == [1.0, 2.0]


@pytest.mark.parametrize("name", ["claude", "codex"])
def test_a_session_the_cli_cannot_find_is_given_up(tmp_path: Path, fakes: Path, name: str) -> None:
    """Resuming a session the CLI no longer has fails; the turn reports no session, so
    the next one starts fresh instead of failing the same way for the rest of the run."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "value.txt").write_text("1\n")
    init_round_repo(tmp_path / "ws", src, "seed")
    gone = make_agent(name).run_turn(
        request=TurnRequest(workspace=tmp_path / "ws", prompt="go", session_id="lost-42",
                            new_session=False, round=1, agent=1, turn=2, timeout=30)
    )  # fmt: skip
    assert gone.error is not None and "lost-42" in gone.error
    assert gone.session_id is None


def test_the_old_name_builtin_is_the_tsp_example_agent(tmp_path: Path) -> None:
    """``--agent builtin`` (the name before the rename) runs the same agent and records
    the current name, so a run started either way stores the same ``run.json``."""
    assert make_agent("builtin").name == make_agent("tsp-example").name == "tsp-example"
    old = config(tmp_path, agent="builtin")
    assert old.agent == "tsp-example"
    assert old.model_dump() == config(tmp_path, agent="tsp-example").model_dump()
    assert "builtin" not in AGENT_NAMES  # the choices list shows the new name only
