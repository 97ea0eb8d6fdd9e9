"""Reflectors, looked up by name: a name → class registry over the abstract base.

``base`` knows nothing of its implementations; this package maps each name to the
module and class that implement it and imports them only when asked, so an unknown
name lists the valid ones and a missing optional dependency only matters when used.
``reflectors`` never imports ``jobs`` (the jobs import the reflectors).  The nightly
context's day is read as a stream and folded into the bounded part reflection reads
(``memory/evidence/day_digest.py``), so neither the job nor a model's prompt grows with a
flooded day.
"""

from __future__ import annotations

from collections.abc import Callable

from evolving_agent.reflectors.base import Reflector, ReflectorError
from evolving_agent.reflectors.fallback import Reflected, reflect_with_fallback
from evolving_agent.reflectors.names import REGISTRY
from evolving_agent.reflectors.prompt import PromptReflector
from evolving_agent.reflectors.settings import ReflectorSettings
from evolving_agent.registry import lookup


def reflector_class(name: str) -> type[Reflector]:
    """The class registered as ``name``; an unknown name lists the valid ones."""
    found: type[Reflector] = lookup(REGISTRY, name, kind="reflector")
    return found


def names_of(capability: type) -> list[str]:
    """The registered names whose class is a ``capability`` (``ProbeAnswerer``,
    ``PromptReflector``…), in the registry's order: what a backend can do is its class."""
    return [n for n in REGISTRY if issubclass(reflector_class(n), capability)]


def get_reflector(
    name: str,
    *,
    settings: ReflectorSettings | None = None,
    command: str | None = None,
    prompts: Callable[[str], str] | None = None,
) -> Reflector:
    """The reflector called ``name``, built from its settings; unknown names list the valid."""
    load = prompts or (lambda job: "$context\n$friction\n$schema\n$feedback")
    return reflector_class(name).from_settings(
        settings or ReflectorSettings(), command=command, prompts=load
    )


__all__ = [
    "REGISTRY",
    "PromptReflector",
    "Reflected",
    "Reflector",
    "ReflectorError",
    "get_reflector",
    "names_of",
    "reflect_with_fallback",
    "reflector_class",
]
