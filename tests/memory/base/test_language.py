"""The language of the owner's writing, by script (and for Latin, by function words)."""

from __future__ import annotations

import pytest

from evolving_agent.memory.base.language import language_of
from tests.helpers.phrases import LANGS, TOPICS


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_every_generated_language_is_read_from_a_hypothesis_s_own_words(lang: str) -> None:
    for topic, by_lang in TOPICS.items():
        claim, when, do, _, _ = by_lang[lang]
        assert language_of(claim, when, do) == lang, (topic, claim)


def test_commands_in_ascii_do_not_make_a_japanese_trigger_english() -> None:
    assert language_of("rm -rf、git reset --hard、DROP TABLE を実行しようとしたとき") == "ja"
    assert language_of("rm -rf build/ 전에 물었더니 사용자가 고마워했다") == "ko"


def test_latin_text_without_cues_is_english() -> None:
    assert language_of("git push --force origin main") == "en"
    assert language_of(None, "") == "en"
