"""The ``claude`` agent: Claude Code in print mode.

New session: ``claude -p PROMPT --output-format json --session-id UUID [ARGS]``;
continued: ``... --resume SESSION_ID``.  The single JSON result object gives
``session_id``, ``total_cost_usd`` and ``usage`` (input tokens include cache reads
and cache writes).  Claude reports no separate thinking-token count.
"""

from __future__ import annotations

import json
import shlex
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


class ClaudeAgent(Agent):
    name = "claude"

    def __init__(self, *, command: str | None = None, args: str | None = None) -> None:
        self.argv0 = shlex.split(command) if command else ["claude"]
        self.args = shlex.split(args) if args else []

    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        argv = [*self.argv0, "-p", request.prompt, "--output-format", "json"]
        if request.new_session:
            argv += ["--session-id", request.session_id]
        else:
            argv += ["--resume", request.session_id]
        done = run_process(argv + self.args, cwd=request.workspace, timeout=request.timeout)
        data = _result_object(done.stdout)
        raw_usage = data.get("usage")
        usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
        inputs = [
            as_int(usage.get(k))
            for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        ]
        error = failure(done, "claude", request.timeout)
        if error is None and not data:
            error = "claude printed no JSON result"
        if error is None and data.get("is_error"):
            error = f"claude reported an error: {str(data.get('result', ''))[:300]}"
        return TurnResult(
            session_id=str(data.get("session_id") or request.session_id),
            input_tokens=sum(i for i in inputs if i is not None) if usage else None,
            output_tokens=as_int(usage.get("output_tokens")),
            cost_usd=as_float(data.get("total_cost_usd")),
            message=str(data.get("result", ""))[-2000:],
            error=error,
        )


def _result_object(stdout: str) -> dict[str, Any]:
    text = stdout.strip()
    candidates = [text] + [line for line in reversed(text.splitlines()) if line.strip()]
    for chunk in candidates:
        try:
            data = json.loads(chunk)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            return data
    return {}
