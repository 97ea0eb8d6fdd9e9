"""The type table and fair carry (memory/ops/carry.py)."""

from __future__ import annotations

from datetime import date, timedelta

from evolving_agent.memory.ops.carry import (
    FIRM,
    CarryNote,
    Story,
    choose,
    fitting_types,
    in_tension,
    related,
    type_for,
)
from evolving_agent.memory.ops.hypotheses import Hypothesis

D0 = date(2027, 3, 1)


def h(hid: str = "h-1", **kw: object) -> Hypothesis:
    base: dict[str, object] = {"id": hid, "text": f"claim {hid}", "created": D0, "updated": D0}
    return Hypothesis.model_validate({**base, **kw})


def test_a_high_stakes_rule_only_gets_firm_types() -> None:
    rule = h(stakes="high", when="about to rm -rf", do="stop and ask first")
    for state in ("emerging", "live", "weakening", "split"):
        for sup in (False, True):
            story = Story(rule.model_copy(update={"state": state}), supported_today=sup,
                          contradicted_today=not sup)
            assert set(fitting_types(story)) <= set(FIRM), (state, sup)


def test_types_come_from_the_hypothesis_s_own_story() -> None:
    assert fitting_types(Story(h(state="weakening")))[0] == "release"
    assert "experiment" in fitting_types(Story(h()))  # emerging, low stakes
    assert "question" in fitting_types(Story(h(state="split")))
    slipped = Story(h(state="live", when="w", do="d"), supported_today=True)
    assert fitting_types(slipped)[0] == "repair"
    assert "repair" not in fitting_types(Story(h(state="live", when="w", do="d")))
    assert "release" not in fitting_types(Story(h(state="live", do="d")))


def test_a_weakening_hypothesis_is_released_first_and_never_gets_yesterday_s_type() -> None:
    weak = Story(h(state="weakening"))
    assert type_for(weak, [], None) == "release"
    # Only a release fits a weakening belief: never questioned or ordered on yesterday's.
    assert type_for(weak, [], "release") is None
    assert type_for(Story(h(stakes="high", do="d")), [], "vow") in FIRM


def test_a_released_belief_is_not_carried_again_until_new_support() -> None:
    released = h(state="weakening", do="d", released=D0 + timedelta(days=3),
                 supported_on=[D0], contradicted_on=[D0 + timedelta(days=i) for i in (1, 2, 3)])
    assert fitting_types(Story(released)) == []
    again = released.model_copy(update={"supported_on": [D0, D0 + timedelta(days=5)]})
    assert fitting_types(Story(again))[0] == "release"


def test_a_raised_pattern_without_a_counter_move_is_only_watched_for() -> None:
    raised = h(origin="nightly", when="the pattern quoted below starts again")
    for state in ("emerging", "live", "split"):
        story = Story(raised.model_copy(update={"state": state}), supported_today=True)
        assert fitting_types(story) == ["watchpoint"], state
    proposed = raised.model_copy(update={"do": "add the changelog entry"})
    assert "experiment" in fitting_types(Story(proposed))


def test_the_choice_always_fits_and_never_repeats_yesterday_s_type() -> None:
    from evolving_agent.memory.ops.today import CARRY_TYPES

    morning = D0 + timedelta(days=5)
    pool = [
        Story(h("h-weak", state="weakening", released=D0)),
        Story(h("h-rule", stakes="high", state="live", when="w", do="d"), supported_today=True),
        Story(h("h-split", state="split")),
        Story(h("h-new")),
    ]
    for ytype in CARRY_TYPES:
        for yhyp in [s.h.id for s in pool]:
            yesterday = CarryNote(morning - timedelta(days=1), yhyp, ytype)
            got = choose(pool, [yesterday], morning, yesterday)
            assert got is not None and got.type != ytype
            story = next(s for s in pool if s.h.id == got.hypothesis.id)
            assert got.type in fitting_types(story)
            assert got.hypothesis.id != yhyp  # another one could be carried, so it was


def test_fair_carry_caps_a_hypothesis_at_five_of_fourteen_mornings() -> None:
    pool = [h(f"h-{i}", state="live", do="d") for i in range(3)]
    history: list[CarryNote] = []
    types = ["vow", "rule-for-tomorrow", "refusal", "practice", "watchpoint"]
    morning = D0
    for i in range(40):
        morning = D0 + timedelta(days=i)
        # h-0 is touched every day: the strongest claim on the carry.
        stories = [Story(pool[0], supported_today=True), Story(pool[1]), Story(pool[2])]
        got = choose(stories, history, morning, history[-1] if history else None)
        assert got is not None
        history.append(CarryNote(morning, got.hypothesis.id, got.type))
    for i in range(len(history) - 13):
        window = [n.hypothesis for n in history[i : i + 14]]
        assert max(window.count(p.id) for p in pool) <= 5
        assert all(p.id in window for p in pool)
    assert all(n.type in types + ["repair"] for n in history)


def test_the_pendulum_is_tension_two_unrelated_sparse_hypotheses_are_not() -> None:
    day = D0 + timedelta(days=9)
    when = "about to decide how long the answer is"
    even = h("h-a", when=when, supported_on=[D0 + timedelta(days=i) for i in (0, 2, 4, 6, 8)])
    odd = h("h-b", when=when, supported_on=[D0 + timedelta(days=i) for i in (1, 3, 5, 7, 9)])
    assert in_tension(even, odd, day)
    sparse = h("h-c", supported_on=[D0 + timedelta(days=i) for i in (3, 9)])
    assert not in_tension(even, sparse, day)
    weekly = h("h-d", supported_on=[D0 + timedelta(days=i) for i in (1, 9)])
    assert not in_tension(even, weekly, day)


def test_alternating_days_alone_are_no_tension() -> None:
    """Invariant 2 (issue 30): two beliefs about unrelated things, supported on
    alternating days by chance, are not a pendulum; a relation makes them one."""
    day = D0 + timedelta(days=9)
    days_a = [D0 + timedelta(days=i) for i in (0, 2, 4, 6, 8)]
    days_b = [D0 + timedelta(days=i) for i in (1, 3, 5, 7, 9)]
    tests = h("h-a", when="about to say it is fixed", do="run the tests", supported_on=days_a)
    menu = h("h-b", when="about to list alternatives", do="give one", supported_on=days_b)
    assert not related(tests, menu) and not in_tension(tests, menu, day)
    # opposite complaints, in Japanese, relate them ...
    long = tests.model_copy(update={"last_for": "回答が長すぎると言われた"})
    short = menu.model_copy(update={"last_for": "もっと詳しくと言われた"})
    assert related(long, short) and in_tension(long, short, day)
    # ... as does an event that supports one and contradicts the other
    linked = menu.model_copy(update={"contradicts": ["ev-1"]})
    assert in_tension(tests.model_copy(update={"supports": ["ev-1"]}), linked, day)
    # a high-stakes rule is in no pendulum
    assert not related(long.model_copy(update={"stakes": "high"}), short)
