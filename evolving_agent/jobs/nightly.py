"""The nightly job: one day's Evidence + Today → new bias, one typed carry, updated states.

The reflector gets only ``ScopedReader(root, "nightly", evidence_window=(day, day))``
and the previous carry, so Canon and the rest of history are out of its reach.  The
job itself reads the same narrow scope (Today: carry, register cache, recent types,
the last week's untagged friction; Evidence: the one day), so its cost grows with the
day's evidence, not with history.

Nothing recorded is silently never reflected: a run for a day after a gap first
reflects every day since the last reflected one, in order, each as its own idempotent
run (bounded to :data:`MAX_CATCH_UP` days, and it says so).  A run for a past day sees
what it would have seen then: the register without hypotheses created later.

Steps per day: adopt hypotheses a session added that day; note hypotheses the weekly
job proposed; record how yesterday's carry fared (``carry-outcome``); apply the day's
support / contradiction to the register; raise a hypothesis from recurring untagged
friction; check the reflector's answer for meaning (retry once, then ``rules``); write
bias + carry + register through ``Writer(root, "nightly")``; append one batch of
records ending with the job record.  Idempotent and crash-safe through a run marker
(see ``jobs/markers.py``).  A quiet day (nothing to carry, no friction) writes no bias or
carry: nothing is invented.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evolving_agent.errors import InvalidInput
from evolving_agent.jobs.markers import (
    RunMarker,
    append_once,
    finish,
    nightly_lock,
    plan_or_resume,
    refuse_future,
)
from evolving_agent.jobs.redo_journal import finish_interrupted
from evolving_agent.memory.authority import ScopedReader, Writer
from evolving_agent.memory.base.redact import redact
from evolving_agent.memory.evidence.day_digest import (
    MAX_FRICTION,
    PER_LINK,
    UNTAGGED_FIRST,
    UNTAGGED_LAST,
)
from evolving_agent.memory.evidence.evidence import EvidenceLog, EvidenceRecord
from evolving_agent.memory.evidence.evidence import now as local_now
from evolving_agent.memory.ops.carry import tensions
from evolving_agent.memory.ops.hypotheses import (
    REGISTER_FILE,
    Hypothesis,
    HypothesisState,
    SessionProposal,
    apply_day,
    day_key,
    day_links,
    duplicate_of,
    merge_into_register,
    read_register,
    snapshot_data,
    snapshot_of,
)
from evolving_agent.memory.ops.today import BIAS_FILE, CARRY_FILE, Carry
from evolving_agent.memory.root import require_root
from evolving_agent.memory.sync.deploy import seal_reflected
from evolving_agent.paths import MemoryRoot
from evolving_agent.reflectors import Reflector, reflect_with_fallback
from evolving_agent.reflectors.answer_check import check_nightly
from evolving_agent.reflectors.answers import NightlyReflection
from evolving_agent.reflectors.context import (
    NIGHTLY_STATE_FILE,
    CarryRecord,
    NightlyContext,
    NightlyState,
    OutcomeNote,
    read_previous_carry,
)
from evolving_agent.reflectors.rules import RulesReflector

# A run after downtime reflects at most this many days (the most recent ones).
MAX_CATCH_UP = 31
# Untagged friction notes kept in Today for recurrence (the last week's, freshest first).
RECENT_NOTES = 100

Outcome = Literal["held", "slipped", "mixed", "untested"]


class CarryOutcome(BaseModel):
    """How yesterday's bias and carry fared on the day's evidence."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    carry_type: str
    hypothesis: str | None
    outcome: Outcome
    supports: list[str] = Field(default_factory=list)
    contradicts: list[str] = Field(default_factory=list)


class StateStep(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    hypothesis: Hypothesis
    previous: HypothesisState
    reason: str


class NightlyPlan(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    day: date
    requested: str
    reflector: str
    fallback: str | None = None
    bias: str | None = None
    carry: Carry | None = None
    changes: list[StateStep] = Field(default_factory=list)
    raised: Hypothesis | None = None
    adopted: list[Hypothesis] = Field(default_factory=list)
    outcome: CarryOutcome | None = None
    recent_types: list[str] = Field(default_factory=list)
    state: NightlyState | None = None
    notes: list[str] = Field(default_factory=list)
    # The Today files this run started from (None: absent), so a redo can give them
    # back (jobs/redo.py); None in a plan made before redo existed.
    before: dict[str, str | None] | None = None

    @property
    def quiet(self) -> bool:
        return self.carry is None


class NightlyResult(BaseModel):
    model_config = ConfigDict(defer_build=True)

    status: Literal["done", "already done", "resumed", "redone"]
    plan: NightlyPlan
    record_ids: list[str]
    caught_up: list[date] = Field(default_factory=list)  # earlier days reflected first
    superseded: str | None = None  # a redo: the run it replaced (its records stay)
    old_bias: str | None = None  # a redo: the bias that run wrote (kept in Evidence)


# What a nightly run writes in Today (besides the files it leaves alone).
TODAY_FILES = (NIGHTLY_STATE_FILE, BIAS_FILE, CARRY_FILE, REGISTER_FILE)


def today_texts(reader: ScopedReader) -> dict[str, str | None]:
    """The Today files a nightly run writes, as they are now (None: absent)."""
    return {name: reader.read_text("today", name) for name in TODAY_FILES}


def default_day(now: datetime) -> date:
    """The nightly job runs after midnight and reflects on the day that just ended."""
    return now.astimezone().date() - timedelta(days=1)


def last_reflected(root: MemoryRoot) -> date | None:
    data = ScopedReader(root, "nightly").read_json("today", NIGHTLY_STATE_FILE)
    return NightlyState.model_validate(data).last_date if data else None


def run_nightly(
    root: MemoryRoot,
    day: date | None = None,
    *,
    reflector: Reflector | None = None,
    now: datetime | None = None,
) -> NightlyResult:
    """Run the nightly job for ``day`` (default: yesterday).  Idempotent for a date.

    After a gap, every day since the last reflected one is reflected first, in order
    (at most :data:`MAX_CATCH_UP` days in all; the result's notes say what was skipped).
    """
    require_root(root)
    when = now or local_now()
    day = day or default_day(when)
    refuse_future(day, when)
    finish_interrupted(root)  # a redo a crash cut short is finished before anything else
    with nightly_lock(root):  # shared: only a redo needs the job to itself
        return _run_nightly(root, day, reflector, when)


def _run_nightly(
    root: MemoryRoot, day: date, reflector: Reflector | None, when: datetime
) -> NightlyResult:
    last = last_reflected(root)
    notes: list[str] = []
    if day == when.astimezone().date():
        notes.append(
            f"{day} is not over: friction dated on it after this run is refused (it would never be "
            "reflected) "
            "(a nightly run reflects a finished day; the default is yesterday)"
        )
    first = day
    if last is None:
        # Never reflected yet (installed, used, scheduled only later): every day since
        # the first evidence, not only yesterday.  A directory listing, once.
        log = EvidenceLog(root)
        days = [d for d in log.days() if d <= day and log.day_file(d).is_file()]
        if days and days[0] < day:
            last = days[0] - timedelta(days=1)
    if last is not None and day > last + timedelta(days=1):
        first = last + timedelta(days=1)
        span = (day - first).days + 1
        if span > MAX_CATCH_UP:
            skipped_to = day - timedelta(days=MAX_CATCH_UP)
            notes.append(
                f"{span - MAX_CATCH_UP} day(s) {first}..{skipped_to} were not reflected: a "
                f"catch-up reflects at most the last {MAX_CATCH_UP} days"
            )
            first = skipped_to + timedelta(days=1)
        if first < day:
            notes.append(f"caught up: reflected {first}..{day - timedelta(days=1)} first, in order")
    caught: list[date] = []
    d = first
    while d < day:
        # Each reflected day's records land where its own run would have put them (the
        # morning after it, at this run's time of day), so weekly and monthly see what
        # they would have seen without the downtime.
        _run_one(root, d, reflector, _as_if_on_time(d, when), [], seen=False)
        caught.append(d)
        d += timedelta(days=1)
    result = _run_one(root, day, reflector, when, notes)
    result.caught_up = caught
    # Two OS users: the days before this one are closed to new events; make them the
    # human's so the assistant's user cannot rewrite them either.
    seal_reflected(root, day)
    return result


def _as_if_on_time(day: date, when: datetime) -> datetime:
    """The moment a run for ``day`` would have happened: the next morning, same time."""
    local = when.astimezone()
    return local.replace(
        year=(day + timedelta(days=1)).year,
        month=(day + timedelta(days=1)).month,
        day=(day + timedelta(days=1)).day,
    )


def _run_one(
    root: MemoryRoot,
    day: date,
    reflector: Reflector | None,
    when: datetime,
    notes: list[str],
    *,
    seen: bool = True,
) -> NightlyResult:
    """One day's run.  ``seen=False`` for a day reflected in a catch-up: its morning
    passed unbooted, so a ``release`` carried for it does not count as the release a
    weakening belief needs before it retires (the owner never read it)."""
    reader = ScopedReader(root, "nightly", evidence_window=(day, day))
    state_data = reader.read_json("today", NIGHTLY_STATE_FILE)
    last = NightlyState.model_validate(state_data).last_date if state_data else None

    def refuse_stale(marker: RunMarker | None) -> None:
        if last is not None and (day < last or (day == last and marker is None)):
            raise InvalidInput(
                f"Today already reflects {last}; a nightly run for {day} would overwrite newer "
                "state (run it for a later date)"
            )

    status, plan, marker = plan_or_resume(
        root,
        "nightly",
        day,
        when,
        NightlyPlan,
        lambda: _plan(day, reader, reflector or RulesReflector(), notes, seen=seen).model_copy(
            update={"before": today_texts(reader)}
        ),
        guard=refuse_stale,
    )
    if status == "already done":
        return NightlyResult(status=status, plan=plan, record_ids=marker.record_ids)
    writer = Writer(root, "nightly")
    _write_today(writer, plan)
    records = append_once(root, writer, marker, _records(plan))
    marker = finish(root, marker, records)
    return NightlyResult(status=status, plan=plan, record_ids=marker.record_ids)


def _adopted(events: list[EvidenceRecord], known: dict[str, Hypothesis]) -> list[Hypothesis]:
    """Hypotheses a session added that day (Evidence only) that the cache lacks; a
    look-alike of one already known (the same words once invisible characters, lookalike
    letters and widths are normalised) folds into it instead."""
    out = []
    for rec in events:
        snap = snapshot_of(rec)
        if snap is None or snap.origin != "session" or snap.id in known:
            continue
        if duplicate_of(snap.text, known) is None:
            out.append(snap)
            known[snap.id] = snap
    return out


def _session_proposals(
    events: list[EvidenceRecord], register: dict[str, Hypothesis]
) -> list[tuple[Hypothesis, str]]:
    """Triggers / counter-moves a session proposed that day, recorded on the hypothesis
    as the session's proposal (used once friction backs it, or the human adopts it)."""
    out: dict[str, Hypothesis] = {}
    for rec in events:
        if rec.kind != "hypothesis-proposal":
            continue
        hid = str(rec.data.get("hypothesis", ""))
        h = out.get(hid) or register.get(hid)
        if h is None or not h.carriable:
            continue
        when, do = rec.data.get("when"), rec.data.get("do")
        p = SessionProposal(
            when=str(when) if when else None,
            do=str(do) if do else None,
            day=day_key(rec),
            evidence_id=rec.id,
        )
        out[hid] = h.model_copy(update={"proposal": p})
    return [(h, "the session proposed a trigger / counter-move") for h in out.values()]


def _proposed_marks(ctx: NightlyContext) -> list[tuple[Hypothesis, str]]:
    """Hypotheses a weekly job proposed (its job record lands on the day it ran)."""
    out = []
    for rec in ctx.events:
        if rec.kind != "job" or rec.data.get("job") != "weekly":
            continue
        for hid in rec.data.get("hypotheses") or []:
            h = ctx.register.get(str(hid))
            if h is not None and h.proposed is None:
                out.append((h.model_copy(update={"proposed": ctx.day}), "proposed for Canon"))
        for hid in rec.data.get("narrowings") or []:
            h = ctx.register.get(str(hid))
            if h is not None and h.narrowing is None:
                out.append(
                    (h.model_copy(update={"narrowing": ctx.day}), "a narrowing went to the human")
                )
    return out


def _context(
    day: date, reader: ScopedReader
) -> tuple[NightlyContext, list[Hypothesis], dict[str, tuple[Hypothesis, str]]]:
    """The reflector's context for ``day``: the register with the human's adoptions and
    the session's proposals marked, read once (the day's digest is reused)."""
    register = read_register(reader)
    base = NightlyContext(
        day=day, reader=reader, previous_carry=read_previous_carry(reader), day_register=register
    )
    known = dict(register)
    adopted = _adopted(list(base.events), known)
    marks = {h.id: (h, why) for h, why in _proposed_marks(base)}
    seen = {**base.register, **{h.id: h for h in adopted}, **{k: v[0] for k, v in marks.items()}}
    for h, why in _session_proposals(list(base.events), seen):
        if h.id in {a.id for a in adopted}:
            adopted = [h if a.id == h.id else a for a in adopted]
        else:
            old = marks.get(h.id)
            marks[h.id] = (h, f"{old[1]}; {why}" if old else why)
    ctx = NightlyContext(
        day=day,
        reader=reader,
        previous_carry=base.previous_carry,
        adopted=adopted + [h for h, _ in marks.values()],
        day_digest=base.digest,
        day_register=register,
    )
    return ctx, adopted, marks


def _plan(
    day: date, reader: ScopedReader, reflector: Reflector, notes: list[str], *, seen: bool = True
) -> NightlyPlan:
    ctx, adopted, marks = _context(day, reader)
    notes = notes + _digest_notes(ctx)
    register = ctx.register
    note_keys = {n.id: n.counts_on for n in ctx.recent_untagged}
    prev = ctx.previous_carry

    got = reflect_with_fallback(
        reflector,
        lambda r, fb: r.nightly(context=ctx, feedback=fb),
        lambda ref: check_nightly(ref, ctx, day),
    )
    ref: NightlyReflection = got.value
    readings = [(x.event, x.hypothesis, x.relation) for x in ref.readings]
    links = day_links(ctx.friction, readings)
    changes = apply_day(register, day, links, ctx.friction, note_keys)
    raised = ctx.raised(ref.raise_hypothesis) if ref.raise_hypothesis else None
    steps = [
        StateStep(hypothesis=snap, previous=ctx.register[hid].state, reason=reason)
        for hid, (snap, reason) in changes.items()
    ]
    for hid, (h, why) in marks.items():
        if hid not in changes:
            steps.append(StateStep(hypothesis=h, previous=h.state, reason=why))
        else:  # the day's evidence snapshot carries the mark (and the proposal) too
            i = [s.hypothesis.id for s in steps].index(hid)
            steps[i].hypothesis = steps[i].hypothesis.model_copy(
                update={"proposed": h.proposed, "proposal": h.proposal, "narrowing": h.narrowing}
            )
    _after_steps(steps, register, raised, day, ref, seen=seen)
    outcome = _carry_outcome(prev, links)
    carry = None
    recent = list(ctx.recent_types)
    if ref.complete():
        assert ref.carry_type is not None and ref.carry_text is not None
        carry = Carry(
            type=ref.carry_type,
            text=ref.carry_text,
            hypothesis=ref.hypothesis,
            date=day + timedelta(days=1),
        )
        recent = (recent + [ref.carry_type])[-3:]
    state = _next_state(ctx, ref, raised, outcome, carry, recent, seen=seen)
    return NightlyPlan(
        day=day,
        requested=reflector.name,
        reflector=got.used,
        fallback=got.fallback,
        bias=ref.bias if carry else None,
        carry=carry,
        changes=steps,
        raised=raised,
        adopted=adopted,
        outcome=outcome,
        recent_types=recent,
        state=state,
        notes=notes,
    )


def _carry_outcome(
    prev: Carry | None, links: dict[str, tuple[list[str], list[str]]]
) -> CarryOutcome | None:
    """How yesterday's carry fared today: the day's support and contradiction of its
    hypothesis."""
    if prev is None:
        return None
    sups, cons = links.get(prev.hypothesis or "", ([], []))
    kind: Outcome = (
        "mixed" if sups and cons else "held" if sups else "slipped" if cons else "untested"
    )
    return CarryOutcome(
        carry_type=prev.type,
        hypothesis=prev.hypothesis,
        outcome=kind,
        supports=sups,
        contradicts=cons,
    )


def _next_state(
    ctx: NightlyContext,
    ref: NightlyReflection,
    raised: Hypothesis | None,
    outcome: CarryOutcome | None,
    carry: Carry | None,
    recent: list[str],
    *,
    seen: bool = True,
) -> NightlyState:
    """What tomorrow's nightly reads back: recent types, outcomes, the untagged notes no
    hypothesis explained yet (bounded, freshest first to stay) and the carries — a carry
    for a morning a catch-up passed over is kept as not ``seen``."""
    day = ctx.day
    outcomes = list(ctx.outcomes)
    if outcome is not None:
        outcomes.append(
            OutcomeNote(
                day=day,
                hypothesis=outcome.hypothesis,
                type=outcome.carry_type,
                outcome=outcome.outcome,
            )
        )
    cited = set(raised.cites) if raised else set()
    cited |= {r.event for r in ref.readings}  # explained: support of a known hypothesis
    keep = [n for n in ctx.recent_untagged if n.id not in cited and (day - n.day).days < 6]
    keep += [ctx.note(r, 400) for r in ctx.untagged if r.id not in cited]
    keep = keep[-RECENT_NOTES:]  # bounded like the day itself: the freshest win
    carries = list(ctx.carries)
    if carry is not None:
        carries.append(
            CarryRecord(
                day=carry.date or day, hypothesis=carry.hypothesis, type=carry.type, seen=seen
            )
        )
    return NightlyState.model_validate(
        {
            "last_date": day,
            "recent_types": recent,
            "outcomes": [o.model_dump() for o in outcomes[-20:]],
            "untagged": [n.model_dump() for n in keep],
            "carries": [c.model_dump() for c in carries[-14:]],
        }
    )


def _digest_notes(ctx: NightlyContext) -> list[str]:
    """What the run's notes say about a day it could not read whole."""
    dig, out = ctx.digest, []
    if dig.friction_left_out:
        out.append(
            f"{dig.friction_left_out} of the day's {dig.friction_total} friction events were "
            f"counted, not reflected: a day keeps at most {MAX_FRICTION} (per hypothesis the "
            f"latest {PER_LINK} for and against, the day's first {UNTAGGED_FIRST} and last "
            f"{UNTAGGED_LAST} untagged)"
        )
    if dig.problems:
        out.append(
            f"{len(dig.problems)} problem(s) in the day's hash chain, e.g. {dig.problems[0]} "
            "(records that fail it are not reflected; run 'evolving-agent verify')"
        )
    return out


def _after_steps(
    steps: list[StateStep],
    register: dict[str, Hypothesis],
    raised: Hypothesis | None,
    day: date,
    ref: NightlyReflection,
    *,
    seen: bool = True,
) -> None:
    """What the day's carry and the register as a whole change on top of the evidence:
    a ``release`` carry for a morning the owner boots with (not one a catch-up passed
    over) marks its hypothesis released (a weakening one may retire only after one),
    and the pendulum pairs (``tension``) are brought up to date."""

    def current(hid: str) -> Hypothesis | None:
        for st in steps:
            if st.hypothesis.id == hid:
                return st.hypothesis
        if raised is not None and raised.id == hid:
            return raised
        return register.get(hid)

    def put(h: Hypothesis, why: str) -> None:
        for st in steps:
            if st.hypothesis.id == h.id:
                st.hypothesis = h
                st.reason = f"{st.reason}; {why}"
                return
        old = register.get(h.id)
        if old is None:
            return  # the raised one: its own record carries the snapshot
        steps.append(StateStep(hypothesis=h, previous=old.state, reason=why))

    if ref.carry_type == "release" and ref.hypothesis and seen:
        h = current(ref.hypothesis)
        if h is not None:
            put(h.model_copy(update={"released": day}), "carried as release")
    pool = [
        x
        for x in (current(hid) for hid in {*register, *([raised.id] if raised else [])})
        if x is not None and x.carriable
    ]
    pool.sort(key=lambda x: x.id)
    for hid, partner_list in tensions(pool, day).items():
        partners = tuple(partner_list)
        h = current(hid)
        if h is not None and h.tension != partners:
            why = (
                f"its evidence swings against {', '.join(partners)}: held from Canon "
                "and never carried the morning after it"
                if partners
                else "no longer swings against another hypothesis"
            )
            put(h.model_copy(update={"tension": partners}), why)


def plan_files(plan: NightlyPlan) -> dict[str, str]:
    """The Today files a plan overwrites whole: its state, and bias + carry unless quiet."""
    state = plan.state or NightlyState.model_validate(
        {"last_date": plan.day, "recent_types": plan.recent_types}
    )
    files = {NIGHTLY_STATE_FILE: state.model_dump_json(indent=2) + "\n"}
    if plan.carry is not None and plan.bias is not None:
        files[BIAS_FILE] = redact(plan.bias) + "\n"
        files[CARRY_FILE] = plan.carry.model_dump_json(indent=2) + "\n"
    return files


def plan_snapshots(plan: NightlyPlan) -> list[Hypothesis]:
    """The hypotheses a plan puts in Today's register (adopted, changed, raised)."""
    snaps = [*plan.adopted, *[c.hypothesis for c in plan.changes]]
    if plan.raised is not None:
        snaps.append(plan.raised)
    return snaps


def _write_today(writer: Writer, plan: NightlyPlan) -> None:
    writer.write_many("today", dict(plan_files(plan)))
    snaps = plan_snapshots(plan)
    if snaps:
        merge_into_register(writer, snaps)


def _records(plan: NightlyPlan) -> list[dict[str, object]]:
    day = plan.day.isoformat()
    out: list[dict[str, object]] = []
    if plan.outcome is not None:
        o = plan.outcome
        about = f" on {o.hypothesis}" if o.hypothesis else ""
        out.append(
            {
                "kind": "carry-outcome",
                "text": f"{day}: yesterday's {o.carry_type}{about} {o.outcome}",
                "data": {"date": day, **o.model_dump(mode="json")},
            }
        )
    if plan.raised is not None:
        h = plan.raised
        out.append(
            {
                "kind": "hypothesis",
                "text": f"raised hypothesis {h.id} from recurring untagged friction: {h.text}",
                "data": snapshot_data(
                    h,
                    reason="raised from recurring untagged friction",
                    cites=list(h.cites),
                    date=day,
                ),
            }
        )
    for c in plan.changes:
        h = c.hypothesis
        out.append(
            {
                "kind": "hypothesis-state",
                "text": f"{h.id}: {c.previous} -> {h.state} ({c.reason})",
                "data": snapshot_data(h, previous=c.previous, reason=c.reason, date=day),
            }
        )
    if plan.fallback:
        out.append(
            {
                "kind": "reflector-fallback",
                "text": plan.fallback,
                "data": {"job": "nightly", "date": day, "requested": plan.requested},
            }
        )
    carry = plan.carry
    summary = (
        f"nightly {day}: {carry.type} on {carry.hypothesis or 'the day'} ({plan.reflector})"
        if carry
        else f"nightly {day}: quiet day, nothing carried ({plan.reflector})"
    )
    if plan.notes:
        summary += "; " + "; ".join(plan.notes)
    out.append(
        {
            "kind": "job",
            "text": summary,
            "data": {
                "job": "nightly",
                "date": day,
                "reflector": plan.reflector,
                "fallback": plan.fallback is not None,
                "carry_type": carry.type if carry else None,
                "hypothesis": carry.hypothesis if carry else None,
                "raised": plan.raised.id if plan.raised else None,
                "notes": plan.notes,
            },
        }
    )
    return out
