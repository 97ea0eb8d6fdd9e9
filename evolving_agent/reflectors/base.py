"""Reflectors: the backends that write the words (bias, carry, readings, proposals).

A reflector gets a *context* built by the job (:mod:`~evolving_agent.reflectors.context`)
and returns an answer model (:mod:`~evolving_agent.reflectors.answers`).  It never
writes: the job checks the answer (:mod:`~evolving_agent.reflectors.answer_check`) and
writes through the permission-checked writer.

This module is the contract only: the errors and the two abstract interfaces,
:class:`Reflector` (nightly and weekly answers) and :class:`ProbeAnswerer` (a probe
answered as the assistant would).  It imports no implementation; the model-backed base
is :mod:`evolving_agent.reflectors.prompt`, the name → class registry is
:mod:`evolving_agent.reflectors` and the retry/fallback loop is
:mod:`evolving_agent.reflectors.fallback`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

from evolving_agent.errors import EvolvingAgentError
from evolving_agent.reflectors.answers import NightlyReflection, WeeklyReflection
from evolving_agent.reflectors.context import NightlyContext, WeeklyContext
from evolving_agent.reflectors.settings import ReflectorSettings


class ReflectorError(EvolvingAgentError):
    """A reflector failed or answered something that is not a valid reflection."""


class ReflectorUnavailable(ReflectorError):
    """The backend never gave an answer (program missing, timeout, HTTP error, a
    malformed response body).  Not the model's fault: no retry with "your answer was
    refused"; the job falls back to rules at once and names the cause."""


class Reflector(ABC):
    """A backend that turns a job's context into a validated reflection."""

    name: str = ""

    @classmethod
    def from_settings(
        cls, settings: ReflectorSettings, *, command: str | None, prompts: Callable[[str], str]
    ) -> Reflector:
        """Build this backend from ``schedule.yaml``'s ``reflector:`` settings, a
        ``--reflector-cmd`` and the job prompts (the registry calls this)."""
        return cls()

    @abstractmethod
    def nightly(self, *, context: NightlyContext, feedback: str | None = None) -> NightlyReflection:
        """Read the day's friction; choose one active hypothesis (or none on a quiet day
        with nothing to carry), a carry type different from the previous carry's, a
        carry text and a 1-3 line bias that is an instruction, never a self-description.
        ``readings`` may classify *untagged* friction events of the day only.
        ``feedback`` is the reason the previous answer was refused (on the retry)."""

    @abstractmethod
    def weekly(self, *, context: WeeklyContext, feedback: str | None = None) -> WeeklyReflection:
        """Word one proposal (a Canon diff: section + text + rationale) for some or all of
        ``context.candidates``; never for any other hypothesis."""


class ProbeAnswerer(ABC):
    """A backend that can answer a probe as the assistant would (see
    :mod:`evolving_agent.probes`).  Every model-backed reflector is one; ``rules`` is not."""

    name: str = ""

    @abstractmethod
    def answer_probe(self, *, context: str, prompt: str) -> str:
        """Answer the user's ``prompt`` as the assistant booted with ``context`` (the exact
        Markdown ``boot`` prints, to be used as the system prompt) would, in plain text.
        Nothing may be written anywhere: the caller checks Canon and Today around the call.
        Raise :class:`ReflectorUnavailable` when the backend gives no answer."""
