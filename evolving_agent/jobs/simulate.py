"""A simulated month for the demo: plausible friction, then the jobs, on explicit dates.

Deterministic and offline (the rules reflector): no clock is frozen, every date and
time is passed explicitly.  Four hypotheses are registered on the first day, three of
them with a shape (trigger, counter-move; one with high stakes):

* one is supported on most days — it reaches the weekly proposals and the monthly queue;
* one is contradicted on several days — it weakens, then retires;
* one gets evidence that divides by context — it splits;
* a high-stakes one (destructive commands) draws one complaint — it is never released.

Some days have untagged friction; one untagged pattern (opening with a plan nobody
asked for) recurs within a week, and the nightly job raises a hypothesis from it.  Some
days have no friction at all — a quiet day is normal.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, time, timedelta

from pydantic import BaseModel, Field

from evolving_agent.jobs.monthly import run_monthly
from evolving_agent.jobs.nightly import run_nightly
from evolving_agent.jobs.weekly import run_weekly
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.ops.hypotheses import add_hypothesis, hypothesis_id, list_hypotheses
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.reflectors.rules import RulesReflector

# (claim, trigger, counter-move, stakes)
HYPOTHESES: tuple[tuple[str, str | None, str | None, str], ...] = (
    (
        "Answer without offering alternatives the user did not ask for",
        "about to list alternatives",
        "give one recommendation; offer alternatives only if asked",
        "low",
    ),
    ("The user wants long, exhaustive explanations", None, None, "low"),
    (
        "Ask before refactoring beyond what was requested",
        "about to change code outside the request",
        "ask once before widening the change",
        "low",
    ),
    (
        "Before a destructive command I ask first",
        "about to run rm -rf, force-push or drop a table",
        "stop and ask the user before running it",
        "high",
    ),
)

_SUPPORT_H0 = [
    "Started writing 'or you could also…' though no options were asked for; cut it.",
    "Listed three approaches when the user wanted one answer; they picked the first anyway.",
    "User replied 'just tell me which' after I offered alternatives.",
]
_CONTRA_H1 = [
    "User said 'shorter please' halfway through a long explanation.",
    "User skimmed the long answer and asked for the one-line version.",
]
_UNTAGGED = [
    "Misread which file the user meant; asked too late.",
    "Answered from memory of an old API; the user corrected the version.",
]
_PLAN_FIRST = [
    "Began the answer with 'Let me first organise the problem a little…' before answering.",
    "Opened with 'let me first organise the problem' again; the user wanted the answer.",
]

Progress = Callable[[int, date, str], None]


class SimulationResult(BaseModel):
    start: date
    days: int
    hypotheses: list[str]
    carry_types: list[str | None] = Field(default_factory=list)
    carried: list[str | None] = Field(default_factory=list)  # hypothesis carried each night
    biases: list[str | None] = Field(default_factory=list)
    raised: list[str] = Field(default_factory=list)
    proposals: list[str] = Field(default_factory=list)
    pending: list[str] = Field(default_factory=list)


def _at(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute)).astimezone()


def _friction(day: date, i: int, ids: list[str]) -> list[tuple[int, str, str | None, str | None]]:
    """(hour, text, supports, contradicts) for day index ``i`` — a fixed script."""
    out: list[tuple[int, str, str | None, str | None]] = []
    if i % 4 != 3:
        out.append((10, _SUPPORT_H0[i % len(_SUPPORT_H0)], ids[0], None))
    if i in (2, 6, 9):
        out.append((15, _CONTRA_H1[i % len(_CONTRA_H1)], None, ids[1]))
    if i == 1:
        out.append((16, "User asked for the full derivation and read all of it.", ids[1], None))
    if i in (3, 10, 17):
        out.append(
            (11, "Asked before touching the neighbouring module; user was glad.", ids[2], None)
        )
    if i in (5, 12, 19):
        out.append(
            (12, "Asked before a refactor; user said 'just do it, don't ask'.", None, ids[2])
        )
    if i == 4:
        out.append(
            (13, "Asked before deleting the build folder; user: 'obviously, go'.", None, ids[3])
        )
    if i in (8, 15):
        out.append(
            (14, "Asked before force-pushing the shared branch; user was relieved.", ids[3], None)
        )
    if i in (7, 11):
        out.append((9, _PLAN_FIRST[0 if i == 7 else 1], None, None))
    if i % 5 == 4:
        out.append((17, _UNTAGGED[i % len(_UNTAGGED)], None, None))
    return out


def simulate_month(
    root: MemoryRoot,
    start: date,
    days: int = 30,
    *,
    progress: Progress | None = None,
) -> SimulationResult:
    """Append a month of friction and run nightly daily, weekly on Sundays, monthly at
    month ends (and once after the last day), all with the rules reflector."""
    require_root(root)
    note = progress or (lambda _i, _d, _m: None)
    existing = {h.id for h in list_hypotheses(root)}
    ids = []
    for text, when, do, stakes in HYPOTHESES:
        hid = hypothesis_id(text)
        if hid not in existing:
            add_hypothesis(root, text, when=when, do=do, stakes=stakes, ts=_at(start, 8))
        ids.append(hid)
    session = Writer(root, "session")
    rules = RulesReflector()
    result = SimulationResult(start=start, days=days, hypotheses=ids)
    monthly_days: set[date] = set()
    for i in range(days):
        day = start + timedelta(days=i)
        events = _friction(day, i, ids)
        for hour, text, sup, con in events:
            session.append(
                "friction",
                text,
                session=f"sim-{day}",
                supports=sup,
                contradicts=con,
                ts=_at(day, hour),
            )
        nxt = day + timedelta(days=1)
        night = run_nightly(root, day, reflector=rules, now=_at(nxt, 3))
        carry = night.plan.carry
        result.carry_types.append(carry.type if carry else None)
        result.carried.append(carry.hypothesis if carry else None)
        result.biases.append(night.plan.bias)
        if night.plan.raised is not None:
            result.raised.append(night.plan.raised.id)
            note(i, day, f"raised {night.plan.raised.id}: {night.plan.raised.text}")
        note(i, day, f"{len(events)} friction, carry {carry.type if carry else 'none (quiet)'}")
        if day.weekday() == 6:
            week = run_weekly(root, day, reflector=rules, now=_at(nxt, 3, 30))
            result.proposals += [p.id for p in week.plan.proposals]
            note(i, day, f"weekly: {len(week.plan.proposals)} proposal(s)")
        if nxt.day == 1 or i == days - 1:
            first = (
                nxt if nxt.day == 1 else (nxt.replace(day=28) + timedelta(days=4)).replace(day=1)
            )
            if first not in monthly_days:
                monthly_days.add(first)
                month = run_monthly(root, first, now=_at(first, 4))
                result.pending += [r.id for r in month.plan.reviews]
                note(i, day, f"monthly: {len(month.plan.reviews)} diff(s) queued for review")
    return result
