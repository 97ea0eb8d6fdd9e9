"""The month at a glance: what the owner's page draws, computed from Evidence and git.

Per day: friction (tagged / untagged), the carry the nightly job chose (type and
hypothesis), whether the morning's bias was stale (no nightly for the day before), job
runs and model fallbacks.  Per hypothesis: its state on each day.  Canon changes of the
month with the reviews behind them.  And two answers to the design's open questions,
from the owner's own data: how long proposals waited past the monthly limit, and how
much friction ever supported a hypothesis.

Read as the human, never written; the page renders it, a library caller may print it.
"""

from __future__ import annotations

import calendar
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta

from evolving_agent.errors import EvolvingAgentError, InvalidInput
from evolving_agent.memory.evidence.evidence import EvidenceLog, EvidenceRecord, now
from evolving_agent.memory.ops.hypotheses import Hypothesis, snapshot_of
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.history import CanonChange, canon_log


@dataclass
class DayGlance:
    day: date
    tagged: list[str] = field(default_factory=list)  # friction ids with --supports/--contradicts
    untagged: list[str] = field(default_factory=list)
    carry_type: str | None = None
    carry_hypothesis: str | None = None
    nightly: str | None = None  # the nightly job record that reflected this day
    stale: bool = False  # this morning's bias came from an older night (no nightly before)
    jobs: list[str] = field(default_factory=list)  # "weekly", "monthly" run on this day
    fallbacks: list[str] = field(default_factory=list)  # reflector-fallback record ids

    @property
    def friction(self) -> int:
        return len(self.tagged) + len(self.untagged)


@dataclass(frozen=True)
class Lane:
    """One hypothesis across the month: its state each day (None before it existed)."""

    hypothesis: Hypothesis
    states: list[str | None]
    changes: list[tuple[date, str, str]]  # (day, state, evidence id)


@dataclass(frozen=True)
class Deferred:
    """A proposal the monthly limit sent to a later month."""

    proposal: str
    week_end: date
    queued: date | None  # when a monthly run finally queued it (None: still waiting)
    waited_days: int


@dataclass(frozen=True)
class MonthGlance:
    month: str
    days: list[DayGlance]
    lanes: list[Lane]
    canon: list[CanonChange]
    deferred: list[Deferred]
    friction_total: int
    friction_supporting: int  # friction that ever supported a hypothesis

    @property
    def friction_per_day(self) -> float:
        return self.friction_total / len(self.days) if self.days else 0.0

    @property
    def supporting_share(self) -> float:
        return self.friction_supporting / self.friction_total if self.friction_total else 0.0

    @property
    def stale_days(self) -> int:
        return sum(1 for d in self.days if d.stale)


def month_bounds(month: str) -> tuple[date, date]:
    try:
        year, mon = (int(x) for x in month.split("-"))
        first = date(year, mon, 1)
    except ValueError:
        raise InvalidInput(f"month {month!r}: expected YYYY-MM, e.g. 2026-11") from None
    return first, first.replace(day=calendar.monthrange(year, mon)[1])


def default_month(root: MemoryRoot) -> str:
    """The month a review is pending for, else the month of the last friction.

    A probe card's month is only when it was queued, so a review from the weekly
    proposals (the month that was lived) is preferred."""
    from evolving_agent.review.store import list_reviews

    pending = [r for r in list_reviews(root) if r.status == "pending"]
    pending.sort(key=lambda r: r.pending.probe is None)
    if pending:
        return pending[-1].pending.month
    log = EvidenceLog(root)
    for day in reversed(log.days()):
        if any(r.kind == "friction" for r in log.read_day(day)):
            return day.strftime("%Y-%m")
    return now().strftime("%Y-%m")


def _date(value: object) -> date | None:
    try:
        return date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


_CAUGHT_UP = re.compile(r"caught up: reflected (\d{4}-\d\d-\d\d)\.\.(\d{4}-\d\d-\d\d)")


def month_glance(root: MemoryRoot, month: str) -> MonthGlance:
    require_root(root)
    first, last = month_bounds(month)
    today = now().date()
    log = EvidenceLog(root)
    days = {
        first + timedelta(days=i): DayGlance(first + timedelta(days=i))
        for i in range((last - first).days + 1)
    }
    register: dict[str, Hypothesis] = {}
    at_day: dict[str, dict[date, str]] = defaultdict(dict)
    changes: dict[str, list[tuple[date, str, str]]] = defaultdict(list)
    nightly_dates: dict[date, date] = {}  # night -> the day its reflection was written
    supporting: set[str] = set()
    monthly_runs: list[EvidenceRecord] = []
    friction_ids: set[str] = set()
    all_days = log.days()
    for d in all_days:
        if d > last + timedelta(days=40):
            break
        for rec in log.read_day(d):
            snap = snapshot_of(rec)
            if snap is not None:
                before = register.get(snap.id)
                register[snap.id] = snap
                supporting.update(snap.supports)
                if before is None or before.state != snap.state:
                    changes[snap.id].append((snap.updated, snap.state, rec.id))
                at_day[snap.id][snap.updated] = snap.state
                continue
            if rec.kind == "job" and rec.data.get("job") == "nightly":
                night = _date(rec.data.get("date"))
                if night is not None:
                    written = rec.day()
                    nightly_dates[night] = min(nightly_dates.get(night, written), written)
                    # A catch-up run stamps each missed night's record as if on time;
                    # its own record says which nights it reflected late, and when.
                    for a, b in _CAUGHT_UP.findall(" ".join(map(str, rec.data.get("notes") or []))):
                        late = date.fromisoformat(a)
                        while late <= date.fromisoformat(b):
                            nightly_dates[late] = max(nightly_dates.get(late, written), written)
                            late += timedelta(days=1)
                    if night in days:
                        night_g = days[night]
                        night_g.nightly = rec.id
                        ct, ch = rec.data.get("carry_type"), rec.data.get("hypothesis")
                        night_g.carry_type = ct if isinstance(ct, str) else None
                        night_g.carry_hypothesis = ch if isinstance(ch, str) else None
            if rec.kind == "job" and rec.data.get("job") == "monthly":
                monthly_runs.append(rec)
            if rec.kind == "job" and rec.data.get("job") in ("weekly", "monthly"):
                # On the day it was for (the week's Sunday, the monthly's 1st), as the
                # nightly's carry is shown on the night it reflected.
                for_day = days.get(_date(rec.data.get("date")) or rec.day())
                if for_day is not None:
                    for_day.jobs.append(str(rec.data["job"]))
            g = days.get(rec.day())
            if g is None:
                continue
            if rec.kind == "friction":
                friction_ids.add(rec.id)
                (g.tagged if rec.supports or rec.contradicts else g.untagged).append(rec.id)
                if rec.supports:
                    supporting.add(rec.id)
            elif rec.kind == "reflector-fallback":
                g.fallbacks.append(rec.id)
    history_start = all_days[0] if all_days else first
    for day, g in days.items():
        # A morning is stale when the night before was not reflected by that morning
        # (and it should have been: the root existed and that night is over).  A
        # catch-up run after downtime reflects the missed nights later: those mornings
        # were still served an old bias.
        prev = day - timedelta(days=1)
        reflected = nightly_dates.get(prev)
        g.stale = history_start <= prev and day <= today and (reflected is None or reflected > day)
    lanes = []
    for hid, h in register.items():
        if h.created > last:
            continue
        states: list[str | None] = []
        state: str | None = None
        for d in sorted(at_day[hid]):
            if d < first:
                state = at_day[hid][d]
        for day in days:
            state = at_day[hid].get(day, state)
            if day < h.created:
                states.append(None)
            else:
                states.append(state or "emerging")
        lanes.append(Lane(h, states, [c for c in changes[hid] if first <= c[0] <= last]))
    canon = [c for c in canon_log(root) if _belongs(root, c, month, first, last)]
    return MonthGlance(
        month=month,
        days=list(days.values()),
        lanes=lanes,
        canon=canon,
        deferred=_deferred(root, monthly_runs, today),
        friction_total=len(friction_ids),
        friction_supporting=len(friction_ids & supporting),
    )


def _belongs(root: MemoryRoot, change: CanonChange, month: str, first: date, last: date) -> bool:
    """A Canon change shows in a month when it was made then, or when it applied a review
    of that month (approved in the days after it, as the monthly queue is)."""
    if first <= change.date.astimezone().date() <= last:
        return True
    if change.review_id is None:
        return False
    from evolving_agent.review.store import load_review

    try:
        return load_review(root, change.review_id).pending.month == month
    except EvolvingAgentError:
        return False


def _deferred(root: MemoryRoot, runs: list[EvidenceRecord], today: date) -> list[Deferred]:
    """Proposals a monthly run deferred (over the limit), and when they were queued."""
    from evolving_agent.review.store import list_reviews

    queued: dict[str, date] = {}
    for review in list_reviews(root):
        for pid in review.pending.proposals:
            queued.setdefault(pid, review.pending.created.astimezone().date())
    out: dict[str, Deferred] = {}
    for run in runs:
        for pid in run.data.get("deferred") or []:
            pid = str(pid)
            if pid in out:
                continue
            week_end = _date(pid[5:15]) or run.day()  # prop-<week_end>-<hypothesis>
            done = queued.get(pid)
            out[pid] = Deferred(pid, week_end, done, ((done or today) - week_end).days)
    return list(out.values())
