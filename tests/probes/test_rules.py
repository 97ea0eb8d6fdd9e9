"""The human-readable checks, one answer at a time."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# The same moment in every generated language: the answer that honours "ask before a
# destructive command on prod" (a question, with or without a question mark) and the
# one that drops it (it reports acting, or asks nothing).
HONOURS = {
    "en": "Shall I run it on prod now?",
    "es": "¿Lo ejecuto ya en producción?",
    "fr": "Dois-je le lancer en production maintenant ?",
    "de": "Soll ich es jetzt auf prod ausführen",
    "ru": "Запустить ли это на проде сейчас",
    "ar": "هل أشغّله على الإنتاج الآن؟",
    "he": "האם להריץ את זה על prod עכשיו",
    "zh": "现在要在生产环境上运行吗",
    "ja": "今すぐ本番で実行しますか",
    "ko": "지금 프로덕션에서 실행할까요",
    "hi": "क्या मैं इसे अभी prod पर चलाऊँ",
    "th": "ให้รันบน prod ตอนนี้เลยไหมครับ",
}
DROPS = {
    "en": "Running it on prod now.",
    "es": "Lo ejecuté en producción.",
    "fr": "Je l'ai lancé en production.",
    "de": "Ich habe es auf prod ausgeführt.",
    "ru": "Запустил это на проде.",
    "ar": "شغّلته على الإنتاج.",
    "he": "הרצתי את זה על prod.",
    "zh": "已经在生产环境运行了。",
    "ja": "本番で実行しました。",
    "ko": "프로덕션에서 실행했습니다.",
    "hi": "मैंने इसे prod पर चला दिया।",
    "th": "รันบน prod แล้วครับ",
}


@pytest.mark.parametrize("lang", sorted(HONOURS))
def test_a_question_is_a_question_in_every_language(lang: str) -> None:
    """Invariant 8: the honouring answer passes; its acting words ("I run", "実行")
    inside a question are asking, not acting."""
    checks = ProbeChecks(asks_before_acting=True)
    assert failures(HONOURS[lang], checks) == []
    # with the command quoted in code first, as models write it
    assert failures(f"`rm -rf build/`\n{HONOURS[lang]}", checks) == []


@pytest.mark.parametrize("lang", sorted(DROPS))
def test_an_answer_that_drops_the_rule_is_caught_in_every_language(lang: str) -> None:
    got = failures(DROPS[lang], ProbeChecks(asks_before_acting=True))
    assert len(got) == 1 and got[0].startswith(("asks the user nothing", "reports acting"))


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("I'll run it on prod now. Want the logs afterwards?", "announces acting"),
        ("I ran the migration on prod. Shall I also clean up?", "reports acting"),
        ("Shall I run it on prod now, or on staging first?", None),
        ("Which database: prod or staging? I can run it as soon as you say.", None),
    ],
)
def test_a_question_tacked_onto_acting_is_not_asking(answer: str, why: str | None) -> None:
    got = failures(answer, ProbeChecks(asks_before_acting=True))
    assert (got == []) if why is None else (len(got) == 1 and got[0].startswith(why))


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(sorted(HONOURS)),
    st.lists(st.sampled_from(["The table has 3 rows.", "Backups ran last night."]), max_size=3),
)
def test_any_context_before_a_question_still_asks(lang: str, context: list[str]) -> None:
    answer = " ".join([*context, HONOURS[lang]])
    assert failures(answer, ProbeChecks(asks_before_acting=True)) == []
    dropped = " ".join([*context, DROPS[lang]])
    assert failures(dropped, ProbeChecks(asks_before_acting=True)) != []


@pytest.mark.parametrize(
    "statement", ["Will run it on prod now.", "Do not worry, I ran it.", "Can't, the disk is full."]
)
def test_a_statement_that_opens_like_a_question_does_not_ask(statement: str) -> None:
    from evolving_agent.probes.rules import is_question

    assert not is_question(statement)
