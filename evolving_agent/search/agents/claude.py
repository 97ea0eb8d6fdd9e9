"""The ``claude`` agent: Claude Code in print mode.

New session::

    claude -p --output-format stream-json --verbose --session-id UUID [NEW ARGS] -- PROMPT

continued session::

    claude -p --output-format stream-json --verbose --resume SESSION_ID [RESUME ARGS] -- PROMPT

The prompt comes after ``--``, so a task that starts with ``---`` (front matter) is
never taken for an option.  ``NEW ARGS`` default to ``--permission-mode acceptEdits``
(without a permission mode, print mode may edit nothing); the user's ``--agent-args``
replace that default only if they choose a permission mode themselves.  ``RESUME
ARGS`` default to the new-session arguments (Claude takes the same flags either way).

The stream's last line is the result object ``--output-format json`` would print:
``session_id``, ``total_cost_usd``, ``usage`` (input tokens include cache reads and
cache writes), ``is_error`` with the error text in ``result`` and the HTTP status in
``api_error_status``, and ``permission_denials``.  The lines before it are why the
stream is read instead: ``system``/``api_retry`` events say, even of a turn killed at
``--turn-timeout``, that Claude was retrying a rate limit or overload — so such a
timeout is retried like the error it hid.

**Denials are failures.**  ``acceptEdits`` lets Claude edit files but denies every
``Bash`` call in print mode, so an agent that can never run its code or the scorer
still "succeeds".  Each denial is counted on the turn (``denied``); a denied ``Bash``
fails the turn with the denied tools named and the flags that allow them -- Bash
only inside Claude Code's own sandbox (``--settings`` with ``sandbox.enabled``), since
the harness's bwrap never wraps the claude agent.

**Retries.**  Claude retries API errors itself, 10 times by default with growing
waits, which made one persistent 429 cost ~10 minutes per attempt.  Unless the
environment sets ``CLAUDE_CODE_MAX_RETRIES``, the agent runs with 2, and the harness's
own retries (with their backoff) do the rest.  Claude reports no separate
thinking-token count.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from evolving_agent.jsonout import json_object
from evolving_agent.process import run_process
from evolving_agent.search.agents.base import (
    CliAgent,
    TurnRequest,
    TurnResult,
    as_float,
    as_int,
    continued_session,
    denied_message,
    failure,
    json_lines,
)

DEFAULT_ARGS = ("--permission-mode", "acceptEdits")
OUTPUT_ARGS = ("-p", "--output-format", "stream-json", "--verbose")
MAX_RETRIES_ENV = "CLAUDE_CODE_MAX_RETRIES"
DEFAULT_MAX_RETRIES = "2"
# Tools without which a search agent cannot do its job: run its code and the scorer.
NEEDED_TOOLS = ("Bash",)
_PERMISSION_FLAGS = ("--permission-mode", "--dangerously-skip-permissions")


class ClaudeAgent(CliAgent):
    name = program = "claude"
    install_hint = "install Claude Code or name it with --agent-cmd"
    default_args = DEFAULT_ARGS
    mode_flags = _PERMISSION_FLAGS

    def output_args(self, request: TurnRequest) -> list[str]:
        return list(OUTPUT_ARGS)

    def env(self, request: TurnRequest) -> dict[str, str]:
        env = dict(request.env)
        if MAX_RETRIES_ENV not in env and MAX_RETRIES_ENV not in os.environ:
            env[MAX_RETRIES_ENV] = DEFAULT_MAX_RETRIES
        return env

    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        done = run_process(
            self.argv(request),
            cwd=request.workspace,
            timeout=request.timeout,
            env=self.env(request),
        )
        lines = _json_lines(done.stdout)
        data = next((d for d in reversed(lines) if d.get("type") == "result"), None)
        if data is None:
            data = lines[-1] if lines and "session_id" in lines[-1] else {}
        raw_usage = data.get("usage")
        usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
        inputs = [
            as_int(usage.get(k))
            for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        ]
        denials = _denied_tools(data.get("permission_denials"))
        error: str | None = None
        if data.get("is_error"):
            text = str(data.get("result") or data.get("subtype") or "is_error")
            status = data.get("api_error_status")
            known = isinstance(status, int) and str(status) not in text
            shown = f" (HTTP {status})" if known else ""
            error = f"claude reported an error{shown}: {text[:300]}"
        elif denials and any(tool in NEEDED_TOOLS for tool in denials):
            error = denied_error(denials)
        error = error or failure(done, "claude", request.timeout)
        if done.timed_out:
            retrying = _last_retry(lines)
            if retrying is not None:
                error = f"{error}; claude was retrying {retrying}"
        if error is None and not data:
            error = "claude printed no JSON result"
        reported = data.get("session_id") or next(
            (d.get("session_id") for d in lines if d.get("session_id")), None
        )
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
            denied=len(denials) if data else None,
        )


# What a denied Bash is allowed with: Claude Code's own sandbox (the harness's bwrap
# never wraps the claude agent, so a bare --allowedTools Bash would run it unconfined).
SANDBOXED_BASH = (
    """--settings '{\\"sandbox\\": {\\"enabled\\": true, \\"autoAllowBashIfSandboxed\\": true}}'"""
)


def denied_error(denials: list[str]) -> str:
    """A failed turn's message: what was denied, and the flags that allow it -- Bash
    only inside Claude Code's own sandbox."""
    counts = Counter(denials)
    flags = "--permission-mode acceptEdits"
    if "Bash" in counts:
        flags += " " + SANDBOXED_BASH
    others = " ".join(sorted(t for t in counts if t != "Bash"))
    if others:
        flags += f" --allowedTools {others}"
    inside = "; Bash then runs inside Claude Code's sandbox" if "Bash" in counts else ""
    return denied_message(
        "claude", "denied", denials, f'allow them with --agent-args "{flags}"{inside}'
    )


def _denied_tools(value: object) -> list[str]:
    if not isinstance(value, list):
        return []
    return [str(d.get("tool_name") or "?") for d in value if isinstance(d, dict)]


def _last_retry(lines: list[dict[str, Any]]) -> str | None:
    """What Claude was retrying when it was stopped (an ``api_retry`` event), if anything."""
    for event in reversed(lines):
        if event.get("type") == "system" and event.get("subtype") == "api_retry":
            status = event.get("error_status")
            kind = event.get("error") or "an API error"
            return f"{kind} (HTTP {status})" if status else str(kind)
    return None


def _json_lines(stdout: str) -> list[dict[str, Any]]:
    """Every JSON object line of the stream (a single pretty-printed object counts too)."""
    out = json_lines(stdout)
    if not out:
        whole = _result_object(stdout)
        if whole:
            out.append(whole)
    return out


def _result_object(stdout: str) -> dict[str, Any]:
    return json_object(stdout) or {}
