"""What probes record and report (``probes/models.py``): rows, witnesses and the continuity
line, with Hypothesis over any mix of verdicts."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from evolving_agent.probes.models import (
    AnswerView,
    Continuity,
    JudgeVerdict,
    ProbeAnswerData,
    ProbeRow,
    Verdict,
)

STATUS = st.sampled_from(["honours", "breaks", "undecided"])
AT = datetime(2027, 3, 2, 9, tzinfo=UTC)


def _view(status: str, n: int = 0) -> AnswerView:
    return AnswerView(
        evidence_id=f"ev-{n}",
        ts=AT,
        model="m",
        canon_commit=None,
        answer="a",
        verdict=Verdict(status=status),
    )  # type: ignore[arg-type]


def _row(a: list[str], b: list[str]) -> ProbeRow:
    a_all = [_view(s, i) for i, s in enumerate(a)]
    b_all = [_view(s, 100 + i) for i, s in enumerate(b)]
    return ProbeRow(
        probe="p",
        entry="habits: Lead",
        entry_text="Lead.",
        implies="short",
        a=a_all[-1] if a_all else None,
        b=b_all[-1] if b_all else None,
        a_all=a_all,
        b_all=b_all,
    )


def test_why_lists_the_broken_rules_and_a_judge_that_did_not_agree() -> None:
    v = Verdict(
        status="breaks",
        failed=["more than 3 sentences"],
        judge="breaks",
        judge_reason="offers alternatives",
    )
    assert v.why() == "more than 3 sentences; judge: breaks (offers alternatives)"
    assert Verdict(status="honours", judge="honours").why() == ""


def test_a_row_regressed_when_a_honoured_and_b_did_not() -> None:
    assert _row(["honours"], ["breaks"]).regressed
    assert not _row(["breaks"], ["breaks"]).regressed
    assert not _row(["honours"], []).regressed


@given(st.lists(STATUS, max_size=5), st.lists(STATUS, max_size=5))
def test_worse_and_the_witness_agree_with_the_shares(a: list[str], b: list[str]) -> None:
    row = _row(a, b)
    share = lambda xs: sum(x == "honours" for x in xs) / len(xs)  # noqa: E731
    assert row.worse == bool(a and b and share(b) < share(a))
    witness = row.witness()
    if row.worse:
        assert witness is not None  # a worse row always has an answer to show for it
    if witness is not None:
        good, bad = witness
        assert good.verdict.status == "honours" and bad.verdict.status != "honours"
        assert good.evidence_id in {v.evidence_id for v in row.a_all}
        assert bad.evidence_id in {v.evidence_id for v in row.b_all}


def test_the_continuity_line_says_how_much_was_kept() -> None:
    c = Continuity(
        model_a="m-1",
        model_b="m-2",
        compared=4,
        honoured_a=4,
        honoured_b=3,
        kept=3,
        regressed=["p"],
        improved=[],
        undecided=[],
    )
    assert c.line() == (
        "continuity m-1 -> m-2: 4 of 4 probes honoured before, 3 after; 3 of 4 kept (75%)"
    )
    none = c.model_copy(update={"honoured_a": 0, "kept": 0})
    assert none.line().endswith("0 of 0 kept")


def test_stored_answers_refuse_a_newer_schema_and_a_judge_must_give_a_reason() -> None:
    data = {
        "run": "r",
        "model": "m",
        "reflector": "command",
        "probe": "p",
        "entry": "e",
        "entry_text": "t",
        "canon_commit": None,
        "context_sha256": "0" * 64,
        "prompt_sha256": "1" * 64,
        "answer": "a",
    }
    assert ProbeAnswerData.model_validate(data).repeat == 1
    with pytest.raises(ValidationError, match="schema_version"):
        ProbeAnswerData.model_validate({**data, "schema_version": 3})
    with pytest.raises(ValidationError, match="reason"):
        JudgeVerdict.model_validate({"honours": True, "reason": ""})
