"""Approving a review: the one path by which the monthly job's proposal reaches Canon.

Order of events, chosen so a crash at any point is either harmless or finished by
running ``review approve ID`` again:

1. plan: load the review, refuse it if decided or held by the drift watch
   (:mod:`evolving_agent.review.hold`), enforce the monthly limit (approval
   decisions dated this calendar month), apply the diff to the *committed*
   identity.yaml and measure how much it removes;
2. write the ``Decision`` (approved, no commit yet) as the human;
3. write Canon as the monthly actor holding that approval (the writer commits it
   with ``Review-Id`` / ``Approved-By`` / ``Evidence-Ids`` trailers);
4. record the commit in the decision: the approval is now spent, the writer refuses
   to use it again, and a ``review`` record goes to Evidence.

An exception between 2 and 3 (a denied write, Ctrl-C) removes the decision again.
A hard crash leaves the review ``applying``; re-running finds the commit by its
``Review-Id`` trailer (or makes it) and completes step 4.
"""

from __future__ import annotations

import re

from evolving_agent.errors import (
    EXIT_DENIED,
    EvolvingAgentError,
    InvalidInput,
    TamperingFound,
    UsageError,
)
from evolving_agent.memory.authority import Approval, Writer
from evolving_agent.memory.base.locks import area_lock
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.canon.canon import IDENTITY_FILE
from evolving_agent.memory.canon.canon_diff import CANON_FILE, AppliedDiff, apply_diff, describe
from evolving_agent.memory.canon.policy import Policy
from evolving_agent.memory.evidence.evidence import now
from evolving_agent.memory.ops.hypotheses import mark_canon
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record
from evolving_agent.review.hold import require_not_held
from evolving_agent.review.models import Decision
from evolving_agent.review.store import (
    Review,
    _load,
    _reader,
    check_person,
    dump,
    load_review,
    review_lock,
)


class MonthlyLimitReached(EvolvingAgentError):
    """A further approval for the review's month would exceed the policy's monthly limit."""

    exit_code = EXIT_DENIED

    def __init__(self, review_id: str, month: str, limit: int, used: list[str]) -> None:
        self.used = used
        done = ", ".join(used) if used else "none"
        super().__init__(
            f"refused: {len(used)} of {limit} identity diffs of {month} already approved "
            f"({done}); the monthly limit is reached, so {review_id} stays pending "
            "(reject it, or raise review.monthly_limit in canon/policy.yaml)"
        )


class WordingNeeded(InvalidInput):
    """A narrowing of a high-stakes rule approved before the human worded it."""

    def __init__(self, review: Review) -> None:
        super().__init__(
            f"refused: review {review.id} narrows the high-stakes rule {review.pending.hypothesis}"
            " and nobody has worded the narrower rule yet; write it with 'evolving-agent "
            f"review edit {review.id}' (or Edit on the review page), then approve — or "
            "reject it to keep the rule as it is; nothing was written"
        )


class RemovalNotConfirmed(UsageError):
    """A diff removing more than the policy's share of Canon was not confirmed twice."""

    def __init__(self, review_id: str, applied: AppliedDiff, threshold: float) -> None:
        super().__init__(
            f"review {review_id} removes {applied.removed} of {applied.entries_before} Canon "
            f"entries ({applied.removed_fraction:.0%}, more than {threshold:.0%}); confirm the "
            "removal explicitly (on a terminal, or with --allow-large-removal)"
        )


@record(frozen=True)
class ApprovalPlan:
    """What approving a review would do, computed before anything is written."""

    review: Review
    applied: AppliedDiff | None  # None when the Canon commit already exists (resuming)
    existing_commit: str | None
    month: str
    used: list[str]  # reviews approved this month, other than this one
    limit: int
    threshold: float

    @property
    def resuming(self) -> bool:
        return self.review.status == "applying"

    @property
    def needs_removal_confirm(self) -> bool:
        return (
            not self.resuming
            and self.applied is not None
            and self.applied.removed_fraction > self.threshold
        )


@record(frozen=True)
class ApprovalResult:
    review_id: str
    commit: str
    resumed: bool
    decision: Decision
    plan: ApprovalPlan  # as computed under the lock

    @property
    def used(self) -> int:
        """Approvals of this month, this one included."""
        return len(self.plan.used) + 1


def committed_identity(root: MemoryRoot) -> str:
    """identity.yaml as last committed (the base every approval applies to)."""
    data = gitrepo.blob_at(root, gitrepo.require_repo(root), CANON_FILE)
    if data is None:
        raise InvalidInput("not in the last commit; restore it first", file=CANON_FILE)
    return data.decode("utf-8")


def commit_for_review(root: MemoryRoot, review_id: str) -> str | None:
    """The Canon commit that applied ``review_id`` (found by its trailers), if any."""
    for commit in gitrepo.log(root, gitrepo.require_repo(root), paths=["canon"]):
        trailers = gitrepo.parse_trailers(commit.message)
        if trailers.get("Review-Id") == review_id and trailers.get("Actor") == "monthly":
            return commit.sha
    return None


_REVIEW_MONTH = re.compile(r"rev-(\d{4}-\d{2})-")


def review_month(review_id: str, fallback: str) -> str:
    """The month (YYYY-MM) a review belongs to, from its id (``rev-<YYYY-MM>-…``)."""
    found = _REVIEW_MONTH.match(review_id)
    return found.group(1) if found else fallback


def approvals_in_month(root: MemoryRoot, month: str) -> list[str]:
    """Ids of approved reviews that belong to ``month`` (YYYY-MM): the month they were
    queued for, not the day of the decision, so approving October's review in November
    uses one of October's places ("1 of 3 approvals used in 2026-12" was said of a
    November review)."""
    out = []
    for path in _reader(root).list("decisions", "*.json"):
        decision = _load(Decision, path)
        assert isinstance(decision, Decision)
        decided = decision.ts.astimezone().strftime("%Y-%m")
        if decision.status == "approved" and review_month(decision.review_id, decided) == month:
            out.append(decision.review_id)
    return sorted(out)


def _refuse_decided(review: Review) -> None:
    if review.status == "unverifiable":
        raise TamperingFound([f"review {review.id}: {review.unverified}"])
    d = review.decision
    if d is None or review.status == "applying":
        return
    when = d.ts.astimezone().strftime("%Y-%m-%d")
    if review.status == "rejected":
        raise InvalidInput(f"review {review.id} was rejected by {d.approver} on {when}: {d.reason}")
    raise InvalidInput(
        f"review {review.id} was already approved by {d.approver} on {when} and applied in "
        f"commit {(d.commit or '')[:10]}; an approval applies once"
    )


def plan_approval(root: MemoryRoot, review_id: str) -> ApprovalPlan:
    """Check everything approving ``review_id`` needs; raise if it cannot be approved.

    Taken under the review lock so it never sees another approval half done.
    """
    load_review(root, review_id)  # a bad id fails before anything (even a lock) is made
    with review_lock(root):
        return _plan(root, review_id)


def _canon_texts(root: MemoryRoot) -> tuple[str, str]:
    """(committed, on disk) identity.yaml, read while no writer is mid-commit."""
    with area_lock(root, "canon"):  # the writer's Canon lock
        base = committed_identity(root)
        return base, (root.canon / IDENTITY_FILE).read_text(encoding="utf-8")


def _plan(root: MemoryRoot, review_id: str) -> ApprovalPlan:
    review = load_review(root, review_id)
    _refuse_decided(review)
    if review.needs_wording and review.status == "pending":
        raise WordingNeeded(review)  # the same rule on every door: CLI and page
    require_not_held(root, review)  # the drift watch's hold: the same rule on every door
    policy = Policy.load(root)
    month = review.pending.month or review_month(review.id, now().strftime("%Y-%m"))
    used = [r for r in approvals_in_month(root, month) if r != review_id]
    limit = policy.review.monthly_limit

    def plan(applied: AppliedDiff | None, existing: str | None) -> ApprovalPlan:
        return ApprovalPlan(
            review=review,
            applied=applied,
            existing_commit=existing,
            month=month,
            used=used,
            limit=limit,
            threshold=policy.review.removal_confirm_fraction,
        )

    if review.status == "applying":
        existing = commit_for_review(root, review_id)
        if existing is not None:
            return plan(None, existing)
    elif len(used) >= limit:
        raise MonthlyLimitReached(review_id, month, limit, used)
    base, disk = _canon_texts(root)
    applied = apply_diff(base, review.diff)
    # After a crash the new text may already be on disk, uncommitted: that is ours.
    if disk != base and not (review.status == "applying" and disk == applied.after):
        raise InvalidInput(
            "has changes that were not committed through the writer; run "
            "'evolving-agent verify', then commit them as the human or undo them",
            file=root.canon / IDENTITY_FILE,
        )
    return plan(applied, None)


def _message(review: Review) -> str:
    diff = review.diff
    verb = {"add": "adds to", "remove": "removes from", "replace": "replaces in"}[diff.op]
    lines = [f"canon: review {review.id} {verb} {diff.section}", "", describe(review.diff)]
    if review.pending.rationale:
        lines += ["", " ".join(review.pending.rationale.split())]
    return "\n".join(lines)


def approve_review(
    root: MemoryRoot,
    review_id: str,
    *,
    approver: str,
    allow_large_removal: bool = False,
    confirmed: ApprovalPlan | None = None,
) -> ApprovalResult:
    """Approve ``review_id`` and apply it to Canon (or finish an interrupted approval).

    ``confirmed`` is the plan the human saw; if Canon or the review changed since,
    nothing is written.
    """
    check_person(approver)
    load_review(root, review_id)  # a bad id fails before anything (even a lock) is made
    with review_lock(root):
        plan = _plan(root, review_id)
        if confirmed is not None and (
            (confirmed.applied and confirmed.applied.after) != (plan.applied and plan.applied.after)
        ):
            raise InvalidInput(
                f"Canon or review {review_id} changed while you were confirming; "
                "nothing was written, run the command again"
            )
        if plan.needs_removal_confirm and not allow_large_removal:
            assert plan.applied is not None
            raise RemovalNotConfirmed(review_id, plan.applied, plan.threshold)
        return _apply(root, plan, approver)


def _apply(root: MemoryRoot, plan: ApprovalPlan, approver: str) -> ApprovalResult:
    review = plan.review
    rel = f"{review.id}.json"
    human = Writer(root, "human")
    decision = review.decision or Decision(
        review_id=review.id, status="approved", approver=approver, ts=now(), diff=review.diff
    )
    sha = plan.existing_commit
    if sha is None:
        assert plan.applied is not None
        if not plan.resuming:
            # First the intent, in Evidence: a decision file without it is a planted one,
            # never an interrupted approval to finish (memory/ops/review_trace.py).
            human.append(
                "review",
                f"approving {review.id}",
                data={"review_id": review.id, "action": "approving", "approver": approver},
            )
            human.write("decisions", rel, dump(decision))
        approval = Approval(review.id, decision.approver, tuple(review.pending.evidence_ids))
        try:
            Writer(root, "monthly", approval=approval).write(
                "canon", IDENTITY_FILE, plan.applied.after, message=_message(review)
            )
        except BaseException:
            # Back out the decision unless the commit landed (then re-running finishes).
            if not plan.resuming and commit_for_review(root, review.id) is None:
                human.delete("decisions", rel)
            raise
        sha = commit_for_review(root, review.id)
        assert sha is not None
    decision = decision.model_copy(update={"commit": sha})
    human.write("decisions", rel, dump(decision))
    human.append(
        "review",
        f"approved {review.id}: {describe(decision.diff or review.diff)}",
        data={
            "review_id": review.id,
            "action": "approve",
            "approver": decision.approver,
            "commit": sha,
            "evidence_ids": review.pending.evidence_ids,
        },
    )
    applied = decision.diff or review.diff
    mark_canon(
        root,
        review.pending.hypothesis,
        None if applied.op == "remove" else applied.text,
        review.id,
    )
    return ApprovalResult(review.id, sha, plan.resuming, decision, plan)
