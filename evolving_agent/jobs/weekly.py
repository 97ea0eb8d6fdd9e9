"""The weekly job: the week's Evidence → proposals (identity diffs citing their evidence).

Reads only the 7 days of Evidence ending on the date (``evidence_window``) and the
existing proposals (to stay idempotent).  The hypotheses come from the snapshots the
nightly job and ``hypothesis add`` left in that week, plus the week's tagged friction.
A candidate meets the promotion floor (``memory/hypotheses.meets_floor``: live, support
*recorded* on ≥ 5 distinct days across ≥ 2 calendar weeks, contradicted on fewer than a
third as many days) and has no proposal yet; the reflector words an ``add`` (or a
``replace`` when the human edited a hypothesis already in Canon) and gets the friction
texts behind each candidate, fenced as untrusted data.  A hypothesis that is in Canon
and was retired this week gets a ``remove`` proposal, worded by the job.  The job fills
in the hypothesis id and the evidence ids and writes
``reviews/proposals/prop-<date>-<hypothesis>.json`` through ``Writer(root, "weekly")``,
which cannot write Canon.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ValidationError

from evolving_agent.jobs.markers import (
    append_once,
    append_provenance_once,
    finish,
    plan_or_resume,
    refuse_future,
)
from evolving_agent.memory.authority import ScopedReader, Writer
from evolving_agent.memory.canon.canon_diff import CanonDiff
from evolving_agent.memory.evidence.evidence import EvidenceRecord
from evolving_agent.memory.evidence.evidence import now as local_now
from evolving_agent.memory.ops.hypotheses import (
    Hypothesis,
    advance,
    meets_floor,
    recorded_day,
    sanitise,
    snapshot_of,
)
from evolving_agent.memory.ops.review_trace import proposal_record
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.reflectors import Reflector, reflect_with_fallback
from evolving_agent.reflectors.answer_check import check_weekly
from evolving_agent.reflectors.answers import WeeklyReflection
from evolving_agent.reflectors.context import WeeklyContext
from evolving_agent.reflectors.rules import RulesReflector
from evolving_agent.review.models import Proposal
from evolving_agent.review.store import NARROWING


class WeeklyPlan(BaseModel):
    week_end: date
    requested: str
    reflector: str
    fallback: str | None = None
    proposals: list[Proposal]


class WeeklyResult(BaseModel):
    status: Literal["done", "already done", "resumed"]
    plan: WeeklyPlan
    record_ids: list[str]


def default_week_end(now: datetime) -> date:
    return now.astimezone().date() - timedelta(days=1)


def week_hypotheses(records: list[EvidenceRecord]) -> dict[str, Hypothesis]:
    """The latest snapshot of each hypothesis seen this week, with the week's tags applied
    by the shared state rules (so a run before the nightly job caught up sees the same)."""
    known: dict[str, Hypothesis] = {}
    for rec in records:
        snap = snapshot_of(rec)
        if snap is not None:
            known[snap.id] = snap
    for rec in records:
        if rec.kind != "friction":
            continue
        for hid, is_support in ((rec.supports, True), (rec.contradicts, False)):
            h = known.get(hid or "")
            if h is None:
                continue
            step = advance(
                h,
                rec.day(),
                [rec.id] if is_support else [],
                [] if is_support else [rec.id],
                recorded={rec.id: recorded_day(rec)},
                quotes={rec.id: rec.text},
            )
            if step is not None:
                known[h.id] = step[0]
    return known


def run_weekly(
    root: MemoryRoot,
    week_end: date | None = None,
    *,
    reflector: Reflector | None = None,
    now: datetime | None = None,
) -> WeeklyResult:
    """Run the weekly job for the week ending on ``week_end`` (default: yesterday)."""
    require_root(root)
    when = now or local_now()
    week_end = week_end or default_week_end(when)
    refuse_future(week_end, when)
    status, plan, marker = plan_or_resume(
        root,
        "weekly",
        week_end,
        when,
        WeeklyPlan,
        lambda: _plan(root, week_end, reflector or RulesReflector(), when),
    )
    if status == "already done":
        return WeeklyResult(status=status, plan=plan, record_ids=marker.record_ids)
    writer = Writer(root, "weekly")
    bodies = {p.id: (p.model_dump_json(indent=2) + "\n").encode() for p in plan.proposals}
    # Provenance first, one record per file (memory/ops/review_trace.py): a crash after it
    # leaves a record and no proposal (harmless); a proposal without one was planted.
    provenance = [proposal_record(pid, body, run=marker.run_id) for pid, body in bodies.items()]
    append_provenance_once(root, writer, marker, provenance, "proposal_id")
    for pid, body in bodies.items():
        writer.write("proposals", f"{pid}.json", body)
    records: list[dict[str, object]] = []
    if plan.fallback:
        records.append(
            {
                "kind": "reflector-fallback",
                "text": plan.fallback,
                "data": {
                    "job": "weekly",
                    "date": week_end.isoformat(),
                    "requested": plan.requested,
                },
            }
        )
    records.append(
        {
            "kind": "job",
            "text": f"weekly {week_end}: {len(plan.proposals)} proposal(s) ({plan.reflector})",
            "data": {
                "job": "weekly",
                "date": week_end.isoformat(),
                "reflector": plan.reflector,
                "fallback": plan.fallback is not None,
                "proposals": [p.id for p in plan.proposals],
                # the nightly job reads this to know what is on its way to Canon
                "hypotheses": [
                    p.hypothesis for p in plan.proposals if not p.id.endswith(NARROWING)
                ],
                "narrowings": [p.hypothesis for p in plan.proposals if p.id.endswith(NARROWING)],
            },
        }
    )
    marker = finish(root, marker, append_once(root, writer, marker, records))
    return WeeklyResult(status=status, plan=plan, record_ids=marker.record_ids)


def _narrowings(
    hyps: dict[str, Hypothesis],
    reader: ScopedReader,
    records: list[EvidenceRecord],
    week_end: date,
    when: datetime,
) -> list[Proposal]:
    """A high-stakes rule contradicted on ≥ 2 distinct days: the nightly job keeps it as
    it is, so the case for narrowing it reaches the human here, on the slow clock, as a
    proposal to reword it (the human edits the wording in review before approving)."""
    out = []
    for h in hyps.values():
        if h.stakes != "high" or not h.carriable or h.narrowing is not None:
            continue
        days = sorted(set(h.contradicted_on))
        if len(days) < 2 or not h.contradicts:
            continue
        if reader.list("proposals", f"*-{h.id}{NARROWING}.json"):
            continue  # proposed before, in another week
        # The proposed entry is the rule as it stands, whole: the base the human words
        # the narrower rule from.  No friction goes into it (a quote is no rule, and a
        # clipped one is not even a sentence); the cases are the cited evidence, shown
        # beside it on the card.  Approving it unworded is refused (review/approve.py).
        whenever, do = h.shape()
        text = h.canon_text or (f"When {whenever}: {do}" if whenever and do else h.text)
        text = " ".join(text.split())
        diff = (
            CanonDiff(section="habits", op="replace", text=text, old_text=h.canon_text)
            if h.canon_text
            else CanonDiff(section="habits", op="add", text=text)
        )
        rationale = (
            f"High-stakes rule {h.id} was contradicted on {len(days)} distinct days "
            f"({', '.join(d.isoformat() for d in days)}); the cited evidence shows "
            "those cases.  The nightly job never weakens it.  Word the narrower rule "
            "yourself (edit this card: the entry below is the rule as it stands), "
            "then approve; or reject to keep the rule as it is.  It cannot be "
            "approved unworded."
        )
        out.append(
            _proposal(week_end, h.id, diff, h.contradicts, rationale, when, suffix=NARROWING)
        )
    return out


def proposal_id(week_end: date, hypothesis: str, suffix: str = "") -> str:
    """``prop-<week end>-<hypothesis>`` (a narrowing adds its suffix): one a week each."""
    return f"prop-{week_end.isoformat()}-{hypothesis}{suffix}"


def _proposal(
    week_end: date,
    hypothesis: str,
    diff: CanonDiff,
    evidence_ids: Sequence[str],
    rationale: str,
    when: datetime,
    *,
    suffix: str = "",
) -> Proposal:
    return Proposal(
        id=proposal_id(week_end, hypothesis, suffix),
        week_end=week_end,
        hypothesis=hypothesis,
        diff=diff,
        evidence_ids=list(evidence_ids),
        rationale=rationale,
        created=when,
    )


def _existing(reader: ScopedReader) -> set[str]:
    """Hypotheses that already have a proposal (any week; a narrowing does not count)."""
    out = set()
    for path in reader.list("proposals", "*.json"):
        if path.stem.endswith(NARROWING):
            continue
        try:
            out.add(Proposal.model_validate_json(path.read_bytes()).hypothesis)
        except ValidationError:
            continue  # not ours to judge here; the review code reports damaged files
    return out


def _plan(root: MemoryRoot, week_end: date, reflector: Reflector, when: datetime) -> WeeklyPlan:
    start = week_end - timedelta(days=6)
    reader = ScopedReader(root, "weekly", evidence_window=(start, week_end))
    records = list(reader.evidence(start, week_end))
    hyps = week_hypotheses(records)
    proposed = _existing(reader)
    candidates = [h for h in hyps.values() if meets_floor(h) and h.id not in proposed]
    texts = {r.id: sanitise(r.text, 300) for r in records if r.kind == "friction"}
    friction = {
        h.id: [texts[e] for e in [*h.supports, *h.contradicts] if e in texts] for h in candidates
    }
    ctx = WeeklyContext(week_end=week_end, reader=reader, candidates=candidates, friction=friction)
    ids = {h.id for h in candidates}

    got = reflect_with_fallback(
        reflector,
        lambda r, fb: r.weekly(context=ctx, feedback=fb),
        lambda ref: check_weekly(ref, ids),
    )
    ref: WeeklyReflection = got.value
    proposals = []
    for d in ref.proposals:
        h = hyps[d.hypothesis]
        if h.canon_text and h.canon_text != d.text:
            diff = CanonDiff(section=d.section, op="replace", text=d.text, old_text=h.canon_text)
        else:
            diff = CanonDiff(section=d.section, op="add", text=d.text)
        proposals.append(_proposal(week_end, d.hypothesis, diff, h.supports, d.rationale, when))
    for h in hyps.values():
        # Retired this week while in Canon: propose taking the entry out.
        if h.state != "retired" or not h.canon_text or not start <= h.updated <= week_end:
            continue
        evidence = h.contradicts or h.supports
        if not evidence or proposal_id(week_end, h.id) in {p.id for p in proposals}:
            continue
        retired_for = h.reason or f"contradicted on {len(set(h.contradicted_on))} distinct days"
        remove = CanonDiff(section="habits", op="remove", old_text=h.canon_text)
        why = f"Hypothesis {h.id} was retired ({retired_for}); its Canon entry goes too."
        proposals.append(_proposal(week_end, h.id, remove, evidence, why, when))
    proposals += _narrowings(hyps, reader, records, week_end, when)
    return WeeklyPlan(
        week_end=week_end,
        requested=reflector.name,
        reflector=got.used,
        fallback=got.fallback,
        proposals=proposals,
    )
