"""A short life that queues three reviews at once, through the real jobs.

Three hypotheses, each supported every day for eleven days of October 2026 (nightly every
day, weekly on the Sundays), then the monthly job on 1 November: three diffs pending, so
one page can approve, edit and reject.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from evolving_agent.jobs.monthly import run_monthly
from evolving_agent.jobs.nightly import run_nightly
from evolving_agent.jobs.weekly import run_weekly
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.ops.hypotheses import add_hypothesis
from evolving_agent.paths import MemoryRoot
from evolving_agent.reflectors.rules import RulesReflector

START = date(2026, 10, 1)
BELIEFS = (
    ("Give one recommendation, not a menu", "Listed four options; the user wanted one."),
    ("Run the tests before saying it works", "Said 'fixed' before running the tests; it was not."),
    ("Quote the error message exactly", "Paraphrased the error; the user had to paste it again."),
)


def _at(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute)).astimezone()


MONTHLY_DAY = date(2026, 11, 1)


def live_three_reviews(root: MemoryRoot, *, monthly: bool = True) -> list[str]:
    """Live the short life in ``root``; returns the hypothesis ids.  ``monthly=False``
    stops before the monthly job (three weekly proposals wait for it)."""
    hids = [add_hypothesis(root, claim, ts=_at(START, 8)).id for claim, _ in BELIEFS]
    session = Writer(root, "session")
    rules = RulesReflector()
    for i in range(11):
        day = START + timedelta(days=i)
        for k, (hid, (_claim, quote)) in enumerate(zip(hids, BELIEFS, strict=True)):
            session.append(
                "friction",
                f"{quote} (#{i})",
                session=f"s-{day}",
                supports=hid,
                ts=_at(day, 10 + k),
            )
        run_nightly(root, day, reflector=rules, now=_at(day + timedelta(days=1), 3))
        if day.weekday() == 6:
            run_weekly(root, day, reflector=rules, now=_at(day + timedelta(days=1), 3, 30))
    if monthly:
        run_monthly(root, MONTHLY_DAY, now=_at(MONTHLY_DAY, 4))
    return hids
