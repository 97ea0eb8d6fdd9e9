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
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from evolving_agent.errortext import first_error_line
from evolving_agent.jsonout import json_lines as json_lines  # the agents import it from here
from evolving_agent.process import Completed
from evolving_agent.search.reducer import Visible
from evolving_agent.search.sandbox import Sandbox


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
    # How the agent's processes are confined (bwrap or none); adapters that start a
    # program build its argv and environment with it.
    sandbox: Sandbox = field(default_factory=Sandbox)


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


class CliAgent(Agent):
    """A coding CLI run once a turn (claude, codex, gemini, opencode): its program
    (``--agent-cmd``), the arguments of a new session (``--agent-args``, with the
    adapter's defaults unless they choose their own) and of a resumed one
    (``--agent-resume-args``, else derived from the new ones), and a token price table
    for a CLI that reports tokens but no dollars (``--token-prices``)."""

    program: ClassVar[str]
    install_hint: ClassVar[str]
    default_prices: ClassVar[dict[str, float]] = {}
    # The flag before a new session's id (None: the CLI makes the id itself) and before
    # the id of the session a turn continues.
    new_session_flag: ClassVar[str | None] = "--session-id"
    resume_flag: ClassVar[str] = "--resume"
    # Arguments a new session gets unless the user's own name one of ``mode_flags`` (a
    # permission or approval mode the user picks replaces the adapter's).
    default_args: ClassVar[tuple[str, ...]] = ()
    mode_flags: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        *,
        command: str | None = None,
        args: str | None = None,
        resume_args: str | None = None,
        prices: dict[str, float] | None = None,
    ) -> None:
        self.argv0 = split_args(command) or [self.program]
        self.new_args = self.with_defaults(split_args(args))
        self.resume_args = (
            self.resume_defaults(split_args(resume_args))
            if resume_args is not None
            else self.resumed(self.new_args)
        )
        self.prices = {**self.default_prices, **(prices or {})}

    def with_defaults(self, args: list[str]) -> list[str]:
        """A new session's arguments with the adapter's ``default_args``."""
        return with_default_args(args, self.default_args, self.mode_flags)

    def resume_defaults(self, args: list[str]) -> list[str]:
        """Resume arguments the user gave, with the defaults they need."""
        return self.with_defaults(args)

    def resumed(self, new_args: list[str]) -> list[str]:
        """Resume arguments when the user gave none: the new session's."""
        return new_args

    def argv(self, request: TurnRequest) -> list[str]:
        """The turn's command line: the program, :meth:`output_args`, the session (a new
        one's id and arguments, or the continued one's), then :meth:`prompt_args`."""
        if request.new_session:
            named = [self.new_session_flag, request.session_id] if self.new_session_flag else []
            session = [*named, *self.new_args]
        else:
            session = [self.resume_flag, request.session_id, *self.resume_args]
        return [
            *self.argv0,
            *self.output_args(request),
            *session,
            *self.prompt_args(request.prompt),
        ]

    def output_args(self, request: TurnRequest) -> list[str]:
        """What comes before the session: the CLI's command and output format."""
        return []

    def prompt_args(self, prompt: str) -> list[str]:
        """The prompt, last, after ``--`` (a task that starts with ``-`` is no option)."""
        return ["--", prompt]

    @classmethod
    def from_settings(cls, settings: AgentSettings) -> Agent:
        return cls(
            command=settings.command,
            args=settings.args,
            resume_args=settings.resume_args,
            prices=settings.prices,
        )

    def check(self) -> None:
        require_program(self.argv0[0], self.program, self.install_hint)

    def priced(self, inputs: int, cached: int, output: int) -> float:
        """Dollars for a turn's tokens at this agent's prices (cached input at its rate)."""
        p = self.prices
        cost = (inputs - cached) * p["input"] + cached * p["cached_input"] + output * p["output"]
        return round(cost / 1_000_000, 8)


def with_default_args(
    args: list[str], defaults: tuple[str, ...], flags: tuple[str, ...]
) -> list[str]:
    """``args`` plus ``defaults``, unless they choose one of ``flags`` themselves (a
    permission or approval mode the user picks replaces the adapter's)."""
    chosen = any(a == f or a.startswith(f + "=") for a in args for f in flags)
    return args if chosen else [*defaults, *args]


def obj(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def denied_message(cli: str, verb: str, denials: list[str], allow: str) -> str:
    """A turn failed by refused tools: how many, which (``Bash ×2, Edit``), and ``allow``,
    the flag or setting that allows them."""
    counts = Counter(denials)
    shown = ", ".join(f"{tool} ×{n}" if n > 1 else tool for tool, n in sorted(counts.items()))
    return (
        f"{cli} {verb} {len(denials)} tool call(s): {shown}; the agent could not run its "
        f"code or the scorer ({allow})"
    )


def first_line_failure(done: Completed, what: str, timeout: float) -> str | None:
    """Like :func:`failure`, but with the CLI's *first* error line, not its last (Gemini
    and OpenCode end stderr with a stack trace or a hint, and start with the reason)."""
    plain = failure(done, what, timeout)
    if plain is None or done.launch_error or done.returncode is None:
        return plain
    head = plain.split(":", 1)[0]
    reason = first_error_line(done.stderr) or first_error_line(done.stdout)
    return f"{head}: {reason}" if reason else head


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
