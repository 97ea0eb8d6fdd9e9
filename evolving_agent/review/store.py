"""Reading the review queue as the human sees it: pending reviews, edits, decisions.

``reviews/pending/<id>.json``         the monthly job's proposal (never rewritten here)
``reviews/decisions/edits/<id>.json`` the human's edited diff (``ReviewEdit``), if any
``reviews/decisions/<id>.json``       the human's ``Decision``; ``commit`` is filled in
                                      only once the approved diff is committed to Canon

A review's status is derived from these files: ``pending``, ``approved`` (applied),
``applying`` (approved but its Canon commit not yet recorded: an interrupted approval
that re-running ``review approve`` finishes) or ``rejected``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from evolving_agent.errors import InvalidInput, InvalidPath, NotFound, first_error
from evolving_agent.memory.authority import ScopedReader
from evolving_agent.memory.base.locks import human_lock_dir, lock_file
from evolving_agent.memory.canon.approvals import ReviewEdit
from evolving_agent.memory.canon.canon_diff import CanonDiff
from evolving_agent.memory.evidence.evidence import EvidenceLog, EvidenceRecord
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record
from evolving_agent.review.models import Decision, PendingReview
from evolving_agent.review.provenance import (
    ReviewTampered,
    Trace,
    TraceIndex,
    refuse,
    require_genuine,
)

EDITS_DIR = "edits"
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")

Status = Literal["pending", "applying", "approved", "rejected", "unverifiable"]


NARROWING = "-narrowing"  # the weekly job's proposal id suffix for a narrowing


@record(frozen=True)
class Review:
    """Everything known about one review."""

    pending: PendingReview
    edit: ReviewEdit | None
    decision: Decision | None
    # Why the decision (or edit) cannot be shown as the human's: no Evidence record of a
    # human making it (memory/ops/review_trace.py).  Never finished, never applied.
    unverified: str = ""

    @property
    def id(self) -> str:
        return self.pending.id

    @property
    def diff(self) -> CanonDiff:
        """The diff as it stands: the human's edit if any, else the monthly proposal."""
        if self.decision is not None and self.decision.diff is not None:
            return self.decision.diff
        return self.edit.diff if self.edit is not None else self.pending.diff

    @property
    def narrowing(self) -> bool:
        """A narrowing of a high-stakes rule (weekly ``_narrowings``): the human words it."""
        return any(p.endswith(NARROWING) for p in self.pending.proposals)

    @property
    def needs_wording(self) -> bool:
        """A narrowing nobody has worded yet: its diff is the rule as it stands, a base
        for the human's words, never an entry to approve as it is."""
        return self.narrowing and (self.edit is None or self.edit.diff == self.pending.diff)

    @property
    def status(self) -> Status:
        if self.unverified:
            return "unverifiable"
        if self.decision is None:
            return "pending"
        if self.decision.status == "rejected":
            return "rejected"
        return "approved" if self.decision.commit else "applying"


def check_id(review_id: str) -> str:
    """Refuse path-like or malformed review ids before any file is touched (exit 4)."""
    rel = f"{review_id}.json"
    parts = review_id.replace("\\", "/").split("/")
    reason = ""
    if not review_id.strip():
        reason = "empty review id"
    elif "\0" in review_id:
        reason = "NUL byte in path"
    elif review_id.startswith(("/", "\\")):
        reason = "absolute paths are not allowed"
    elif ".." in parts:
        reason = "'..' is not allowed"
    elif len(parts) > 1:
        reason = "a review id is a single name"
    elif review_id.startswith("."):
        reason = "hidden files are reserved"
    if reason:
        raise InvalidPath("pending", rel, reason)
    if not _ID.fullmatch(review_id):
        raise NotFound(f"no review {review_id!r} (ids look like rev-2026-11-1)")
    return review_id


def check_person(name: str) -> str:
    """A name for a commit trailer and a decision: one short line."""
    if not name.strip() or any(c in name for c in "\r\n\0") or len(name) > 100:
        raise InvalidInput(f"approver {name!r} must be one short line")
    return name


def _load(model: type[BaseModel], path: Path) -> BaseModel:
    try:
        return model.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        raise InvalidInput(first_error(exc, whole="(file)"), file=path) from None


def _reader(root: MemoryRoot) -> ScopedReader:
    return ScopedReader(require_root(root), "human")


def decision_path(root: MemoryRoot, review_id: str) -> Path:
    return _reader(root).path("decisions", f"{check_id(review_id)}.json")


def load_review(root: MemoryRoot, review_id: str, index: TraceIndex | None = None) -> Review:
    """The review ``review_id``; NotFound when the monthly job never queued it.

    A review file no job queued, or one changed since, is refused (recorded, exit 5):
    see :mod:`evolving_agent.review.provenance`.
    """
    reader = _reader(root)
    check_id(review_id)
    pending_path = reader.path("pending", f"{review_id}.json")
    if not pending_path.is_file():
        raise NotFound(f"no review {review_id!r} (see 'evolving-agent review list')")
    index = index or TraceIndex.scan(root)
    require_genuine(root, review_id, index)
    pending = _load(PendingReview, pending_path)
    assert isinstance(pending, PendingReview)
    if pending.id != review_id:
        raise InvalidInput(f"id: the file holds review {pending.id!r}", file=pending_path)
    edit_path = reader.path("decisions", f"{EDITS_DIR}/{review_id}.json")
    decision_file = reader.path("decisions", f"{review_id}.json")
    present = [p for p in (edit_path, decision_file) if p.is_file()]
    unverified = next(filter(None, (index.check_decision(p) for p in present)), "")
    if unverified:  # shown as such; its bytes are not the human's to read as a decision
        return Review(pending, None, None, unverified)
    edit = _load(ReviewEdit, edit_path) if edit_path.is_file() else None
    decision = _load(Decision, decision_file) if decision_file.is_file() else None
    assert edit is None or isinstance(edit, ReviewEdit)
    assert decision is None or isinstance(decision, Decision)
    return Review(pending, edit, decision)


@record(frozen=True)
class ReviewList:
    """The genuine reviews (oldest first), and the refusal of any other file, if one."""

    reviews: list[Review]
    refused: ReviewTampered | None = None


def list_reviews(root: MemoryRoot) -> list[Review]:
    """Every genuine queued review with its status, oldest first (any other file in the
    queue is refused and recorded: see :func:`scan_reviews`)."""
    return scan_reviews(root).reviews


def scan_reviews(root: MemoryRoot) -> ReviewList:
    """Every queued review with its status, oldest first; planted or edited review
    files are left out and refused together (recorded once, see ``refused``)."""
    reader = _reader(root)
    index = TraceIndex.scan(root)
    reviews = []
    bad: list[Trace] = []
    for path in reader.list("pending", "*.json"):
        if not _ID.fullmatch(path.stem):
            raise InvalidInput("not a review file (ids look like rev-2026-11-1)", file=path)
        trace = index.check(root, path.stem)
        if trace.tampered:
            bad.append(trace)
            continue
        reviews.append(load_review(root, path.stem, index))
    ordered = sorted(reviews, key=lambda r: (r.pending.created, r.id))
    return ReviewList(ordered, refuse(root, bad) if bad else None)


@contextmanager
def review_lock(root: MemoryRoot) -> Iterator[None]:
    """One human decision at a time (approve, edit and reject share it)."""
    with lock_file(human_lock_dir(root) / "review.lock"):  # the human's alone
        yield


def cited_evidence(root: MemoryRoot, ids: list[str]) -> dict[str, EvidenceRecord]:
    """The Evidence records a review cites, by id (missing ids are simply absent)."""
    return EvidenceLog(root).find(set(ids))


def to_json(review: Review) -> dict[str, object]:
    """The object ``review list --json`` and ``review show --json`` print."""
    d = review.decision
    return {
        "id": review.id,
        "status": review.status,
        "month": review.pending.month,
        "diff": review.diff.model_dump(mode="json", exclude={"schema_version"}),
        "edited": review.edit is not None,
        "hypothesis": review.pending.hypothesis,
        "proposals": review.pending.proposals,
        "evidence_ids": review.pending.evidence_ids,
        "rationale": review.pending.rationale,
        "decided_by": d.approver if d else None,
        "decided_at": d.ts.isoformat() if d else None,
        "reason": d.reason if d and d.reason else None,
        "commit": d.commit if d else None,
        "unverified": review.unverified or None,
        # "probe": a card from ``probe diff`` (its findings in ``probe``); else a proposal
        "kind": "probe" if review.pending.probe is not None else "proposal",
        "probe": review.pending.probe.model_dump(mode="json") if review.pending.probe else None,
    }


def dump(model: BaseModel) -> str:
    return model.model_dump_json(indent=2) + "\n"
