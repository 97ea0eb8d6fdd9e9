"""Meaning checks in Japanese and English: a bias line is an instruction, never a
portrait, a quota or a count (reflectors/answers.check_meaning)."""

from __future__ import annotations

import pytest

from evolving_agent.reflectors.answers import check_meaning


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
