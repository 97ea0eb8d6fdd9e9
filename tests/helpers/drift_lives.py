"""Drift over generated lives: write a life's friction into a root, grade the flags.

A life (:mod:`tests.helpers.lives`) knows its planted pendulums: a tagged pair of
opposite beliefs sharing a trigger (``role == "pendulum"``) and an untagged pair of
opposite complaints (``kind == "untagged-pendulum"``).  :func:`grade` says whether the
drift watch flagged each (recall), whether it flagged a life with none (a calm life
flagged), and whether any pendulum flag cites an event that is no part of a planted
pendulum (a flag from coincidence — invariant 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.ops.hypotheses import add_hypothesis
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.drift import DriftReport, watch
from tests.helpers.lives import Event, Life


def _at(life: Life, day: int, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(life.day(day), time(hour, minute)).astimezone()


def write_friction(life: Life, root: MemoryRoot) -> dict[str, Event]:
    """The life's hypotheses and friction, appended as the owner's sessions would (no
    jobs run); Evidence id -> the generated event."""
    session = Writer(root, "session")
    by_id: dict[str, Event] = {}
    for s in life.hypotheses:
        add_hypothesis(root, s.claim, when=s.when, do=s.do, stakes=s.stakes,
                       ts=_at(life, s.added_on, 8))  # fmt: skip
    for e in life.events:
        ts = _at(life, e.day, e.hour, e.minute)
        rec = session.append(
            "friction", e.text, supports=e.supports, contradicts=e.contradicts, ts=ts
        )
        by_id[rec.id] = e
    return by_id


def planted_event(life: Life, e: Event) -> bool:
    if e.kind == "untagged-pendulum":
        return True
    # Any friction tagged for one side of the planted pair (a flood day on it included).
    spec = life.spec(e.supports or "")
    return spec is not None and spec.role == "pendulum"


@dataclass(frozen=True)
class DriftGrade:
    planted: bool  # the life has a pendulum (tagged or untagged)
    flagged: bool  # a pendulum flag cites planted events
    calm_flagged: bool  # no pendulum planted, yet one flagged
    stray: list[str]  # titles of pendulum flags citing an event of no planted pendulum
    untied: list[str]  # titles of pendulum flags citing no evidence at all


def grade(life: Life, report: DriftReport, events: dict[str, Event]) -> DriftGrade:
    planted = any(planted_event(life, e) for e in life.events)
    flags = [f for f in report.flags if f.kind == "pendulum"]
    hit = [f for f in flags if f.evidence_ids and all(
        i in events and planted_event(life, events[i]) for i in f.evidence_ids)]  # fmt: skip
    return DriftGrade(
        planted=planted,
        flagged=bool(hit),
        calm_flagged=not planted and bool(flags),
        stray=[f.title for f in flags if f not in hit and f.evidence_ids],
        untied=[f.title for f in flags if not f.evidence_ids],
    )


def drift_of(life: Life, root: MemoryRoot) -> DriftGrade:
    events = write_friction(life, root)
    report = watch(root, start=life.start, end=life.day(life.days - 1), today=life.day(life.days))
    return grade(life, report, events)
