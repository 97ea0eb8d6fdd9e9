"""Text the review page prints (``review/web/text.py``): invisible characters made visible."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from evolving_agent.review.web.text import visible

BAD = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def test_each_invisible_character_becomes_a_mark_naming_its_code_point() -> None:
    assert visible("safe \u202egnp.exe") == "safe ⟨U+202E⟩gnp.exe"
    assert visible("pass\u200bword\x1b[2K") == "pass⟨U+200B⟩word⟨U+001B⟩[2K"
    assert visible("a\nb\tc") == "a\nb\tc"
    assert visible("a\nb\tc", multiline=False) == "a⟨U+000A⟩b⟨U+0009⟩c"
    assert visible("Grüße, 日本語 🙂") == "Grüße, 日本語 🙂"


@given(st.text(max_size=60), st.booleans())
def test_nothing_invisible_survives_and_showing_twice_changes_nothing(
    text: str, multiline: bool
) -> None:
    shown = visible(text, multiline=multiline)
    kept = {"\n", "\t"} if multiline else set()
    assert all(c in kept or unicodedata.category(c) not in BAD for c in shown)
    assert visible(shown, multiline=multiline) == shown
    assert shown.count("\n") == (text.count("\n") if multiline else 0)
