"""The review files' models (``review/models.py``): what each file must hold."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from pydantic import ValidationError

from evolving_agent.memory.canon.canon_diff import CanonDiff
from evolving_agent.review.models import PendingReview, ProbeAnswerPair, ProbeCard, Proposal

DIFF = CanonDiff.model_validate({"section": "habits", "op": "add", "text": "Ask first."})
AT = datetime(2026, 12, 1, 4, tzinfo=UTC)


def _card(**kw: object) -> ProbeCard:
    pair = ProbeAnswerPair(probe="shell-flag", before="ev-a", after="ev-b", verdict="breaks")
    fields = {
        "model_a": "m-old",
        "model_b": "m-new",
        "entry": "habits: Lead",
        "entry_text": "Lead with the answer.",
        "regressed": 1,
        "of": 1,
        "pairs": [pair],
    }
    return ProbeCard.model_validate({**fields, **kw})


def _pending(**kw: object) -> PendingReview:
    fields = {
        "id": "rev-2026-11-1",
        "month": "2026-11",
        "diff": DIFF,
        "hypothesis": "h-1",
        "proposals": ["prop-1"],
        "evidence_ids": ["ev-1"],
        "created": AT,
    }
    return PendingReview.model_validate({**fields, **kw})


def test_a_pending_review_round_trips_and_needs_a_proposal_unless_it_is_a_probe_card() -> None:
    review = _pending()
    assert PendingReview.model_validate_json(review.model_dump_json()) == review
    with pytest.raises(ValidationError, match="a review needs at least one proposal"):
        _pending(proposals=[])
    assert _pending(proposals=[], probe=_card()).probe is not None
    with pytest.raises(ValidationError, match="evidence_ids"):
        _pending(evidence_ids=[])


def test_files_from_a_newer_version_or_with_unknown_fields_are_refused() -> None:
    with pytest.raises(ValidationError, match="schema_version"):
        _pending(schema_version=99)
    with pytest.raises(ValidationError, match="mood"):
        _pending(mood="sunny")
    with pytest.raises(ValidationError, match="evidence_ids"):
        Proposal(
            id="prop-1",
            week_end=date(2026, 11, 7),
            hypothesis="h-1",
            diff=DIFF,
            evidence_ids=[],
            created=AT,
        )


def test_a_probe_cards_title_says_what_changed() -> None:
    assert _card().title() == "model m-new reads *Lead with the answer.* differently: 1 of 1 probe"
    assert _card(regressed=2, of=3).title().endswith(": 2 of 3 probes")
    assert _card(hold=True, regressed=2, of=5).title() == (
        "upgrade m-old -> m-new held: 2 of 5 probes honoured less often"
    )
    with pytest.raises(ValidationError, match="verdict"):
        ProbeAnswerPair(probe="p", before="a", after="b", verdict="maybe")  # type: ignore[arg-type]
