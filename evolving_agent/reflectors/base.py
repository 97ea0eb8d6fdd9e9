"""Reflectors: the backends that write the words (bias, carry, readings, proposals).

A reflector gets a *context* built by the job — for the nightly job nothing but a
``ScopedReader(root, "nightly", evidence_window=(day, day))`` and the previous carry —
and returns a pydantic model.  It never writes: the job validates the answer and
writes through the permission-checked writer.

Backends are looked up by name through :func:`get_reflector`; model-backed ones share
:class:`PromptReflector` (prompt file from ``crons/`` → text → JSON → model).  The job
calls :func:`reflect_with_fallback`: invalid output is retried once with the error as
feedback, then the job falls back to ``rules`` and says so.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evolving_agent.errors import EvolvingAgentError, UsageError
from evolving_agent.jobs.hypotheses import Hypothesis, read_register
from evolving_agent.jobs.settings import REFLECTOR_NAMES, ReflectorSettings
from evolving_agent.memory.authority import ScopedReader
from evolving_agent.memory.evidence import EvidenceRecord
from evolving_agent.memory.today import CARRY_FILE, Carry, CarryType
from evolving_agent.review.models import Section

NIGHTLY_STATE_FILE = "nightly.json"


class ReflectorError(EvolvingAgentError):
    """A reflector failed or answered something that is not a valid reflection."""


class ReflectorUnavailable(ReflectorError):
    """The backend never gave an answer (program missing, timeout, HTTP error, a
    malformed response body).  Not the model's fault: no retry with "your answer was
    refused"; the job falls back to rules at once and names the cause."""


# -- what reflectors answer ------------------------------------------------------------------

_SELF_DESCRIPTION = re.compile(r"^\s*(i\s+am|i'm|i’m|i\s+feel|i\s+have\s+become)\b", re.I)
# A number used as a grade: "confidence: 0.8", "score 4", "4/5", "7 out of 10".
_SCORE = re.compile(
    r"\b(score|confidence|certainty|rating)\s*(of|:|=|is)?\s*\d"
    r"|\b\d+(\.\d+)?\s*(/|out\s+of)\s*(5|10|100)\b",
    re.I,
)


def check_no_score(text: str) -> str:
    if _SCORE.search(text):
        raise ValueError("no numeric scores or confidence figures, by design")
    return text


class Reading(BaseModel):
    """A model's reading of one untagged friction event as evidence about a hypothesis."""

    model_config = ConfigDict(extra="forbid")

    event: str
    hypothesis: str
    relation: str = Field(pattern="^(supports|contradicts)$")


class NightlyReflection(BaseModel):
    """The nightly answer.  All of bias / carry empty means: a quiet day, invent nothing."""

    model_config = ConfigDict(extra="forbid")

    readings: list[Reading] = Field(default_factory=list)
    hypothesis: str | None = None
    carry_type: CarryType | None = None
    carry_text: str | None = Field(None, min_length=1, max_length=400)
    bias: str | None = None

    @field_validator("bias")
    @classmethod
    def _bias(cls, v: str | None) -> str | None:
        if v is None:
            return v
        lines = [ln.strip() for ln in v.strip().splitlines() if ln.strip()]
        if not 1 <= len(lines) <= 3:
            raise ValueError("the bias is 1-3 lines")
        for ln in lines:
            if _SELF_DESCRIPTION.match(ln):
                raise ValueError(
                    "the bias is an executable instruction for the day, not a self-description"
                )
            if len(ln) > 300:
                raise ValueError("a bias line is at most 300 characters")
            check_no_score(ln)
        return "\n".join(lines)

    @field_validator("carry_text")
    @classmethod
    def _carry_text(cls, v: str | None) -> str | None:
        return None if v is None else check_no_score(" ".join(v.split()))

    def complete(self) -> bool:
        return self.bias is not None and self.carry_type is not None and bool(self.carry_text)


class ProposalDraft(BaseModel):
    """A weekly proposal's wording for one candidate hypothesis (the job adds the rest)."""

    model_config = ConfigDict(extra="forbid")

    hypothesis: str
    section: Section = "habits"
    text: str = Field(min_length=1, max_length=300)
    rationale: str = Field("", max_length=600)

    @field_validator("text", "rationale")
    @classmethod
    def _no_score(cls, v: str) -> str:
        return check_no_score(" ".join(v.split()))


class WeeklyReflection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    proposals: list[ProposalDraft] = Field(default_factory=list)


# -- what reflectors get -----------------------------------------------------------------------


class NightlyState(BaseModel):
    """``today/nightly.json``: the last day the nightly job reflected and recent carry types."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(1, le=1)
    last_date: date
    recent_types: list[CarryType] = Field(default_factory=list)


@dataclass
class NightlyContext:
    """Everything a nightly reflector may see: Today and the one day's Evidence."""

    day: date
    reader: ScopedReader
    previous_carry: Carry | None

    @cached_property
    def events(self) -> list[EvidenceRecord]:
        return list(self.reader.evidence(self.day, self.day))

    @property
    def friction(self) -> list[EvidenceRecord]:
        return [r for r in self.events if r.kind == "friction"]

    @cached_property
    def register(self) -> dict[str, Hypothesis]:
        return read_register(self.reader)

    @cached_property
    def recent_types(self) -> list[str]:
        data = self.reader.read_json("today", NIGHTLY_STATE_FILE)
        if data is None:
            return [self.previous_carry.type] if self.previous_carry else []
        return list(NightlyState.model_validate(data).recent_types)

    def as_prompt_data(self) -> dict[str, Any]:
        """The context as plain JSON for a model: no counts, no scores."""
        prev = self.previous_carry
        return {
            "day": self.day.isoformat(),
            "previous_carry": prev.model_dump(mode="json") if prev else None,
            "allowed_carry_types": [t for t in _carry_types() if not prev or t != prev.type],
            "hypotheses": [
                {"id": h.id, "text": h.text, "state": h.state}
                for h in self.register.values()
                if h.active
            ],
            "friction": [
                {"id": r.id, "text": r.text, "supports": r.supports, "contradicts": r.contradicts}
                for r in self.friction
            ],
        }


@dataclass
class WeeklyContext:
    """What a weekly reflector may see: the week's Evidence and the floor's candidates."""

    week_end: date
    reader: ScopedReader
    candidates: list[Hypothesis] = field(default_factory=list)

    def as_prompt_data(self) -> dict[str, Any]:
        return {
            "week_end": self.week_end.isoformat(),
            "candidates": [
                {
                    "id": h.id,
                    "text": h.text,
                    "state": h.state,
                    "supported_on": [d.isoformat() for d in h.supported_on],
                }
                for h in self.candidates
            ],
        }


def _carry_types() -> tuple[str, ...]:
    from evolving_agent.memory.today import CARRY_TYPES

    return CARRY_TYPES


def read_previous_carry(reader: ScopedReader) -> Carry | None:
    data = reader.read_json("today", CARRY_FILE)
    return Carry.model_validate(data) if data is not None else None


# -- the backend interface -----------------------------------------------------------------------


class Reflector(ABC):
    """A backend that turns a job's context into a validated reflection."""

    name: str = ""

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


M = TypeVar("M", bound=BaseModel)


def parse_json_answer(text: str, model: type[M]) -> M:
    """The JSON object in a model's answer (bare, fenced, or the last JSON line)."""
    candidates = [text.strip()]
    fenced = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.S)
    if fenced:
        candidates.append(fenced.group(1))
    lines = [ln for ln in text.strip().splitlines() if ln.strip().startswith("{")]
    if lines:
        candidates.append(lines[-1])
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    last_error = "no JSON object in the answer"
    for c in candidates:
        try:
            data = json.loads(c)
        except ValueError:
            continue
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            last_error = f"{'.'.join(map(str, first['loc'])) or '(answer)'}: {first['msg']}"
            break
    raise ReflectorError(f"invalid reflector output: {last_error}")


class PromptReflector(Reflector):
    """A model-backed reflector: render the job's prompt file, ask, parse JSON."""

    def __init__(self, prompts: Callable[[str], str]) -> None:
        self._prompts = prompts

    @abstractmethod
    def complete(self, prompt: str) -> str:
        """Send ``prompt`` to the model and return its raw text answer."""

    def render(
        self, job: str, data: dict[str, Any], schema: dict[str, Any], feedback: str | None
    ) -> str:
        from string import Template

        note = ""
        if feedback:
            note = f"Your previous answer was refused: {feedback}. Answer again with valid JSON."
        return Template(self._prompts(job)).safe_substitute(
            context=json.dumps(data, indent=2, ensure_ascii=False),
            schema=json.dumps(schema, ensure_ascii=False),
            feedback=note,
        )

    def nightly(self, *, context: NightlyContext, feedback: str | None = None) -> NightlyReflection:
        prompt = self.render(
            "nightly", context.as_prompt_data(), NightlyReflection.model_json_schema(), feedback
        )
        return parse_json_answer(self.complete(prompt), NightlyReflection)

    def weekly(self, *, context: WeeklyContext, feedback: str | None = None) -> WeeklyReflection:
        prompt = self.render(
            "weekly", context.as_prompt_data(), WeeklyReflection.model_json_schema(), feedback
        )
        return parse_json_answer(self.complete(prompt), WeeklyReflection)


# -- lookup and fallback ---------------------------------------------------------------------------


def get_reflector(
    name: str,
    *,
    settings: ReflectorSettings | None = None,
    command: str | None = None,
    prompts: Callable[[str], str] | None = None,
) -> Reflector:
    """The reflector called ``name``; an unknown name lists the valid ones."""
    from evolving_agent.reflectors.rules import RulesReflector

    settings = settings or ReflectorSettings()
    load = prompts or (lambda job: "$context\n$schema\n$feedback")
    if name == "rules":
        return RulesReflector()
    if name == "command":
        from evolving_agent.reflectors.command import CommandReflector

        cmd = command or settings.command
        if not cmd:
            raise UsageError("the command reflector needs --reflector-cmd (or reflector.command)")
        return CommandReflector(cmd, prompts=load, timeout=settings.timeout)
    if name == "openai":
        from evolving_agent.reflectors.openai import OpenAIReflector

        return OpenAIReflector(settings, prompts=load)
    raise UsageError(f"unknown reflector {name!r} (valid: {', '.join(REFLECTOR_NAMES)})")


R = TypeVar("R", bound=BaseModel)


@dataclass
class Reflected:
    """A validated reflection, which reflector produced it, and why it fell back (if it did)."""

    value: Any
    used: str
    fallback: str | None = None


def reflect_with_fallback(
    reflector: Reflector,
    call: Callable[[Reflector, str | None], R],
    check: Callable[[R], None],
) -> Reflected:
    """Ask ``reflector``; on invalid output retry once, then fall back to ``rules``.

    ``check`` raises ``ReflectorError`` for answers that parse but do not fit the
    context (a repeated carry type, an unknown hypothesis…).
    """
    from evolving_agent.reflectors.rules import RulesReflector

    feedback: str | None = None
    unavailable: str | None = None
    for _attempt in range(2):
        try:
            value = call(reflector, feedback)
            check(value)
            return Reflected(value, reflector.name)
        except ReflectorUnavailable as exc:
            unavailable = str(exc)
            break
        except ReflectorError as exc:
            feedback = str(exc).removeprefix("invalid reflector output: ")
        except ValidationError as exc:
            first = exc.errors()[0]
            feedback = f"{'.'.join(map(str, first['loc']))}: {first['msg']}"
        if isinstance(reflector, RulesReflector):
            raise ReflectorError(f"the rules reflector produced invalid output: {feedback}")
    rules = RulesReflector()
    value = call(rules, None)
    check(value)
    if unavailable is not None:
        note = f"{reflector.name} reflector failed ({unavailable}); fell back to rules"
    else:
        note = (
            f"{reflector.name} reflector output was invalid twice ({feedback}); "
            "fell back to rules"
        )
    return Reflected(value, "rules", note)
