"""``review show`` (``review/view.py``): the diff against Canon now, and the cited evidence."""

from __future__ import annotations

from pathlib import Path

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.canon.canon_diff import CanonDiff
from evolving_agent.review.view import view_review
from tests.helpers.review import add, queue, set_identity
from tests.helpers.roots import fresh_root


def test_a_pending_review_shows_its_diff_and_each_cited_record(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    set_identity(root)
    ev = Writer(root, "session").append("friction", "offered three options again")
    queue(root, "rev-2026-11-1", add("Ask before offering options."), [ev.id, "ev-gone"])
    view = view_review(root, "rev-2026-11-1")
    assert "+  - Ask before offering options." in view.diff_text and view.problem == ""
    assert [(i, r.text if r else None) for i, r in view.evidence] == [
        (ev.id, "offered three options again"),
        ("ev-gone", None),
    ]
    shown = view.to_json()
    assert shown["evidence"][1] == {"id": "ev-gone", "ts": None, "kind": None, "text": None}  # type: ignore[index]
    assert shown["problem"] is None


def test_a_diff_that_no_longer_applies_says_why(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    set_identity(root)
    removal = CanonDiff.model_validate(
        {
            "section": "habits",
            "op": "remove",
            "old_text": "Lead with the answer, then the reasoning.",
        }
    )
    queue(root, "rev-2026-11-1", removal)
    set_identity(root, "schema_version: 1\nname: Ada\nhabits: []\n")  # the entry is gone
    view = view_review(root, "rev-2026-11-1")
    assert view.diff_text == "" and view.problem
