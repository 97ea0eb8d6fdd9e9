"""What ``review show`` presents: the diff against current Canon and the evidence cited."""

from __future__ import annotations

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.canon.canon import IDENTITY_FILE
from evolving_agent.memory.canon.canon_diff import apply_diff, unified
from evolving_agent.memory.evidence.evidence import EvidenceRecord
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record
from evolving_agent.review.history import commit_diff
from evolving_agent.review.store import Review, cited_evidence, load_review, to_json


@record(frozen=True)
class ReviewView:
    review: Review
    # Unified diff against Canon on disk ("" when it cannot apply); for an applied review,
    # what its commit changed.
    diff_text: str
    problem: str  # why the diff does not apply to Canon as it is now, if it does not
    evidence: list[tuple[str, EvidenceRecord | None]]

    def to_json(self) -> dict[str, object]:
        return {
            **to_json(self.review),
            "canon_diff": self.diff_text,
            "problem": self.problem or None,
            "evidence": [
                {"id": i, "ts": r.ts.isoformat(), "kind": r.kind, "text": r.text}
                if r is not None
                else {"id": i, "ts": None, "kind": None, "text": None}
                for i, r in self.evidence
            ],
        }


def view_review(root: MemoryRoot, review_id: str) -> ReviewView:
    review = load_review(root, review_id)
    diff_text = problem = ""
    if review.status == "approved" and review.decision and review.decision.commit:
        diff_text = commit_diff(root, review.decision.commit)  # what the approval changed
    else:
        current = (root.canon / IDENTITY_FILE).read_text(encoding="utf-8")
        try:
            diff_text = unified(current, apply_diff(current, review.diff).after)
        except InvalidInput as exc:
            problem = str(exc)
    found = cited_evidence(root, review.pending.evidence_ids)
    evidence = [(i, found.get(i)) for i in review.pending.evidence_ids]
    return ReviewView(review, diff_text, problem, evidence)
