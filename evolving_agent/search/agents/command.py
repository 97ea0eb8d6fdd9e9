"""The ``command`` agent: any program, told everything through its environment.

It runs (through the shell, so ``--agent-cmd`` may be a pipeline) in its workspace
with ``EA_PROMPT``, ``EA_SESSION_ID``, ``EA_NEW_SESSION`` (1/0), ``EA_ROUND``,
``EA_AGENT``, ``EA_TURN`` and ``EA_SEED`` set; ``--agent-args`` are appended.  If its
last stdout line is a JSON object it may report ``session_id``, ``cost_usd``,
``input_tokens``, ``output_tokens`` and ``reasoning_tokens``.
"""

from __future__ import annotations

import json
from typing import Any

from evolving_agent.process import run_process
from evolving_agent.search.agents.base import (
    Agent,
    TurnRequest,
    TurnResult,
    as_float,
    as_int,
    failure,
)


class CommandAgent(Agent):
    name = "command"

    def __init__(self, *, command: str, args: str | None = None) -> None:
        self.command = command + (f" {args}" if args else "")

    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        env = {
            "EA_PROMPT": request.prompt,
            "EA_SESSION_ID": request.session_id,
            "EA_NEW_SESSION": "1" if request.new_session else "0",
            "EA_ROUND": str(request.round),
            "EA_AGENT": str(request.agent),
            "EA_TURN": str(request.turn),
            "EA_SEED": str(request.seed),
        }
        done = run_process(
            self.command, cwd=request.workspace, timeout=request.timeout, env=env, shell=True
        )
        report = last_json_line(done.stdout)
        return TurnResult(
            session_id=str(report.get("session_id") or request.session_id),
            input_tokens=as_int(report.get("input_tokens")),
            output_tokens=as_int(report.get("output_tokens")),
            reasoning_tokens=as_int(report.get("reasoning_tokens")),
            cost_usd=as_float(report.get("cost_usd")),
            message=done.stdout[-2000:],
            error=failure(done, "agent command", request.timeout),
        )


def last_json_line(text: str) -> dict[str, Any]:
    """The last non-empty line parsed as a JSON object, or {}."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return {}
    try:
        data = json.loads(lines[-1])
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}
