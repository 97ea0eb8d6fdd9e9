"""Search executors — where agent turns and scores run — looked up by name.

``local`` (threads on this machine, the default) and ``ray`` (tasks on a Ray
cluster).  ``make_executor`` builds the one a run's config names; ``parse_resources``
reads ``--agent-resources`` / ``--score-resources``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evolving_agent.errors import UsageError
from evolving_agent.registry import lookup
from evolving_agent.search.executors.base import ExecutorSettings
from evolving_agent.search.names import EXECUTOR_NAMES, EXECUTOR_REGISTRY

if TYPE_CHECKING:
    from evolving_agent.search.executors.base import Executor


__all__ = ["EXECUTOR_NAMES", "ExecutorSettings", "make_executor", "parse_resources"]


def make_executor(config: ExecutorSettings) -> Executor:
    """The executor ``config.executor`` names (joining a Ray cluster for ``ray``); an
    unknown name lists the valid ones.  Call ``bind(run_dir)`` once the run directory
    exists."""
    cls: type[Executor] = lookup(EXECUTOR_REGISTRY, config.executor, kind="executor")
    return cls.from_settings(config)


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
