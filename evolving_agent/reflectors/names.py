"""The reflector names: the registry's keys, the one list of them.

A leaf, like ``search/names.py``: ``schedule.yaml``'s model (``settings.py``) checks a
name without importing a backend, and :mod:`evolving_agent.reflectors` looks the class
up by it (:func:`evolving_agent.registry.lookup`).  What a backend can do is its class
(``issubclass(cls, ProbeAnswerer)``), never a list of names.
"""

from __future__ import annotations

# name -> "module:Class"; the names are the keys, in the order an unknown name lists them.
REGISTRY: dict[str, str] = {
    "rules": "evolving_agent.reflectors.rules:RulesReflector",
    "command": "evolving_agent.reflectors.command:CommandReflector",
    "openai": "evolving_agent.reflectors.openai:OpenAIReflector",
    "claude": "evolving_agent.reflectors.claude:ClaudeReflector",
    "codex": "evolving_agent.reflectors.codex:CodexReflector",
    "gemini": "evolving_agent.reflectors.gemini:GeminiReflector",
    "opencode": "evolving_agent.reflectors.opencode:OpenCodeReflector",
}
REFLECTOR_NAMES: tuple[str, ...] = tuple(REGISTRY)
