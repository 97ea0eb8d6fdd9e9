"""Approvals: the smallest view of review decisions the writer and ``verify`` need.

The review subsystem (``evolving_agent.review``) owns the full model; the writer only
asks "may the monthly job apply this review now?" and ``verify`` asks "was this
review approved, and by which commit was it applied?", so the dependency points one
way.  A decision records its Canon commit once the approved diff is applied; from then
on the approval is spent and the writer refuses to use it again.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evolving_agent.memory.canon.canon_diff import SCHEMA_VERSION, CanonDiff
from evolving_agent.paths import MemoryRoot


class Versioned(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = Field(SCHEMA_VERSION, le=SCHEMA_VERSION)


class Decision(Versioned):
    """The human's decision on a pending review.  Read by the writer's approval check,
    and checked by ``verify`` (and so by ``sync``, before it takes one) for its form
    and its Evidence record (memory/ops/review_trace.py)."""

    review_id: str
    status: Literal["approved", "rejected"]
    approver: str
    ts: datetime
    reason: str = ""
    diff: CanonDiff | None = None  # the diff as approved (after any human edit)
    commit: str | None = None


class ReviewEdit(Versioned):
    """The human's edit of a pending review's diff (the monthly file stays as it was)."""

    review_id: str
    editor: str
    ts: datetime
    diff: CanonDiff
    original: CanonDiff


def read_decision(root: MemoryRoot, review_id: str) -> dict[str, Any] | None:
    """``reviews/decisions/<review_id>.json`` as a dict, or None if absent or unreadable."""
    if not review_id or "/" in review_id or "\\" in review_id or review_id.startswith("."):
        return None
    path = root.area_dir("decisions") / f"{review_id}.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def approved_review(root: MemoryRoot, review_id: str) -> bool:
    """True when the review is approved and not yet applied: the writer's check.

    An approval is good for one Canon commit; once ``commit`` is recorded in the
    decision the same review cannot be applied again.
    """
    decision = read_decision(root, review_id)
    return bool(decision and decision.get("status") == "approved" and not decision.get("commit"))
