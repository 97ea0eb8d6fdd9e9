"""The agent backend contract.

An agent takes one turn in its own workspace (a git worktree holding the current
candidate) and edits files there; the harness commits what it leaves, judges it and
records what the agent reports.  A backend never decides policy: the reducer has
already decided whether the session is new or continues, and which candidates the
agent may see; the prompt carries both.
"""

from __future__ import annotations

import abc
import math
import re
import shlex
import shutil
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
    # Extra environment for the agent's processes: the harness tags them with its run
    # (EA_RUN_ID), so a resume can find and end agents a killed harness left behind.
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class TurnResult:
    """What the agent reported.  ``None`` means "not reported", never zero.

    ``session_id`` is the session the turn ran in, or None when there is no sign it
    was ever created (a new session whose first call failed): the next turn then
    starts a fresh session instead of resuming one that does not exist.
    """

    session_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    message: str = ""
    error: str | None = None
    # Tool calls the agent's CLI refused (Claude's permission denials, Codex's commands
    # its sandbox blocked) and shell commands that failed; None: not reported.
    denied: int | None = None
    failed_commands: int | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class AgentSettings:
    """What ``--agent-cmd``, ``--agent-args``, ``--agent-resume-args`` and the token prices
    say; each backend takes what it uses."""

    command: str | None = None
    args: str | None = None
    resume_args: str | None = None
    prices: dict[str, float] | None = None


class Agent(abc.ABC):
    """A search agent backend.  Subclasses set ``name`` and implement ``run_turn``."""

    name: ClassVar[str]

    @classmethod
    def from_settings(cls, settings: AgentSettings) -> Agent:
        """Build this backend from the run's agent settings (the registry calls this)."""
        return cls()

    @abc.abstractmethod
    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        """Take one turn in ``request.workspace`` and return what the agent reported.

        Contract:
        * edit files only inside ``request.workspace``; committing is optional (the
          harness commits whatever is left, respecting ``.gitignore``);
        * start a new conversation when ``request.new_session`` is true, otherwise
          continue ``request.session_id``; return the session id actually used;
        * give up after ``request.timeout`` seconds, killing every child process;
        * report failures in ``TurnResult.error`` rather than raising (launch
          failure, exit code, timeout, the CLI's own error text): the harness retries
          transient ones and records the rest, and the run goes on;
        * never read stdin (it is closed for every agent process).
        """

    def check(self) -> None:
        """Raise (UsageError / NotFound) if this backend cannot run at all; before a run."""
        return None


def require_program(argv0: str, what: str, hint: str) -> None:
    """Refuse a run whose agent program is not installed (exit 4, one line)."""
    from evolving_agent.errors import NotFound

    if shutil.which(argv0) is None:
        raise NotFound(f"{what} not found: {argv0} ({hint})")


# Errors worth another try: rate limits, overload, the network, API-side timeouts.
_TRANSIENT = re.compile(
    r"\b(429|500|502|503|504|529)\b|overload|rate.?limit|too many requests|"
    r"temporar|unavailable|timed? ?out|timeout|connection (reset|refused|error|closed)|"
    r"network|econnreset|etimedout|socket hang up|internal server error|try again",
    re.IGNORECASE,
)


def is_transient(error: str) -> bool:
    """Is this failure worth retrying?  Not a launch failure or a turn timeout; always a
    lost worker (an executor's worker process or node died under the turn)."""
    if error.startswith(WORKER_LOST_PREFIX):
        return True
    if "could not start" in error:
        return False
    if error.startswith(TURN_TIMEOUT_PREFIX):
        # A timeout is the agent being slow, unless it was stuck retrying an API error
        # (the adapter appends "; <cli> was retrying <what>"): then retry it like that.
        _, sep, retrying = error.partition(RETRYING)
        return bool(sep) and bool(_TRANSIENT.search(retrying))
    return bool(_TRANSIENT.search(error))


TURN_TIMEOUT_PREFIX = "turn timed out"
RETRYING = " was retrying "
WORKER_LOST_PREFIX = "worker lost"

_LOST = re.compile(
    r"no (conversation|rollout|session|thread) found|session (id )?\S* ?not found", re.IGNORECASE
)


def continued_session(request_session: str, error: str | None) -> str | None:
    """The session a failed *continued* turn leaves: None if the CLI says it is gone
    (so the next turn starts a fresh one instead of failing the same way forever)."""
    return None if error and _LOST.search(error) else request_session


def split_args(text: str | None) -> list[str]:
    return shlex.split(text) if text else []


def failure(done: Completed, what: str, timeout: float) -> str | None:
    """A one-line error for a process that failed to start, timed out or exited non-zero."""
    if done.launch_error:
        return f"{what} could not start: {done.launch_error}"
    if done.returncode is None:
        return f"{TURN_TIMEOUT_PREFIX} after {timeout:g}s ({what})"
    if done.returncode != 0:
        code = done.returncode
        head = f"{what} not found (exit 127)" if code == 127 else f"{what} exited {code}"
        if code < 0:
            head = f"{what} killed by signal {-code}"
        tail = [line for line in (done.stderr.strip() or done.stdout.strip()).splitlines() if line]
        return f"{head}: {tail[-1][:300]}" if tail else head
    return None


def as_int(value: object) -> int | None:
    number = as_float(value)
    return None if number is None else int(number)


def as_float(value: object) -> float | None:
    """A reported count or cost, or None: not a number, negative, NaN or infinite
    (JSON allows ``NaN``; a negative or NaN cost would defeat the budget)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int beyond any float
        return None
    return number if math.isfinite(number) and number >= 0 else None
