"""Search agent backends, looked up by name through ``make_agent``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evolving_agent.errors import UsageError

if TYPE_CHECKING:  # the backends import the reducer, which imports the config
    from evolving_agent.search.agents.base import Agent

__all__ = ["AGENT_NAMES", "make_agent"]

AGENT_NAMES = ("builtin", "claude", "codex", "command")


def make_agent(
    name: str,
    *,
    command: str | None = None,
    args: str | None = None,
    resume_args: str | None = None,
    prices: dict[str, float] | None = None,
) -> Agent:
    """The backend called ``name``; an unknown name lists the valid ones."""
    if name == "builtin":
        from evolving_agent.search.agents.builtin import BuiltinAgent

        return BuiltinAgent()
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
