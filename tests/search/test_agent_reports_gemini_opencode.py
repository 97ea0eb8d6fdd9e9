"""What the gemini, opencode (and codex, on failure) adapters make of their CLIs' output.

Each fake CLI prints events shaped exactly as the pinned Gemini CLI 0.61.0, OpenCode
1.18.33 and Codex 0.169 print them (captured against the scripted model server); the
real ones run in tests/integrations/test_real_gemini_opencode.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from evolving_agent.search.agents.base import TurnRequest, is_transient
from evolving_agent.search.agents.codex import CodexAgent
from evolving_agent.search.agents.gemini import GeminiAgent, api_error_text, last_retry
from evolving_agent.search.agents.opencode import OpenCodeAgent


def fake_cli(tmp_path: Path, lines: list[dict[str, Any]], stderr: str = "", code: int = 0) -> str:
    script = tmp_path / "fake-cli.py"
    script.write_text(
        "import sys\n"
        f"sys.stdout.write({json.dumps(''.join(json.dumps(x) + chr(10) for x in lines))})\n"
        f"sys.stderr.write({stderr!r})\n"
        f"sys.exit({code})\n"
    )
    return f"{sys.executable} {script}"


def request(tmp_path: Path, new: bool = True) -> TurnRequest:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return TurnRequest(ws, "do it", "sid-1", new, 1, 1, 1, 60.0, state_dir=tmp_path / "state")


def test_gemini_turn_reads_session_tokens_cost_and_refusals(tmp_path: Path) -> None:
    lines = [
        {"type": "init", "session_id": "g-1", "model": "gemini-2.5-flash"},
        {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "t1", "parameters": {}},
        {"type": "tool_result", "tool_id": "t1", "status": "error",
         "error": {"type": "tool_not_registered", "message": "Tool not found"}},
        {"type": "tool_use", "tool_name": "read_file", "tool_id": "t2", "parameters": {}},
        {"type": "tool_result", "tool_id": "t2", "status": "error",
         "error": {"type": "file_not_found", "message": "no such file"}},
        {"type": "message", "role": "assistant", "content": "could not", "delta": True},
        {"type": "result", "status": "success",
         "stats": {"input_tokens": 700, "cached": 200, "output_tokens": 70}},
    ]  # fmt: skip
    agent = GeminiAgent(command=fake_cli(tmp_path, lines))

    turn = agent.run_turn(request=request(tmp_path))

    assert (turn.session_id, turn.input_tokens, turn.output_tokens) == ("g-1", 700, 70)
    assert turn.cost_usd == pytest.approx((500 * 1.25 + 200 * 0.31 + 70 * 10.0) / 1e6)
    assert (turn.denied, turn.failed_commands, turn.message) == (1, 2, "could not")
    assert turn.error is not None
    assert turn.error.startswith("gemini refused 1 tool call(s): run_shell_command;")
    assert agent.argv(request(tmp_path))[-1] == "--prompt=do it"
    assert "--approval-mode" in agent.argv(request(tmp_path))


def test_gemini_api_error_is_named_before_the_exit_status(tmp_path: Path) -> None:
    api = '[API Error: {"error":{"code":401,"message":"API key not valid.","status":"X"}}]'
    lines = [
        {"type": "init", "session_id": "g-2", "model": "m"},
        {"type": "result", "status": "error", "error": {"type": "unknown", "message": api}},
    ]
    stderr = "Warning: 256-color support not detected.\nError when talking to Gemini API\n"
    turn = GeminiAgent(command=fake_cli(tmp_path, lines, stderr, 144)).run_turn(
        request=request(tmp_path)
    )
    assert turn.error == "gemini reported an error: HTTP 401: API key not valid."
    assert not is_transient(turn.error)


def test_gemini_helpers_read_its_retry_lines_and_api_errors() -> None:
    stderr = (
        "Attempt 1 failed with status 429. Retrying with backoff... _ApiError: {}\n"
        "Attempt 2 failed with status 503. Retrying with backoff...\n"
    )
    assert last_retry(stderr) == "an API error (HTTP 503)"
    assert last_retry("nothing") is None
    assert api_error_text("plain words\nmore") == "plain words"


def test_opencode_turn_reads_session_tokens_cost_and_refusals(tmp_path: Path) -> None:
    tokens = {"input": 100, "output": 10, "reasoning": 2, "cache": {"read": 30, "write": 5}}
    lines = [
        {"type": "step_start", "sessionID": "ses_1", "part": {"type": "step-start"}},
        {"type": "tool_use", "sessionID": "ses_1", "part": {"type": "tool", "tool": "invalid",
         "state": {"status": "completed", "input": {"tool": "Bash"},
                   "output": "Model tried to call unavailable tool 'Bash'. Available: edit"}}},
        {"type": "tool_use", "sessionID": "ses_1", "part": {"type": "tool", "tool": "bash",
         "state": {"status": "completed", "metadata": {"exit": 2}}}},
        {"type": "step_finish", "sessionID": "ses_1",
         "part": {"type": "step-finish", "tokens": tokens, "cost": 0.25}},
        {"type": "text", "sessionID": "ses_1", "part": {"type": "text", "text": "done"}},
        {"type": "step_finish", "sessionID": "ses_1",
         "part": {"type": "step-finish", "tokens": tokens, "cost": 0.5}},
    ]  # fmt: skip
    agent = OpenCodeAgent(command=fake_cli(tmp_path, lines))

    turn = agent.run_turn(request=request(tmp_path))

    assert turn.session_id == "ses_1"
    assert (turn.input_tokens, turn.output_tokens, turn.reasoning_tokens) == (270, 20, 4)
    assert turn.cost_usd == pytest.approx(0.75)
    assert (turn.denied, turn.failed_commands, turn.message) == (1, 2, "done")
    assert turn.error is not None and turn.error.startswith(
        "opencode refused 1 tool call(s): bash;"
    )
    argv = agent.argv(request(tmp_path, new=False))
    assert argv[-2:] == ["--", "do it"] and "--session" in argv and "--dir" in argv


def test_opencode_error_event_and_lost_session(tmp_path: Path) -> None:
    error = {"name": "APIError", "data": {"message": "quota exceeded", "statusCode": 429,
                                          "isRetryable": True}}  # fmt: skip
    lines = [{"type": "error", "sessionID": "ses_2", "error": error}]
    turn = OpenCodeAgent(command=fake_cli(tmp_path, lines, code=1)).run_turn(
        request=request(tmp_path)
    )
    assert turn.error == "opencode reported APIError (HTTP 429): quota exceeded"
    assert is_transient(turn.error)
    gone = OpenCodeAgent(
        command=fake_cli(tmp_path, [], "\x1b[91mError: \x1b[0mSession not found\n", 1)
    )
    lost = gone.run_turn(request=request(tmp_path, new=False))
    assert lost.error == "opencode exited 1: Error: Session not found"
    assert lost.session_id is None  # the next turn starts a fresh session


def test_codex_turn_failed_wins_over_its_exit_status_and_is_retried(tmp_path: Path) -> None:
    # Regression: "codex exited 1: Reading additional input from stdin..." hid the 429.
    lines = [
        {"type": "thread.started", "thread_id": "th-1"},
        {"type": "turn.started"},
        {"type": "error", "message": "Reconnecting... 1/5"},
        {"type": "turn.failed",
         "error": {"message": "exceeded retry limit, last status: 429 Too Many Requests"}},
    ]  # fmt: skip
    agent = CodexAgent(
        command=fake_cli(tmp_path, lines, "Reading additional input from stdin...\n", 1)
    )

    turn = agent.run_turn(request=request(tmp_path))

    assert (
        turn.error == "codex turn failed: exceeded retry limit, last status: 429 Too Many Requests"
    )
    assert is_transient(turn.error)
