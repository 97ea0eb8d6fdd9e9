"""Search agent backends, looked up by name through ``make_agent``.

``names.AGENT_REGISTRY`` maps each name to its class (``base.Agent`` subclasses in
``claude``, ``codex``, ``command`` and ``tsp_example``); each builds itself from
``AgentSettings`` with its own ``from_settings``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evolving_agent.errors import InvalidInput
from evolving_agent.registry import lookup
from evolving_agent.search.agents.base import AgentSettings
from evolving_agent.search.config import SearchConfig
from evolving_agent.search.names import AGENT_ALIASES, AGENT_NAMES, AGENT_REGISTRY

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
    cls: type[Agent] = lookup(AGENT_REGISTRY, AGENT_ALIASES.get(name, name), kind="agent")
    return cls.from_settings(AgentSettings(command, args, resume_args, prices))


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
