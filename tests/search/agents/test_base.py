"""The agent contract and the coding-CLI base (``search/agents/base.py``): one command
line built from each adapter's hooks, defaults the user's own flags replace, and which
failures are worth another try.  Runs of fake CLIs are in tests/search/test_agents.py."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from evolving_agent.search.agents.base import (
    TURN_TIMEOUT_PREFIX,
    WORKER_LOST_PREFIX,
    CliAgent,
    TurnRequest,
    TurnResult,
    is_transient,
    json_lines,
    with_default_args,
)
from evolving_agent.search.agents.claude import ClaudeAgent
from evolving_agent.search.agents.codex import CodexAgent
from evolving_agent.search.agents.gemini import GeminiAgent
from evolving_agent.search.agents.opencode import OpenCodeAgent

WS = Path("/work/ws")


def _request(new: bool, prompt: str = "--- improve it") -> TurnRequest:
    return TurnRequest(
        workspace=WS, prompt=prompt, session_id="sid-1", new_session=new, round=1, agent=1,
        turn=1, timeout=5.0,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("agent", "new", "resumed"),
    [
        (
            ClaudeAgent(command="claude-x", args="--model opus"),
            "claude-x -p --output-format stream-json --verbose --session-id sid-1 "
            "--permission-mode acceptEdits --model opus -- P",
            "claude-x -p --output-format stream-json --verbose --resume sid-1 "
            "--permission-mode acceptEdits --model opus -- P",
        ),
        (
            GeminiAgent(args="-m pro", resume_args="-m flash"),
            "gemini --output-format stream-json --skip-trust --session-id sid-1 "
            "--approval-mode auto_edit -m pro --prompt=P",
            "gemini --output-format stream-json --skip-trust --resume sid-1 "
            "--approval-mode auto_edit -m flash --prompt=P",
        ),
        (
            OpenCodeAgent(args="-m openai/gpt-5"),
            "opencode run --format json --dir /work/ws -m openai/gpt-5 -- P",
            "opencode run --format json --dir /work/ws --session sid-1 -m openai/gpt-5 -- P",
        ),
        (
            CodexAgent(args="-m gpt-5"),
            'codex exec --json -c sandbox_mode="workspace-write" -m gpt-5 -- P',
            'codex exec resume --json -c sandbox_mode="workspace-write" -m gpt-5 sid-1 -- P',
        ),
    ],
    ids=["claude", "gemini", "opencode", "codex"],
)
def test_each_adapters_command_line_for_a_new_and_a_resumed_session(
    agent: CliAgent, new: str, resumed: str
) -> None:
    assert agent.argv(_request(True, "P")) == new.split()
    assert agent.argv(_request(False, "P")) == resumed.split()


def test_the_prompt_comes_last_and_whole_so_it_is_never_an_option() -> None:
    prompt = "--- a task\nwith two lines"
    for agent in (ClaudeAgent(), OpenCodeAgent(), CodexAgent()):
        argv = agent.argv(_request(True, prompt))
        assert argv[-2:] == ["--", prompt]
    assert GeminiAgent().argv(_request(False, prompt))[-1] == f"--prompt={prompt}"


class Plain(CliAgent):
    """A CLI with none of the hooks: the base's command line as it is."""

    name = program = "plain"
    install_hint = "none"

    def run_turn(self, *, request: TurnRequest) -> TurnResult:  # pragma: no cover
        raise AssertionError("not run")


class Hooked(Plain):
    new_session_flag = None
    resume_flag = "--continue"
    default_args: ClassVar[tuple[str, ...]] = ("--mode", "edit")
    mode_flags: ClassVar[tuple[str, ...]] = ("--mode", "--yolo")

    def output_args(self, request: TurnRequest) -> list[str]:
        return ["--json", f"--cwd={request.workspace}"]

    def prompt_args(self, prompt: str) -> list[str]:
        return ["-p", prompt]


def test_the_base_line_and_what_each_hook_changes_in_it() -> None:
    assert Plain(args="-v").argv(_request(True, "P")) == "plain --session-id sid-1 -v -- P".split()
    assert Plain(args="-v").argv(_request(False, "P")) == "plain --resume sid-1 -v -- P".split()
    hooked = Hooked(command="/opt/h --flag", args="-v")
    assert hooked.argv(_request(True, "P")) == [
        "/opt/h", "--flag", "--json", "--cwd=/work/ws", "--mode", "edit", "-v", "-p", "P",
    ]  # fmt: skip
    assert hooked.argv(_request(False, "P")) == [
        "/opt/h", "--flag", "--json", "--cwd=/work/ws", "--continue", "sid-1", "--mode", "edit",
        "-v", "-p", "P",
    ]  # fmt: skip


def test_the_users_own_mode_replaces_the_adapters_default() -> None:
    assert Hooked(args="--yolo").new_args == ["--yolo"]
    assert Hooked(args="--mode=plan -v").new_args == ["--mode=plan", "-v"]
    assert Hooked(args="-v").new_args == ["--mode", "edit", "-v"]
    # Given resume arguments get the defaults too; none given: the new session's.
    assert Hooked(args="-v", resume_args="-q").resume_args == ["--mode", "edit", "-q"]
    assert Hooked(args="--yolo").resume_args == ["--yolo"]
    assert Plain(args="-v").new_args == ["-v"]  # no defaults of its own
    assert with_default_args(["--modes"], ("--mode", "x"), ("--mode",)) == [
        "--mode", "x", "--modes",
    ]  # fmt: skip  # a longer flag is not the mode flag


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        ("claude failed (exit 1): HTTP 429: rate limited", True),
        ("gemini failed (exit 1): 503 Service Unavailable", True),
        ("codex failed: connection reset by peer", True),
        (f"{WORKER_LOST_PREFIX}: the node died", True),
        ("claude could not start: No such file or directory (timeout)", False),
        (f"{TURN_TIMEOUT_PREFIX} after 600s", False),
        (f"{TURN_TIMEOUT_PREFIX} after 600s; gemini was retrying HTTP 429", True),
        ("claude failed (exit 1): invalid API key", False),
    ],
)
def test_which_failures_are_tried_again(error: str, transient: bool) -> None:
    assert is_transient(error) is transient


def test_json_lines_keeps_the_objects_of_a_stream_in_order() -> None:
    stream = '{"a": 1}\nnoise\n  {"b": 2}  \n[1, 2]\n{"torn": \n{"c": 3}\n'
    assert json_lines(stream) == [{"a": 1}, {"b": 2}, {"c": 3}]
