"""Review cards: one pending (or decided) review with everything a decision needs.

A card is computed fresh each time it is shown: the diff re-applied to Canon as it is
now (a diff that no longer applies says so here, instead of failing at approval), the
approval planned exactly as ``review approve`` would plan it (limit, removal share), the
evidence for and against the hypothesis behind it, dated and quoted, how long it has
waited, what would reverse it, and any drift flag holding it.  A probe card shows
instead what each probe asked and both models' answers, with the probe runs behind them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date

from evolving_agent.errors import EvolvingAgentError
from evolving_agent.memory.evidence.evidence import EvidenceRecord, now
from evolving_agent.memory.ops.hypotheses import Hypothesis, HypothesisDetail, show_hypothesis
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.approve import ApprovalPlan, plan_approval
from evolving_agent.review.drift import DriftFlag
from evolving_agent.review.hold import Hold, ReviewHeld
from evolving_agent.review.probe_card import ProbeCardView, probe_card_view
from evolving_agent.review.store import Review, cited_evidence, list_reviews
from evolving_agent.review.view import ReviewView, view_review


@dataclass(frozen=True)
class Quote:
    id: str
    day: date | None
    kind: str
    text: str
    found: bool


@dataclass(frozen=True)
class Card:
    view: ReviewView
    hypothesis: HypothesisDetail | None
    evidence_for: list[Quote]
    evidence_against: list[Quote]
    waited_days: int
    reverse: str
    plan: ApprovalPlan | None
    plan_problem: str  # why approving would be refused now ("" when it would go through)
    hold: Hold | None  # the drift watch holds it until the human has looked
    probe: ProbeCardView | None  # a card ``probe diff`` queued: questions and answers

    @property
    def held_by(self) -> list[DriftFlag]:
        return self.hold.flags if self.hold else []

    @property
    def review(self) -> Review:
        return self.view.review

    @property
    def fingerprint(self) -> str:
        """What approval would write, as the human saw it (the page's ``confirmed``)."""
        after = self.plan.applied.after if self.plan and self.plan.applied else ""
        return hashlib.sha256(after.encode()).hexdigest()[:32]

    @property
    def can_approve(self) -> bool:
        return self.review.status in ("pending", "applying") and not self.plan_problem

    @property
    def hold_ids(self) -> list[str]:
        return list(dict.fromkeys(i for f in self.held_by for i in f.evidence_ids))


def fingerprint_of(plan: ApprovalPlan) -> str:
    after = plan.applied.after if plan.applied else ""
    return hashlib.sha256(after.encode()).hexdigest()[:32]


def _quotes(ids: list[str], found: dict[str, EvidenceRecord]) -> list[Quote]:
    out = []
    for i in ids:
        rec = found.get(i)
        if rec is None:
            out.append(Quote(i, None, "?", "(not found in Evidence)", False))
        else:
            out.append(Quote(i, rec.day(), rec.kind, rec.text, True))
    return sorted(out, key=lambda q: (q.day or date.min, q.id))


def _reverse(review: Review, h: Hypothesis | None) -> str:
    diff = review.diff
    commit = review.decision.commit[:10] if review.decision and review.decision.commit else ""
    undo = (
        f"'evolving-agent canon revert {commit}' undoes it at once"
        if commit
        else "once approved, 'evolving-agent canon revert COMMIT' undoes it at once"
    )
    if h is None:
        return f"{undo}."
    sup, con = len(set(h.supported_on)), len(set(h.contradicted_on))
    need = max(2, sup + 1) - con
    if h.stakes == "high":
        # A high-stakes rule never weakens or retires on evidence (memory/ops/hypotheses.py
        # judge): contradicting days reach the owner as a narrowing card, nothing more.
        return (
            f"{undo}; evidence does not: {h.id} is a high-stakes rule, which no job weakens "
            "or retires however many days contradict it — contradicting days come to you "
            "as a narrowing card for you to word; only you edit or retire it "
            f"('evolving-agent hypothesis edit {h.id}' / 'hypothesis retire')."
        )
    if diff.op == "remove":
        return (
            f"{undo}; support for {h.id} again on 2 or more days would make it live and "
            "the weekly job would propose the entry back."
        )
    return (
        f"{undo}; or evidence: {h.id} is supported on {sup} day(s) and contradicted on "
        f"{con}; contradicting friction on {max(1, need)} more distinct day(s) would weaken "
        "it, one more would retire it, and the weekly job would then propose taking this "
        "entry out of Canon."
    )


def build_card(root: MemoryRoot, review_id: str, held: dict[str, Hold]) -> Card:
    view = view_review(root, review_id)
    review = view.review
    try:
        detail: HypothesisDetail | None = show_hypothesis(root, review.pending.hypothesis)
    except EvolvingAgentError:
        detail = None
    h = detail.hypothesis if detail else None
    against_ids = list(h.contradicts) if h else []
    for_ids = list(dict.fromkeys([*review.pending.evidence_ids, *(h.supports if h else [])]))
    found = cited_evidence(root, for_ids + against_ids)
    plan: ApprovalPlan | None = None
    problem = ""
    if review.status in ("pending", "applying"):
        try:
            plan = plan_approval(root, review_id)
        except ReviewHeld:
            pass  # the card's hold notice says so, with the way out
        except EvolvingAgentError as exc:
            problem = str(exc)
    waited_to = review.decision.ts if review.decision else now()
    return Card(
        view=view,
        hypothesis=detail,
        evidence_for=_quotes(for_ids, found),
        evidence_against=_quotes(against_ids, found),
        waited_days=(waited_to - review.pending.created).days,
        reverse=_reverse(review, h),
        plan=plan,
        plan_problem=problem,
        hold=held.get(review.pending.hypothesis) if review.status == "pending" else None,
        probe=probe_card_view(root, review),
    )


def all_cards(root: MemoryRoot, held: dict[str, Hold]) -> list[Card]:
    """Pending cards first (oldest first), then decided ones, newest decision first."""
    reviews = list_reviews(root)
    pending = [r for r in reviews if r.status in ("pending", "applying")]
    decided = sorted(
        (r for r in reviews if r.decision is not None and r.status not in ("applying",)),
        key=lambda r: r.decision.ts if r.decision else now(),
        reverse=True,
    )
    return [build_card(root, r.id, held) for r in [*pending, *decided]]
