"""The review page's charts (``review/web/svg.py``): well-formed SVG whatever the root holds."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import date, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.memory.ops.hypotheses import Hypothesis
from evolving_agent.review.glance import DayGlance, Lane, MonthGlance
from evolving_agent.review.web.svg import (
    STATE_COLOURS,
    carry_key,
    friction_chart,
    state_lanes,
    state_legend,
)

NS = "{http://www.w3.org/2000/svg}"
FIRST = date(2026, 10, 1)


def _glance(days: list[DayGlance], lanes: list[Lane] | None = None) -> MonthGlance:
    return MonthGlance("2026-10", days, lanes or [], [], [], 0, 0)


def _hyp(text: str, hid: str = "h-1a2b3c4d") -> Hypothesis:
    return Hypothesis(id=hid, text=text, created=FIRST, updated=FIRST)


def test_one_bar_pair_per_day_sized_by_its_friction() -> None:
    days = [DayGlance(FIRST + timedelta(days=i)) for i in range(3)]
    days[1].tagged, days[1].untagged = ["ev-1", "ev-2"], ["ev-3"]
    days[2].stale, days[2].carry_type, days[2].jobs = True, "experiment", ["weekly"]
    svg = ET.fromstring(str(friction_chart(_glance(days))))
    groups = svg.findall(f"{NS}g")
    assert len(groups) == 3
    tips = [g.find(f"{NS}title").text for g in groups]  # type: ignore[union-attr]
    assert tips[1] == "2026-10-02: 2 tagged, 1 untagged friction"
    assert tips[2].endswith("; stale bias this morning; jobs: weekly")  # type: ignore[union-attr]
    heights = [float(r.get("height", "0")) for r in groups[1].findall(f"{NS}rect")]
    assert heights[0] == 2 * heights[1] > 0  # tagged twice the untagged, one scale
    assert [t.text for t in groups[2].findall(f"{NS}text") if t.get("class") == "carry"] == ["exp"]


def test_a_lane_colours_each_day_by_state_and_leaves_days_before_it_empty() -> None:
    days = [DayGlance(FIRST + timedelta(days=i)) for i in range(4)]
    lane = Lane(
        _hyp("one answer"),
        [None, "emerging", "live", "live"],
        [(FIRST + timedelta(days=2), "live", "ev-9")],
    )
    svg = ET.fromstring(str(state_lanes(_glance(days, [lane]))))
    fills = [r.get("fill") for r in svg.iter(f"{NS}rect")]
    assert fills == [STATE_COLOURS["emerging"]] + [STATE_COLOURS["live"]] * 2
    assert [t.text for t in svg.iter(f"{NS}text") if t.get("class") == "change"] == ["L"]


def test_the_carry_key_counts_types_most_used_first() -> None:
    days = [DayGlance(FIRST + timedelta(days=i)) for i in range(5)]
    for d, kind in zip(days, ["vow", "question", "question", None, "question"], strict=True):
        d.carry_type = kind
    assert carry_key(_glance(days)) == [("question", 3), ("vow", 1)]
    assert all(name in str(state_legend()) for name in STATE_COLOURS)


@settings(max_examples=50, deadline=None)
@given(st.text(min_size=1, max_size=50), st.text(max_size=20))
def test_root_text_never_breaks_out_of_the_svg(text: str, carry: str) -> None:
    days = [DayGlance(FIRST), DayGlance(FIRST + timedelta(days=1))]
    days[0].carry_type, days[0].carry_hypothesis = carry or None, text
    lane = Lane(_hyp(text), ["emerging", "emerging"], [])
    for chart in (friction_chart(_glance(days)), state_lanes(_glance(days, [lane]))):
        svg = ET.fromstring(str(chart))  # well-formed, whatever the text
        assert {e.tag.removeprefix(NS) for e in svg.iter()} <= {
            "svg",
            "g",
            "title",
            "text",
            "rect",
            "line",
        }
