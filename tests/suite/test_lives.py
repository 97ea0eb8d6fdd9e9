"""The life generator: deterministic, and its lives hold what the grader relies on."""

from __future__ import annotations

import pytest

from tests.helpers.lives import generate_life
from tests.helpers.phrases import LANGS, TOPICS


@pytest.mark.slow  # three lives generated (about a second each on 2 busy cores)
def test_the_same_seed_gives_the_same_life() -> None:
    a, b = generate_life(7), generate_life(7)
    assert a.events == b.events and a.hypotheses == b.hypotheses and a.truth == b.truth
    assert generate_life(8).events != a.events


@pytest.mark.slow  # forty lives generated
def test_lives_span_the_scripts_and_the_structures() -> None:
    lives = [generate_life(s) for s in range(40)]
    scripts = {LANGS[lg] for life in lives for lg in life.langs}
    assert len(scripts) >= 8, scripts
    for life in lives:
        assert 3 <= len(life.hypotheses) <= 8, life.seed
        assert 42 <= life.days <= 56
        assert len({s.id for s in life.hypotheses}) == len(life.hypotheses)
    roles = {s.role for life in lives for s in life.hypotheses}
    assert roles == {"holds", "reverses", "new-preference", "pendulum", "alternating", "high"}
    kinds = {e.kind for life in lives for e in life.events}
    assert {"sarcasm", "lookalike", "injection", "untagged-pendulum", "flood"} <= kinds
    assert any(life.downtime for life in lives) and any(not life.downtime for life in lives)
    assert any(t.empty for life in lives for t in life.truth.days)


def test_a_reversal_is_true_in_the_truth() -> None:
    for seed in range(40):
        life = generate_life(seed)
        for s in life.hypotheses:
            if s.role == "reverses":
                assert s.reverses_on is not None and s.opposite is not None
                turned = [t.index for t in life.truth.days if s.id in t.turned]
                assert not turned or min(turned) >= s.reverses_on
                return
    raise AssertionError("no reversal in 40 lives")


def test_every_topic_is_worded_in_every_language() -> None:
    for topic, by_lang in TOPICS.items():
        assert set(by_lang) == set(LANGS), topic
