"""The human's other two answers to a review: edit the proposed diff, or reject it.

An edit never rewrites the monthly job's file (only the monthly actor writes the
queue): the human's version is stored as ``reviews/decisions/edits/<id>.json`` and
logged to Evidence, and approval then applies the edited diff.  A rejection writes a
rejected ``Decision`` and a ``review`` Evidence record carrying the reason.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from evolving_agent.errors import InvalidInput, TamperingFound, first_error
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.base.redact import redact
from evolving_agent.memory.base.yamlio import dump_yaml, parse_yaml
from evolving_agent.memory.canon.canon_diff import CanonDiff, apply_diff, describe
from evolving_agent.memory.evidence.evidence import now
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.approve import committed_identity
from evolving_agent.review.models import Decision
from evolving_agent.review.store import (
    EDITS_DIR,
    Review,
    ReviewEdit,
    check_person,
    dump,
    load_review,
    review_lock,
)

EDIT_HEADER = """\
# Review {id}: edit the proposed change to canon/identity.yaml, then save and quit.
#   section:  values | self_understanding | habits
#   op:       add | remove | replace
#   text:     the new entry (add, replace)
#   old_text: the entry removed or replaced, exactly as it is in Canon (remove, replace)
"""


def _refuse_decided(review: Review, verb: str) -> None:
    if review.status == "unverifiable":
        raise TamperingFound([f"review {review.id}: {review.unverified}"])
    if review.decision is not None:
        raise InvalidInput(f"review {review.id} is already {review.status}; it cannot be {verb}")


def edit_text(root: MemoryRoot, review_id: str) -> str:
    """The text the human edits: the review's current diff as a small YAML document."""
    review = load_review(root, review_id)
    _refuse_decided(review, "edited")
    fields = review.diff.model_dump(exclude={"schema_version"}, exclude_none=True)
    return EDIT_HEADER.format(id=review.id) + dump_yaml(fields)


def parse_edit(review_id: str, text: str) -> CanonDiff:
    """Validate edited text as a Canon diff; errors name the field (and line)."""
    where = f"<edited review {review_id}>"
    data = parse_yaml(text, file=where)
    if not isinstance(data, dict):
        raise InvalidInput("expected section, op, text and old_text", file=where)
    try:
        return CanonDiff.model_validate(dict(data))
    except ValidationError as exc:
        raise InvalidInput(first_error(exc, bare=True), file=where) from None


def record_edit(root: MemoryRoot, review_id: str, text: str, *, editor: str) -> ReviewEdit | None:
    """Store the human's edited diff; None when it says the same as before."""
    check_person(editor)
    load_review(root, review_id)  # a bad id fails before anything (even a lock) is made
    with review_lock(root):
        review = load_review(root, review_id)
        _refuse_decided(review, "edited")
        diff = parse_edit(review_id, redact(text))  # the edit is stored and shown: no keys
        if diff == review.diff:
            return None
        apply_diff(committed_identity(root), diff)  # it must apply to Canon as it is now
        edit = ReviewEdit(
            review_id=review.id, editor=editor, ts=now(), diff=diff, original=review.pending.diff
        )
        _record(
            root,
            f"{EDITS_DIR}/{review.id}.json",
            edit,
            f"edited {review.id}: {describe(diff)}",
            {
                "review_id": review.id,
                "action": "edit",
                "editor": editor,
                "diff": diff.model_dump(mode="json"),
                "previous": review.diff.model_dump(mode="json"),
            },
        )
        return edit


def reject_review(root: MemoryRoot, review_id: str, *, reason: str, approver: str) -> Decision:
    """Reject ``review_id``; the reason is kept in the decision and in Evidence."""
    check_person(approver)
    reason = redact(" ".join(reason.split()))
    if not reason:
        raise InvalidInput("a rejection needs a reason (--reason TEXT)")
    load_review(root, review_id)  # a bad id fails before anything (even a lock) is made
    with review_lock(root):
        review = load_review(root, review_id)
        _refuse_decided(review, "rejected")
        decision = Decision(
            review_id=review.id,
            status="rejected",
            approver=approver,
            ts=now(),
            reason=reason,
            diff=review.diff,
        )
        _record(
            root,
            f"{review.id}.json",
            decision,
            f"rejected {review.id}: {reason}",
            {
                "review_id": review.id,
                "action": "reject",
                "reason": reason,
                "by": approver,
                "diff": review.diff.model_dump(mode="json"),
                "evidence_ids": review.pending.evidence_ids,
            },
        )
        return decision


def _record(
    root: MemoryRoot, rel: str, record: BaseModel, message: str, data: dict[str, Any]
) -> None:
    """What the human did to a review, twice: its file under ``decisions/`` (``rel``),
    then the ``review`` event in Evidence that says so."""
    human = Writer(root, "human")
    human.write("decisions", rel, dump(record))
    human.append("review", message, data=data)
