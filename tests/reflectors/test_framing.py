"""The words around a morning's quotes follow the owner's language (issue 30).

The phrase table (``evolving_agent/data/words/framing.yaml``) is checked for shape —
every language has every key English has, with the same placeholders — and real
nightly runs write a morning for a hypothesis in each of the twelve generated
languages: its framing is in that language, its age label too, and English stays as
it was.
"""

from __future__ import annotations

import re
import string
from datetime import date, timedelta
from pathlib import Path

import pytest

from evolving_agent.jobs.nightly import run_nightly
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.ops.hypotheses import add_hypothesis
from evolving_agent.reflectors import framing
from evolving_agent.reflectors.rules import dated
from tests.helpers.phrases import LANGS, TOPICS
from tests.helpers.roots import fresh_root
from tests.helpers.weeks import at

D0 = date(2027, 3, 1)


def fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def test_every_language_has_every_phrase_with_the_same_placeholders() -> None:
    table = framing._table()
    english = table["en"]
    assert set(LANGS) <= set(table)  # every generated language has its own words
    for lang, entries in table.items():
        assert set(entries) == set(english), lang
        for key, value in english.items():
            if isinstance(value, dict):
                assert set(entries[key]) == set(value), (lang, key)
            elif isinstance(value, str):
                assert fields(entries[key]) == fields(value), (lang, key)


def test_an_old_grounding_says_its_age_in_the_morning_s_language() -> None:
    morning = date(2027, 3, 20)
    assert dated(date(2027, 3, 8), morning) == "2027-03-08 (12 days ago)"
    assert dated(date(2027, 3, 8), morning, framing.words("ru")) == "2027-03-08 (12 дн. назад)"
    assert dated(date(2027, 3, 8), morning, framing.words("ja")) == "2027-03-08（12 日前）"
    assert dated(date(2027, 3, 15), morning, framing.words("ja")) == "2027-03-15"
    assert framing.words("pt").lang == "en"  # a language the table lacks: English


ENGLISH = re.compile(r"\b(?:the|when|today|this|grounding|other|way|ago|stake|keep|try|rule)\b",
                     re.I)


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_a_nightly_morning_is_framed_in_the_owner_s_language(lang: str, tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    claim, when, do, pro, _ = TOPICS["brief"][lang]
    h = add_hypothesis(root, claim, when=when, do=do, ts=at(D0, 8))
    session = Writer(root, "session")
    for i in (0, 1):
        session.append("friction", pro, supports=h.id, ts=at(D0 + timedelta(days=i), 10))
        res = run_nightly(root, D0 + timedelta(days=i), now=at(D0 + timedelta(days=i + 1), 3))
    bias = res.plan.bias  # type: ignore[union-attr]
    assert bias is not None
    w = framing.words(lang)
    first, second = bias.splitlines()[:2]
    assert any(first.startswith(w.frame(t)) for t in framing._table()["en"]["frames"]), first
    assert do in first and when in first  # the owner's own words, as written
    assert second.startswith(w["grounding"].partition("{date}")[0]), second
    framing_only = re.sub(r"“[^”]*”", " ", bias)
    for own in (claim, when, do):
        framing_only = framing_only.replace(own, " ")
    if lang == "en":
        assert first.startswith("Refuse the old pull against this. When about to write")
        assert second.startswith(f"Grounding, {D0 + timedelta(days=1)}: “")
    else:
        assert not ENGLISH.search(framing_only), framing_only


def test_a_raised_pattern_is_watched_for_in_the_language_of_its_friction(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    session = Writer(root, "session")
    add_hypothesis(root, "The user wants one recommendation", ts=at(D0, 8))
    text = "сказал «исправлено» до запуска тестов; это было не так"
    for i in (0, 1):
        session.append("friction", text, ts=at(D0 + timedelta(days=i), 10))
        res = run_nightly(root, D0 + timedelta(days=i), now=at(D0 + timedelta(days=i + 1), 3))
    plan = res.plan
    assert plan is not None and plan.bias is not None and plan.carry is not None
    assert plan.carry.type == "watchpoint"
    first = plan.bias.splitlines()[0]
    assert first.startswith("Следи за моментом. Когда процитированный ниже шаблон начинается снова")
    assert "evolving-agent hypothesis propose" in first  # the command stays a command
