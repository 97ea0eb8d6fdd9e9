"""Reflectors, looked up by name: a name → class registry over the abstract base.

``base`` knows nothing of its implementations; this package maps each name to the
module and class that implement it and imports them only when asked, so an unknown
name lists the valid ones and a missing optional dependency only matters when used.
``reflectors`` never imports ``jobs`` (the jobs import the reflectors).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any

from evolving_agent.errors import UsageError
from evolving_agent.reflectors.base import (
    PromptReflector,
    Reflector,
    ReflectorError,
)
from evolving_agent.reflectors.fallback import Reflected, reflect_with_fallback
from evolving_agent.reflectors.settings import REFLECTOR_NAMES, ReflectorSettings

# name -> "module:Class"; the order is the order an unknown name lists them in.
REGISTRY: dict[str, str] = {
    "rules": "evolving_agent.reflectors.rules:RulesReflector",
    "command": "evolving_agent.reflectors.command:CommandReflector",
    "openai": "evolving_agent.reflectors.openai:OpenAIReflector",
    "claude": "evolving_agent.reflectors.claude:ClaudeReflector",
    "codex": "evolving_agent.reflectors.codex:CodexReflector",
}
assert tuple(REGISTRY) == REFLECTOR_NAMES, "the settings' names and the registry agree"


def reflector_class(name: str) -> type[Reflector]:
    """The class registered as ``name``; an unknown name lists the valid ones."""
    if name not in REGISTRY:
        raise UsageError(f"unknown reflector {name!r} (valid: {', '.join(REGISTRY)})")
    module, _, cls = REGISTRY[name].partition(":")
    found: type[Reflector] = getattr(import_module(module), cls)
    return found


def get_reflector(
    name: str,
    *,
    settings: ReflectorSettings | None = None,
    command: str | None = None,
    prompts: Callable[[str], str] | None = None,
) -> Reflector:
    """The reflector called ``name``, built from its settings; unknown names list the valid."""
    cls = reflector_class(name)
    factory: Any = cls  # each backend's constructor is its own (see the module per name)
    settings = settings or ReflectorSettings()
    load = prompts or (lambda job: "$context\n$friction\n$schema\n$feedback")
    if name == "command":
        cmd = command or settings.command
        if not cmd:
            raise UsageError("the command reflector needs --reflector-cmd (or reflector.command)")
        made: Reflector = factory(cmd, prompts=load, timeout=settings.timeout)
        return made
    if name in ("claude", "codex"):  # the user's own CLI; command: program + extra flags
        made = factory(command or settings.command, prompts=load, timeout=settings.timeout)
        return made
    if issubclass(cls, PromptReflector):
        made = factory(settings, prompts=load)
        return made
    return cls()


__all__ = [
    "REGISTRY",
    "PromptReflector",
    "Reflected",
    "Reflector",
    "ReflectorError",
    "get_reflector",
    "reflect_with_fallback",
    "reflector_class",
]
