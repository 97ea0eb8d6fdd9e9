"""Review provenance: is a pending review one a job really queued, unchanged since?

Every job that writes ``reviews/pending/<id>.json`` first appends a ``review-queued``
Evidence record as itself::

    kind "review-queued", data {review_id, sha256 (of the file's bytes), by, run}

``by`` names the job kind (``monthly``, ``probe``) and must be written by that job's
actor (:data:`QUEUERS`); ``run`` is the job run's id.  A pending review is *genuine*
iff such a record exists in the Evidence chain and the file's bytes still hash to its
``sha256``; a decision is genuine iff its pending review is.  A hand-written review, or
one edited after the job wrote it, is neither.

The record comes *before* the file (a crash in between leaves a record and no review,
which is harmless), and a re-queue of the same id with other bytes appends a new record
(the latest record of an id is the one that counts).

One step further back, the weekly job records each proposal it writes the same way::

    kind "proposal-written", data {proposal_id, sha256, run}     (actor weekly)

and the monthly job's ``review-queued`` record names the proposals it consolidated,
``proposals: [{id, sha256}]``, with the bytes it read.  A pending review is genuine
only if each of those is a proposal a weekly run wrote with those bytes, and the
proposal file, where it still exists, still has them.  The monthly job itself leaves
out a proposal no weekly run wrote, or one changed since (:meth:`TraceIndex.proposal`).

Migration (roots older than proposal tracing): a proposal that the weekly job's own
``job`` record lists but that has no ``proposal-written`` record was written before
proposals were traced; the monthly consolidates it, marked ``legacy``, and ``verify``
says so in a note.  A review queued before the monthly named its proposals is accepted
the same way, with a note: neither is tampering, neither is silent.

This module reads plain JSON and bytes only: ``verify`` (memory) and the review
commands (``evolving_agent.review.provenance``) share it without importing upward.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import ValidationError

from evolving_agent.errors import InvalidInput, first_error
from evolving_agent.memory.canon.approvals import Decision, ReviewEdit
from evolving_agent.memory.evidence.evidence import EvidenceLog, EvidenceRecord, parse_line
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record

if TYPE_CHECKING:
    from evolving_agent.memory.authority import Writer

KIND = "review-queued"
# The job kind named in ``by`` -> the actors allowed to write its record.
QUEUERS: dict[str, frozenset[str]] = {
    "monthly": frozenset({"monthly"}),
    # Cards from `probe diff`, queued as the queue's own writer (monthly) or by the human.
    "probe": frozenset({"human", "monthly"}),
}

PROPOSAL_KIND = "proposal-written"
PROPOSAL_WRITER = "weekly"
# Record kinds that carry provenance for files a run writes (appended before the files,
# one per file, apart from the run's closing batch).
PROVENANCE_KINDS = frozenset({KIND, PROPOSAL_KIND})
# The human's review decisions (approve, reject, edit; "approving" before an approval's
# decision file is written): what makes a decision file the human's, not a planted one.
DECISION_KIND = "review"

Verdict = Literal[
    "genuine", "untraced", "edited", "missing", "proposal-untraced", "proposal-edited"
]
# The verdicts that make a review tampered with (refused, reported by verify).
TAMPERED: frozenset[str] = frozenset({"untraced", "edited", "proposal-untraced", "proposal-edited"})
ProposalStatus = Literal["traced", "legacy", "untraced", "edited"]


@dataclass(frozen=True)
class Trace:
    """What the Evidence chain says about one pending review file."""

    review_id: str
    path: Path
    verdict: Verdict
    record: EvidenceRecord | None = None  # the review-queued record that counts
    sha256: str = ""  # of the file's bytes now ("" when it is absent)
    # For the proposal verdicts: the proposal at fault, its file, and the weekly
    # proposal-written record of it (when there is one).
    proposal: str = ""
    proposal_path: Path | None = None
    proposal_record: EvidenceRecord | None = None
    proposal_sha256: str = ""  # the bytes the monthly read, or the file's bytes now
    # Said plainly although it is not tampering (a review from before proposal tracing).
    notes: tuple[str, ...] = ()

    @property
    def genuine(self) -> bool:
        return self.verdict == "genuine"

    @property
    def tampered(self) -> bool:
        return self.verdict in TAMPERED

    @property
    def problem(self) -> str:
        """One line naming the file and what is wrong ("" when genuine)."""
        if self.verdict == "untraced":
            return (
                f"{self.path}: review {self.review_id} was not queued by a monthly or probe "
                "run (no review-queued record in Evidence); it was planted"
            )
        if self.verdict == "edited":
            assert self.record is not None
            return (
                f"{self.path}: review {self.review_id} was changed after "
                f"{self.record.data.get('by', 'its job')} run {self.record.data.get('run', '?')} "
                f"queued it (Evidence {self.record.id} records sha256 "
                f"{str(self.record.data.get('sha256', ''))[:12]}, the file has {self.sha256[:12]})"
            )
        if self.verdict == "missing":
            return f"{self.path}: the pending review {self.review_id} is gone"
        if self.verdict == "proposal-untraced":
            return (
                f"{self.proposal_path}: proposal {self.proposal}, which review {self.review_id} "
                "consolidates, was not written by a weekly run (no proposal-written record in "
                "Evidence); it was planted"
            )
        if self.verdict == "proposal-edited":
            rec = self.proposal_record
            run = f"weekly run {rec.data.get('run', '?')}" if rec else "the weekly run"
            held = (
                f"Evidence {rec.id} records sha256 {str(rec.data.get('sha256'))[:12]}; "
                if rec
                else ""
            )
            return (
                f"{self.proposal_path}: proposal {self.proposal}, which review {self.review_id} "
                f"consolidates, was changed after {run} wrote it ({held}"
                f"found {self.proposal_sha256[:12]})"
            )
        return ""


@record
class TraceIndex:
    """The review-queued records of a root, by review id (one Evidence scan)."""

    records: dict[str, list[EvidenceRecord]] = field(default_factory=dict)
    # proposal id -> the weekly job's proposal-written records of it
    proposals: dict[str, list[EvidenceRecord]] = field(default_factory=dict)
    # proposal id -> the weekly job record that lists it (roots older than tracing)
    listed: dict[str, EvidenceRecord] = field(default_factory=dict)
    # review id -> the human's decision records on it
    decisions: dict[str, list[EvidenceRecord]] = field(default_factory=dict)

    @classmethod
    def scan(cls, root: MemoryRoot, records: Iterable[EvidenceRecord] | None = None) -> TraceIndex:
        index = cls()
        for rec in records if records is not None else _queued_records(root):
            index.add(rec)
        return index

    def add(self, rec: EvidenceRecord) -> None:
        if rec.kind == DECISION_KIND:
            if rec.actor == "human":
                self.decisions.setdefault(str(rec.data.get("review_id", "")), []).append(rec)
            return
        if rec.kind == PROPOSAL_KIND and rec.actor == PROPOSAL_WRITER:
            self.proposals.setdefault(str(rec.data.get("proposal_id", "")), []).append(rec)
            return
        if rec.kind == "job" and rec.actor == PROPOSAL_WRITER and rec.data.get("job") == "weekly":
            for pid in rec.data.get("proposals") or []:
                self.listed.setdefault(str(pid), rec)
            return
        if rec.kind != KIND:
            return
        by = str(rec.data.get("by", ""))
        if rec.actor not in QUEUERS.get(by, frozenset()):
            return  # a session (or anyone) saying "monthly queued this" is not the job
        self.records.setdefault(str(rec.data.get("review_id", "")), []).append(rec)

    def check_decision(self, path: Path) -> str:
        """'' when the decision (or edit) file at ``path`` is well formed and a human's
        Evidence record made it; else why not, in one line.  What ``verify`` reports, what
        ``sync`` refuses to take, and what ``review list`` shows as unverifiable."""
        edit = path.parent.name == "edits"
        model: type[Decision] | type[ReviewEdit] = ReviewEdit if edit else Decision
        try:
            decision = model.model_validate_json(path.read_bytes())
        except OSError as exc:
            return f"{path}: unreadable ({exc.strerror})"
        except ValidationError as exc:
            return f"{path}: not a {'review edit' if edit else 'decision'} ({first_error(exc)})"
        if decision.review_id != path.stem:
            return f"{path}: holds a decision on {decision.review_id!r}, not on {path.stem!r}"
        records = self.decisions.get(path.stem, [])
        actions = {str(r.data.get("action", "")) for r in records}
        if isinstance(decision, ReviewEdit):
            ok = "edit" in actions
            what = "an edit"
        elif decision.status == "rejected":
            ok = "reject" in actions
            what = "a rejection"
        elif decision.commit:
            ok = any(
                r.data.get("action") == "approve" and r.data.get("commit") == decision.commit
                for r in records
            )
            what = f"an approval applied by commit {decision.commit[:10]}"
        else:
            ok = bool(actions & {"approving", "approve"})
            what = "an approval"
        if ok:
            return ""
        return (
            f"{path}: {what} that no human's Evidence record made (unverifiable: written "
            "behind the review commands, or planted)"
        )

    def proposal(
        self, proposal_id: str, digest: str
    ) -> tuple[ProposalStatus, EvidenceRecord | None]:
        """Whether a weekly run wrote proposal ``proposal_id`` with bytes hashing to
        ``digest``: ``traced`` (and its record), ``edited`` (written, other bytes: the
        latest record), ``legacy`` (listed by a weekly job record from before proposals
        were traced) or ``untraced``."""
        recs = self.proposals.get(proposal_id, [])
        for rec in reversed(recs):
            if rec.data.get("sha256") == digest:
                return "traced", rec
        if recs:
            return "edited", recs[-1]
        if proposal_id in self.listed:
            return "legacy", self.listed[proposal_id]
        return "untraced", None

    def check_proposal_file(self, path: Path) -> tuple[ProposalStatus, str]:
        """Whether ``reviews/proposals/<id>.json`` is as a weekly run wrote it, and the
        problem line naming the file when it is not ("" for traced and legacy)."""
        data = _read_plain(path)
        if data is None:
            return "untraced", f"{path}: not a plain file; proposals are written by the weekly job"
        digest = sha256_of(data)
        status, rec = self.proposal(path.stem, digest)
        if status == "untraced":
            return status, (
                f"{path}: proposal {path.stem} was not written by a weekly run (no "
                "proposal-written record in Evidence); it was planted"
            )
        if status == "edited":
            assert rec is not None
            return status, (
                f"{path}: proposal {path.stem} was changed after weekly run "
                f"{rec.data.get('run', '?')} wrote it (Evidence {rec.id} records sha256 "
                f"{str(rec.data.get('sha256', ''))[:12]}, the file has {digest[:12]})"
            )
        return status, ""

    def check(self, root: MemoryRoot, review_id: str) -> Trace:
        path = root.area_dir("pending") / f"{review_id}.json"
        data = _read_plain(path)
        if data is None:
            return Trace(review_id, path, "missing")
        digest = hashlib.sha256(data).hexdigest()
        recs = self.records.get(review_id, [])
        if not recs:
            return Trace(review_id, path, "untraced", sha256=digest)
        for rec in reversed(recs):
            if rec.data.get("sha256") == digest:
                return self._check_proposals(root, Trace(review_id, path, "genuine", rec, digest))
        return Trace(review_id, path, "edited", recs[-1], digest)

    def _check_proposals(self, root: MemoryRoot, trace: Trace) -> Trace:
        """A genuine review's record against the weekly runs that wrote its proposals."""
        assert trace.record is not None
        named = trace.record.data.get("proposals")
        if named is None:
            if trace.record.data.get("by") != "monthly":
                return trace  # probe cards consolidate no proposals
            return replace(
                trace,
                notes=(
                    f"{trace.path}: review {trace.review_id} was queued before the monthly job "
                    "named the proposals it consolidated; they are not checked",
                ),
            )
        notes: list[str] = []
        for entry in named if isinstance(named, list) else []:
            pid, digest = str(entry.get("id", "")), str(entry.get("sha256", ""))
            ppath = root.area_dir("proposals") / f"{pid}.json"
            status, rec = self.proposal(pid, digest)
            at_fault = replace(
                trace, proposal=pid, proposal_path=ppath, proposal_record=rec,
                proposal_sha256=digest,
            )  # fmt: skip
            if status == "untraced":
                return replace(at_fault, verdict="proposal-untraced")
            if status == "edited":
                return replace(at_fault, verdict="proposal-edited")
            if status == "legacy":
                notes.append(
                    f"{ppath}: proposal {pid} of review {trace.review_id} was written before "
                    f"proposals were traced (weekly job record {rec.id if rec else '?'} lists "
                    "it; its bytes were not recorded)"
                )
                continue
            now = _read_plain(ppath)
            if now is not None and sha256_of(now) != digest:
                return replace(at_fault, verdict="proposal-edited", proposal_sha256=sha256_of(now))
        return replace(trace, notes=tuple(notes))


def _queued_records(root: MemoryRoot) -> Iterable[EvidenceRecord]:
    """Only the provenance records (and the weekly job records, for roots older than
    proposal tracing): lines without them are not even parsed."""
    log = EvidenceLog(root)
    needles = [f'"kind":"{k}"'.encode() for k in sorted({*PROVENANCE_KINDS, DECISION_KIND})]
    weekly = b'"job":"weekly"'
    # Every device's chain: a review queued by the today writer's monthly run is genuine
    # on the devices that received it by sync too (memory/evidence/devices.py).
    for chain in (log, *log.device_logs()):
        for day in chain.days():
            path = chain.day_file(day)
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            except OSError:
                continue
            with os.fdopen(fd, "rb") as fh:
                for lineno, raw in enumerate(fh, 1):
                    wanted = any(n in raw for n in needles) or (
                        weekly in raw and b'"kind":"job"' in raw
                    )
                    if wanted and raw.endswith(b"\n"):
                        try:
                            rec = parse_line(raw, file=path, line=lineno)
                        except InvalidInput:
                            continue  # verify reports a damaged line
                        if rec.expected_hash() == rec.hash:
                            yield rec


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def queued_record(
    review_id: str,
    data: bytes,
    *,
    by: str,
    run: str,
    proposals: list[dict[str, object]] | None = None,
) -> dict[str, object]:
    """The record a job appends (through its Writer) before writing a pending review;
    the monthly job names the proposals it consolidated (``[{id, sha256}]``)."""
    body: dict[str, object] = {
        "review_id": review_id,
        "sha256": sha256_of(data),
        "by": by,
        "run": run,
    }
    if proposals is not None:
        body["proposals"] = proposals
    return {"kind": KIND, "text": f"{by} run {run} queued review {review_id}", "data": body}


def proposal_record(proposal_id: str, data: bytes, *, run: str) -> dict[str, object]:
    """The record the weekly job appends before writing one proposal file."""
    return {
        "kind": PROPOSAL_KIND,
        "text": f"weekly run {run} wrote proposal {proposal_id}",
        "data": {"proposal_id": proposal_id, "sha256": sha256_of(data), "run": run},
    }


def queue_pending(writer: Writer, review_id: str, body: bytes | str, *, by: str, run: str) -> None:
    """Queue one pending review as the job ``by``: its record first, then the file.

    For jobs that queue reviews one at a time (probe runs); the monthly job appends its
    records in one batch per run (``jobs/monthly.py``), to the same effect.
    """
    data = body.encode("utf-8") if isinstance(body, str) else body
    writer.append(**queued_record(review_id, data, by=by, run=run))  # type: ignore[arg-type]
    writer.write("pending", f"{review_id}.json", data)


def _read_plain(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            return fh.read()
    finally:
        if fd >= 0:
            os.close(fd)


def check_review(root: MemoryRoot, review_id: str) -> Trace:
    """Whether ``reviews/pending/<review_id>.json`` is genuine (scans Evidence once)."""
    return TraceIndex.scan(root).check(root, review_id)
