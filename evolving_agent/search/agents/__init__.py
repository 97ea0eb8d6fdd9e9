"""Search agent backends, looked up by name through ``make_agent``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evolving_agent.errors import InvalidInput, UsageError
from evolving_agent.search.config import SearchConfig
from evolving_agent.search.names import AGENT_ALIASES, AGENT_NAMES

if TYPE_CHECKING:
    from evolving_agent.search.agents.base import Agent

__all__ = ["AGENT_NAMES", "agent_for", "check_agent", "make_agent"]


def make_agent(
    name: str,
    *,
    command: str | None = None,
    args: str | None = None,
    resume_args: str | None = None,
    prices: dict[str, float] | None = None,
) -> Agent:
    """The backend called ``name``; an unknown name lists the valid ones."""
    name = AGENT_ALIASES.get(name, name)
    if name == "tsp-example":
        from evolving_agent.search.agents.tsp_example import TspExampleAgent

        return TspExampleAgent()
    if name == "claude":
        from evolving_agent.search.agents.claude import ClaudeAgent

        return ClaudeAgent(command=command, args=args, resume_args=resume_args)
    if name == "codex":
        from evolving_agent.search.agents.codex import CodexAgent

        return CodexAgent(command=command, args=args, resume_args=resume_args, prices=prices)
    if name == "command":
        from evolving_agent.search.agents.command import CommandAgent

        if not command:
            raise UsageError("--agent command needs --agent-cmd CMD")
        return CommandAgent(command=command, args=args, resume_args=resume_args)
    raise UsageError(f"unknown agent {name!r}; choose one of: {', '.join(AGENT_NAMES)}")


def agent_for(config: SearchConfig) -> Agent:
    """The agent a run's config names, with its arguments for new and resumed turns."""
    return make_agent(
        config.agent,
        command=config.agent_cmd,
        args=config.agent_args,
        resume_args=config.agent_resume_args,
        prices=config.token_prices,
    )


def check_agent(config: SearchConfig, *, candidate: bool = True) -> None:
    """Refuse, before anything is created, an agent that cannot run or cannot do the task.

    A missing ``claude``/``codex``/``--agent-cmd`` program (local executor only),
    arguments a resumed turn would reject, or the ``tsp-example`` agent on a task other
    than the bundled example.
    """
    agent = agent_for(config)
    if config.executor == "local":
        # On Ray the agent's program runs on the workers, which the driver cannot see;
        # a worker without it fails its turns ("could not start"), recorded as such.
        agent.check()
    if config.agent == "tsp-example" and candidate:
        from evolving_agent.search.agents.tsp_example import fits

        if not fits(config.candidate):
            raise InvalidInput(
                "the tsp-example agent only works on the bundled TSP example (a candidate "
                "whose solve.py it can read); use --agent claude, codex or command"
            )
