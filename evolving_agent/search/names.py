"""The names ``--agent`` and ``--executor`` accept.

A leaf: the config checks a name without importing the agent backends or the
executors (both import the reducer or the turn code, which import the run state,
which imports the config).
"""

from __future__ import annotations

AGENT_NAMES = ("tsp-example", "claude", "codex", "command")
# Old names still accepted; the config stores the current one, so a run started with
# either records the same thing.
AGENT_ALIASES = {"builtin": "tsp-example"}
EXECUTOR_NAMES = ("local", "ray")
