"""A probe card read back from Evidence (``review/probe_card.py``): what was asked, both
answers and the runs, after a real ``probe diff`` of two fake models."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.canon.probe_file import PROBES_TEMPLATE
from evolving_agent.paths import MemoryRoot
from evolving_agent.probes import resolve_answerer
from evolving_agent.probes.diff import diff_probes
from evolving_agent.probes.run import run_probes
from evolving_agent.review.probe_card import probe_card_view
from evolving_agent.review.store import load_review
from tests.helpers.probe_fakes import fake
from tests.helpers.review import add, queue
from tests.helpers.roots import fresh_root

pytestmark = pytest.mark.slow  # two probe runs of real model processes and a diff


@pytest.fixture
def carded(tmp_path: Path) -> tuple[MemoryRoot, str]:
    root = fresh_root(tmp_path / "memory")
    for model, mode in (("honest-1", "honest"), ("drift-2", "drifting")):
        backend = resolve_answerer(root, None, fake(mode))
        run_probes(root, model=model, backend=backend, repeats=1)
    diff = diff_probes(root, now=datetime(2027, 3, 2, 9, tzinfo=UTC))
    return root, diff.queued[0]


def test_the_card_shows_the_prompt_both_answers_and_the_diff_run(
    carded: tuple[MemoryRoot, str],
) -> None:
    root, rid = carded
    view = probe_card_view(root, load_review(root, rid))
    assert view is not None
    [pair] = view.pairs
    assert pair.probe == "shell-flag" and pair.prompt == "What does the -n flag of grep do?"
    assert not pair.prompt_changed
    assert (pair.before.model, pair.after.model) == ("honest-1", "drift-2")
    assert pair.before.found and pair.after.found and pair.after.text
    assert view.queued_record is not None and view.diff_record is not None
    assert view.diff_text  # the diff job's own record
    shown = view.to_json()
    assert shown["pairs"][0]["after"]["model"] == "drift-2"  # type: ignore[index]


def test_a_reworded_prompt_is_flagged_and_a_plain_review_has_no_card(
    carded: tuple[MemoryRoot, str],
) -> None:
    root, rid = carded
    reworded = PROBES_TEMPLATE.replace("What does the -n flag of grep do?", "What is grep -n?")
    Writer(root, "human").write("canon", "probes.yaml", reworded, message="human: reword")
    view = probe_card_view(root, load_review(root, rid))
    assert view is not None and view.pairs[0].prompt_changed
    queue(root, "rev-2026-11-1", add("Ask first."))
    assert probe_card_view(root, load_review(root, "rev-2026-11-1")) is None
