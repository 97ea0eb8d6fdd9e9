"""The ``claude`` agent: Claude Code in print mode.

New session::

    claude -p --output-format json --session-id UUID [NEW ARGS] -- PROMPT

continued session::

    claude -p --output-format json --resume SESSION_ID [RESUME ARGS] -- PROMPT

The prompt comes after ``--``, so a task that starts with ``---`` (front matter) is
never taken for an option.  ``NEW ARGS`` default to ``--permission-mode acceptEdits``
(without a permission mode, print mode may edit nothing); the user's ``--agent-args``
replace that default only if they choose a permission mode themselves.  ``RESUME
ARGS`` default to the new-session arguments (Claude takes the same flags either way).

The single JSON result object gives ``session_id``, ``total_cost_usd``, ``usage``
(input tokens include cache reads and cache writes) and ``is_error`` with the error
text in ``result`` (for instance an API error 529 "overloaded").  Claude reports no
separate thinking-token count.
"""

from __future__ import annotations

import json
from typing import Any

from evolving_agent.process import run_process
from evolving_agent.search.agents.base import (
    Agent,
    AgentSettings,
    TurnRequest,
    TurnResult,
    as_float,
    as_int,
    continued_session,
    failure,
    require_program,
    split_args,
)

DEFAULT_ARGS = ("--permission-mode", "acceptEdits")
_PERMISSION_FLAGS = ("--permission-mode", "--dangerously-skip-permissions")


def with_permission(args: list[str]) -> list[str]:
    """``args`` plus the default permission mode, unless they choose one themselves."""
    chosen = any(a == f or a.startswith(f + "=") for a in args for f in _PERMISSION_FLAGS)
    return args if chosen else [*DEFAULT_ARGS, *args]


class ClaudeAgent(Agent):
    name = "claude"

    def __init__(
        self,
        *,
        command: str | None = None,
        args: str | None = None,
        resume_args: str | None = None,
    ) -> None:
        self.argv0 = split_args(command) or ["claude"]
        self.new_args = with_permission(split_args(args))
        self.resume_args = (
            with_permission(split_args(resume_args)) if resume_args is not None else self.new_args
        )

    @classmethod
    def from_settings(cls, settings: AgentSettings) -> Agent:
        return cls(command=settings.command, args=settings.args, resume_args=settings.resume_args)

    def check(self) -> None:
        require_program(self.argv0[0], "claude", "install Claude Code or name it with --agent-cmd")

    def argv(self, request: TurnRequest) -> list[str]:
        argv = [*self.argv0, "-p", "--output-format", "json"]
        if request.new_session:
            argv += ["--session-id", request.session_id, *self.new_args]
        else:
            argv += ["--resume", request.session_id, *self.resume_args]
        return [*argv, "--", request.prompt]

    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        done = run_process(
            self.argv(request), cwd=request.workspace, timeout=request.timeout, env=request.env
        )
        data = _result_object(done.stdout)
        raw_usage = data.get("usage")
        usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
        inputs = [
            as_int(usage.get(k))
            for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        ]
        error: str | None = None
        if data.get("is_error"):
            text = str(data.get("result") or data.get("subtype") or "is_error")
            error = f"claude reported an error: {text[:300]}"
        error = error or failure(done, "claude", request.timeout)
        if error is None and not data:
            error = "claude printed no JSON result"
        reported = data.get("session_id")
        if reported:
            session: str | None = str(reported)
        else:
            # No result object: a new session may never have been created.
            session = None if request.new_session else continued_session(request.session_id, error)
        return TurnResult(
            session_id=session,
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
