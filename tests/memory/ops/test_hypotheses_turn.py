"""A change of mind: the *turned* state rule (memory/ops/hypotheses.py, issue 30 invariant 3).

A preference supported on a few early days and contradicted on every evidence day since
sat in ``split`` for good: the old support outvoted the owner's new word.  Now its last
TURN_DAYS evidence days all contradicting it, after earlier support, make it weakening
(low stakes) — checked on every sequence of days Hypothesis draws, by folding the days
one at a time as the nightly job does.
"""

from __future__ import annotations

from datetime import date, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.memory.ops.hypotheses import TURN_DAYS, Hypothesis, advance, has_turned

D0 = date(2027, 3, 1)


def fold(days: list[str], stakes: str = "low") -> Hypothesis:
    """Apply one day's evidence at a time: "s" support, "c" contradiction, "-" none."""
    h = Hypothesis(id="h-1", text="one answer, not a menu", stakes=stakes, created=D0, updated=D0)  # type: ignore[arg-type]
    n = 0
    for i, kind in enumerate(days):
        if kind == "-":
            continue
        n += 1
        day = D0 + timedelta(days=i)
        step = advance(h, day, [f"e{n}"] if kind == "s" else [], [f"e{n}"] if kind == "c" else [])
        if step is not None:
            h = step[0]
        if h.state == "weakening":  # a release, as the carry would give one
            h = h.model_copy(update={"released": day})
    return h


DAYS = st.lists(st.sampled_from("sc-"), min_size=1, max_size=30)


@settings(max_examples=300, deadline=None)
@given(days=DAYS)
def test_a_turn_weakens_a_low_stakes_belief(days: list[str]) -> None:
    h = fold(days)
    evidence = [k for k in days if k != "-"]
    turned = (
        len(evidence) > TURN_DAYS
        and set(evidence[-TURN_DAYS:]) == {"c"}
        and "s" in evidence[:-TURN_DAYS]
    )
    if turned:
        assert h.state in ("weakening", "retired"), (days, h.state)
    assert has_turned(h.supported_on, h.contradicted_on) == turned or h.state == "retired"


@settings(max_examples=300, deadline=None)
@given(days=DAYS)
def test_a_high_stakes_rule_never_turns(days: list[str]) -> None:
    assert fold(days, "high").state in ("emerging", "live")


def test_the_issue_s_preference_is_no_longer_split_for_good() -> None:
    # supported on 2 early days, contradicted on 4 later days: weakening, not split
    h = fold(["s", "s", "-", "c", "c", "-", "c"])
    assert h.state == "weakening" and h.released is not None
    assert fold(["s", "s", "-", "c", "c", "-", "c", "c"]).state == "retired"
    # ... while a belief whose latest word is support again is not turned
    assert fold(["s", "s", "c", "c", "c", "s"]).state != "weakening"
