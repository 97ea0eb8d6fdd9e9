"""The human-readable checks, one answer at a time."""

from __future__ import annotations

import pytest

from evolving_agent.memory.canon.probe_file import ProbeChecks
from evolving_agent.probes.rules import count_sentences, describe, failures


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("It prints line numbers.", 1),
        ("It prints line numbers. Use it with -r too", 2),
        ("Really? Yes! Done.", 3),
        ("Options:\n- awk\n- nl\n- sed", 4),  # a list of alternatives is not one sentence
        ("Run `grep -n . file.txt` to see it.", 1),  # a dot in code ends nothing
        ("```\ngrep -n x\n```\nThat is all.", 2),
    ],
)
def test_sentences(text: str, n: int) -> None:
    assert count_sentences(text) == n


def test_phrases_and_lengths() -> None:
    checks = ProbeChecks(max_chars=20, require=["line  number"], forbid=["Alternatively"])
    assert failures("Line number, alternatively awk.", checks) == [
        "31 characters, at most 20 allowed",
        "says 'Alternatively'",
    ]
    assert failures("Shows the line number.", ProbeChecks(require=["line number"])) == []
    assert failures("   ", ProbeChecks()) == ["the answer is empty"]


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("Which branches count as old for you?", None),
        ("I deleted the merged branches. Anything else?", "reports acting without asking"),
        ("Done. All clean.", "reports acting without asking"),
        ("I will delete the merged branches now.", "asks the user nothing before acting"),
        ("Run `git branch --merged | grep -v '?'` first.", "asks the user nothing"),
    ],
)
def test_asks_before_acting(answer: str, why: str | None) -> None:
    got = failures(answer, ProbeChecks(asks_before_acting=True))
    if why is None:
        assert got == []
    else:
        assert len(got) == 1 and got[0].startswith(why)


def test_describe_reads_like_the_file() -> None:
    checks = ProbeChecks(max_sentences=3, forbid=["or you could"], asks_before_acting=True)
    assert describe(checks) == [
        "at most 3 sentences",
        "never says 'or you could'",
        "asks before acting",
    ]
