"""Editing and rejecting a review (``review/actions.py``), on a real root with a queued review."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.canon.canon_diff import CanonDiff
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.actions import edit_text, parse_edit, record_edit, reject_review
from evolving_agent.review.store import load_review
from tests.helpers.review import add, evidence_of, queue, set_identity
from tests.helpers.roots import fresh_root

RID = "rev-2026-11-1"
KEY = "sk-ant-api03-Wm4pQ8rT2vX6zB9nK3jHq7LsV2cX"


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    root = fresh_root(tmp_path / "memory")
    set_identity(root)
    queue(root, RID, add("Ask before offering options."))
    return root


def test_the_edit_text_is_the_diff_and_parses_back_to_it(root: MemoryRoot) -> None:
    text = edit_text(root, RID)
    assert RID in text and "text: Ask before offering options." in text
    assert parse_edit(RID, text) == load_review(root, RID).diff


def test_a_bad_edit_names_the_field_and_stores_nothing(root: MemoryRoot) -> None:
    with pytest.raises(InvalidInput, match=rf"<edited review {RID}>: expected section, op"):
        parse_edit(RID, "- just a list\n")
    with pytest.raises(InvalidInput, match="op"):
        record_edit(root, RID, "section: habits\nop: shout\ntext: x\n", editor="alice")
    assert load_review(root, RID).edit is None


def test_an_edit_is_stored_masked_recorded_and_then_what_approve_sees(root: MemoryRoot) -> None:
    same = edit_text(root, RID)
    assert record_edit(root, RID, same, editor="alice") is None  # nothing changed
    text = f"section: habits\nop: add\ntext: Ask first; never echo {KEY}.\n"
    edit = record_edit(root, RID, text, editor="alice")
    assert edit is not None and KEY not in (edit.diff.text or "")
    assert load_review(root, RID).diff == edit.diff
    assert edit.original == CanonDiff.model_validate(
        {"section": "habits", "op": "add", "text": "Ask before offering options."}
    )
    [recorded] = evidence_of(root, "review")
    assert recorded["action"] == "edit" and recorded["editor"] == "alice"
    assert recorded["review_id"] == RID
    assert (root.reviews / "decisions" / "edits" / f"{RID}.json").is_file()


def test_a_rejection_needs_a_reason_and_then_ends_the_review(root: MemoryRoot) -> None:
    with pytest.raises(InvalidInput, match="a rejection needs a reason"):
        reject_review(root, RID, reason=" \n ", approver="alice")
    with pytest.raises(InvalidInput, match="must be one short line"):
        reject_review(root, RID, reason="no", approver="alice\nbob")
    decision = reject_review(root, RID, reason="too   broad\nfor now", approver="alice")
    assert (decision.status, decision.reason, decision.approver) == (
        "rejected",
        "too broad for now",
        "alice",
    )
    assert load_review(root, RID).status == "rejected"
    # Recorded as an edit is (actions._record): the decision file, then one review event.
    assert (root.reviews / "decisions" / f"{RID}.json").is_file()
    [recorded] = evidence_of(root, "review")
    assert (recorded["review_id"], recorded["action"], recorded["by"]) == (RID, "reject", "alice")
    assert recorded["reason"] == "too broad for now"
    with pytest.raises(InvalidInput, match=f"review {RID} is already rejected"):
        reject_review(root, RID, reason="again", approver="alice")
    with pytest.raises(InvalidInput, match="it cannot be edited"):
        edit_text(root, RID)
