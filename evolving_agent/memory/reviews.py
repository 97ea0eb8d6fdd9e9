"""The smallest view of review decisions the writer needs: is a review approved?

The review subsystem (``evolving_agent.review``) owns the full model; the writer only
asks this question, so the dependency points one way.
"""

from __future__ import annotations

import json

from evolving_agent.paths import MemoryRoot


def approved_review(root: MemoryRoot, review_id: str) -> bool:
    """True when ``reviews/decisions/<review_id>.json`` records an approval."""
    if not review_id or "/" in review_id or review_id.startswith("."):
        return False
    path = root.area_dir("decisions") / f"{review_id}.json"
    if not path.exists():
        return False
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("status") == "approved"
    except (ValueError, AttributeError):
        return False
