"""The agent backend contract.

An agent takes one turn in its own workspace (a git worktree holding the current
candidate) and edits files there; the harness commits what it leaves, judges it and
records what the agent reports.  A backend never decides policy: the reducer has
already decided whether the session is new or continues, and which candidates the
agent may see; the prompt carries both.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from evolving_agent.process import Completed
from evolving_agent.search.reducer import Visible


@dataclass(frozen=True)
class TurnRequest:
    """Everything an agent is told for one turn."""

    workspace: Path  # the agent's worktree; its cwd
    prompt: str  # identical for every agent at the start of a round
    session_id: str  # the session to start (if new_session) or to continue
    new_session: bool
    round: int
    agent: int
    turn: int
    timeout: float
    visible: tuple[Visible, ...] = ()
    state_dir: Path | None = None  # private, persistent dir for backend state
    seed: int = 0
    minimize: bool = False


@dataclass
class TurnResult:
    """What the agent reported.  ``None`` means "not reported", never zero."""

    session_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    message: str = ""
    error: str | None = None
    extra: dict[str, object] = field(default_factory=dict)


class Agent(abc.ABC):
    """A search agent backend.  Subclasses set ``name`` and implement ``run_turn``."""

    name: ClassVar[str]

    @abc.abstractmethod
    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        """Take one turn in ``request.workspace`` and return what the agent reported.

        Contract:
        * edit files only inside ``request.workspace``; committing is optional (the
          harness commits whatever is left, respecting ``.gitignore``);
        * start a new conversation when ``request.new_session`` is true, otherwise
          continue ``request.session_id``; return the session id actually used;
        * give up after ``request.timeout`` seconds, killing every child process;
        * report failures in ``TurnResult.error`` rather than raising: a failed
          agent turn is recorded and the run goes on;
        * never read stdin (it is closed for every agent process).
        """


def failure(done: Completed, what: str, timeout: float) -> str | None:
    """A one-line error for a process that failed to start, timed out or exited non-zero."""
    if done.launch_error:
        return f"{what} could not start: {done.launch_error}"
    if done.returncode is None:
        return f"{what} timed out after {timeout:g}s"
    if done.returncode != 0:
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or [""]
        return f"{what} exited {done.returncode}: {tail[0][:300]}"
    return None


def as_int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def as_float(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
