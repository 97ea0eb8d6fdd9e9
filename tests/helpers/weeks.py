"""A scripted few weeks for the weekly and monthly job tests: friction day by day, the
nightly every day and the weekly on Sundays, and readers for what the jobs wrote."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from evolving_agent.jobs.nightly import run_nightly
from evolving_agent.jobs.weekly import run_weekly
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.ops.hypotheses import Hypothesis, list_hypotheses
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.models import PendingReview, Proposal

START = date(2026, 10, 5)  # a Monday; the weeks end on Sundays 10-11, 10-18, 10-25


def at(day: date, hour: int) -> datetime:
    return datetime.combine(day, time(hour)).astimezone()


def live_through(
    root: MemoryRoot,
    days: int,
    supports: dict[str, list[int]],
    contradicts: dict[str, list[int]] | None = None,
) -> None:
    """Append the scripted friction day by day, run nightly daily and weekly on Sundays."""
    session = Writer(root, "session")
    for i in range(days):
        day = START + timedelta(days=i)
        for hid, idx in supports.items():
            if i in idx:
                session.append("friction", f"day {i}: it held", supports=hid, ts=at(day, 10))
        for hid, idx in (contradicts or {}).items():
            if i in idx:
                session.append("friction", f"day {i}: it broke", contradicts=hid, ts=at(day, 11))
        run_nightly(root, day, now=at(day + timedelta(days=1), 3))
        if day.weekday() == 6:
            run_weekly(root, day, now=at(day + timedelta(days=1), 4))


def proposals(root: MemoryRoot) -> list[Proposal]:
    files = sorted(root.area_dir("proposals").glob("*.json"))
    return [Proposal.model_validate_json(p.read_bytes()) for p in files]


def pending(root: MemoryRoot) -> list[PendingReview]:
    files = sorted(root.area_dir("pending").glob("*.json"))
    return [PendingReview.model_validate_json(p.read_bytes()) for p in files]


def state(root: MemoryRoot, hid: str) -> Hypothesis:
    return {h.id: h for h in list_hypotheses(root, from_evidence=True)}[hid]
