"""Opposite complaints in any language (memory/base/opposites.py)."""

from __future__ import annotations

import pytest

from evolving_agent.memory.base.opposites import opposite_complaints, pole
from tests.helpers.phrases import LANGS, wording


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_too_long_and_more_detail_are_opposite_in_every_language(lang: str) -> None:
    _, _, _, too_long, more = wording("brief", lang)
    assert more is not None
    assert pole(too_long) == ("length", 0) and pole(more) == ("length", 1)
    assert opposite_complaints(too_long, more)


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_just_do_it_and_without_asking_are_opposite_in_every_language(lang: str) -> None:
    _, _, _, unasked, just_do = wording("ask", lang)
    assert just_do is not None and opposite_complaints(unasked, just_do)


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_unrelated_friction_has_no_pole(lang: str) -> None:
    for topic in ("onepick", "tests"):
        for text in wording(topic, lang)[3:]:
            assert text is None or pole(text) is None, text
    assert not opposite_complaints(wording("onepick", lang)[3], wording("tests", lang)[3])


def test_the_second_side_wins_over_its_own_substring() -> None:
    assert pole("the answer was too short") == ("length", 1)  # not "short" → shorter
    assert pole("長すぎるし短すぎる") is None  # both sides named: neither
    assert pole("ｔｏｏ ｌｏｎｇ") == ("length", 0)  # fullwidth
