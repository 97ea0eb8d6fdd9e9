"""The drift watch: patterns in Evidence that a person should look at before Canon moves.

The essay this product comes from lost weeks because "nobody was looking".  Each check
below reads Evidence (and the review queue) as the human and returns flags, each citing
the Evidence ids behind it, so the owner can read the very events:

``pendulum``          two related pulls taking turns day to day, in any language
                      (:mod:`evolving_agent.review.pendulum`): the for and against
                      sides of one hypothesis, two hypotheses with overlapping
                      triggers or linking evidence, two untagged complaints that
                      strictly take turns; or the nightly carry taking turns between
                      two related hypotheses;
``state-flip``        a hypothesis that changed state and came back within three weeks;
``monopoly``          one hypothesis carried on more than 40% of 14 nights while 3 or
                      more hypotheses could have been carried;
``friction-stopped``  no friction for 7 or more days while sessions still wrote Evidence;
``friction-flood``    friction at a quota-like rate: the same count (2 or more) 7 days
                      running, or 15 or more in one day;
``stale-proposal``    a review or proposal waiting for more than a month;
``fallback``          a model reflector whose answer was invalid, so rules were used.

Opposites are found from structure and character n-grams, never from a phrase list of
one language, and never by a model: a model that judged drift would be the thing it is
watching.  A pendulum, state-flip or monopoly flag *holds* the
hypotheses it names (:mod:`evolving_agent.review.hold`): the monthly job leaves their
proposals out of the queue, and neither the page nor ``review approve`` approves their
reviews, until the human acknowledges the flag.  An acknowledgement is a human decision
file (``reviews/decisions/drift-acks/``) naming the evidence ids looked at; a new flag
with new evidence needs a new look.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.authority import ScopedReader
from evolving_agent.memory.canon.signing import file_signed, signing_state
from evolving_agent.memory.evidence.evidence import EvidenceLog, EvidenceRecord, now
from evolving_agent.memory.ops.hypotheses import Hypothesis, snapshot_of
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record
from evolving_agent.review import pendulum

FlagKind = Literal[
    "pendulum",
    "state-flip",
    "monopoly",
    "friction-stopped",
    "friction-flood",
    "stale-proposal",
    "fallback",
    "upgrade-held",
]

# Flags about the self drifting hold the hypotheses they name.  A stale proposal does not:
# the human's look at it *is* the decision the flag asks for, and a hold would block it.
HOLDING_KINDS: frozenset[FlagKind] = frozenset({"pendulum", "state-flip", "monopoly"})

FLIP_SPAN_DAYS = 21
MONOPOLY_NIGHTS = 14
MONOPOLY_SHARE = 0.4
MONOPOLY_MIN_CARRIABLE = 3
STOPPED_DAYS = 7
FLOOD_RUN_DAYS = 7
FLOOD_DAY = 15
STALE_DAYS = 31
DEFAULT_WINDOW_DAYS = 42


@record(frozen=True)
class DriftFlag:
    """One thing the owner should look at, with the evidence behind it."""

    kind: FlagKind
    title: str
    detail: str
    evidence_ids: list[str]
    first: date
    last: date
    hypotheses: list[str] = field(default_factory=list)
    reviews: list[str] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        """Whether the hypotheses it names wait for the human's look."""
        return self.kind in HOLDING_KINDS

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "title": self.title,
            "detail": self.detail,
            "first": self.first.isoformat(),
            "last": self.last.isoformat(),
            "evidence_ids": self.evidence_ids,
            "hypotheses": self.hypotheses,
            "reviews": self.reviews,
            "holds": self.holds,
        }


@record(frozen=True)
class DriftReport:
    """What the watch found between ``start`` and ``end`` (inclusive)."""

    start: date
    end: date
    flags: list[DriftFlag]
    acknowledged: dict[str, set[str]]  # hypothesis -> evidence ids the human has looked at

    @property
    def held(self) -> dict[str, list[DriftFlag]]:
        """Hypotheses with a flag the human has not acknowledged yet."""
        out: dict[str, list[DriftFlag]] = defaultdict(list)
        for flag in self.flags:
            for hid in flag.hypotheses if flag.holds else []:
                if not set(flag.evidence_ids) <= self.acknowledged.get(hid, set()):
                    out[hid].append(flag)
        return dict(out)

    def to_json(self) -> dict[str, object]:
        return {
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "flags": [f.to_json() for f in self.flags],
            "held": sorted(self.held),
        }


def _friction_pendulums(
    friction: list[EvidenceRecord], register: dict[str, Hypothesis]
) -> list[DriftFlag]:
    flags = []
    for sw in pendulum.find(friction, register):
        flags.append(
            DriftFlag(
                kind="pendulum",
                title=f"friction swung {sw.swings} times between {sw.a.label} and {sw.b.label}",
                detail=f"from {sw.days[0]} to {sw.days[-1]}, {len(sw.evidence_ids)} friction "
                f"events on alternating sides ({sw.why}); a bias that follows each day's "
                "complaint will overshoot both ways",
                evidence_ids=sw.evidence_ids,
                first=sw.days[0],
                last=sw.days[-1],
                hypotheses=sw.hypotheses,
            )
        )
    return flags


def _carry_pendulums(
    carries: list[tuple[date, str, str]], register: dict[str, Hypothesis]
) -> list[DriftFlag]:
    """Nightly carries taking turns between two related hypotheses (their triggers
    overlap): the bias swinging between two pulls of one thing."""
    flags = []
    hids = sorted({hid for _d, hid, _r in carries if hid in register})
    for i, x in enumerate(hids):
        for y in hids[i + 1 :]:
            why = pendulum.related(register[x], register[y])
            if why is None:
                continue
            nights_x = pendulum.group_by_day((d, r) for d, h, r in carries if h == x)
            nights_y = pendulum.group_by_day((d, r) for d, h, r in carries if h == y)
            for stretch in pendulum.turns(nights_x, nights_y, pendulum.TAGGED_SWINGS, strict=False):
                ids = [r for d in stretch for r in (nights_x.get(d) or nights_y.get(d) or [])]
                flags.append(
                    DriftFlag(
                        kind="pendulum",
                        title=f"the carry alternated between {x} and {y} ({why})",
                        detail=f"from {stretch[0]} to {stretch[-1]}, {len(stretch)} nights "
                        "taking turns between two pulls of one thing",
                        evidence_ids=ids,
                        first=stretch[0],
                        last=stretch[-1],
                        hypotheses=[x, y],
                    )
                )
    return flags


def _state_flips(changes: dict[str, list[tuple[date, str, str]]]) -> list[DriftFlag]:
    flags = []
    for hid, steps in changes.items():
        # steps: (day, state, evidence id), in order; a flip is a return to a state left
        # within FLIP_SPAN_DAYS.
        for i in range(len(steps)):
            for j in range(i + 2, len(steps)):
                if (steps[j][0] - steps[i][0]).days > FLIP_SPAN_DAYS:
                    break
                if steps[j][1] == steps[i][1] and steps[i + 1][1] != steps[i][1]:
                    path = " -> ".join(s for _d, s, _e in steps[i : j + 1])
                    flags.append(
                        DriftFlag(
                            kind="state-flip",
                            title=f"{hid} flipped state and came back: {path}",
                            detail=f"between {steps[i][0]} and {steps[j][0]}; the evidence "
                            "may divide by context (a split) rather than change",
                            evidence_ids=[e for _d, _s, e in steps[i : j + 1]],
                            first=steps[i][0],
                            last=steps[j][0],
                            hypotheses=[hid],
                        )
                    )
                    break
            else:
                continue
            break
    return flags


def _monopoly(
    carries: list[tuple[date, str, str]], carriable_on: dict[date, int]
) -> list[DriftFlag]:
    flags = []
    flagged: set[str] = set()
    for i in range(len(carries) - MONOPOLY_NIGHTS + 1):
        window = carries[i : i + MONOPOLY_NIGHTS]
        if carriable_on.get(window[-1][0], 0) < MONOPOLY_MIN_CARRIABLE:
            continue
        counts = Counter(hid for _d, hid, _r in window)
        hid, n = counts.most_common(1)[0]
        if n > MONOPOLY_SHARE * MONOPOLY_NIGHTS and hid not in flagged:
            flagged.add(hid)
            flags.append(
                DriftFlag(
                    kind="monopoly",
                    title=f"{hid} took the carry on {n} of {MONOPOLY_NIGHTS} nights",
                    detail=f"{window[0][0]} to {window[-1][0]}, while "
                    f"{carriable_on[window[-1][0]]} hypotheses could be carried (fair: at "
                    f"most {int(MONOPOLY_SHARE * MONOPOLY_NIGHTS)})",
                    evidence_ids=[r for _d, h, r in window if h == hid],
                    first=window[0][0],
                    last=window[-1][0],
                    hypotheses=[hid],
                )
            )
    return flags


def _friction_rate(
    start: date, end: date, friction: dict[date, list[str]], session_days: dict[date, list[str]]
) -> list[DriftFlag]:
    flags = []
    day = start
    streak: list[date] = []

    def close() -> None:
        ran = [d for d in streak if session_days.get(d)]
        if len(streak) >= STOPPED_DAYS and ran:
            flags.append(
                DriftFlag(
                    kind="friction-stopped",
                    title=f"no friction for {len(streak)} days while sessions ran",
                    detail=f"{streak[0]} to {streak[-1]}: sessions wrote Evidence on "
                    f"{len(ran)} of those days but recorded nothing that felt off; a "
                    "hook may have stopped, or the assistant stopped noticing",
                    evidence_ids=[i for d in ran for i in session_days[d]][:20],
                    first=streak[0],
                    last=streak[-1],
                )
            )

    while day <= end:
        if friction.get(day):
            close()
            streak = []
        else:
            streak.append(day)
        day += timedelta(days=1)
    close()
    counts = [(d, len(friction.get(d, []))) for d in _days(start, end)]
    run: list[tuple[date, int]] = []
    for d, n in [*counts, (end + timedelta(days=1), -1)]:
        if run and n == run[-1][1]:
            run.append((d, n))
            continue
        if len(run) >= FLOOD_RUN_DAYS and run[0][1] >= 2:
            flags.append(
                DriftFlag(
                    kind="friction-flood",
                    title=f"exactly {run[0][1]} friction events a day, {len(run)} days running",
                    detail=f"{run[0][0]} to {run[-1][0]}: a steady count looks like a quota "
                    "(a prompt asking for self-criticism), not like things felt off",
                    evidence_ids=[i for dd, _n in run for i in friction.get(dd, [])],
                    first=run[0][0],
                    last=run[-1][0],
                )
            )
        run = [(d, n)]
    for d, n in counts:
        if n >= FLOOD_DAY:
            flags.append(
                DriftFlag(
                    kind="friction-flood",
                    title=f"{n} friction events on {d}",
                    detail="far more than a day of real friction; check what wrote them",
                    evidence_ids=friction[d],
                    first=d,
                    last=d,
                )
            )
    return flags


def _days(start: date, end: date) -> list[date]:
    return [start + timedelta(days=i) for i in range((end - start).days + 1)]


def _stale_reviews(root: MemoryRoot, today: date) -> list[DriftFlag]:
    from evolving_agent.review.store import list_reviews

    flags = []
    for review in list_reviews(root):
        created = review.pending.created.astimezone().date()
        waited = (today - created).days
        if review.status == "pending" and waited > STALE_DAYS:
            flags.append(
                DriftFlag(
                    kind="stale-proposal",
                    title=f"{review.id} has waited {waited} days for a decision",
                    detail=f"queued {created}; a diff this old may no longer fit Canon — "
                    "approve, edit or reject it",
                    evidence_ids=list(review.pending.evidence_ids),
                    first=created,
                    last=today,
                    hypotheses=[review.pending.hypothesis],
                    reviews=[review.id],
                )
            )
    return flags


def _held_upgrades(root: MemoryRoot) -> list[DriftFlag]:
    """A model upgrade ``probe diff`` held: its card waits for the human's decision."""
    from evolving_agent.review.store import list_reviews

    flags = []
    for review in list_reviews(root):
        card = review.pending.probe
        if card is None or not card.hold or review.status != "pending":
            continue
        created = review.pending.created.astimezone().date()
        flags.append(
            DriftFlag(
                kind="upgrade-held",
                title=f"the upgrade {card.model_a} -> {card.model_b} is held for you ({review.id})",
                detail=f"{review.pending.rationale} Decide with 'evolving-agent review approve "
                f"{review.id}' (move) or 'review reject {review.id} --reason …' (keep)",
                evidence_ids=list(review.pending.evidence_ids),
                first=created,
                last=created,
                reviews=[review.id],
            )
        )
    return flags


ACKS_DIR = "drift-acks"  # reviews/decisions/drift-acks/<hypothesis>-<when>.json


class DriftAck(BaseModel):
    """The human has looked at the flags holding one hypothesis (a human decision file,
    signed like the other decisions when signing is on)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = Field(1, le=1)
    hypothesis: str
    evidence_ids: list[str] = Field(min_length=1)
    flags: list[str]  # "kind: title" of each flag looked at
    by: str
    ts: datetime


def ack_files(root: MemoryRoot) -> list[Path]:
    return ScopedReader(root, "human").list("decisions", f"{ACKS_DIR}/*.json")


def acknowledgements(root: MemoryRoot) -> dict[str, set[str]]:
    """hypothesis -> the evidence ids the human has looked at.  With signing on, only an
    acknowledgement signed by the pinned key counts (anyone can write a file)."""
    state = signing_state(root)
    before = set(state.decisions_before)
    out: dict[str, set[str]] = defaultdict(set)
    for path in ack_files(root):
        try:
            ack = DriftAck.model_validate_json(path.read_bytes())
        except (OSError, ValidationError):
            continue  # a damaged file acknowledges nothing; verify names unsigned ones
        rel = f"{ACKS_DIR}/{path.name}"
        if state.enabled and rel not in before and not file_signed(state, path):
            continue
        out[ack.hypothesis].update(ack.evidence_ids)
    return dict(out)


def watch(
    root: MemoryRoot,
    *,
    start: date | None = None,
    end: date | None = None,
    today: date | None = None,
) -> DriftReport:
    """Run every check over Evidence days ``start``..``end`` (default: the six weeks
    up to the last day with Evidence)."""
    require_root(root)
    log = EvidenceLog(root)
    days = log.days()
    today = today or now().date()
    end = end or (days[-1] if days else today)
    start = start or end - timedelta(days=DEFAULT_WINDOW_DAYS - 1)
    if start > end:
        raise InvalidInput(f"--since {start} is after --until {end}")
    # The fold needs every snapshot up to the end (a hypothesis may be older than the
    # window), so read from the first day, but judge only what falls in the window.
    records = [r for d in days if d <= end for r in log.read_day(d)]
    acks = acknowledgements(root)  # the human may look at a flag any time after it
    register: dict[str, Hypothesis] = {}
    changes: dict[str, list[tuple[date, str, str]]] = defaultdict(list)
    carriable_on: dict[date, int] = {}
    carry_of: dict[date, tuple[date, str, str]] = {}
    friction: dict[date, list[str]] = defaultdict(list)
    friction_records: list[EvidenceRecord] = []
    session_days: dict[date, list[str]] = defaultdict(list)
    fallbacks: list[EvidenceRecord] = []
    for rec in records:
        snap = snapshot_of(rec)
        if snap is not None:
            before = register.get(snap.id)
            register[snap.id] = snap
            if (before is None or before.state != snap.state) and start <= snap.updated:
                changes[snap.id].append((snap.updated, snap.state, rec.id))
            continue
        day = rec.day()
        if day < start:
            continue
        if rec.kind == "friction":
            friction[day].append(rec.id)
            friction_records.append(rec)
        elif rec.actor == "session":
            session_days[day].append(rec.id)
        if rec.kind == "reflector-fallback":
            fallbacks.append(rec)
        if rec.kind == "job" and rec.data.get("job") == "nightly":
            night = _date(rec.data.get("date"))
            hid = rec.data.get("hypothesis")
            if night is not None:
                carriable_on[night] = sum(1 for h in register.values() if h.carriable)
                carry_of.pop(night, None)  # a redone night: its last run's carry counts
                if isinstance(hid, str) and hid:
                    carry_of[night] = (night, hid, rec.id)
    carries = sorted(carry_of.values(), key=lambda c: c[0])
    flags = [
        *_friction_pendulums(friction_records, register),
        *_carry_pendulums(carries, register),
        *_state_flips(changes),
        *_monopoly(carries, carriable_on),
        *_friction_rate(start, end, friction, session_days),
        *_stale_reviews(root, today),
        *_held_upgrades(root),
    ]
    if fallbacks:
        flags.append(
            DriftFlag(
                kind="fallback",
                title=f"the model reflector fell back to rules {len(fallbacks)} time(s)",
                detail="; ".join(sorted({" ".join(r.text.split())[:120] for r in fallbacks}))[:400],
                evidence_ids=[r.id for r in fallbacks],
                first=min(r.day() for r in fallbacks),
                last=max(r.day() for r in fallbacks),
            )
        )
    return DriftReport(start, end, flags, acks)


def _date(value: object) -> date | None:
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            return None
    return None
