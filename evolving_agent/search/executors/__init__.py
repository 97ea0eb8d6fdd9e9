"""Search executors — where agent turns and scores run — looked up by name.

``local`` (threads on this machine, the default) and ``ray`` (tasks on a Ray
cluster).  ``make_executor`` builds the one a run's config names; ``parse_resources``
reads ``--agent-resources`` / ``--score-resources``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from evolving_agent.errors import UsageError
from evolving_agent.search.names import EXECUTOR_NAMES

if TYPE_CHECKING:
    from evolving_agent.search.executors.base import Executor


class ExecutorSettings(Protocol):
    """What building an executor reads of a run's config (``SearchConfig`` has it all);
    a protocol, so executors never import the config that names them."""

    @property
    def executor(self) -> str: ...
    @property
    def ray_address(self) -> str | None: ...
    @property
    def agent_resources(self) -> dict[str, float] | None: ...
    @property
    def score_resources(self) -> dict[str, float] | None: ...
    @property
    def max_scorers(self) -> int | None: ...
    @property
    def env_forward(self) -> list[str]: ...


__all__ = ["EXECUTOR_NAMES", "make_executor", "parse_resources"]


def make_executor(config: ExecutorSettings) -> Executor:
    """The executor ``config.executor`` names (joining a Ray cluster for ``ray``); an
    unknown name lists the valid ones.  Call ``bind(run_dir)`` once the run directory
    exists."""
    if config.executor == "local":
        from evolving_agent.search.executors.local import LocalExecutor

        return LocalExecutor(max_scorers=config.max_scorers)
    if config.executor == "ray":
        from evolving_agent.search.executors.ray_exec import RayExecutor

        return RayExecutor(
            address=config.ray_address,
            agent_resources=config.agent_resources,
            score_resources=config.score_resources,
            max_scorers=config.max_scorers,
            env_forward=config.env_forward,
        )
    raise UsageError(
        f"unknown executor {config.executor!r}; choose one of: {', '.join(EXECUTOR_NAMES)}"
    )


def parse_resources(text: str | None, *, flag: str) -> dict[str, float] | None:
    """``"num_gpus=1,claude=1"`` -> ``{"num_gpus": 1.0, "claude": 1.0}``."""
    if text is None or not text.strip():
        return None
    found: dict[str, float] = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        name = name.strip()
        try:
            amount = float(value)
        except ValueError:
            amount = -1.0
        if not sep or not name or amount < 0:
            raise UsageError(
                f"{flag} takes NAME=AMOUNT[,NAME=AMOUNT...], e.g. num_gpus=1,claude=1; "
                f"got {item.strip()!r}"
            )
        found[name] = amount
    return found
