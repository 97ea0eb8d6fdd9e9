"""The one rendering rule for text a person reads (``evolving_agent/textsafe.py``)."""

from __future__ import annotations

import json
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from evolving_agent.textsafe import is_safe, neutralise, one_line

# Every code point a session could write (surrogates cannot be written to a UTF-8 file).
ANY_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=60)
UNSAFE = st.characters(categories=["Cc", "Cf", "Zl", "Zp"]).filter(lambda c: c not in "\t\n")


def test_neutralise_shows_every_unsafe_character_and_keeps_the_rest() -> None:
    assert neutralise("a\x1b[2Kb\tc\nd") == "a\\u001b[2Kb\tc\nd"
    assert one_line("a\nb\rc") == "a\\u000ab\\u000dc"
    assert neutralise("\u202e\u200b\u2028\x9b\x7f") == "\\u202e\\u200b\\u2028\\u009b\\u007f"
    kept = "Grüße, 日本語, emoji 🙂, math ∑, arrows → ok"
    assert neutralise(kept) == kept


@given(ANY_TEXT)
def test_what_neutralise_returns_is_safe_and_neutralising_again_changes_nothing(
    text: str,
) -> None:
    shown = neutralise(text)
    assert is_safe(shown)
    assert neutralise(shown) == shown
    assert shown.count("\n") == text.count("\n") and shown.count("\t") == text.count("\t")


@given(ANY_TEXT)
def test_one_line_never_leaves_a_line_break_or_an_unsafe_character(text: str) -> None:
    shown = one_line(text)
    assert is_safe(shown)
    assert not any(unicodedata.category(c) in {"Cc", "Zl", "Zp"} and c != "\t" for c in shown)


@given(UNSAFE)
def test_every_control_format_and_separator_character_is_unsafe(char: str) -> None:
    assert not is_safe(char)
    assert char not in neutralise(f"a{char}b")


@given(ANY_TEXT)
def test_safe_text_is_kept_as_it_is(text: str) -> None:
    assert is_safe(text) == (neutralise(text) == text)


@given(ANY_TEXT)
def test_neutralised_json_decodes_back_to_the_original_text(text: str) -> None:
    out = neutralise(json.dumps({"text": text}, ensure_ascii=False))
    assert json.loads(out) == {"text": text}


def test_a_tag_character_beyond_the_bmp_is_its_surrogate_pair_in_json() -> None:
    # Hypothesis found it: U+E0041 (TAG LATIN CAPITAL LETTER A, the "ASCII smuggling"
    # characters) was shown as \ue0041, which JSON reads as U+E004 and a literal "1".
    out = neutralise('"a\U000e0041b"')
    assert out == '"a\\udb40\\udc41b"'
    assert json.loads(out) == "a\U000e0041b"
