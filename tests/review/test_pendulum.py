"""Pendulums in any language: two related pulls taking turns are flagged with exactly
their evidence ids, in any script, tagged or untagged; two unrelated beliefs whose days
alternate by chance are not (issue 30, invariants 2 and 7)."""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.base.similarity import key, similar
from evolving_agent.memory.evidence.evidence import EvidenceRecord
from evolving_agent.memory.ops.hypotheses import Hypothesis, add_hypothesis, hypothesis_id
from evolving_agent.review import pendulum
from evolving_agent.review.drift import watch
from tests.helpers import run_cli
from tests.helpers.roots import fresh_root

START = date(2027, 3, 1)

# (first, last) code points of letters in scripts people write friction in.
SCRIPTS = {
    "latin-accents": (0x00E0, 0x00FF),
    "cyrillic": (0x0430, 0x044F),
    "arabic": (0x0628, 0x064A),
    "hebrew": (0x05D0, 0x05EA),
    "han": (0x4E00, 0x4FFF),
    "hangul": (0xAC00, 0xAFFF),
    "devanagari": (0x0915, 0x0939),
    "thai": (0x0E01, 0x0E2E),
    "hiragana": (0x3041, 0x3093),
}


def _rec(n: int, day: date, text: str, supports: str | None = None,
         contradicts: str | None = None, hour: int = 10) -> EvidenceRecord:  # fmt: skip
    ts = datetime.combine(day, time(hour, n % 60)).astimezone()
    return EvidenceRecord.model_construct(
        ts=ts, kind="friction", actor="session", text=text, session=None, supports=supports,
        contradicts=contradicts, data={}, id=f"ev-{n:04d}", prev="", hash="", schema_version=1,
    )  # fmt: skip


def _hyp(text: str, when: str) -> Hypothesis:
    return Hypothesis(id=hypothesis_id(text), text=text, when=when, created=START, updated=START)


@st.composite
def complaint(draw: st.DrawFn, script: str) -> str:
    lo, hi = SCRIPTS[script]
    letters = st.characters(min_codepoint=lo, max_codepoint=hi, categories=("L",))
    words = draw(st.lists(st.text(letters, min_size=3, max_size=6), min_size=2, max_size=5))
    return " ".join(words)


@st.composite
def planted(draw: st.DrawFn) -> tuple[str, str, int, int, bool]:
    """Two different complaints in one script, a start, a length and whether tagged."""
    script = draw(st.sampled_from(sorted(SCRIPTS)))
    a, b = draw(complaint(script)), draw(complaint(script))
    assume(key(a) != key(b) and not similar(a, b))
    return a, b, draw(st.integers(0, 20)), draw(st.integers(8, 14)), draw(st.booleans())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planted(), st.lists(st.integers(0, 40), max_size=8))
def test_a_planted_pendulum_in_any_script_is_flagged_with_its_ids(
    case: tuple[str, str, int, int, bool], noise_days: list[int]
) -> None:
    a, b, begin, length, tagged = case
    ha, hb = _hyp("pull " + a, "writing an answer"), _hyp("pull " + b, "writing an answer")
    register = {ha.id: ha, hb.id: hb}
    friction, ids = [], []
    for k in range(length):
        day = START + timedelta(days=begin + k)
        side_a = k % 2 == 0
        text = a if side_a else b
        tag = (ha.id if side_a else hb.id) if tagged else None
        friction.append(_rec(len(friction), day, text, supports=tag))
        ids.append(friction[-1].id)
    for d in noise_days:  # one unrelated, untagged slip now and then
        friction.append(_rec(len(friction), START + timedelta(days=d), "misread the file", hour=16))
    friction.sort(key=lambda r: r.ts)
    swings = pendulum.find(friction, register)
    assert [s.evidence_ids for s in swings] == [ids]
    assert swings[0].swings == length - 1
    if tagged:
        assert swings[0].hypotheses == sorted([ha.id, hb.id])
        assert "the same trigger" in swings[0].why


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(SCRIPTS)), st.data())
def test_unrelated_beliefs_taking_turns_by_chance_are_no_pendulum(script: str, data: st.DataObject
                                                                  ) -> None:  # fmt: skip
    """Invariant 2: alternation alone is no relation (different triggers, no link)."""
    a, b = data.draw(complaint(script)), data.draw(complaint(script))
    wa, wb = data.draw(complaint(script)), data.draw(complaint(script))
    assume(key(a) != key(b) and key(wa) != key(wb) and not similar(wa, wb, pendulum.SAME))
    ha, hb = _hyp("x " + a, wa), _hyp("y " + b, wb)
    friction = [
        _rec(k, START + timedelta(days=k), a if k % 2 == 0 else b,
             supports=ha.id if k % 2 == 0 else hb.id)
        for k in range(14)
    ]  # fmt: skip
    assert pendulum.find(friction, {ha.id: ha, hb.id: hb}) == []


def test_one_event_that_supports_one_and_contradicts_the_other_relates_them() -> None:
    ha = _hyp("Der Nutzer will kurze Antworten", "beim Schreiben einer Antwort")
    hb = _hyp("Der Nutzer will jedes Detail", "bevor ich Details weglasse")
    friction = [
        _rec(k, START + timedelta(days=k), "zu lang" if k % 2 == 0 else "mehr Details bitte",
             supports=ha.id if k % 2 == 0 else hb.id, contradicts=None if k else hb.id)
        for k in range(8)
    ]  # fmt: skip
    (swing,) = pendulum.find(friction, {ha.id: ha, hb.id: hb})
    assert "supports one and contradicts the other" in swing.why
    assert swing.evidence_ids == [r.id for r in friction]


def test_untagged_complaints_that_recur_but_do_not_take_turns_every_day_are_calm() -> None:
    days_a, days_b = [0, 1, 4, 6, 9], [2, 3, 5, 10, 12]  # both recur; no strict turns
    friction = [_rec(d, START + timedelta(days=d), "回答太长了，用户没看完") for d in days_a]
    friction += [_rec(100 + d, START + timedelta(days=d), "忘了加变更日志") for d in days_b]
    friction.sort(key=lambda r: r.ts)
    assert pendulum.find(friction, {}) == []


def test_look_alike_letters_and_invisible_characters_stay_on_their_side() -> None:
    a, b = "ответ был слишком длинным", "пользователь попросил больше подробностей"
    spellings = [a, "oтвет был слишком длинным", "ответ был слишком\u200b длинным"]  # Latin o
    friction = [
        _rec(k, START + timedelta(days=k), spellings[(k // 2) % 3] if k % 2 == 0 else b)
        for k in range(10)
    ]
    (swing,) = pendulum.find(friction, {})
    assert swing.evidence_ids == [r.id for r in friction] and swing.swings == 9


def test_turns_trims_a_run_on_one_side_before_the_other_began() -> None:
    def days(*ns: int) -> dict[date, list[str]]:
        return {START + timedelta(days=n): [f"e{n}"] for n in ns}

    a, b = days(0, 2, 4, 6, 7, 9, 11), days(8, 10, 12)
    (stretch,) = pendulum.turns(a, b, 3, strict=False)
    assert [(d - START).days for d in stretch] == [7, 8, 9, 10, 11, 12]
    assert pendulum.turns(a, b, 3, strict=True) == [[START + timedelta(days=n) for n in
                                                       range(7, 13)]]  # fmt: skip
    # A day with both sides is no turn: 7, 8 | 10, 11, 12 — two swings at most.
    assert pendulum.turns(days(7, 9, 11), days(8, 9, 10, 12), 3, strict=False) == []


def test_clip_never_cuts_inside_a_word() -> None:
    text = "la respuesta fue demasiado larga y el usuario dejó de leer antes del final"
    out = pendulum.clip(text, 40)
    assert out.endswith("…") and len(out) <= 40
    assert text.startswith(out[:-1]) and text[len(out) - 1] == " "


def _untagged_root(tmp_path: Path, a: str, b: str, days: int) -> tuple[object, list[str]]:
    root = fresh_root(tmp_path / "memory")
    session = Writer(root, "session")
    ids = []
    for k in range(days):
        ts = datetime.combine(START + timedelta(days=k), time(11)).astimezone()
        ids.append(session.append("friction", a if k % 2 == 0 else b, ts=ts).id)
    return root, ids


def test_an_untagged_japanese_pendulum_is_flagged_by_drift(tmp_path: Path) -> None:
    a, b = "回答が長すぎて、ユーザーは最後まで読まなかった", "もっと詳しく説明してほしいと言われた"
    root, ids = _untagged_root(tmp_path, a, b, 14)
    out = run_cli("--root", str(root.path), "drift", "--since", "2027-03-01",  # type: ignore[attr-defined]
                  "--until", "2027-03-20", "--json")  # fmt: skip
    assert out.exit_code == 0, out.output
    (flag,) = json.loads(out.output)["flags"]
    assert flag["kind"] == "pendulum" and flag["evidence_ids"] == ids
    assert "13 times" in flag["title"] and "回答が長すぎて" in flag["title"]


def test_a_tagged_korean_pendulum_holds_both_sides(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    when = "긴 답변을 쓰려고 할 때"
    ts8 = datetime.combine(START, time(8)).astimezone()
    ha = add_hypothesis(root, "사용자는 짧은 답을 원한다", when=when, ts=ts8).id
    hb = add_hypothesis(root, "사용자는 모든 세부 사항을 원한다", when=when, ts=ts8).id
    session = Writer(root, "session")
    ids = []
    for k in range(10):
        ts = datetime.combine(START + timedelta(days=k), time(11)).astimezone()
        text, hid = ("답이 너무 길었다", ha) if k % 2 == 0 else ("더 자세히 설명해 달라고 했다", hb)
        ids.append(session.append("friction", text, supports=hid, ts=ts).id)
    report = watch(root, start=START, end=START + timedelta(days=12))
    (flag,) = [f for f in report.flags if f.kind == "pendulum"]
    assert flag.evidence_ids == ids and set(flag.hypotheses) == {ha, hb}
    assert set(report.held) == {ha, hb}
