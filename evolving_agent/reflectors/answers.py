"""What reflectors answer: the nightly and weekly answer models.

A reflector returns one of these; the job checks it in context before anything is
written (:mod:`evolving_agent.reflectors.answer_check`).  The models say only the shape of
an answer (fields, lengths, the 2-3 line bias, whitespace folded); what its lines may
say (no self-description, no quota, no score) is checked there with the rest.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evolving_agent.memory.canon.canon_diff import Section
from evolving_agent.memory.ops.hypotheses import quote
from evolving_agent.memory.ops.today import CarryType


class Reading(BaseModel):
    """A model's reading of one untagged friction event as evidence about a hypothesis."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    event: str
    hypothesis: str
    relation: str = Field(pattern="^(supports|contradicts)$")


class NewHypothesis(BaseModel):
    """A hypothesis a reflector raises from recurring untagged friction (origin nightly)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    text: str = Field(min_length=1, max_length=300)
    when: str | None = Field(None, max_length=120)
    do: str | None = Field(None, max_length=120)
    cites: list[str] = Field(min_length=2)  # untagged friction ids from ≥ 2 distinct days

    @field_validator("text", "when", "do")
    @classmethod
    def _plain(cls, v: str | None) -> str | None:
        return None if v is None else quote(v, 300)


class NightlyReflection(BaseModel):
    """The nightly answer.  All of bias / carry empty means: a quiet day, invent nothing."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    readings: list[Reading] = Field(default_factory=list)
    raise_hypothesis: NewHypothesis | None = None
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
        if not 2 <= len(lines) <= 3:
            raise ValueError(
                "the bias is 2-3 lines: the instruction, its grounding, and (high stakes) "
                "what is at stake"
            )
        for ln in lines:
            if len(ln) > 300:
                raise ValueError("a bias line is at most 300 characters")
        return "\n".join(lines)

    @field_validator("carry_text")
    @classmethod
    def _carry_text(cls, v: str | None) -> str | None:
        return None if v is None else " ".join(v.split())

    def complete(self) -> bool:
        return self.bias is not None and self.carry_type is not None and bool(self.carry_text)

    def empty(self) -> bool:
        return not (self.complete() or self.readings or self.raise_hypothesis)


class ProposalDraft(BaseModel):
    """A weekly proposal's wording for one candidate hypothesis (the job adds the rest)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    hypothesis: str
    section: Section = "habits"
    text: str = Field(min_length=1, max_length=300)
    rationale: str = Field("", max_length=600)

    @field_validator("text", "rationale")
    @classmethod
    def _one_line(cls, v: str) -> str:
        return " ".join(v.split())


class WeeklyReflection(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    proposals: list[ProposalDraft] = Field(default_factory=list)
