"""Approvals: the writer's one-use check of a review decision, read from reviews/decisions/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolving_agent.memory.canon.approvals import approved_review, read_decision
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def _decide(root: MemoryRoot, review_id: str, body: object) -> None:
    path = root.area_dir("decisions") / f"{review_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(body) if not isinstance(body, str) else body)


def test_an_approval_is_good_until_its_commit_is_recorded(root: MemoryRoot) -> None:
    _decide(root, "r-1", {"status": "approved"})
    assert read_decision(root, "r-1") == {"status": "approved"}
    assert approved_review(root, "r-1")
    _decide(root, "r-1", {"status": "approved", "commit": "a" * 40})
    assert not approved_review(root, "r-1")  # spent


def test_a_rejected_missing_or_damaged_decision_approves_nothing(root: MemoryRoot) -> None:
    _decide(root, "r-2", {"status": "rejected"})
    _decide(root, "r-3", "{not json")
    _decide(root, "r-4", "[1, 2]")
    assert not approved_review(root, "r-2")
    assert read_decision(root, "r-3") is None and not approved_review(root, "r-3")
    assert read_decision(root, "r-4") is None
    assert read_decision(root, "r-404") is None


@pytest.mark.parametrize("bad", ["", "../r-1", "a/b", "a\\b", ".hidden"])
def test_an_id_that_names_a_path_is_never_read(root: MemoryRoot, bad: str) -> None:
    _decide(root, "r-1", {"status": "approved"})
    assert read_decision(root, bad) is None
    assert not approved_review(root, bad)
