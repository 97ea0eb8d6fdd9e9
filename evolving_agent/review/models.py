"""The review files shared by the weekly job, the monthly job and the human.

``reviews/proposals/<id>.json``  written by the weekly job (one per proposed diff)
``reviews/pending/<id>.json``    written by the monthly job (at most the monthly limit)
``reviews/decisions/<id>.json``  written by the human (approve / reject), read by the writer

A diff is one operation on one list section of ``canon/identity.yaml``.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Section = Literal["values", "self_understanding", "habits"]
Op = Literal["add", "remove", "replace"]
SCHEMA_VERSION = 1


class _Versioned(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, le=SCHEMA_VERSION)


class CanonDiff(_Versioned):
    """One change to one list entry of Canon's identity."""

    section: Section
    op: Op
    text: str = ""  # the new entry (add / replace)
    old_text: str | None = None  # the entry removed or replaced

    @model_validator(mode="after")
    def _complete(self) -> CanonDiff:
        if self.op in ("add", "replace") and not self.text.strip():
            raise ValueError(f"a '{self.op}' diff needs text")
        if self.op in ("remove", "replace") and not (self.old_text or "").strip():
            raise ValueError(f"a '{self.op}' diff needs old_text")
        return self


class Proposal(_Versioned):
    """A weekly proposal: a Canon diff, the hypothesis behind it, the evidence cited."""

    id: str  # prop-<week_end>-<hypothesis id>
    week_end: date
    hypothesis: str
    diff: CanonDiff
    evidence_ids: list[str] = Field(min_length=1)
    rationale: str = ""
    created: datetime


class PendingReview(_Versioned):
    """An entry of the monthly human-approval queue."""

    id: str  # rev-<YYYY-MM>-<n>
    month: str  # YYYY-MM the proposals came from
    diff: CanonDiff
    hypothesis: str
    proposals: list[str] = Field(min_length=1)
    evidence_ids: list[str] = Field(min_length=1)
    rationale: str = ""
    created: datetime


class Decision(_Versioned):
    """The human's decision on a pending review.  Read by the writer's approval check."""

    review_id: str
    status: Literal["approved", "rejected"]
    approver: str
    ts: datetime
    reason: str = ""
    diff: CanonDiff | None = None  # the diff as approved (after any human edit)
    commit: str | None = None
