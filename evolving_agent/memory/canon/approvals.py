"""Approvals: the smallest view of review decisions the writer and ``verify`` need.

The review subsystem (``evolving_agent.review``) owns the full model; the writer only
asks "may the monthly job apply this review now?" and ``verify`` asks "was this
review approved, and by which commit was it applied?", so the dependency points one
way.  A decision records its Canon commit once the approved diff is applied; from then
on the approval is spent and the writer refuses to use it again.
"""

from __future__ import annotations

import json
from typing import Any

from evolving_agent.paths import MemoryRoot


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
