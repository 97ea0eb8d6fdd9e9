"""The nightly job: one day's Evidence + Today → new bias, one typed carry, updated states.

The reflector gets only ``ScopedReader(root, "nightly", evidence_window=(day, day))``
and the previous carry, so Canon and the rest of history are out of its reach.  The
job itself reads the same narrow scope (Today: carry, register cache, recent types;
Evidence: the one day), so its cost grows with the day's evidence, not with history.

Steps: record how yesterday's carry fared (a ``carry-outcome`` record), apply the day's
support / contradiction to the register, write bias + carry + register through
``Writer(root, "nightly")``, append one batch of records ending with the job record.
Idempotent and crash-safe through a run marker (see ``jobs/runs.py``).  A quiet day
(no hypothesis to carry, no friction) writes no bias or carry: nothing is invented.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evolving_agent.errors import InvalidInput
from evolving_agent.jobs.hypotheses import (
    Hypothesis,
    HypothesisState,
    apply_day,
    day_links,
    merge_into_register,
    snapshot_data,
)
from evolving_agent.jobs.runs import RunMarker, append_once, finish, plan_or_resume, refuse_future
from evolving_agent.memory.authority import ScopedReader, Writer
from evolving_agent.memory.evidence import now as local_now
from evolving_agent.memory.redact import redact
from evolving_agent.memory.root import require_root
from evolving_agent.memory.today import BIAS_FILE, CARRY_FILE, Carry
from evolving_agent.paths import MemoryRoot
from evolving_agent.reflectors.base import (
    NIGHTLY_STATE_FILE,
    NightlyContext,
    NightlyReflection,
    NightlyState,
    Reflector,
    ReflectorError,
    read_previous_carry,
    reflect_with_fallback,
)
from evolving_agent.reflectors.rules import RulesReflector

Outcome = Literal["held", "slipped", "mixed", "untested"]


class CarryOutcome(BaseModel):
    """How yesterday's bias and carry fared on the day's evidence."""

    model_config = ConfigDict(extra="forbid")

    carry_type: str
    hypothesis: str | None
    outcome: Outcome
    supports: list[str] = Field(default_factory=list)
    contradicts: list[str] = Field(default_factory=list)


class StateStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hypothesis: Hypothesis
    previous: HypothesisState
    reason: str


class NightlyPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    day: date
    requested: str
    reflector: str
    fallback: str | None = None
    bias: str | None = None
    carry: Carry | None = None
    changes: list[StateStep] = Field(default_factory=list)
    outcome: CarryOutcome | None = None
    recent_types: list[str] = Field(default_factory=list)

    @property
    def quiet(self) -> bool:
        return self.carry is None


class NightlyResult(BaseModel):
    status: Literal["done", "already done", "resumed"]
    plan: NightlyPlan
    record_ids: list[str]


def default_day(now: datetime) -> date:
    """The nightly job runs after midnight and reflects on the day that just ended."""
    return now.astimezone().date() - timedelta(days=1)


def run_nightly(
    root: MemoryRoot,
    day: date | None = None,
    *,
    reflector: Reflector | None = None,
    now: datetime | None = None,
) -> NightlyResult:
    """Run the nightly job for ``day`` (default: yesterday).  Idempotent for a date."""
    require_root(root)
    when = now or local_now()
    day = day or default_day(when)
    refuse_future(day, when)
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
        lambda: _plan(day, reader, reflector or RulesReflector()),
        guard=refuse_stale,
    )
    if status == "already done":
        return NightlyResult(status=status, plan=plan, record_ids=marker.record_ids)
    writer = Writer(root, "nightly")
    _write_today(writer, plan)
    records = append_once(root, writer, marker, _records(plan))
    marker = finish(root, marker, records)
    return NightlyResult(status=status, plan=plan, record_ids=marker.record_ids)


def _plan(day: date, reader: ScopedReader, reflector: Reflector) -> NightlyPlan:
    ctx = NightlyContext(day=day, reader=reader, previous_carry=read_previous_carry(reader))
    register = ctx.register
    untagged = {r.id for r in ctx.friction if not r.supports and not r.contradicts}
    prev = ctx.previous_carry

    def check(ref: NightlyReflection) -> None:
        given = (ref.bias is not None, ref.carry_type is not None, ref.carry_text is not None)
        if any(given) and not all(given):
            raise ReflectorError("bias, carry_type and carry_text come together (or none)")
        if prev is not None and ref.carry_type == prev.type:
            raise ReflectorError(f"carry type '{ref.carry_type}' repeats yesterday's")
        if ref.hypothesis is not None:
            h = register.get(ref.hypothesis)
            if h is None or not h.active:
                raise ReflectorError(f"'{ref.hypothesis}' is not an active hypothesis")
        if ref.hypothesis is not None and ref.carry_type is None:
            raise ReflectorError("a chosen hypothesis needs a carry")
        for r in ref.readings:
            if r.event not in untagged:
                raise ReflectorError(f"reading cites {r.event!r}, not an untagged friction event")
            if r.hypothesis not in register:
                raise ReflectorError(f"reading names unknown hypothesis {r.hypothesis!r}")

    got = reflect_with_fallback(reflector, lambda r, fb: r.nightly(context=ctx, feedback=fb), check)
    ref: NightlyReflection = got.value
    readings = [(x.event, x.hypothesis, x.relation) for x in ref.readings]
    links = day_links(ctx.friction, readings)
    changes = apply_day(register, day, links)
    outcome = None
    if prev is not None:
        sups, cons = links.get(prev.hypothesis or "", ([], []))
        kind: Outcome = (
            "mixed" if sups and cons else "held" if sups else "slipped" if cons else "untested"
        )
        outcome = CarryOutcome(
            carry_type=prev.type,
            hypothesis=prev.hypothesis,
            outcome=kind,
            supports=sups,
            contradicts=cons,
        )
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
    return NightlyPlan(
        day=day,
        requested=reflector.name,
        reflector=got.used,
        fallback=got.fallback,
        bias=ref.bias if carry else None,
        carry=carry,
        changes=[
            StateStep(hypothesis=snap, previous=register[hid].state, reason=reason)
            for hid, (snap, reason) in changes.items()
        ],
        outcome=outcome,
        recent_types=recent,
    )


def _write_today(writer: Writer, plan: NightlyPlan) -> None:
    state = NightlyState.model_validate({"last_date": plan.day, "recent_types": plan.recent_types})
    files: dict[str, str | bytes] = {
        NIGHTLY_STATE_FILE: json.dumps(state.model_dump(mode="json"), indent=2) + "\n"
    }
    if plan.carry is not None and plan.bias is not None:
        files[BIAS_FILE] = redact(plan.bias) + "\n"
        files[CARRY_FILE] = json.dumps(plan.carry.model_dump(mode="json"), indent=2) + "\n"
    writer.write_many("today", files)
    if plan.changes:
        merge_into_register(writer, [c.hypothesis for c in plan.changes])


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
            },
        }
    )
    return out
