"""A model CLI's failure in one line (``evolving_agent/errortext.py``), shared by the
reflectors, the probe answerers and the search agents."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.errortext import LIMIT, api_error_text, first_error_line


def test_an_api_error_becomes_its_status_and_message() -> None:
    raw = '[API Error: {"error":{"code":429,"message":"Resource exhausted"}}]'
    assert api_error_text(raw) == "HTTP 429: Resource exhausted"
    assert api_error_text('{"error":{"message":"no code"}}') == "no code"
    assert api_error_text("plain failure\nsecond line") == "plain failure"
    assert api_error_text("{broken json") == "{broken json"


def test_the_first_line_that_says_something_skips_warnings_and_frames() -> None:
    stderr = (
        "\x1b[33mWarning: 256-color support not detected\x1b[0m\n"
        "Loaded cached credentials.\n"
        "Error: permission denied for model gemini-ultra\n"
        "    at run (cli.js:10)\n"
    )
    assert first_error_line(stderr) == "Error: permission denied for model gemini-ultra"
    assert first_error_line("    at x\n}\n") == ""
    assert first_error_line("x" * (LIMIT + 50)) == "x" * LIMIT


@settings(max_examples=60)
@given(st.text(st.characters(blacklist_characters='\x1b')))  # escapes are cut from a line
def test_the_reason_is_one_bounded_line_of_the_text(text: str) -> None:
    shown = first_error_line(text)
    assert len(shown) <= LIMIT
    assert shown == "" or any(shown in line for line in text.splitlines())
    assert "\n" not in shown and "\r" not in shown
