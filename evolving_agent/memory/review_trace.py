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

This module reads plain JSON and bytes only: ``verify`` (memory) and the review
commands (``evolving_agent.review.provenance``) share it without importing upward.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.evidence import EvidenceLog, EvidenceRecord, parse_line
from evolving_agent.paths import MemoryRoot

if TYPE_CHECKING:
    from evolving_agent.memory.authority import Writer

KIND = "review-queued"
# The job kind named in ``by`` -> the actors allowed to write its record.
QUEUERS: dict[str, frozenset[str]] = {
    "monthly": frozenset({"monthly"}),
    # Cards from `probe diff`, queued as the queue's own writer (monthly) or by the human.
    "probe": frozenset({"human", "monthly"}),
}

Verdict = Literal["genuine", "untraced", "edited", "missing"]


@dataclass(frozen=True)
class Trace:
    """What the Evidence chain says about one pending review file."""

    review_id: str
    path: Path
    verdict: Verdict
    record: EvidenceRecord | None = None  # the review-queued record that counts
    sha256: str = ""  # of the file's bytes now ("" when it is absent)

    @property
    def genuine(self) -> bool:
        return self.verdict == "genuine"

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
        return ""


@dataclass
class TraceIndex:
    """The review-queued records of a root, by review id (one Evidence scan)."""

    records: dict[str, list[EvidenceRecord]] = field(default_factory=dict)

    @classmethod
    def scan(cls, root: MemoryRoot, records: Iterable[EvidenceRecord] | None = None) -> TraceIndex:
        index = cls()
        for rec in records if records is not None else _queued_records(root):
            index.add(rec)
        return index

    def add(self, rec: EvidenceRecord) -> None:
        if rec.kind != KIND:
            return
        by = str(rec.data.get("by", ""))
        if rec.actor not in QUEUERS.get(by, frozenset()):
            return  # a session (or anyone) saying "monthly queued this" is not the job
        self.records.setdefault(str(rec.data.get("review_id", "")), []).append(rec)

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
                return Trace(review_id, path, "genuine", rec, digest)
        return Trace(review_id, path, "edited", recs[-1], digest)


def _queued_records(root: MemoryRoot) -> Iterable[EvidenceRecord]:
    """Only the review-queued records: lines without the kind are not even parsed."""
    log = EvidenceLog(root)
    needle = f'"kind":"{KIND}"'.encode()
    # Every device's chain: a review queued by the today writer's monthly run is genuine
    # on the devices that received it by sync too (memory/devices.py).
    for chain in (log, *log.device_logs()):
        for day in chain.days():
            path = chain.day_file(day)
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            except OSError:
                continue
            with os.fdopen(fd, "rb") as fh:
                for lineno, raw in enumerate(fh, 1):
                    if needle in raw and raw.endswith(b"\n"):
                        try:
                            rec = parse_line(raw, file=path, line=lineno)
                        except InvalidInput:
                            continue  # verify reports a damaged line
                        if rec.expected_hash() == rec.hash:
                            yield rec


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def queued_record(review_id: str, data: bytes, *, by: str, run: str) -> dict[str, object]:
    """The record a job appends (through its Writer) before writing a pending review."""
    return {
        "kind": KIND,
        "text": f"{by} run {run} queued review {review_id}",
        "data": {"review_id": review_id, "sha256": sha256_of(data), "by": by, "run": run},
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
