"""What the nightly job keeps of one day: bounded, however large the day.

The day is read once, as a stream (:class:`evolving_agent.memory.evidence.day_stream.DayStream`),
and folded into a :class:`DayDigest` that holds only what reflection uses:

- every record the job itself reads besides friction (:data:`JOB_KINDS`: hypothesis
  snapshots, a session's proposed trigger / counter-move, job records — written by
  the jobs and the hypothesis commands, a handful a day);
- of the *tagged* friction, per link (hypothesis, supports|contradicts, counting day)
  the latest :data:`PER_LINK` events — enough for every distinct-day rule and the
  latest quote, which are all the state rules read — for at most :data:`LINKS` links
  (the first ones met); the rest are counted per link;
- of the *untagged* friction, the day's first :data:`UNTAGGED_FIRST` and last
  :data:`UNTAGGED_LAST` events (how the day began, and what is freshest), the rest
  counted.

So the job's memory, and the friction a model reflector's prompt quotes, stop growing
at :data:`MAX_FRICTION` events of the day.  On an ordinary day nothing is left out and
the digest holds exactly the day's friction: reflection means the same as reading the
whole day.  Records of other kinds (raw events, journal) are counted, not kept: no
reflector reads them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import field
from datetime import date

from evolving_agent.memory.evidence.evidence import EvidenceRecord, recorded_day
from evolving_agent.records import record

JOB_KINDS = frozenset({"hypothesis", "hypothesis-state", "hypothesis-proposal", "job"})
PER_LINK = 10
LINKS = 32
UNTAGGED_FIRST = 25
UNTAGGED_LAST = 25
MAX_FRICTION = PER_LINK * LINKS + UNTAGGED_FIRST + UNTAGGED_LAST

Link = tuple[str, str, date]  # (hypothesis id, "supports"|"contradicts", counting day)


@record
class DayDigest:
    """The bounded fold of one day (see the module docstring for what is kept)."""

    records: list[EvidenceRecord] = field(default_factory=list)  # kept, in day order
    friction_total: int = 0
    untagged_total: int = 0
    left_out: dict[Link, int] = field(default_factory=dict)  # tagged, per link
    untagged_left_out: int = 0
    other_records: int = 0  # records of kinds no reflector reads (counted only)
    problems: list[str] = field(default_factory=list)  # records the chain refuses

    @property
    def friction(self) -> list[EvidenceRecord]:
        return [r for r in self.records if r.kind == "friction"]

    @property
    def friction_left_out(self) -> int:
        return self.friction_total - len(self.friction)


def _links(rec: EvidenceRecord) -> list[Link]:
    if not rec.supports and not rec.contradicts:
        return []
    day = recorded_day(rec)
    out = []
    if rec.supports:
        out.append((rec.supports, "supports", day))
    if rec.contradicts:
        out.append((rec.contradicts, "contradicts", day))
    return out


def digest_records(records: Iterable[EvidenceRecord]) -> DayDigest:
    """Fold a day's records (in day order) into a :class:`DayDigest`, in one pass."""
    dig = DayDigest()
    kept: list[tuple[int, EvidenceRecord]] = []  # job records and the first untagged
    tail: deque[tuple[int, EvidenceRecord]] = deque(maxlen=UNTAGGED_LAST)
    links: dict[Link, deque[tuple[int, EvidenceRecord]]] = {}
    first_untagged = 0
    for seq, rec in enumerate(records):
        if rec.kind != "friction":
            if rec.kind in JOB_KINDS:
                kept.append((seq, rec))
            else:
                dig.other_records += 1
            continue
        dig.friction_total += 1
        tags = _links(rec)
        if not tags:
            dig.untagged_total += 1
            if first_untagged < UNTAGGED_FIRST:
                first_untagged += 1
                kept.append((seq, rec))
            else:
                if len(tail) == tail.maxlen:
                    dig.untagged_left_out += 1
                tail.append((seq, rec))
            continue
        for link in tags:
            bucket = links.get(link)
            if bucket is None:
                if len(links) >= LINKS:
                    dig.left_out[link] = dig.left_out.get(link, 0) + 1
                    continue
                bucket = links[link] = deque(maxlen=PER_LINK)
            if len(bucket) == bucket.maxlen:
                dig.left_out[link] = dig.left_out.get(link, 0) + 1
            bucket.append((seq, rec))
    pool = {seq: rec for seq, rec in kept}
    pool.update(tail)
    for bucket in links.values():
        pool.update(bucket)  # an event tagged twice is kept once
    dig.records = [pool[seq] for seq in sorted(pool)]
    return dig
