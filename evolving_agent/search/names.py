"""The names ``--agent`` and ``--executor`` accept.

A leaf: the config checks a name without importing the agent backends or the
executors (both import the reducer or the turn code, which import the run state,
which imports the config).
"""

from __future__ import annotations

# name -> "module:Class" (see evolving_agent/registry.py); the names are the keys, in the
# order an unknown name lists them.
AGENT_REGISTRY = {
    "tsp-example": "evolving_agent.search.agents.tsp_example:TspExampleAgent",
    "claude": "evolving_agent.search.agents.claude:ClaudeAgent",
    "codex": "evolving_agent.search.agents.codex:CodexAgent",
    "gemini": "evolving_agent.search.agents.gemini:GeminiAgent",
    "opencode": "evolving_agent.search.agents.opencode:OpenCodeAgent",
    "command": "evolving_agent.search.agents.command:CommandAgent",
    "circles-example": "evolving_agent.search.agents.circles_example:CirclesExampleAgent",
}
AGENT_NAMES = tuple(AGENT_REGISTRY)
# Old names still accepted; the config stores the current one, so a run started with
# either records the same thing.
AGENT_ALIASES = {"builtin": "tsp-example"}
EXECUTOR_REGISTRY = {
    "local": "evolving_agent.search.executors.local:LocalExecutor",
    "ray": "evolving_agent.search.executors.ray_exec:RayExecutor",
}
EXECUTOR_NAMES = tuple(EXECUTOR_REGISTRY)
