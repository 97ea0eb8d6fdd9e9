"""Probes: does an identity survive a model change?

``canon/probes.yaml`` (Canon, human-written, validated in
:mod:`evolving_agent.memory.canon.probe_file`) holds situations tied to Canon entries.

``models``  what is recorded and reported: answer records, verdicts, rows, continuity
``run``     ``probe run``: each probe through one model with exactly boot's context,
            contained (Canon, schedule, prompts and Today checked around every answer),
            each answer appended to Evidence (kind ``probe``)
``rules``   the human-readable checks (sentences, characters, phrases, asks-before-acting)
``judge``   an optional judge model's structured verdict (retry once, then undecided)
``diff``    ``probe diff``: answers side by side, the continuity figure, and a review
            card per entry the new model reads differently (``review-queued`` provenance)

Any reflector backend that implements
:class:`~evolving_agent.reflectors.base.ProbeAnswerer` can answer a probe; it is
resolved by name here, the same way the jobs resolve theirs (flag > schedule.yaml).
"""

from __future__ import annotations

from evolving_agent.errors import UsageError
from evolving_agent.jobs.dispatch import resolve_reflector
from evolving_agent.paths import MemoryRoot
from evolving_agent.probes.judge import Judge
from evolving_agent.reflectors import names_of
from evolving_agent.reflectors.base import ProbeAnswerer
from evolving_agent.reflectors.prompt import PromptReflector


class NoModelBackend(UsageError):
    """A probe needs a backend with a model behind it (``rules`` has none)."""

    def __init__(self, name: str, option: str) -> None:
        self.name = name
        what = "answer probes" if option == "--reflector" else "judge answers"
        hint = " (--reflector-cmd CMD for command)" if option == "--reflector" else ""
        can = names_of(ProbeAnswerer if option == "--reflector" else PromptReflector)
        super().__init__(
            f"the {name} reflector has no model to {what}; use {option} {'|'.join(can)}{hint}"
        )


def resolve_answerer(
    root: MemoryRoot, name: str | None = None, command: str | None = None
) -> ProbeAnswerer:
    """The backend that answers probes (``--reflector`` / ``--reflector-cmd`` / schedule)."""
    refl = resolve_reflector(root, name, command)
    if not isinstance(refl, ProbeAnswerer):
        raise NoModelBackend(refl.name or str(name), "--reflector")
    return refl


def resolve_judge(root: MemoryRoot, name: str | None, command: str | None) -> Judge | None:
    """The judge model, if one was asked for (``--judge`` / ``--judge-cmd``)."""
    if name is None and command is None:
        return None
    refl = resolve_reflector(root, name or "command", command)
    if not isinstance(refl, PromptReflector):
        raise NoModelBackend(refl.name, "--judge")
    return Judge(refl)


__all__ = ["NoModelBackend", "resolve_answerer", "resolve_judge"]
