"""The configuration of one search run, and the checks made before any work starts.

``SearchConfig`` is what the CLI builds from its flags and what ``run.json`` stores,
so a run can be resumed from its directory alone.  Meaning of the counts:

* ``turns`` is the **total agent-turn budget of the whole run**: it is split evenly
  over the agents, and each agent's share evenly over the rounds (earlier ones get
  the remainder).  Every policy is therefore compared at the same total budget.
* ``rounds`` only matters for the forgetting policies (``forget``, ``forget-team``,
  ``fork-and-flush``); the others always run one round.  ``single`` and ``forget``
  always run one agent, whatever ``agents`` says.
* ``budget_usd`` / ``budget_tokens`` (input + output tokens, as the agent reports
  them) cap spending; the budget is split evenly over the remaining rounds, and the
  turn budget still applies.
* ``seed`` seeds the tsp-example agent's randomness (two runs with different seeds make
  different edits; the same seed repeats a run, teams included: what a turn sees of its
  peers is fixed by the logical clock of ``schedule.py``, not by timing).  Other agents
  see it as ``EA_SEED``.
* ``agent_args`` go to new sessions, ``agent_resume_args`` to continued ones (None:
  the adapter's default, see ``search/agents``).
* ``retries`` / ``retry_backoff``: a turn whose agent failed with a transient error
  (rate limit, overload, network) is tried again up to ``retries`` times, waiting
  ``retry_backoff`` seconds, doubling each time, before the failure is recorded.
* ``score_cwd``: where the score command runs; None (the default, as in the reference
  harness) runs it inside the candidate's clean export.
"""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

import pydantic

from evolving_agent.errors import InvalidInput, NotFound, UsageError
from evolving_agent.search.names import AGENT_ALIASES, AGENT_NAMES, EXECUTOR_NAMES
from evolving_agent.search.presets import Preset, preset_for
from evolving_agent.search.sandbox import Sandbox, check_sandbox, script_folders

DEFAULT_CANARIES = 24
MIN_CANARIES = 20


class SearchConfig(pydantic.BaseModel, extra="forbid"):
    """Everything a search run needs; stored as ``run.json`` in the run directory."""

    candidate: Path
    task: Path
    score_cmd: str
    minimize: bool = False
    agent: str  # no default: the tsp-example agent only knows the bundled example
    agent_cmd: str | None = None
    agent_args: str | None = None
    agent_resume_args: str | None = None
    policy: str = "forget-team"
    agents: int = 1
    rounds: int = 1
    turns: int = 12
    budget_usd: float | None = None
    budget_tokens: int | None = None
    forget_on_plateau: int | None = None
    score_timeout: float = 60
    turn_timeout: float = 600
    score_repeats: int = 1
    seed: int = 0
    out: Path | None = None
    # Added beyond the shared shape: where the score command runs (the directory the
    # run was started from, so relative paths in it keep working on resume), and the
    # token price table for agents that report no dollars (USD per million tokens).
    workdir: Path | None = None
    token_prices: dict[str, float] | None = None
    score_cwd: Path | None = None
    retries: int = 2
    retry_backoff: float = 10.0
    # Where turns and scores run: ``local`` threads or ``ray`` tasks; the
    # Ray options are ignored by ``local`` except ``max_scorers`` (scores at once).
    executor: str = "local"
    ray_address: str | None = None
    agent_resources: dict[str, float] | None = None
    score_resources: dict[str, float] | None = None
    max_scorers: int | None = None
    # Driver environment variables a Ray worker's agents and scorers get (their names
    # only: the values are read from the driver's environment when the run starts).
    env_forward: list[str] = []
    # How agents and scorers are confined (sandbox.py): None picks bwrap when it is
    # installed (resolved when the run starts, and stored so a resume does the same).
    sandbox: str | None = None
    sandbox_net: bool = True  # agents' network under bwrap (scorers never have one)
    sandbox_ro: list[str] = []
    sandbox_rw: list[str] = []
    # Canary rounds (certify.py): plant this many canaries at every round's start and
    # probe for them as an agent would, before the round's first turn.
    certify: bool = False
    canaries: int = DEFAULT_CANARIES
    # A second sealed scorer the agents never see, gating every restart seed and
    # measuring the reported-minus-holdout gap (holdout.py); margin in its units.
    holdout_cmd: str | None = None
    holdout_margin: float = 0.0

    @pydantic.field_validator("agent")
    @classmethod
    def _current_agent_name(cls, value: str) -> str:
        """``builtin`` (and any other old name) becomes the current one."""
        return AGENT_ALIASES.get(value, value)

    @property
    def preset(self) -> Preset:
        return preset_for(self.policy)

    @property
    def effective_agents(self) -> int:
        return 1 if self.preset.single_agent else self.agents

    @property
    def effective_rounds(self) -> int:
        return self.rounds if self.preset.forgets else 1

    def agent_confinement(self, run_dir: Path) -> Sandbox:
        """The agents' sandbox: besides the run directory, the private workspaces and
        the scorer's folders never show inside it (an agent script's folder is bound
        read-only, and may hold them)."""
        from evolving_agent.search.private import private_root

        hide = [str(run_dir.resolve()), str(private_root(run_dir))]
        if self.score_cwd is not None:
            hide.append(str(self.score_cwd.resolve()))
        base = self.workdir or Path.cwd()
        scripts = []
        for command in (self.score_cmd, self.holdout_cmd or ""):  # the holdout's, too
            try:
                words = shlex.split(command)
            except ValueError:
                words = command.split()
            scripts += [base / w for w in words if not w.startswith("-") and (base / w).is_file()]
        hide += [str(folder.resolve()) for folder in script_folders(scripts)]
        return dataclasses.replace(
            self.confinement(hide=tuple(dict.fromkeys(hide))), script_folders=True
        )

    def confinement(self, *, hide: tuple[str, ...] = ()) -> Sandbox:
        """The run's sandbox; ``hide`` names what must never show inside one."""
        return Sandbox(
            kind=self.sandbox or "none",
            network=self.sandbox_net,
            ro=tuple(self.sandbox_ro),
            rw=tuple(self.sandbox_rw),
            hide=hide,
        )


def validate_config(config: SearchConfig) -> None:
    """Raise ``UsageError`` / ``NotFound`` for a config that cannot run.

    Pure checks only (no scoring); the seed is scored later, still before any turn.
    """
    preset_for(config.policy)  # an unknown one: UsageError, naming the valid ones
    if config.agent not in AGENT_NAMES:
        raise UsageError(f"unknown agent {config.agent!r}; choose one of: {', '.join(AGENT_NAMES)}")
    if config.executor not in EXECUTOR_NAMES:
        raise UsageError(
            f"unknown executor {config.executor!r}; choose one of: {', '.join(EXECUTOR_NAMES)}"
        )
    if config.agent == "command" and not config.agent_cmd:
        raise UsageError("--agent command needs --agent-cmd CMD")
    positive: dict[str, float | None] = {
        "--agents": config.agents,
        "--rounds": config.rounds,
        "--turns": config.turns,
        "--score-repeats": config.score_repeats,
        "--score-timeout": config.score_timeout,
        "--turn-timeout": config.turn_timeout,
        "--budget-usd": config.budget_usd,
        "--budget-tokens": config.budget_tokens,
        "--forget-on-plateau": config.forget_on_plateau,
        "--max-scorers": config.max_scorers,
    }
    for flag, value in positive.items():
        if value is not None and value <= 0:
            raise UsageError(f"{flag} must be positive, got {value:g}")
    if config.forget_on_plateau is not None and not config.preset.forgets:
        raise UsageError(
            f"--forget-on-plateau needs a forgetting policy (forget, forget-team, "
            f"fork-and-flush), not {config.policy!r}"
        )
    needed = config.effective_agents * config.effective_rounds
    if config.turns < needed:
        raise UsageError(
            f"--turns {config.turns} is fewer than agents x rounds ({needed}); "
            "every agent needs at least one turn per round"
        )
    if not config.candidate.is_dir():
        raise NotFound(f"candidate directory not found: {config.candidate}")
    if not config.task.is_file():
        raise NotFound(f"task file not found: {config.task}")
    try:
        config.task.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("not UTF-8 text", file=config.task) from None
    if not config.score_cmd.strip():
        raise UsageError("--score must be a non-empty command")
    if config.certify and config.canaries < MIN_CANARIES:
        raise UsageError(f"--canaries must be at least {MIN_CANARIES}, got {config.canaries}")
    if config.holdout_cmd is not None and not config.holdout_cmd.strip():
        raise UsageError("--holdout must be a non-empty command")
    if config.holdout_margin < 0:
        raise UsageError(f"--holdout-margin must not be negative, got {config.holdout_margin:g}")
    if config.retries < 0 or config.retry_backoff < 0:
        raise UsageError("--retries and --retry-backoff must not be negative")
    if config.sandbox is not None:
        check_sandbox(config.sandbox)
    if config.preset.keeps_notes and config.executor != "local":
        raise UsageError(
            f"--policy {config.policy} runs on the local executor only (its shared notes "
            "file lives on the driver)"
        )
    if config.score_cwd is not None and not config.score_cwd.is_dir():
        raise NotFound(f"--score-cwd directory not found: {config.score_cwd}")


def agent_turn_shares(config: SearchConfig) -> list[int]:
    """Each agent's share of the total turn budget (earlier agents get the remainder)."""
    return split_evenly(config.turns, config.effective_agents)


def split_evenly(total: int, n: int) -> list[int]:
    """``total`` turns over ``n`` agents, as evenly as possible; earlier ones get the rest."""
    base, extra = divmod(total, n)
    return [base + (1 if i < extra else 0) for i in range(n)]
