"""The command agent (``search/agents/command.py``): any program as an agent, told its
turn through ``EA_*`` variables, reporting on its last stdout line as JSON."""

from __future__ import annotations

import sys
from pathlib import Path

from evolving_agent.search.agents.base import TurnRequest
from evolving_agent.search.agents.command import CommandAgent, last_json_line, turn_env


def request(workspace: Path, *, new: bool = True, env: dict[str, str] | None = None) -> TurnRequest:
    return TurnRequest(
        workspace=workspace, prompt="make it faster", session_id="s-7", new_session=new,
        round=2, agent=3, turn=5, timeout=30.0, seed=11, env=env or {},
    )  # fmt: skip


def test_the_turn_is_told_in_its_variables_and_the_runs_tags_come_last(tmp_path: Path) -> None:
    env = turn_env(request(tmp_path, env={"EA_RUN_ID": "ea-run-x", "EA_SEED": "tagged"}))
    assert env == {
        "EA_PROMPT": "make it faster", "EA_SESSION_ID": "s-7", "EA_NEW_SESSION": "1",
        "EA_ROUND": "2", "EA_AGENT": "3", "EA_TURN": "5", "EA_SEED": "tagged",
        "EA_RUN_ID": "ea-run-x",
    }  # fmt: skip
    assert turn_env(request(tmp_path, new=False))["EA_NEW_SESSION"] == "0"


def test_the_report_is_the_last_non_empty_line_as_an_object() -> None:
    assert last_json_line('noise\n{"input_tokens": 3}\n\n') == {"input_tokens": 3}
    assert last_json_line('{"a": 1}\nnot json') == {}
    assert last_json_line("[1, 2]") == {}
    assert last_json_line("") == {}


def test_a_real_program_reads_its_turn_and_reports_tokens(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(
        "import json, os\n"
        "open('seen.txt', 'w').write(os.environ['EA_PROMPT'] + '|' + os.environ['EA_TURN'])\n"
        "print(json.dumps({'session_id': 'kept', 'input_tokens': 12, 'cost_usd': 0.5}))\n"
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    agent = CommandAgent(command=f"{sys.executable} {script}")
    got = agent.run_turn(request=request(ws))
    assert (ws / "seen.txt").read_text() == "make it faster|5"
    assert (got.error, got.session_id, got.input_tokens, got.cost_usd) == (None, "kept", 12, 0.5)


def test_a_failed_first_turn_leaves_no_session(tmp_path: Path) -> None:
    agent = CommandAgent(command=f"{sys.executable} -c 'import sys; sys.exit(3)'")
    got = agent.run_turn(request=request(tmp_path))
    assert got.error is not None and "3" in got.error
    assert got.session_id is None
    resumed = agent.run_turn(request=request(tmp_path, new=False))
    assert resumed.session_id == "s-7"  # a session that exists stays named
