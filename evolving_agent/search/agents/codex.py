"""The ``codex`` agent: Codex CLI in exec mode with JSONL events.

New session: ``codex exec --json [ARGS] PROMPT``; continued: ``codex exec resume
--json [ARGS] THREAD_ID PROMPT``.  The thread id comes from the ``thread.started``
event, tokens from each ``turn.completed`` event's ``usage`` (``input_tokens``,
``cached_input_tokens``, ``output_tokens``, ``reasoning_output_tokens``).  Codex
reports no dollars, so the cost is priced from a token table (USD per million
tokens; override with ``token_prices`` / ``--token-prices``).
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
    as_int,
    failure,
)

# USD per million tokens; cached input is part of input_tokens and billed at its rate.
DEFAULT_PRICES = {"input": 1.25, "cached_input": 0.125, "output": 10.0}


class CodexAgent(Agent):
    name = "codex"

    def __init__(
        self,
        *,
        command: str | None = None,
        args: str | None = None,
        prices: dict[str, float] | None = None,
    ) -> None:
        self.argv0 = shlex.split(command) if command else ["codex"]
        self.args = shlex.split(args) if args else []
        self.prices = {**DEFAULT_PRICES, **(prices or {})}

    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        if request.new_session:
            argv = [*self.argv0, "exec", "--json", *self.args, request.prompt]
        else:
            argv = [
                *self.argv0,
                "exec",
                "resume",
                "--json",
                *self.args,
                request.session_id,
                request.prompt,
            ]
        done = run_process(argv, cwd=request.workspace, timeout=request.timeout)
        thread_id: str | None = None
        totals = {
            "input_tokens": 0,
            "cached_input_tokens": 0,
            "output_tokens": 0,
            "reasoning_output_tokens": 0,
        }
        seen_usage = False
        message = ""
        failed: str | None = None
        for event in _events(done.stdout):
            kind = event.get("type")
            if kind == "thread.started":
                thread_id = str(event.get("thread_id") or "") or None
            elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
                seen_usage = True
                for key in totals:
                    totals[key] += as_int(event["usage"].get(key)) or 0
            elif kind == "turn.failed":
                failed = str((event.get("error") or {}).get("message", "turn failed"))
            elif kind == "item.completed":
                item = event.get("item") or {}
                if item.get("type") == "agent_message":
                    message = str(item.get("text", ""))
        error = failure(done, "codex", request.timeout) or failed
        if not seen_usage:
            return TurnResult(
                session_id=thread_id or request.session_id, message=message, error=error
            )
        uncached = totals["input_tokens"] - totals["cached_input_tokens"]
        cost = (
            uncached * self.prices["input"]
            + totals["cached_input_tokens"] * self.prices["cached_input"]
            + totals["output_tokens"] * self.prices["output"]
        ) / 1_000_000
        return TurnResult(
            session_id=thread_id or request.session_id,
            input_tokens=totals["input_tokens"],
            output_tokens=totals["output_tokens"],
            reasoning_tokens=totals["reasoning_output_tokens"],
            cost_usd=round(cost, 8),
            message=message[-2000:],
            error=error,
        )


def _events(stdout: str) -> list[dict[str, Any]]:
    events = []
    for line in stdout.splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            events.append(data)
    return events
