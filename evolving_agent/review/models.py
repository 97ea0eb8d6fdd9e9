"""The review files shared by the weekly job, the monthly job and the human.

``reviews/proposals/<id>.json``  written by the weekly job (one per proposed diff)
``reviews/pending/<id>.json``    written by the monthly job (at most the monthly limit),
                                 and by ``probe diff`` (a card per Canon entry a new model
                                 reads differently: :class:`ProbeCard`)
``reviews/decisions/<id>.json``  written by the human (approve / reject), read by the writer

A diff (:class:`~evolving_agent.memory.canon.canon_diff.CanonDiff`) is one operation on one
list section of ``canon/identity.yaml``.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# The diff itself lives in memory (verify re-applies it); these files wrap it.
# The decision model lives in memory (the writer and verify read it); re-exported here.
from evolving_agent.memory.canon.approvals import Decision
from evolving_agent.memory.canon.approvals import Versioned as _Versioned
from evolving_agent.memory.canon.canon_diff import CanonDiff

__all__ = ["Decision", "PendingReview", "ProbeAnswerPair", "ProbeCard", "Proposal"]


class Proposal(_Versioned):
    """A weekly proposal: a Canon diff, the hypothesis behind it, the evidence cited."""

    id: str  # prop-<week_end>-<hypothesis id>
    week_end: date
    hypothesis: str
    diff: CanonDiff
    evidence_ids: list[str] = Field(min_length=1)
    rationale: str = ""
    created: datetime


class ProbeAnswerPair(BaseModel):
    """One probe a new model no longer honours: both answers (Evidence ids) and why."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    probe: str
    before: str  # Evidence id of the earlier model's answer (it honoured the entry)
    after: str  # Evidence id of the new model's answer
    verdict: Literal["breaks", "undecided"]
    why: str = ""  # the rule that failed, or the judge's reason


class ProbeCard(BaseModel):
    """What a probe card says: model B reads one Canon entry differently from model A.

    Plain data (the review page shows it too).  The card's ``diff`` proposes restating
    the entry with what its probes imply; the human may approve it, edit it (restate it
    another way), reject it (change nothing), or retire the probes in probes.yaml.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    model_a: str
    model_b: str
    entry: str  # the probes' reference, "habits: Lead with the answer"
    entry_text: str  # the full Canon entry when the answers were compared
    regressed: int  # probes of this entry honoured by model_a, not by model_b
    of: int  # probes of this entry both models answered
    canon_commit: str | None = None  # Canon the new model's answers were given under
    pairs: list[ProbeAnswerPair] = Field(min_length=1)
    # The card that holds the upgrade itself (``probe diff``: overall adherence fell past
    # the threshold): approve moves to model_b, reject keeps model_a.
    hold: bool = False

    def title(self) -> str:
        if self.hold:
            return (
                f"upgrade {self.model_a} -> {self.model_b} held: {self.regressed} of "
                f"{self.of} probes honoured less often"
            )
        return (
            f"model {self.model_b} reads *{self.entry_text}* differently: "
            f"{self.regressed} of {self.of} probe{'s' if self.of != 1 else ''}"
        )


class PendingReview(_Versioned):
    """An entry of the monthly human-approval queue."""

    id: str  # rev-<YYYY-MM>-<n>, or rev-<YYYY-MM>-probe-<n> for a probe card
    month: str  # YYYY-MM the proposals came from (a probe card: the month it was queued)
    diff: CanonDiff
    hypothesis: str
    proposals: list[str] = Field(default_factory=list)  # at least one, except a probe card
    evidence_ids: list[str] = Field(min_length=1)
    rationale: str = ""
    created: datetime
    probe: ProbeCard | None = None  # set on a card queued by ``probe diff``

    @model_validator(mode="after")
    def _sourced(self) -> PendingReview:
        if self.probe is None and not self.proposals:
            raise ValueError("proposals: a review needs at least one proposal")
        return self
