"""The ``opencode`` agent: OpenCode's ``run`` command with raw JSON events.

New session::

    opencode run --format json --dir WORKSPACE [NEW ARGS] -- PROMPT

continued session::

    opencode run --format json --dir WORKSPACE --session SESSION_ID [RESUME ARGS] -- PROMPT

``--dir`` (and ``PWD``) name the workspace: OpenCode takes its folder from ``$PWD``, not
from the process's working directory, so without them an agent started from a shell
in another folder would work there.
The prompt comes after ``--``, so a task that starts with ``---`` is never an option.
OpenCode makes its own session ids (``ses_…``), so a new session's id is the
``sessionID`` its events carry; ``--session`` continues it.  ``RESUME ARGS`` default to
the new-session ones (``run`` takes the same flags either way).

The events (one JSON object a line): ``tool_use`` parts (``part.tool``, ``part.state``
with ``status`` completed or error), ``text`` parts (the answer), ``step_finish``
parts with the step's ``tokens`` (``input``, ``output``, ``reasoning``, ``cache.read``,
``cache.write``) and its ``cost`` in dollars as OpenCode prices it, and ``error``
(``error.name`` and ``error.data.message`` / ``statusCode`` / ``isRetryable``) when the
model call failed after OpenCode's own retries.  Input tokens are recorded with the
cache reads and writes in them, as for Claude.

**Denials.**  A tool the config's ``permission`` denies is not offered at all (a call
to it comes back as the ``invalid`` tool, "unavailable tool"), one it would ask about is
rejected in ``run``; each is counted (``denied``), and a refused shell (``bash``) fails
the turn with the setting that allows it.
"""

from __future__ import annotations

import re
from typing import Any

from evolving_agent.errortext import first_error_line
from evolving_agent.process import run_process
from evolving_agent.search.agents.base import (
    CliAgent,
    TurnRequest,
    TurnResult,
    as_float,
    as_int,
    continued_session,
    denied_message,
    first_line_failure,
    json_lines,
    obj,
)

OUTPUT_ARGS = ("run", "--format", "json")
SHELL_TOOL = "bash"
_UNAVAILABLE = re.compile(r"unavailable tool '([^']+)'", re.IGNORECASE)
_REJECTED = re.compile(r"rejected permission|permission (?:was )?denied|not allowed", re.I)


class OpenCodeAgent(CliAgent):
    name = program = "opencode"
    install_hint = "install OpenCode (opencode-ai) or name it with --agent-cmd"
    new_session_flag = None  # OpenCode makes its own ids (``ses_…``)
    resume_flag = "--session"

    def output_args(self, request: TurnRequest) -> list[str]:
        return [*OUTPUT_ARGS, "--dir", str(request.workspace)]

    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        # OpenCode takes its folder from $PWD, not the process's cwd: without --dir and
        # PWD it would work in the folder the harness was started from.
        env = {**request.env, "PWD": str(request.workspace)}
        done = run_process(
            self.argv(request), cwd=request.workspace, timeout=request.timeout, env=env
        )
        events = json_lines(done.stdout)
        session: str | None = None
        texts: list[str] = []
        denied: list[str] = []
        failed = 0
        tokens = {"input": 0, "output": 0, "reasoning": 0}
        cost: float | None = None
        steps = 0
        error: str | None = None
        for event in events:
            if event.get("sessionID") and session is None:
                session = str(event["sessionID"])
            part = obj(event.get("part"))
            kind = event.get("type")
            if kind == "text":
                texts.append(str(part.get("text") or ""))
            elif kind == "tool_use":
                refused = refusal(part)
                if refused is not None:
                    denied.append(refused)
                elif obj(part.get("state")).get("status") == "error":
                    failed += 1
                else:
                    code = obj(obj(part.get("state")).get("metadata")).get("exit")
                    failed += int(isinstance(code, int) and code != 0)
            elif kind == "step_finish":
                steps += 1
                used = obj(part.get("tokens"))
                cache = obj(used.get("cache"))
                tokens["input"] += sum(
                    as_int(v) or 0
                    for v in (used.get("input"), cache.get("read"), cache.get("write"))
                )
                tokens["output"] += as_int(used.get("output")) or 0
                tokens["reasoning"] += as_int(used.get("reasoning")) or 0
                step_cost = as_float(part.get("cost"))
                if step_cost is not None:
                    cost = (cost or 0.0) + step_cost
            elif kind == "error" and error is None:
                error = event_error(event)
        if error is None and SHELL_TOOL in denied:
            error = denied_error(denied)
        error = error or first_line_failure(done, "opencode", request.timeout)
        if error is None and not events:
            error = "opencode printed no JSON events"
        if session is None and not request.new_session:
            session = continued_session(request.session_id, error)
        return TurnResult(
            session_id=session,
            input_tokens=tokens["input"] if steps else None,
            output_tokens=tokens["output"] if steps else None,
            reasoning_tokens=tokens["reasoning"] if steps else None,
            cost_usd=round(cost, 8) if cost is not None else None,
            message="".join(texts)[-2000:],
            error=error,
            denied=len(denied) if events else None,
            failed_commands=failed + len(denied) if events else None,
        )


def refusal(part: dict[str, Any]) -> str | None:
    """The tool OpenCode refused in this ``tool_use`` part, if it was a refusal."""
    state = obj(part.get("state"))
    if part.get("tool") == "invalid":
        found = _UNAVAILABLE.search(str(state.get("output") or state.get("input") or ""))
        return found.group(1).lower() if found else None
    if state.get("status") == "error" and _REJECTED.search(str(state.get("error") or "")):
        return str(part.get("tool") or "?")
    return None


def event_error(event: dict[str, Any]) -> str:
    """An ``error`` event as OpenCode names it: ``APIError (HTTP 429): message``."""
    error = obj(event.get("error"))
    data = obj(error.get("data"))
    name = str(error.get("name") or "error")
    status = data.get("statusCode")
    shown = f" (HTTP {status})" if isinstance(status, int) else ""
    text = first_error_line(str(data.get("message") or error.get("message") or "no message"))
    return f"opencode reported {name}{shown}: {text}"


def denied_error(denials: list[str]) -> str:
    return denied_message(
        "opencode",
        "refused",
        denials,
        'allow it with "permission": {"bash": "allow"} in opencode.json',
    )
