"""The ``command`` agent: any program, told everything through its environment.

It runs (through the shell, so ``--agent-cmd`` may be a pipeline) in its workspace
with ``EA_PROMPT``, ``EA_SESSION_ID``, ``EA_NEW_SESSION`` (1/0), ``EA_ROUND``,
``EA_AGENT``, ``EA_TURN`` and ``EA_SEED`` set; ``--agent-args`` are appended on new
sessions, ``--agent-resume-args`` (default: the same) on continued ones.  If its
last stdout line is a JSON object it may report ``session_id``, ``cost_usd``,
``input_tokens``, ``output_tokens``, ``reasoning_tokens`` and ``error`` (a failure
it wants recorded even though it exits 0).
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from evolving_agent.errors import UsageError
from evolving_agent.process import run_process
from evolving_agent.search.agents.base import (
    Agent,
    AgentSettings,
    TurnRequest,
    TurnResult,
    as_float,
    as_int,
    failure,
    require_program,
)

# Words a shell runs itself: nothing on PATH to look for.
_SHELL_WORDS = {
    ".", ":", "[", "alias", "builtin", "cd", "command", "eval", "exec", "exit", "export",
    "for", "if", "case", "while", "until", "set", "source", "test", "true", "false",
    "{", "(", "!", "time", "env", "read", "printf", "echo", "trap", "wait", "ulimit",
}  # fmt: skip


def first_program(command: str) -> str | None:
    """The program a shell command starts with (None if the shell itself runs it)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for word in words:
        if "=" in word and word.split("=")[0].isidentifier():
            continue  # VAR=value prefix
        if word in _SHELL_WORDS or any(c in word for c in "$`|;&<>()*?"):
            return None
        return word
    return None



def turn_env(request: TurnRequest) -> dict[str, str]:
    """What a command agent is told of its turn, as environment variables (the turn's
    own ``request.env`` on top: the run's tags)."""
    return {
        "EA_PROMPT": request.prompt,
        "EA_SESSION_ID": request.session_id,
        "EA_NEW_SESSION": "1" if request.new_session else "0",
        "EA_ROUND": str(request.round),
        "EA_AGENT": str(request.agent),
        "EA_TURN": str(request.turn),
        "EA_SEED": str(request.seed),
        **request.env,
    }

class CommandAgent(Agent):
    name = "command"

    def __init__(
        self, *, command: str, args: str | None = None, resume_args: str | None = None
    ) -> None:
        self.base = command
        self.new_command = command + (f" {args}" if args else "")
        resumed = args if resume_args is None else resume_args
        self.resume_command = command + (f" {resumed}" if resumed else "")

    @classmethod
    def from_settings(cls, settings: AgentSettings) -> Agent:
        if not settings.command:
            raise UsageError("--agent command needs --agent-cmd CMD")
        return cls(command=settings.command, args=settings.args, resume_args=settings.resume_args)

    def check(self) -> None:
        program = first_program(self.base)
        if program is not None:
            require_program(program, "agent command", f"from --agent-cmd {self.base!r}")

    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        env = turn_env(request)
        command = self.new_command if request.new_session else self.resume_command
        done = run_process(
            request.sandbox.agent_argv(command, workspace=request.workspace),
            cwd=request.workspace,
            timeout=request.timeout,
            env=request.sandbox.environment(env),
            replace_env=True,
        )
        report = last_json_line(done.stdout)
        error = failure(done, "agent command", request.timeout)
        if error is None and report.get("error"):
            error = f"agent command reported an error: {str(report['error'])[:300]}"
        session: str | None = str(report.get("session_id") or request.session_id)
        if error is not None and request.new_session and not report.get("session_id"):
            session = None  # a failed first turn: no sign the session exists
        return TurnResult(
            session_id=session,
            input_tokens=as_int(report.get("input_tokens")),
            output_tokens=as_int(report.get("output_tokens")),
            reasoning_tokens=as_int(report.get("reasoning_tokens")),
            cost_usd=as_float(report.get("cost_usd")),
            message=done.stdout[-2000:],
            error=error,
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
