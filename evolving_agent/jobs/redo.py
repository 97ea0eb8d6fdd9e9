"""Redo a reflected day: ``run nightly --redo DATE``.

A redo gives the day a new reflection as if the first run had never happened: Today
goes back to what that run started from (its plan kept the files, ``NightlyPlan.before``),
the run is planned again from there, and only then is anything written.  Evidence is
append-only, so nothing of the first run is removed: one ``job`` record (``job: redo``)
names the superseded run and keeps its bias and carry; ``hypothesis-state`` records
give each hypothesis that run changed its earlier snapshot back (or withdraw one it
raised), so the fold over Evidence and Today's register agree again; then the new run's
own records follow, all in one batch.

What the owner did after the first run stays: a hypothesis they edited keeps their
edit on top of its restored snapshot (field by field), a bias they wrote by hand is not
given back.  Where that cannot hold, the redo refuses and changes nothing: a later day
was reflected on top, a weekly run read the day since, the run never
finished, or the owner changed a hypothesis that run added.

Crash safety: everything the redo will write (Today's files whole, the records, the
new run marker) is planned first and saved in one journal file, the commit point.  A
crash before it leaves the old state untouched; after it, the next ``run nightly``
(or the same redo) applies the journal again — the records by the run id, once — and
the new state is complete.  A redo holds the nightly job to itself: one while any
nightly runs is refused.
"""

from __future__ import annotations

from dataclasses import field
from datetime import date, datetime
from typing import Any

from evolving_agent.errors import InvalidInput
from evolving_agent.jobs.markers import (
    RunMarker,
    load_marker,
    marker_path,
    new_marker,
    nightly_lock,
    refuse_future,
)
from evolving_agent.jobs.nightly import (
    BIAS_FILE,
    CARRY_FILE,
    NIGHTLY_STATE_FILE,
    REGISTER_FILE,
    NightlyPlan,
    NightlyResult,
    _plan,
    _records,
    plan_files,
    plan_snapshots,
    today_texts,
)
from evolving_agent.jobs.redo_journal import (
    RedoJournal,
    apply_journal,
    journal_path,
    journals,
)
from evolving_agent.memory.authority import Area, ScopedReader, Writer
from evolving_agent.memory.base.atomic import atomic_write
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.evidence.evidence import now as local_now
from evolving_agent.memory.ops.hypotheses import (
    Hypothesis,
    dump_register,
    fold,
    parse_register,
    snapshot_data,
)
from evolving_agent.memory.root import require_root
from evolving_agent.memory.sync.deploy import seal_reflected
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record
from evolving_agent.reflectors import Reflector
from evolving_agent.reflectors.rules import RulesReflector

JOBS_READING_NIGHTLY = ("weekly",)  # its proposals come from the snapshots a nightly wrote


def redo_nightly(
    root: MemoryRoot,
    day: date,
    *,
    reflector: Reflector | None = None,
    now: datetime | None = None,
) -> NightlyResult:
    """Reflect ``day`` again (see the module docstring); the old bias stays in Evidence."""
    require_root(root)
    when = now or local_now()
    refuse_future(day, when)
    with nightly_lock(root, alone=f"another nightly run is under way, so {day} cannot be redone"):
        for path in journals(root):  # an earlier redo that crashed: finish it first
            journal = RedoJournal.model_validate_json(path.read_bytes())
            done = apply_journal(root, journal)
            if journal.day == day:  # this very redo: finished, not done twice
                return _result(journal.old, done)
        old = _redoable(root, day)
        old_plan = NightlyPlan.model_validate(old.plan)
        current = today_texts(ScopedReader(root, "nightly"))
        if current[NIGHTLY_STATE_FILE] != plan_files(old_plan)[NIGHTLY_STATE_FILE]:
            raise InvalidInput(
                f"today/{NIGHTLY_STATE_FILE} changed since the nightly run for {day}: a redo "
                "would not start from what that run left (nothing was changed)"
            )
        restore = _restore(root, old, old_plan, current)
        reader = _TodayAsIt(root, "nightly", evidence_window=(day, day), today=restore.today)
        note = f"redo: supersedes run {old.run_id} (its records and bias stay in Evidence)"
        plan = _plan(day, reader, reflector or RulesReflector(), [note]).model_copy(
            update={"before": restore.today}
        )
        final = dict(restore.today)
        final.update(plan_files(plan))
        register = parse_register(restore.today[REGISTER_FILE])
        for snap in plan_snapshots(plan):
            register[snap.id] = snap
        if register or final[REGISTER_FILE] is not None:
            final[REGISTER_FILE] = dump_register(register).decode()
        marker = new_marker("nightly", day, when, plan.model_dump(mode="json"))
        journal = RedoJournal(
            day=day,
            old=old,
            new=marker,
            today=final,
            records=[_redo_record(day, old, old_plan), *restore.records, *_records(plan)],
        )
        writer = Writer(root, "nightly")
        for area in ("today", "evidence"):  # a denied write refuses before the commit point
            writer.require_os_write(area)
        atomic_write(journal_path(root, day), (journal.model_dump_json() + "\n").encode())
        done = apply_journal(root, journal)
    seal_reflected(root, day)
    return _result(old, done)


def _result(old: RunMarker, done: RunMarker) -> NightlyResult:
    return NightlyResult(
        status="redone",
        plan=NightlyPlan.model_validate(done.plan),
        record_ids=done.record_ids,
        superseded=old.run_id,
        old_bias=NightlyPlan.model_validate(old.plan).bias,
    )


def _redoable(root: MemoryRoot, day: date) -> RunMarker:
    """The finished run for ``day`` that nothing has built on yet, or a clear refusal."""
    old = load_marker(root, "nightly", day)
    if old is None:
        raise InvalidInput(
            f"the nightly job never ran for {day}: there is nothing to redo "
            f"(run 'evolving-agent run nightly --date {day}')"
        )
    if old.phase != "done":
        raise InvalidInput(
            f"the nightly run for {day} did not finish: 'evolving-agent run nightly --date "
            f"{day}' finishes it; redo after that"
        )
    state = ScopedReader(root, "nightly").read_json("today", NIGHTLY_STATE_FILE) or {}
    last = state.get("last_date")
    if last != day.isoformat():
        raise InvalidInput(
            f"{last} was reflected after {day}: a redo of {day} would undo it (only the last "
            f"reflected day, {last}, can be redone)"
        )
    if NightlyPlan.model_validate(old.plan).before is None:
        raise InvalidInput(
            f"the nightly run for {day} was made before redo kept the state it started from: "
            "it cannot be undone exactly"
        )
    for job in JOBS_READING_NIGHTLY:
        for path in sorted(marker_path(root, job, day).parent.glob(f"{job}-*.json")):
            later = RunMarker.model_validate_json(path.read_bytes())
            if later.date >= day and later.run_ts > old.run_ts:
                raise InvalidInput(
                    f"the {job} run for {later.date} read {day}'s reflection after it was "
                    f"written: a redo of {day} would leave that run built on words that "
                    "are gone (nothing was changed)"
                )
    return old


@record
class _Restore:
    today: dict[str, str | None]
    records: list[dict[str, Any]] = field(default_factory=list)


def _restore(
    root: MemoryRoot, old: RunMarker, plan: NightlyPlan, current: dict[str, str | None]
) -> _Restore:
    """Today as if ``old`` had never run (the owner's later changes kept), and the
    records that bring the fold over Evidence back to it."""
    assert plan.before is not None
    before, day = plan.before, plan.day
    wrote = plan_files(plan)
    today = dict(current)
    today[NIGHTLY_STATE_FILE] = before[NIGHTLY_STATE_FILE]
    for name in (BIAS_FILE, CARRY_FILE):
        if name in wrote and current[name] == wrote[name]:  # not rewritten by hand since
            today[name] = before[name]
    had = parse_register(before[REGISTER_FILE])
    now = parse_register(current[REGISTER_FILE])
    why = f"restored: the nightly run for {day} ({old.run_id}) was redone"
    out = _Restore(today)
    earlier: dict[str, Hypothesis] | None = None
    for after in {h.id: h for h in plan_snapshots(plan)}.values():
        hid, mine = after.id, now.get(after.id)
        if hid in had:
            if mine is None:
                raise InvalidInput(
                    f"hypothesis {hid} left today/{REGISTER_FILE} after the nightly run for "
                    f"{day}: a redo cannot give it back (nothing was changed)"
                )
            back = _keep_later_edits(had[hid], after, mine)
            now[hid] = back
            data = snapshot_data(back, previous=mine.state, reason=why, date=day.isoformat())
            out.records.append(_state_record(hid, mine.state, back.state, why, data))
            continue
        if mine != after:
            raise InvalidInput(
                f"hypothesis {hid}, which the nightly run for {day} added, was changed since: "
                "a redo would lose that change (nothing was changed)"
            )
        now.pop(hid, None)
        if earlier is None:  # a session's hypothesis, adopted by that run: pending again
            earlier = fold(
                r for r in EvidenceLog(root).iter_all() if r.data.get("run") != old.run_id
            )
        pending = earlier.get(hid)
        if pending is not None:
            data = snapshot_data(pending, previous=after.state, reason=why, date=day.isoformat())
            out.records.append(_state_record(hid, after.state, pending.state, why, data))
        else:
            data = snapshot_data(after, withdrawn=hid, reason=why, date=day.isoformat())
            out.records.append(_state_record(hid, after.state, "withdrawn", why, data))
    if now or before[REGISTER_FILE] is not None:
        today[REGISTER_FILE] = dump_register(now).decode()
    else:
        today[REGISTER_FILE] = None
    return out


def _keep_later_edits(before: Hypothesis, after: Hypothesis, now: Hypothesis) -> Hypothesis:
    """``before`` with every field the owner changed since the run (``now`` ≠ ``after``)."""
    b, a, n = (h.model_dump(mode="json") for h in (before, after, now))
    return Hypothesis.model_validate({k: n[k] if n[k] != a.get(k) else b.get(k) for k in n})


def _state_record(
    hid: str, was: str, becomes: str, why: str, data: dict[str, Any]
) -> dict[str, Any]:
    return {"kind": "hypothesis-state", "text": f"{hid}: {was} -> {becomes} ({why})", "data": data}


def _redo_record(day: date, old: RunMarker, plan: NightlyPlan) -> dict[str, Any]:
    words = plan.bias.splitlines()[0] if plan.bias else "none (a quiet day)"
    return {
        "kind": "job",
        "text": f"nightly {day} redone: run {old.run_id} superseded; its bias was: {words}",
        "data": {
            "job": "redo",
            "date": day.isoformat(),
            "superseded": old.run_id,
            "superseded_records": old.record_ids,
            "bias": plan.bias,
            "carry": plan.carry.model_dump(mode="json") if plan.carry else None,
            "reflector": plan.reflector,
        },
    }


@record
class _TodayAsIt(ScopedReader):
    """The nightly job's reader with Today as a redo restores it, before it is written."""

    today: dict[str, str | None] = field(default_factory=dict)

    def read_text(self, area: Area, relpath: str) -> str | None:
        if area == "today" and relpath in self.today:
            self._check(area, relpath)
            return self.today[relpath]
        return super().read_text(area, relpath)
