"""Shared setup for the review and canon tests: a root with evidence and queued reviews.

The monthly job (another module) fills ``reviews/pending``; these tests queue reviews
exactly as it does, through ``Writer(root, "monthly")``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import git

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.canon.canon_diff import CanonDiff
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops.review_trace import queue_pending
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.models import PendingReview

IDENTITY = """\
# My assistant.  I keep this file by hand; keep my comments.
schema_version: 1
name: Ada   # short on purpose
description: "A careful, direct assistant."

values:
  # most important first
  - Say what I know and what I don't.
  - Answer the question that was asked.  # the one I care about

# How it sees itself.
self_understanding:
  - I tend to offer options the user did not ask for.

# Habits.
habits:
  - Lead with the answer, then the reasoning.
# end of file
"""


def queue(
    root: MemoryRoot,
    review_id: str,
    diff: CanonDiff,
    evidence_ids: list[str] | None = None,
    *,
    month: str = "2026-11",
) -> PendingReview:
    """Queue a pending review as the monthly job would."""
    review = PendingReview(
        id=review_id,
        month=month,
        diff=diff,
        hypothesis="h-options",
        proposals=[f"prop-{review_id}"],
        evidence_ids=evidence_ids or ["ev-000000000000"],
        rationale="Seen on four days.",
        created=datetime(2026, 12, 1, 4, 0, tzinfo=UTC),
    )
    queue_pending(
        Writer(root, "monthly"), review_id, review.model_dump_json(), by="monthly", run="test"
    )
    return review


def add(text: str, section: str = "habits") -> CanonDiff:
    return CanonDiff.model_validate({"section": section, "op": "add", "text": text})


def set_identity(root: MemoryRoot, text: str = IDENTITY) -> None:
    """The human's own Canon, committed through the writer."""
    Writer(root, "human").write("canon", "identity.yaml", text, message="human: my identity")


def snapshot(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` (the whole root, including .git), byte for byte.

    Empty lock files under ``.ea/locks`` and ``.ea/human-locks`` are left out: taking
    a lock is not a write.
    """
    return {
        str(p.relative_to(path)): p.read_bytes()
        for p in path.rglob("*")
        if p.is_file() and not any(d in p.as_posix() for d in (".ea/locks", ".ea/human-locks"))
    }


def head(root: MemoryRoot) -> git.Commit:
    return git.Repo(root.path).head.commit


def evidence_of(root: MemoryRoot, kind: str) -> list[dict[str, object]]:
    return [
        {"actor": r.actor, "text": r.text, **r.data}
        for r in EvidenceLog(root).iter_all()
        if r.kind == kind
    ]
