"""The ``gemini`` agent: Gemini CLI in headless mode with a JSONL event stream.

New session::

    gemini --output-format stream-json --skip-trust --session-id UUID [NEW ARGS] --prompt=PROMPT

continued session::

    gemini --output-format stream-json --skip-trust --resume SESSION_ID [RESUME ARGS]
           --prompt=PROMPT

``--prompt=PROMPT`` keeps a task that starts with ``---`` from being read as an option;
``--skip-trust`` trusts the agent's own workspace for the call (headless Gemini CLI
refuses an untrusted folder, exit 55).  ``NEW ARGS`` default to ``--approval-mode
auto_edit`` (edits in the workspace allowed); the user's ``--agent-args`` replace that
default only if they choose an approval mode themselves.  ``RESUME ARGS`` default to
the new-session ones.

The stream (Gemini CLI's ``stream-json``): ``init`` names the session, ``tool_use`` /
``tool_result`` each tool call and how it ended, ``error`` warnings, and the last line,
``result``, has the status, the error (``{type, message}``) and the call's own token
``stats`` (``input_tokens`` with ``cached`` among them, ``output_tokens``).  Gemini CLI
reports no dollars, so the cost is priced from a token table (override with
``--token-prices``).

**Denials are failures.**  In headless mode a tool the approval mode would ask about
is refused: ``auto_edit`` leaves the shell out altogether (a model that calls it gets
``tool_not_registered``), a policy rule answers ``policy_violation``.  Each refusal is
counted (``denied``); a refused shell fails the turn with the flag that allows it.

**Retries.**  Gemini CLI retries a 429 or 5xx up to 10 times with growing waits (minutes
for a persistent 429; ``general.maxAttempts`` in the user's settings.json lowers it — a
system-defaults file does not, tried with the pinned 0.61.0).  A turn stopped at
``--turn-timeout`` while Gemini was retrying says so, with the HTTP status from its
"Attempt N failed with status 429" lines, and is retried like that error.
"""

from __future__ import annotations

import re
from typing import Any

from evolving_agent.errortext import api_error_text
from evolving_agent.process import run_process
from evolving_agent.search.agents.base import (
    RETRYING,
    CliAgent,
    TurnRequest,
    TurnResult,
    as_int,
    continued_session,
    denied_message,
    first_line_failure,
    json_lines,
    obj,
)

DEFAULT_ARGS = ("--approval-mode", "auto_edit")
OUTPUT_ARGS = ("--output-format", "stream-json", "--skip-trust")
# USD per million tokens (Gemini 2.5 Pro's list price); cached input is billed at its rate.
DEFAULT_PRICES = {"input": 1.25, "cached_input": 0.31, "output": 10.0}
SHELL_TOOL = "run_shell_command"
# tool_result error types that mean "refused", not "ran and failed".
DENIED_TYPES = frozenset(
    {
        "tool_not_registered",
        "policy_violation",
        "permission_denied",
        "path_not_in_workspace",
        "sandbox_expansion_required",
    }
)
_PERMISSION_FLAGS = ("--approval-mode", "-y", "--yolo")
# What Gemini CLI prints on stderr while it retries: "Attempt 3 failed with status 429."
_ATTEMPT = re.compile(r"Attempt \d+ failed(?: with status (\d{3}))?")


class GeminiAgent(CliAgent):
    name = program = "gemini"
    install_hint = "install Gemini CLI or name it with --agent-cmd"
    default_prices = DEFAULT_PRICES
    default_args = DEFAULT_ARGS
    mode_flags = _PERMISSION_FLAGS

    def output_args(self, request: TurnRequest) -> list[str]:
        return list(OUTPUT_ARGS)

    def prompt_args(self, prompt: str) -> list[str]:
        return [f"--prompt={prompt}"]

    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        done = run_process(
            self.argv(request),
            cwd=request.workspace,
            timeout=request.timeout,
            env=request.env,
        )
        events = json_lines(done.stdout)
        session: str | None = None
        message: list[str] = []
        calls: dict[str, str] = {}
        denied: list[str] = []
        failed = 0
        result: dict[str, Any] = {}
        for event in events:
            kind = event.get("type")
            if kind == "init" and event.get("session_id"):
                session = str(event["session_id"])
            elif kind == "message" and event.get("role") == "assistant":
                message.append(str(event.get("content") or ""))
            elif kind == "tool_use":
                calls[str(event.get("tool_id"))] = str(event.get("tool_name") or "?")
            elif kind == "tool_result" and event.get("status") == "error":
                tool = calls.get(str(event.get("tool_id")), "?")
                if obj(event.get("error")).get("type") in DENIED_TYPES:
                    denied.append(tool)
                else:
                    failed += 1
            elif kind == "result":
                result = event
        error = result_error(result) or stream_error(events)
        if error is None and SHELL_TOOL in denied:
            error = denied_error(denied)
        error = error or first_line_failure(done, "gemini", request.timeout)
        if done.timed_out:
            retrying = last_retry(done.stderr)
            if retrying is not None:
                error = f"{error}; gemini{RETRYING}{retrying}"
        if error is None and not result:
            error = "gemini printed no JSON result"
        if session is None and not request.new_session:
            session = continued_session(request.session_id, error)
        stats = result.get("stats") if isinstance(result.get("stats"), dict) else None
        turn = TurnResult(
            session_id=session,
            message="".join(message)[-2000:],
            error=error,
            denied=len(denied) if events else None,
            failed_commands=failed + len(denied) if events else None,
        )
        if stats is not None:
            inputs = as_int(stats.get("input_tokens")) or 0
            cached = min(as_int(stats.get("cached")) or 0, inputs)
            output = as_int(stats.get("output_tokens")) or 0
            turn.input_tokens, turn.output_tokens = inputs, output
            turn.cost_usd = self.priced(inputs, cached, output)
        return turn


def result_error(result: dict[str, Any]) -> str | None:
    """The ``result`` event's error, as Gemini CLI names it (one line)."""
    if result.get("status") != "error":
        return None
    error = result.get("error")
    text = error.get("message") if isinstance(error, dict) else error
    return f"gemini reported an error: {api_error_text(str(text or 'no message'))}"


def stream_error(events: list[dict[str, Any]]) -> str | None:
    """A fatal ``error`` event (severity error) when there is no result line."""
    if any(e.get("type") == "result" for e in events):
        return None
    for event in events:
        if event.get("type") == "error" and event.get("severity") == "error":
            return f"gemini reported an error: {api_error_text(str(event.get('message') or ''))}"
    return None


def last_retry(stderr: str) -> str | None:
    """What Gemini CLI was retrying when it was stopped ("an API error (HTTP 429)")."""
    found = _ATTEMPT.findall(stderr)
    if not found:
        return None
    status = found[-1]
    return f"an API error (HTTP {status})" if status else "an API error"


def denied_error(denials: list[str]) -> str:
    return denied_message(
        "gemini",
        "refused",
        denials,
        'allow the shell with --agent-args "--approval-mode yolo", or a policy rule for '
        "run_shell_command passed with --policy",
    )
