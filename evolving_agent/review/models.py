"""The review files shared by the weekly job, the monthly job and the human.

``reviews/proposals/<id>.json``  written by the weekly job (one per proposed diff)
``reviews/pending/<id>.json``    written by the monthly job (at most the monthly limit)
``reviews/decisions/<id>.json``  written by the human (approve / reject), read by the writer

A diff (:class:`~evolving_agent.memory.canon_diff.CanonDiff`) is one operation on one
list section of ``canon/identity.yaml``.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# The diff itself lives in memory (verify re-applies it); these files wrap it.
from evolving_agent.memory.canon_diff import SCHEMA_VERSION, CanonDiff


class _Versioned(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, le=SCHEMA_VERSION)


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
