"""The month at a glance, computed from Evidence: per-day counts, stale mornings, lanes,
and the two answers (proposals that waited past the limit; friction that supported)."""

from __future__ import annotations

from datetime import date, datetime, time
from pathlib import Path

import pytest

from evolving_agent.jobs.monthly import run_monthly
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.glance import default_month, month_bounds, month_glance
from tests.helpers.life import MONTHLY_DAY, live_three_reviews
from tests.helpers.roots import fresh_root


def _set_limit(root: MemoryRoot, limit: int) -> None:
    text = (root.canon / "policy.yaml").read_text(encoding="utf-8")
    old = next(line for line in text.splitlines() if "monthly_limit:" in line)
    Writer(root, "human").write(
        "canon", "policy.yaml", text.replace(old, f"  monthly_limit: {limit}"), message="limit"
    )


@pytest.mark.slow
def test_the_month_counts_what_evidence_holds(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    hids = live_three_reviews(root, monthly=False)
    # One untagged event on a day the nightly job never reflected.
    untagged = Writer(root, "session").append(
        "friction",
        "Misread the file.",
        ts=datetime.combine(date(2026, 10, 20), time(9)).astimezone(),
    )
    _set_limit(root, 1)  # two of the three proposals must wait for a later month
    run_monthly(root, MONTHLY_DAY, now=datetime.combine(MONTHLY_DAY, time(4)).astimezone())
    assert default_month(root) == "2026-10"
    g = month_glance(root, "2026-10")
    first, last = month_bounds("2026-10")
    assert [d.day for d in g.days] == [first.replace(day=i) for i in range(1, last.day + 1)]
    friction = [r for r in EvidenceLog(root).iter_all() if r.kind == "friction"]
    for d in g.days:
        mine = [r for r in friction if r.day() == d.day]
        assert sorted(d.tagged) == sorted(r.id for r in mine if r.supports or r.contradicts)
        assert sorted(d.untagged) == sorted(r.id for r in mine if not (r.supports or r.contradicts))
    by_day = {d.day.day: d for d in g.days}
    assert by_day[20].untagged == [untagged.id]
    # Nightly ran for Oct 1..11: mornings of the 2nd..12th were fresh, the 13th on stale.
    assert [d.day.day for d in g.days if d.stale] == list(range(13, 32))
    assert all(by_day[i].carry_type for i in range(1, 12))
    assert by_day[4].jobs == ["weekly"] and by_day[11].jobs == ["weekly"]
    # Every hypothesis has a lane; each went emerging -> live inside the month.
    assert {lane.hypothesis.id for lane in g.lanes} == set(hids)
    for lane in g.lanes:
        assert [s for _d, s, _e in lane.changes] == ["emerging", "live"]
        assert lane.states[-1] == "live"
    # The answers: two proposals deferred by the limit and still waiting; 33 of 34 friction
    # events supported a hypothesis (the untagged one did not).
    assert len(g.deferred) == 2 and all(d.queued is None for d in g.deferred)
    assert all(d.waited_days == (date.today() - d.week_end).days for d in g.deferred)
    assert (g.friction_total, g.friction_supporting) == (34, 33)


def test_stale_mornings_are_counted_against_when_evidence_says_each_night_was_reflected(
    tmp_path: Path,
) -> None:
    """Six days of downtime, then one catch-up run: those six mornings were served an old
    bias although every night is reflected in the end.  The page's figure equals an
    independent count from the Evidence it summarises."""
    from datetime import timedelta

    from evolving_agent.jobs.nightly import run_nightly
    from evolving_agent.reflectors.rules import RulesReflector

    root = fresh_root(tmp_path / "memory")
    first = date(2026, 3, 1)  # a past month: every morning of it has come
    session = Writer(root, "session")
    down = range(10, 16)  # no run on the mornings after days 10..15 (index)
    for i in range(20):
        day = first + timedelta(days=i)
        session.append("friction", f"slip {i}", ts=datetime.combine(day, time(10)).astimezone())
        if i not in down:
            nxt = datetime.combine(day + timedelta(days=1), time(3)).astimezone()
            run_nightly(root, day, reflector=RulesReflector(), now=nxt)
    g = month_glance(root, "2026-03")
    # Independently, from what this test ran: the mornings after days 10..15 had no run
    # (the catch-up on the 18th reflected those nights late).
    expected = [first + timedelta(days=i + 1) for i in down]
    assert [d.day for d in g.days if d.stale and d.day <= first + timedelta(days=20)] == expected
    assert g.stale_days == len(expected) + (31 - 21)  # and the month's mornings not yet come
