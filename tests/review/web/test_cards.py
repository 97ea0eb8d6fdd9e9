"""The review page's cards (``review/web/cards.py``): what one card says, built from a real root."""

from __future__ import annotations

from pathlib import Path

import pytest
from freezegun import freeze_time

from evolving_agent.memory.authority import Writer
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.actions import reject_review
from evolving_agent.review.approve import plan_approval
from evolving_agent.review.web.cards import all_cards, build_card, fingerprint_of
from tests.helpers.review import add, queue, set_identity
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    root = fresh_root(tmp_path / "memory")
    set_identity(root)
    return root


def test_a_card_quotes_its_evidence_by_day_and_names_what_is_missing(root: MemoryRoot) -> None:
    with freeze_time("2026-11-03 10:00:00"):
        late = Writer(root, "session").append("friction", "listed options again").id
    with freeze_time("2026-11-02 10:00:00"):
        early = Writer(root, "session").append("friction", "offered a menu").id
    queue(root, "rev-2026-11-1", add("Ask before offering options."), [late, "ev-gone", early])
    with freeze_time("2026-12-11 09:00:00"):
        card = build_card(root, "rev-2026-11-1", {})
    assert [(q.id, q.found) for q in card.evidence_for] == [
        ("ev-gone", False),
        (early, True),
        (late, True),
    ]
    assert card.evidence_for[0].text == "(not found in Evidence)"
    assert card.waited_days == 10  # queued 2026-12-01 04:00
    assert card.can_approve and card.plan is not None and card.hold is None
    assert card.fingerprint == fingerprint_of(plan_approval(root, "rev-2026-11-1"))
    assert "once approved, 'evolving-agent canon revert COMMIT' undoes it" in card.reverse


def test_the_fingerprint_changes_when_canon_changes_under_the_card(root: MemoryRoot) -> None:
    queue(root, "rev-2026-11-1", add("Ask before offering options."))
    shown = build_card(root, "rev-2026-11-1", {}).fingerprint
    set_identity(root, "schema_version: 1\nname: Ada\nhabits:\n  - Be brief.\n")
    assert build_card(root, "rev-2026-11-1", {}).fingerprint != shown


def test_a_card_that_cannot_apply_says_why_and_cannot_be_approved(root: MemoryRoot) -> None:
    queue(root, "rev-2026-11-1", add("Lead with the answer, then the reasoning."))  # already there
    card = build_card(root, "rev-2026-11-1", {})
    assert card.plan_problem and not card.can_approve


def test_pending_cards_come_first_then_decisions_newest_first(root: MemoryRoot) -> None:
    for n in (1, 2, 3):
        queue(root, f"rev-2026-11-{n}", add(f"Habit number {n}."))
    with freeze_time("2026-12-02 10:00:00"):
        reject_review(root, "rev-2026-11-1", reason="no", approver="alice")
    with freeze_time("2026-12-03 10:00:00"):
        reject_review(root, "rev-2026-11-3", reason="no", approver="alice")
    order = [c.review.id for c in all_cards(root, {})]
    assert order == ["rev-2026-11-2", "rev-2026-11-3", "rev-2026-11-1"]
