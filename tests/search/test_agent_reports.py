"""What the claude and codex adapters make of their CLIs' reports (no CLI needed here;
the real ones run in tests/integrations/test_real_clients.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from evolving_agent.search.agents.base import TurnRequest, is_transient
from evolving_agent.search.agents.claude import denied_error
from evolving_agent.search.agents.codex import Command, sandbox_mode, session_commands


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        ("turn timed out after 600s (claude)", False),
        # Regression: a timeout that hid a 429 (Claude retrying inside) was never retried.
        ("turn timed out after 600s (claude); claude was retrying rate_limit (HTTP 429)", True),
        ("turn timed out after 60s (codex); codex was retrying after: Reconnecting... 503", True),
        ("turn timed out after 60s (codex); codex was retrying after: invalid prompt", False),
        ("claude reported an error (HTTP 429): API Error: Request rejected", True),
        ("claude denied 2 tool call(s): Bash ×2; ...", False),
    ],
)
def test_which_failures_are_retried(error: str, transient: bool) -> None:
    assert is_transient(error) is transient


def test_denied_error_names_each_tool_once_and_the_flag() -> None:
    # Bash only inside Claude Code's own sandbox: the harness's bwrap never wraps claude.
    assert denied_error(["Bash", "Bash", "WebFetch"]) == (
        "claude denied 3 tool call(s): Bash ×2, WebFetch; the agent could not run its code "
        'or the scorer (allow them with --agent-args "--permission-mode acceptEdits '
        '--settings \'{\\"sandbox\\": {\\"enabled\\": true, \\"autoAllowBashIfSandboxed\\": '
        "true}}' --allowedTools WebFetch\"; Bash then runs inside Claude Code's sandbox)"
    )
    assert denied_error(["WebFetch"]).endswith(
        '(allow them with --agent-args "--permission-mode acceptEdits --allowedTools WebFetch")'
    )


@pytest.mark.parametrize(
    ("args", "mode"),
    [
        ([], "read-only"),
        (["-c", 'sandbox_mode="workspace-write"'], "workspace-write"),
        (["-s", "danger-full-access"], None),
        (["--sandbox=read-only"], "read-only"),
        (["--dangerously-bypass-approvals-and-sandbox"], None),
    ],
)
def test_sandbox_mode_is_what_codex_will_run_commands_in(args: list[str], mode: str | None) -> None:
    assert sandbox_mode(args) == mode


THREAD = "01a23163-de9b-70b1-97d2-facfc16e791e"


def _rollout(home: Path, *turns: list[tuple[str, str, object]]) -> None:
    """A session file shaped as codex 0.169 writes it: per turn, calls and what the model got."""
    day = home / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True)
    lines = [{"type": "session_meta", "payload": {"id": THREAD}}]
    for n, turn in enumerate(turns):
        lines.append({"type": "event_msg", "payload": {"type": "task_started"}})
        for i, (name, args, output) in enumerate(turn):
            call = f"call_{n}_{i}"
            lines.append(
                {
                    "type": "response_item",
                    "payload": {
                        "type": "function_call",
                        "name": name,
                        "arguments": args,
                        "call_id": call,
                    },
                }
            )
            lines.append(
                {
                    "type": "response_item",
                    "payload": {"type": "function_call_output", "call_id": call, "output": output},
                }
            )
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    (day / f"rollout-2026-12-01T11-35-58-{THREAD}.jsonl").write_text(text)


def _request(tmp_path: Path, home: Path) -> TurnRequest:
    return TurnRequest(
        workspace=tmp_path,
        prompt="p",
        session_id=THREAD,
        new_session=False,
        round=1,
        agent=1,
        turn=2,
        timeout=60,
        env={"CODEX_HOME": str(home)},
    )


def test_codex_commands_come_from_the_session_file_this_turn_only(tmp_path: Path) -> None:
    # Regression: commands codex refused before they started (an escalation under approval
    # "never", a denial within its first 150 ms) print no item in `exec --json`, so a
    # turn whose every command was refused looked merely empty.
    home = tmp_path / "codex-home"
    ran = "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\nok\n"
    refused = "Process exited with code 1\nOutput:\nsh: value.txt: Read-only file system\n"
    never = "approval policy is Never; reject command — you cannot ask for escalated permissions"
    _rollout(
        home,
        [("exec_command", "{}", ran)],  # the earlier turn of the same thread
        [
            ("exec_command", "{}", refused),
            ("exec_command", "{}", never),
            ("exec_command", "{}", "Process running with session ID 4242\nOutput:\n"),
            ("view_image", "{}", "not a command"),
            ("shell", "{}", json.dumps({"output": "boom", "metadata": {"exit_code": 2}})),
        ],
    )

    assert session_commands(_request(tmp_path, home), THREAD) == [
        Command(refused, failed=True),
        Command(never, failed=True),
        Command("Process running with session ID 4242\nOutput:\n", failed=False),
        Command("Exit code: 2\nboom", failed=True),
    ]


def test_codex_without_a_session_file_reports_none(tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    _rollout(home, [("exec_command", "{}", "Process exited with code 0")])
    assert session_commands(_request(tmp_path, home), "another-thread") is None
    assert session_commands(_request(tmp_path, home), "../../etc") is None
    # A file last written before this turn started is an earlier turn's: not counted.
    assert session_commands(_request(tmp_path, home), THREAD, since=time.time() + 60) is None
