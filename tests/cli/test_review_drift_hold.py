"""The terminal says what the page says: a review the drift watch holds is named as held
by `review show`, and `review approve` warns before it applies it."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from pathlib import Path

import pytest

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.root import init_root
from evolving_agent.review.store import list_reviews, load_review
from tests.helpers import run_proc
from tests.helpers.life import live_three_reviews


@pytest.mark.slow
def test_a_held_review_is_named_in_the_terminal(tmp_path: Path) -> None:
    root = init_root(tmp_path / "memory")
    live_three_reviews(root)
    held, free = (r.id for r in list_reviews(root)[:2])
    hid = load_review(root, held).pending.hypothesis
    session = Writer(root, "session")
    for i in range(14):
        text = "The answer was too long." if i % 2 == 0 else "Not enough information."
        day = date(2026, 10, 12) + timedelta(days=i)
        session.append(
            "friction", text, supports=hid, ts=datetime.combine(day, time(14)).astimezone()
        )
    shown = run_proc("--root", str(root.path), "review", "show", held)
    assert shown.returncode == 0
    assert b"held by the drift watch: friction swung 13 times" in shown.stdout
    assert b"held by" not in run_proc("--root", str(root.path), "review", "show", free).stdout
    approved = run_proc("--root", str(root.path), "review", "approve", held, "--yes")
    assert approved.returncode == 0
    assert approved.stderr.decode().startswith("warning: held by the drift watch: friction swung")
    assert load_review(root, held).status == "approved"
