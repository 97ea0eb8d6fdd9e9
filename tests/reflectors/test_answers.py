"""The answer models (reflectors/answers.py) say the shape of an answer: the bias is 2-3
lines of at most 300 characters, whitespace is folded, a raised hypothesis cites two
events; what the lines say is answer_check's (tests/reflectors/test_answer_check.py)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evolving_agent.reflectors.answers import NewHypothesis, NightlyReflection, ProposalDraft

GOOD = "When about to offer a menu, stop and give one answer.\nGrounding: “three options”"


def test_a_bias_of_two_or_three_lines_is_kept_blank_lines_dropped() -> None:
    assert NightlyReflection(bias=GOOD).bias == GOOD
    assert NightlyReflection(bias=f"\n  {GOOD}\n\n  At stake: x \n").bias == f"{GOOD}\nAt stake: x"


@pytest.mark.parametrize(
    "bad",
    [
        "When about to offer a menu, stop and give one answer.",  # one line
        "I'm getting better at this.",  # one line, whatever it says
        "a\nb\nc\nd",  # four
        "x" * 301 + "\nGrounding.",  # a line over 300 characters
    ],
)
def test_a_bias_of_the_wrong_shape_does_not_parse(bad: str) -> None:
    with pytest.raises(ValidationError, match="bias"):
        NightlyReflection(bias=bad)


def test_words_are_folded_onto_one_line() -> None:
    assert NightlyReflection(carry_text=" give\n one   answer ").carry_text == "give one answer"
    draft = ProposalDraft(hypothesis="h", text="Give\none  answer.", rationale=" a\n b ")
    assert (draft.text, draft.rationale) == ("Give one answer.", "a b")


def test_a_raised_hypothesis_cites_two_events_and_its_words_are_quoted_plain() -> None:
    with pytest.raises(ValidationError, match="cites"):
        NewHypothesis(text="offers a menu", cites=["only-one"])
    with pytest.raises(ValidationError, match="at most 300"):
        NewHypothesis(text="menu " * 80, cites=["a", "b"])
    assert NewHypothesis(text=" offers\n a  menu ", cites=["a", "b"]).text == "offers a menu"


def test_complete_and_empty() -> None:
    assert NightlyReflection().empty() and not NightlyReflection().complete()
    whole = NightlyReflection(bias=GOOD, carry_type="vow", carry_text="one answer")
    assert whole.complete() and not whole.empty()
