"""The monthly job: the previous month's proposals → the human-approval queue.

Reads only the review areas (``proposals``, ``pending``, ``decisions``) through the
monthly read scope.  The one setting it needs from Canon — ``review.monthly_limit``
(default 3) — is read by the *runner* before the scoped context is built, because
the job's own scope does not include Canon.  Proposals with the same diff are merged
(their evidence ids pooled); the best-supported (most distinct evidence) come first;
diffs already queued or decided are skipped; at most the limit per month reach
``reviews/pending/rev-<YYYY-MM>-<n>.json``.  Proposals over the limit are not dropped:
they stay in ``proposals/`` and wait for next month's run, which considers every
proposal up to the end of its month that is neither queued nor decided — the oldest
month first, then the best-supported.  A hypothesis the drift watch holds
(:mod:`evolving_agent.review.hold`) has its proposals held out instead: they take none
of the month's room, the run's record names the flag and its evidence ids, and a later
run queues them once the human has acknowledged the flag.  Nothing here can write Canon: the
``monthly`` writer needs an approved review for that, and this job holds none.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from evolving_agent.errors import InvalidInput
from evolving_agent.jobs.markers import (
    RunMarker,
    append_once,
    append_provenance_once,
    finish,
    plan_or_resume,
    refuse_future,
)
from evolving_agent.memory.authority import ScopedReader, Writer
from evolving_agent.memory.base.similarity import key
from evolving_agent.memory.base.yamlio import parse_yaml, validate
from evolving_agent.memory.canon.canon import Identity
from evolving_agent.memory.canon.canon_diff import CANON_FILE, CanonDiff
from evolving_agent.memory.canon.policy import Policy
from evolving_agent.memory.evidence.evidence import now as local_now
from evolving_agent.memory.ops.review_trace import TraceIndex, queued_record, sha256_of
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.approve import committed_identity
from evolving_agent.review.hold import ack_command, holds
from evolving_agent.review.models import Decision, PendingReview, Proposal
from evolving_agent.review.store import NARROWING

M = TypeVar("M", bound=BaseModel)


class HeldFlag(BaseModel):
    kind: str
    title: str
    evidence_ids: list[str]


class HeldProposals(BaseModel):
    """Proposals of a hypothesis the drift watch holds: not queued until the human looks."""

    hypothesis: str
    proposals: list[str]
    flags: list[HeldFlag]


class MonthlyPlan(BaseModel):
    day: date
    month: str
    limit: int
    reviews: list[PendingReview]
    skipped: list[str]  # proposal ids left out (already queued / decided)
    deferred: list[str] = []  # over the limit: wait for next month's queue
    # Proposals no weekly run wrote, or changed since (memory/ops/review_trace.py): left out.
    refused: list[str] = []
    # What was read of each queued proposal: its sha256 (and legacy: written before
    # proposals were traced), for the review-queued records.
    read: dict[str, dict[str, Any]] = {}
    held: list[HeldProposals] = []  # held by the drift watch: wait for the human's look


class MonthlyResult(BaseModel):
    status: Literal["done", "already done", "resumed"]
    plan: MonthlyPlan
    record_ids: list[str]


def previous_month(day: date) -> tuple[date, date]:
    last = day.replace(day=1) - timedelta(days=1)
    return last.replace(day=1), last


def _key(diff: CanonDiff) -> tuple[str, str, str, str]:
    norm = " ".join(diff.text.lower().split()).rstrip(".")
    return (diff.section, diff.op, norm, " ".join((diff.old_text or "").lower().split()))


def _load(paths: list[Path], model: type[M]) -> list[M]:
    out: list[M] = []
    for path in paths:
        try:
            out.append(model.model_validate_json(path.read_bytes()))
        except ValidationError:
            continue  # damaged review files are reported by the review commands
    return out


def run_monthly(
    root: MemoryRoot, day: date | None = None, *, now: datetime | None = None
) -> MonthlyResult:
    """Queue the proposals of the month before ``day`` (default: today) for the human."""
    require_root(root)
    when = now or local_now()
    day = day or when.astimezone().date()
    refuse_future(day, when)

    def fresh_plan() -> MonthlyPlan:
        limit = Policy.load(root).review.monthly_limit  # the runner reads the Canon setting
        # ... the proposals' provenance, which lives in Evidence (outside the scope), and
        # the drift watch's holds, which read Evidence as the human does.
        # ... Canon's entries as committed, so no card is queued for an entry already
        # there (in any spelling: memory/similarity.key) ...
        in_canon = canon_entries(committed_identity(root))
        held = {
            hid: [
                HeldFlag(kind=f.kind, title=f.title, evidence_ids=f.evidence_ids)
                for f in hold.flags
            ]
            for hid, hold in holds(root, until=day).items()
        }
        return _plan(
            ScopedReader(root, "monthly"), day, limit, when, TraceIndex.scan(root), held,
            in_canon,
        )  # fmt: skip

    status, plan, marker = plan_or_resume(root, "monthly", day, when, MonthlyPlan, fresh_plan)
    if status == "already done":
        return MonthlyResult(status=status, plan=plan, record_ids=marker.record_ids)
    writer = Writer(root, "monthly")
    bodies = {r.id: (r.model_dump_json(indent=2) + "\n").encode() for r in plan.reviews}
    # Provenance first: a crash after it leaves a record and no review (harmless); a
    # review file without its record is a planted one (memory/ops/review_trace.py).
    _record_queued(root, writer, marker, plan, bodies)
    for review_id, body in bodies.items():
        writer.write("pending", f"{review_id}.json", body)
    record = {
        "kind": "job",
        "text": f"monthly {plan.month}: {len(plan.reviews)} diff(s) queued for review"
        + (f", {len(plan.deferred)} wait for next month" if plan.deferred else "")
        + (
            f"; refused {', '.join(plan.refused)}: no weekly run wrote them as they are"
            if plan.refused
            else ""
        )
        + "".join(f"; {held_line(h)}" for h in plan.held),
        "data": {
            "job": "monthly",
            "date": day.isoformat(),
            "month": plan.month,
            "limit": plan.limit,
            "reviews": [r.id for r in plan.reviews],
            "skipped": plan.skipped,
            "deferred": plan.deferred,
            "refused": plan.refused,
            "held": [h.model_dump(mode="json") for h in plan.held],
        },
    }
    marker = finish(root, marker, append_once(root, writer, marker, [record]))
    return MonthlyResult(status=status, plan=plan, record_ids=marker.record_ids)


def _record_queued(
    root: MemoryRoot,
    writer: Writer,
    marker: RunMarker,
    plan: MonthlyPlan,
    bodies: dict[str, bytes],
) -> None:
    """Append one ``review-queued`` record per review of this run (naming the proposals
    it consolidates, with the bytes read), once per run."""
    records = []
    for r in plan.reviews:
        named = [{"id": pid, **plan.read.get(pid, {})} for pid in r.proposals]
        records.append(
            queued_record(r.id, bodies[r.id], by="monthly", run=marker.run_id, proposals=named)
        )
    append_provenance_once(root, writer, marker, records, "review_id")


def _traced_proposals(
    reader: ScopedReader, index: TraceIndex
) -> tuple[list[Proposal], dict[str, dict[str, Any]], list[str]]:
    """The proposals a weekly run wrote as they are now (with what was read of each),
    and the ids of those it did not: planted, or changed since."""
    proposals, read, refused = [], {}, []
    for path in reader.list("proposals", "*.json"):
        data = path.read_bytes()
        try:
            p = Proposal.model_validate_json(data)
        except ValidationError:
            continue  # damaged review files are reported by the review commands
        digest = sha256_of(data)
        status, _ = index.proposal(path.stem, digest)
        if status in ("untraced", "edited") or p.id != path.stem:
            refused.append(path.stem)
            continue
        read[p.id] = {"sha256": digest, **({"legacy": True} if status == "legacy" else {})}
        proposals.append(p)
    return proposals, read, refused


def held_line(h: HeldProposals) -> str:
    """One line naming a held hypothesis, its flag and the flag's evidence ids."""
    f = h.flags[0]
    ids = ", ".join(f.evidence_ids[:8]) + (", …" if len(f.evidence_ids) > 8 else "")
    more = f" (and {len(h.flags) - 1} more flag(s))" if len(h.flags) > 1 else ""
    return (
        f"{h.hypothesis} held by the drift watch ({f.kind}: {f.title}{more}; evidence {ids}): "
        f"{len(h.proposals)} proposal(s) wait until '{ack_command(h.hypothesis)}'"
    )


def canon_entries(identity_text: str) -> dict[str, tuple[str, str]]:
    """Each Canon entry by its normalised key (NFKC, case, width, invisible characters,
    look-alike letters and spacing folded): key -> (section, entry as written)."""
    try:
        identity = validate(Identity, parse_yaml(identity_text, file=CANON_FILE), file=CANON_FILE)
    except InvalidInput:
        return {}  # a broken identity.yaml is verify's and boot's to report
    out: dict[str, tuple[str, str]] = {}
    for section in ("values", "self_understanding", "habits"):
        for entry in getattr(identity, section):
            out.setdefault(key(entry), (section, entry))
    return out


def _against_canon(
    p: Proposal, in_canon: dict[str, tuple[str, str]]
) -> tuple[Proposal | None, str]:
    """The proposal as it may be queued given Canon (None: its entry is already there),
    and a note.  A narrowing of a rule already in Canon narrows that entry (a replace of
    it), never adds a second copy."""
    diff = p.diff
    if diff.op == "remove":
        return p, ""
    found = in_canon.get(key(diff.text))
    if found is None:
        return p, ""
    section, entry = found
    if p.id.endswith(NARROWING):
        if diff.op == "replace" and key(diff.old_text or "") == key(entry):
            return p, ""
        narrowed = CanonDiff.model_validate(
            {"section": section, "op": "replace", "text": entry, "old_text": entry}
        )
        return p.model_copy(update={"diff": narrowed}), f"narrows the {section} entry"
    if diff.op == "replace" and key(diff.old_text or "") == key(diff.text):
        return p, ""  # a respelling of the entry itself (the human's words in Canon)
    return None, f"already in Canon ({section}: {entry!r})"


def _plan(
    reader: ScopedReader,
    day: date,
    limit: int,
    when: datetime,
    index: TraceIndex,
    held_by: dict[str, list[HeldFlag]] | None = None,
    in_canon: dict[str, tuple[str, str]] | None = None,
) -> MonthlyPlan:
    first, last = previous_month(day)
    month = first.strftime("%Y-%m")
    traced, read, refused = _traced_proposals(reader, index)
    proposals: list[Proposal] = sorted(
        (p for p in traced if p.week_end <= last),  # earlier months' overflow waits here too
        key=lambda p: (p.week_end, p.id),
    )
    pending: list[PendingReview] = _load(reader.list("pending", "*.json"), PendingReview)
    decisions: list[Decision] = _load(reader.list("decisions", "*.json"), Decision)
    taken = {_key(r.diff) for r in pending} | {_key(d.diff) for d in decisions if d.diff}
    queued_hyps = {r.hypothesis for r in pending}
    groups: dict[tuple[str, ...], list[Proposal]] = {}
    skipped: list[str] = []
    held_by = held_by or {}
    held: dict[str, list[str]] = {}
    in_canon = in_canon or {}
    for p in proposals:
        if _key(p.diff) in taken or p.hypothesis in queued_hyps:
            skipped.append(p.id)
            continue
        fitted, _note = _against_canon(p, in_canon)
        if fitted is None:
            skipped.append(p.id)  # its entry is in Canon already: no card for it
            continue
        p = fitted
        if p.hypothesis in held_by:  # not queued, and takes none of the month's room
            held.setdefault(p.hypothesis, []).append(p.id)
            continue
        # A narrowing is its own card (the human words it), never pooled with an add.
        groups.setdefault((*_key(p.diff), str(p.id.endswith(NARROWING))), []).append(p)
    ranked = sorted(
        groups.values(),
        key=lambda ps: (
            ps[0].week_end.strftime("%Y-%m"),
            -len({e for p in ps for e in p.evidence_ids}),
            ps[0].week_end,
            ps[0].id,
        ),
    )
    # Probe cards (``probe diff``) do not take the weekly proposals' room in the queue;
    # the approval-time limit still counts them when they change Canon.
    existing_ids = {r.id for r in pending if r.month == month and r.probe is None}
    room = max(0, limit - len(existing_ids))
    reviews: list[PendingReview] = []
    deferred: list[str] = []
    n = len(existing_ids)
    for ps in ranked:
        if len(reviews) >= room:
            deferred.extend(p.id for p in ps)
            continue
        n += 1
        while f"rev-{month}-{n}" in existing_ids:
            n += 1
        evidence = list(dict.fromkeys(e for p in ps for e in p.evidence_ids))
        reviews.append(
            PendingReview(
                id=f"rev-{month}-{n}",
                month=month,
                diff=ps[0].diff,
                hypothesis=ps[0].hypothesis,
                proposals=[p.id for p in ps],
                evidence_ids=evidence,
                rationale=ps[0].rationale,
                created=when,
            )
        )
    queued = {pid for r in reviews for pid in r.proposals}
    return MonthlyPlan(
        day=day,
        month=month,
        limit=limit,
        reviews=reviews,
        skipped=skipped,
        deferred=deferred,
        refused=refused,
        read={pid: v for pid, v in read.items() if pid in queued},
        held=[
            HeldProposals(hypothesis=hid, proposals=pids, flags=held_by[hid])
            for hid, pids in held.items()
        ],
    )
