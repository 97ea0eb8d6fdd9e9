"""Review provenance, as the review commands (and the review page) use it.

The rule lives in :mod:`evolving_agent.memory.ops.review_trace` (``verify`` shares it): a
pending review is genuine iff a ``review-queued`` Evidence record written by the job
that queued it (``by``: ``monthly`` or ``probe``) holds the sha256 of the file's bytes.
Here a review that is not genuine is *refused*: the refusal is appended to Evidence
(kind ``review-refused``, so it is seen at the next review) and raised as
:class:`ReviewTampered` (exit 5), naming the file.
"""

from __future__ import annotations

from evolving_agent.errors import EXIT_TAMPERED, EvolvingAgentError
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.canon.policy import Actor
from evolving_agent.memory.ops.review_trace import Trace, TraceIndex, check_review
from evolving_agent.paths import MemoryRoot

__all__ = ["ReviewTampered", "Trace", "TraceIndex", "check_review", "refuse", "require_genuine"]


class ReviewTampered(EvolvingAgentError):
    """A pending review (or the decision on one) that no job queued, or that was edited."""

    exit_code = EXIT_TAMPERED

    def __init__(self, traces: list[Trace], record_id: str | None = None) -> None:
        self.traces = traces
        noted = f" (recorded as Evidence {record_id})" if record_id else ""
        what = "; ".join(t.problem for t in traces)
        super().__init__(
            f"refused: {what}{noted}; nothing was applied. Remove the file after reading it, "
            "and run 'evolving-agent verify'"
        )


def refuse(root: MemoryRoot, traces: list[Trace], *, actor: Actor = "human") -> ReviewTampered:
    """Record the refusal of ``traces`` in Evidence; returns the error to raise."""
    record = Writer(root, actor).append(
        "review-refused",
        "; ".join(t.problem for t in traces),
        data={
            "reviews": [
                {
                    "review_id": t.review_id,
                    "file": t.path.name,
                    "verdict": t.verdict,
                    "sha256": t.sha256,
                    **({"proposal": t.proposal} if t.proposal else {}),
                }
                for t in traces
            ]
        },
    )
    return ReviewTampered(traces, record.id)


def require_genuine(root: MemoryRoot, review_id: str, index: TraceIndex | None = None) -> Trace:
    """The trace of ``review_id``; refuses (recorded, exit 5) one that is not genuine."""
    trace = (index or TraceIndex.scan(root)).check(root, review_id)
    if trace.tampered:
        raise refuse(root, [trace])
    return trace
