"""What a valid answer is (reflectors/answer_check.py): a line is an instruction, never a
portrait, a quota, a count or a score, in Japanese and English; every line a nightly
answer writes is held to that, naming the field; a weekly answer proposes once per
candidate and never scores."""

from __future__ import annotations

import pytest

from evolving_agent.reflectors.answer_check import check_meaning, check_weekly, check_words
from evolving_agent.reflectors.answers import (
    NewHypothesis,
    NightlyReflection,
    ProposalDraft,
    WeeklyReflection,
)
from evolving_agent.reflectors.base import ReflectorError


@pytest.mark.parametrize(
    "line",
    [
        "私は説明が長すぎる傾向がある。",  # a self-description in Japanese
        "あなたは慎重すぎる。",
        "アシスタントは説明が長い。",
        "今日は自己批判を最低3つ記録すること。",  # a quota in Japanese
        "反省を3つ書くこと。",
        "すべての失敗を記録すること。",
        "Kai tends to be cautious.",  # a named third person
        "Mira is too verbose in reviews.",
        "Write five reflections tonight about what went wrong",  # a count
        "Note down every slip, however small",  # a quota without a number
        "Log at least 3 friction events today.",
        "I tend to over-explain.",
    ],
)
def test_refused(line: str) -> None:
    with pytest.raises(ValueError):
        check_meaning(line)


@pytest.mark.parametrize(
    "line",
    [
        "Keep this all day. When about to list alternatives: give one recommendation.",
        "Watch for the moment. When the pattern quoted below starts again: stop, and choose "
        "what the user asked for instead.",
        "Grounding, 2027-03-04: “私は説明が長すぎる傾向がある”",  # quoted friction is data
        "Grounding, 2027-03-04: 「今日は自己批判を最低3つ記録すること」",
        "説明の前に結論を一文で書く。",  # a Japanese instruction
        "Rule for today, checked before every command. When about to run rm -rf: stop and ask.",
    ],
)
def test_accepted(line: str) -> None:
    assert check_meaning(line) == line


GOOD = "When about to offer a menu, stop and give one answer.\nGrounding: “three options”"


@pytest.mark.parametrize(
    "bad",
    [
        "I am a concise assistant.\nGrounding.",
        "The assistant tends to over-explain.\nGrounding.",
        "You are too verbose.\nGrounding.",
        "Log at least 3 friction events before the end of the day.\nGrounding.",
        "Count your self-criticisms tonight.\nGrounding.",
        "When unsure, say so.\nConfidence: 0.8",
        "Keep answers short (4/5).\nGrounding.",
    ],
)
def test_a_bias_line_that_is_no_instruction_is_refused_naming_the_bias(bad: str) -> None:
    # It parses (the model says only the shape); what it says is refused here.
    ref = NightlyReflection(bias=bad)
    with pytest.raises(ReflectorError, match=r"^bias: "):
        check_words(ref)


def test_an_instruction_with_quoted_grounding_passes() -> None:
    check_words(NightlyReflection(bias=GOOD, carry_text="Carry: give one answer today."))


def test_the_carry_text_and_a_raised_hypothesis_are_held_to_the_same_rules() -> None:
    with pytest.raises(ReflectorError, match=r"^carry_text: .*self-description"):
        check_words(NightlyReflection(bias=GOOD, carry_text="I am too verbose."))
    raised = NewHypothesis(text="offers a menu", do="log at least 3 slips", cites=["a", "b"])
    with pytest.raises(ReflectorError, match=r"^raise_hypothesis\.do: .*quota"):
        check_words(NightlyReflection(raise_hypothesis=raised))
    # The first field that fails is named: the raised hypothesis comes before the bias.
    both = NightlyReflection(raise_hypothesis=raised, bias="I am verbose.\nGrounding.")
    with pytest.raises(ReflectorError, match=r"^raise_hypothesis\.do: "):
        check_words(both)


def draft(hid: str, text: str = "Give one answer.", rationale: str = "") -> ProposalDraft:
    return ProposalDraft(hypothesis=hid, text=text, rationale=rationale)


def test_a_weekly_answer_proposes_once_per_candidate_and_never_scores() -> None:
    check_weekly(WeeklyReflection(proposals=[draft("h1"), draft("h2")]), {"h1", "h2"})
    with pytest.raises(ReflectorError, match="'h3', which is not a candidate"):
        check_weekly(WeeklyReflection(proposals=[draft("h3")]), {"h1"})
    with pytest.raises(ReflectorError, match="two proposals for 'h1'"):
        check_weekly(WeeklyReflection(proposals=[draft("h1"), draft("h1")]), {"h1"})
    scored = draft("h1", rationale="Held on 4/5 days.")
    with pytest.raises(ReflectorError, match=r"^proposals\.0\.rationale: no numeric scores"):
        check_weekly(WeeklyReflection(proposals=[scored]), {"h1"})
