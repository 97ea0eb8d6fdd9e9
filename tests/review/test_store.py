"""Reviews on disk (``review/store.py``): ids, people, loading and listing."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.errors import InvalidInput, InvalidPath, NotFound
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.actions import reject_review
from evolving_agent.review.store import (
    check_id,
    check_person,
    decision_path,
    list_reviews,
    load_review,
    to_json,
)
from tests.helpers.review import add, queue, set_identity
from tests.helpers.roots import fresh_root


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("", "empty review id"),
        ("../canon/identity", "'..' is not allowed"),
        ("/etc/passwd", "absolute paths are not allowed"),
        ("a/b", "a review id is a single name"),
        (".hidden", "hidden files are reserved"),
        ("a\0b", "NUL byte in path"),
    ],
)
def test_a_path_like_id_is_refused_before_any_file_is_touched(bad: str, reason: str) -> None:
    with pytest.raises(InvalidPath, match=reason):
        check_id(bad)


@settings(max_examples=50)
@given(st.text(max_size=40))
def test_an_accepted_id_is_one_plain_file_name(review_id: str) -> None:
    try:
        assert check_id(review_id) == review_id
    except (InvalidPath, NotFound):
        return
    assert "/" not in review_id and "\\" not in review_id and not review_id.startswith(".")
    assert review_id.isascii() and len(review_id) <= 128


def test_a_person_is_one_short_line() -> None:
    assert check_person("Ada Lovelace") == "Ada Lovelace"
    for bad in ("", " ", "a\nb", "a\rb", "x" * 101):
        with pytest.raises(InvalidInput, match="must be one short line"):
            check_person(bad)


def test_reviews_load_list_and_dump_with_their_status(tmp_path: Path) -> None:
    root: MemoryRoot = fresh_root(tmp_path / "memory")
    set_identity(root)
    queue(root, "rev-2026-11-1", add("Ask first."))
    queue(root, "rev-2026-11-2", add("Lead with the answer."))
    reject_review(root, "rev-2026-11-2", reason="already there", approver="alice")
    assert [(r.id, r.status) for r in list_reviews(root)] == [
        ("rev-2026-11-1", "pending"),
        ("rev-2026-11-2", "rejected"),
    ]
    assert decision_path(root, "rev-2026-11-2").is_file()
    shown = to_json(load_review(root, "rev-2026-11-1"))
    assert shown["id"] == "rev-2026-11-1" and shown["status"] == "pending"
    with pytest.raises(NotFound, match="rev-2026-11-9"):
        load_review(root, "rev-2026-11-9")
