"""Evidence: append-only JSON lines, one file per day, hash-chained.

A record's day is the date of its ``ts`` in the offset it was stamped with (the
writer's local day), so it does not change with the zone of whoever reads it.

Every record carries ``prev`` (the previous record's hash in the same day file, or a
day-specific genesis value) and ``hash`` (sha256 of the record's canonical JSON
without ``hash``).  Rewriting, deleting or reordering any line breaks the chain and
``verify`` reports it with file and line.

Appends from many processes are serialised with ``flock`` on the day file itself and
written on an ``O_APPEND`` descriptor, then fsynced: nothing is lost and no two lines
interleave.  The chain is per day so a bulk import of past events extends that day's
chain and leaves today's alone.

End anchor: under the same lock, after the data is durable, the writer stores the
day's head - line count and last hash - in ``.ea/evidence/<day>.head`` and notes each
new day in ``.ea/evidence/days``.  A chain alone cannot tell a cut tail from a short
day; with the head, ``verify`` reports cut lines and deleted day files as tampering.
The head may lag (a crash between the data and the head) but never lead.

Torn tails never block the log: a writer killed mid-``write`` can leave a partial last
line.  The next append (or ``evidence repair``) moves those bytes to
``evidence/torn/<day>.<sha>.part``, truncates to the last whole line and records a
``repair`` event with the bytes' hash before its own records.  Large imports are
written in bounded chunks, each fsynced and anchored, so a kill loses at most the
unfinished chunk of the import.

Day files are opened below the resolved root with ``O_NOFOLLOW`` and must be plain
files: an Evidence directory or day file that is a symlink is refused.

Devices (see ``memory/evidence/devices.py``): this root's own chain is ``evidence/DAY.jsonl``;
chains received by ``sync`` from other devices of the same self live, unchanged, in
``evidence/devices/<device>/DAY.jsonl`` with their anchors under
``.ea/evidence/devices/<device>/``.  Readers (:meth:`EvidenceLog.read_day`,
:meth:`EvidenceLog.iter_all`) see the union of every device; the chain methods see
one device's files.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evolving_agent.errors import InvalidInput, first_error
from evolving_agent.fsio import write_atomic_at
from evolving_agent.memory.base.atomic import UnsafePath, open_dir, read_plain
from evolving_agent.memory.base.authority_table import Actor
from evolving_agent.memory.base.locks import flock_bounded
from evolving_agent.memory.base.redact import redact, redact_data
from evolving_agent.memory.evidence import chain
from evolving_agent.memory.evidence.chain import (  # re-exported: the chain's names
    CHUNK_BYTES,
    CHUNK_LINES,
    SCHEMA_VERSION,
    Chain,
    Head,
    canonical,
    genesis,
    now,
)
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record

__all__ = ["CHUNK_BYTES", "CHUNK_LINES", "SCHEMA_VERSION", "Head", "canonical", "genesis", "now"]

# Record kinds.  Add new ones here (one place), never reuse a name for another meaning.
Kind = Literal[
    "friction",  # something really felt off (the only signal the jobs learn from)
    "raw",  # raw event from a session
    "journal",  # a journal entry
    "job",  # a nightly / weekly / monthly job record
    "write-denied",  # the writer refused a write
    "canon-write",  # provenance of a Canon change (checked by verify against git)
    "hypothesis",  # a hypothesis was added
    "hypothesis-state",  # a hypothesis changed state, citing evidence
    "hypothesis-proposal",  # a session proposed a trigger / counter-move for a hypothesis
    "carry-outcome",  # how yesterday's bias/carry fared
    "reflector-fallback",  # a model reflector's output was invalid; rules were used
    "review",  # a human review decision (approve / reject / edit)
    "repair",  # a torn tail was moved aside (see EvidenceLog.repair)
    "review-queued",  # a job queued a pending review: its id and sha256 (review_trace.py)
    "proposal-written",  # the weekly job wrote a proposal: its id and sha256 (review_trace.py)
    "review-refused",  # a review command refused a planted or edited review
    "probe",  # a model's answer to a probe of canon/probes.yaml (see evolving_agent.probes)
    "sync",  # a sync with another device: a Live Bus value replaced, Today's writer moved
    "signing",  # signing enabled, re-pinned or disabled: a signed statement (signing_chain.py)
]


class EvidenceDraft(BaseModel):
    """What a caller supplies; the log adds id, prev and hash."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    ts: datetime
    kind: Kind
    actor: Actor
    text: str = ""
    session: str | None = None
    supports: str | None = None
    contradicts: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)

    @field_validator("ts")
    @classmethod
    def _aware(cls, v: datetime) -> datetime:
        # Naive times are taken as local time; stored with their offset.
        return v if v.tzinfo is not None else v.astimezone()

    def day(self) -> date:
        """The record's day: its date in the UTC offset it was stamped with.

        Not the reader's zone: a laptop that travels, or a scheduler started with
        another ``TZ``, writes honest records whose day must not change with who reads.
        """
        return self.ts.date()

    def fits_day(self, day: date) -> bool:
        """Whether a file named ``day`` is a consistent place for this record: its own
        day, or the date some real UTC offset (-12:00..+14:00) gives its instant (older
        records were filed by the writer's zone).  Moving a record between files breaks
        the chain anyway; this check only catches a record dated nowhere near its file."""
        if self.day() == day:
            return True
        utc = self.ts.astimezone(UTC)
        return (utc - timedelta(hours=12)).date() <= day <= (utc + timedelta(hours=14)).date()


class EvidenceRecord(EvidenceDraft):
    schema_version: int = SCHEMA_VERSION
    id: str
    prev: str
    hash: str

    @field_validator("schema_version")
    @classmethod
    def _known(cls, v: int) -> int:
        if v > SCHEMA_VERSION:
            raise ValueError(f"schema version {v} is newer than this evolving-agent understands")
        return v

    def body(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude={"hash"})

    def expected_hash(self) -> str:
        return hashlib.sha256(canonical(self.body())).hexdigest()

    def expected_id(self) -> str:
        return "ev-" + hashlib.sha256(canonical({**self.body(), "id": ""})).hexdigest()[:12]


def _seal(draft: EvidenceDraft, prev: str) -> tuple[EvidenceRecord, bytes]:
    """Chain a validated draft after ``prev``; returns the record and its JSON line."""
    body, line = chain.seal(draft.model_dump(mode="json"), prev)
    return _sealed_record(draft, body), line


def _sealed_record(draft: EvidenceDraft, body: dict[str, Any]) -> EvidenceRecord:
    # The draft was validated and the added fields are ours: no second validation pass
    # (this is the hot path of every Evidence append).
    return EvidenceRecord.model_construct(
        **draft.__dict__,
        schema_version=SCHEMA_VERSION,
        prev=body["prev"],
        id=body["id"],
        hash=body["hash"],
    )


# Chains received from other devices: evidence/devices/<id>/ (anchors likewise).
DEVICES_DIR = "devices"
DEVICE_RE = re.compile(r"d-[0-9a-f]{12}")
_HEADS = chain.HEADS


@record(frozen=True)
class Repair:
    """A torn tail moved aside."""

    day: date
    size: int
    sha256: str
    moved_to: Path
    record: EvidenceRecord


def _masked(draft: EvidenceDraft) -> EvidenceDraft:
    """The draft with secrets masked (see memory/base/redact.py): Evidence never holds a key."""
    update: dict[str, object] = {"text": redact(draft.text), "data": redact_data(draft.data)}
    for name in ("session", "supports", "contradicts"):  # free text from the caller too
        value = getattr(draft, name)
        update[name] = redact(value) if value is not None else None
    if all(update[name] == getattr(draft, name) for name in update):
        return draft
    return draft.model_copy(update=update)


class EvidenceLog:
    """The Evidence layer of one root.  Appending is the only way to change it."""

    def __init__(self, root: MemoryRoot, device: str | None = None) -> None:
        self.root = root
        # None: this root's own chain; a device id: a chain received from that device.
        self.device = device
        self.dir = root.evidence if device is None else root.evidence / DEVICES_DIR / device
        self._heads = _HEADS if device is None else (*_HEADS, DEVICES_DIR, device)
        self.chain = Chain(root, self.dir, self._heads)
        self._others: list[EvidenceLog] | None = None

    def day_file(self, day: date) -> Path:
        return self.dir / f"{day.isoformat()}.jsonl"

    def days(self) -> list[date]:
        """The days of this device's chain (see :meth:`all_days` for every device)."""
        out = []
        for p in sorted(self.dir.glob("*.jsonl")):
            try:
                out.append(date.fromisoformat(p.stem))
            except ValueError:
                continue
        return out

    def device_logs(self) -> list[EvidenceLog]:
        """The chains received from other devices (empty for a root that never synced)."""
        if self.device is not None:
            return []
        if self._others is None:
            base = self.dir / DEVICES_DIR
            if base.is_symlink():  # never followed; verify reports it
                self._others = []
                return self._others
            try:
                names = sorted(e.name for e in os.scandir(base) if e.is_dir(follow_symlinks=False))
            except OSError:
                names = []
            self._others = [EvidenceLog(self.root, n) for n in names if DEVICE_RE.fullmatch(n)]
        return self._others

    def all_days(self) -> list[date]:
        """Every day any device recorded something on."""
        days = set(self.days())
        for log in self.device_logs():
            days.update(log.days())
        return sorted(days)

    # -- writing ---------------------------------------------------------------

    def append(self, draft: EvidenceDraft) -> EvidenceRecord:
        return self.append_many([draft])[0]

    def append_many(self, drafts: Iterable[EvidenceDraft]) -> list[EvidenceRecord]:
        """Append drafts, each to its own day's file, in order.  Returns sealed records."""
        by_day: dict[date, list[EvidenceDraft]] = {}
        for d in drafts:
            by_day.setdefault(d.day(), []).append(_masked(d))
        sealed: list[EvidenceRecord] = []
        for day, items in by_day.items():
            sealed.extend(self._append_day(day, items))
        return sealed

    def repair(self, day: date, actor: str = "human") -> Repair | None:
        """Move a torn tail of ``day`` aside (recorded as a ``repair`` event); None if whole."""
        if not self.day_file(day).exists():
            return None
        repairs: list[Repair] = []
        self._append_day(day, [], repair_actor=actor, repairs=repairs)
        return repairs[0] if repairs else None

    def _append_day(
        self,
        day: date,
        drafts: list[EvidenceDraft],
        *,
        repair_actor: str | None = None,
        repairs: list[Repair] | None = None,
    ) -> list[EvidenceRecord]:
        sealed, repaired = self.chain.append(
            day,
            [d.model_dump(mode="json") for d in drafts],
            repair_actor=repair_actor or (drafts[0].actor if drafts else "human"),
            repair_ts=drafts[0].ts if drafts else now(),
        )
        ours = sealed[repaired:]
        records = [_sealed_record(d, body) for d, body in zip(drafts, ours, strict=True)]
        if repaired:
            # Built by the chain from our own fields; validated once, here, like any draft.
            first = EvidenceRecord.model_validate(sealed[0])
            records.insert(0, first)
            if repairs is not None and "sha256" in first.data:
                info = first.data
                repairs.append(
                    Repair(day, info["bytes"], info["sha256"], Path(info["moved_to"]), first)
                )
        return records

    # -- sealing (the OS-user deployment) --------------------------------------------

    def seal_day(self, day: date) -> bool:
        """Make a finished day's file and head the caller's and read-only for the group.

        Only in a shared-group ``evidence/`` (memory/sync/deploy.py) and only by the user
        who owns it (the human): the bytes are copied unchanged to a new file of mode
        0640, renamed over the day under its lock (the sticky directory lets its owner
        replace another user's file), and the head likewise.  From then on the
        assistant's user can neither append to, rewrite nor replace that day.  Returns
        whether it sealed something (False: not a shared root, already sealed, a torn
        or hard-linked file - left for ``evidence repair`` and ``verify``)."""
        if self.device is not None:
            return False
        dir_fd = open_dir(self.root.real, ("evidence",), create=False)
        try:
            st_dir = os.fstat(dir_fd)
            if not st_dir.st_mode & stat.S_ISGID or st_dir.st_uid != os.geteuid():
                return False
            name = self.day_file(day).name
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
            except OSError:
                return False
            try:
                flock_bounded(fd, self.day_file(day))
                st = os.fstat(fd)
                named = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                if (
                    not stat.S_ISREG(st.st_mode)
                    or st.st_nlink != 1
                    or (named.st_ino, named.st_dev) != (st.st_ino, st.st_dev)
                    or (st.st_uid == os.geteuid() and not st.st_mode & 0o022)
                ):
                    return False
                data = os.pread(fd, st.st_size, 0)
                if data and not data.endswith(b"\n"):
                    return False  # a torn tail: the next append or 'evidence repair' first
                _replace_sealed(dir_fd, name, data)
            finally:
                os.close(fd)
        finally:
            os.close(dir_fd)
        heads = open_dir(self.root.real, self._heads)
        try:
            head_name = f"{day.isoformat()}.head"
            try:
                raw = read_plain(self.root.real, (*self._heads, head_name))
            except UnsafePath:
                raw = None
            if raw is not None:
                _replace_sealed(heads, head_name, raw)
        finally:
            os.close(heads)
        chain._TAIL.pop(self.day_file(day), None)
        return True

    # -- the end anchor ----------------------------------------------------------

    def head(self, day: date) -> Head | None:
        """The anchored head of ``day``, or None when none was recorded."""
        return self.chain.head(day)

    def anchored_days(self) -> set[date]:
        """Every day the writer ever anchored (head files and the days register)."""
        return self.chain.anchored_days()

    def anchor_received(self, day: date, data: bytes) -> Head:
        """Anchor a day file that ``sync`` received whole (``data``, whole lines) from
        another device, so a later cut or rewrite of it is found like one of ours."""
        return self.chain.anchor_received(day, data)

    # -- reading ---------------------------------------------------------------

    def read_day(self, day: date) -> list[EvidenceRecord]:
        """The day's records of every device (this root's own and those synced in),
        in time order; one device's records keep their chain order among equal times."""
        own = self.read_chain_day(day)
        others = [log.read_chain_day(day) for log in self.device_logs()]
        if not any(others):
            return own
        merged = own + [rec for recs in others for rec in recs]
        return sorted(merged, key=lambda rec: rec.ts)

    def read_chain_day(self, day: date) -> list[EvidenceRecord]:
        """The day's records of this device's chain only, in chain order."""
        path = self.day_file(day)
        if not path.exists():
            return []
        out = []
        with path.open("rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                if not raw.endswith(b"\n"):  # the last line, unterminated
                    try:
                        out.append(parse_line(raw, file=path, line=lineno))
                    except InvalidInput:
                        # A torn tail (an append killed or still in flight) is no record
                        # yet: readers go on; verify reports it, the next append or
                        # 'evidence repair' moves it aside.
                        break
                    continue
                out.append(parse_line(raw, file=path, line=lineno))
        return out

    def iter_range(self, start: date, end: date) -> Iterator[EvidenceRecord]:
        """Records of days start..end inclusive, day by day."""
        day = start
        while day <= end:
            yield from self.read_day(day)
            day += timedelta(days=1)

    def iter_all(self) -> Iterator[EvidenceRecord]:
        for day in self.all_days():
            yield from self.read_day(day)

    def iter_kind(self, kind: str) -> Iterator[EvidenceRecord]:
        """Records of one kind, all days, oldest first; only lines that can hold it are
        parsed (lines are canonical JSON, so the kind appears as ``"kind":"…"``; a
        nested match is parsed and dropped), ~100x cheaper than ``iter_all`` on a
        year of friction."""
        needle = b'"kind":' + json.dumps(kind).encode()
        for day in self.days():
            for path, lineno, raw in self._lines_with(day, needle):
                try:
                    rec = parse_line(raw, file=path, line=lineno)
                except InvalidInput:
                    if raw.endswith(b"\n"):
                        raise
                    break  # a torn tail is no record yet (as in read_day)
                if rec.kind == kind:
                    yield rec

    def grep_day(self, day: date, needle: bytes) -> Iterator[EvidenceRecord]:
        """Records of this chain's ``day`` whose line contains ``needle`` (e.g. a run
        id), lazily: other lines are not parsed, so a flooded day costs one scan."""
        for path, lineno, raw in self._lines_with(day, needle):
            if not raw.endswith(b"\n"):
                continue  # an unterminated tail is no record yet
            try:
                yield parse_line(raw, file=path, line=lineno)
            except InvalidInput:
                continue  # verify reports a damaged line

    def _lines_with(self, day: date, needle: bytes) -> Iterator[tuple[Path, int, bytes]]:
        """``(file, line number, raw line)`` of each line of ``day``'s file holding
        ``needle``, unparsed (none when the day has no file); the file is closed when the
        caller stops early."""
        path = self.day_file(day)
        try:
            fh = path.open("rb")
        except FileNotFoundError:
            return
        with fh:
            for lineno, raw in enumerate(fh, 1):
                if needle in raw:
                    yield path, lineno, raw

    def find(self, ids: set[str]) -> dict[str, EvidenceRecord]:
        return {r.id: r for r in self.iter_all() if r.id in ids}

    # -- checking --------------------------------------------------------------

    def verify_chain(self) -> list[str]:
        """Problems found in the chain and against its anchors, each as 'file:line: what'."""
        problems: list[str] = []
        if self.dir.is_symlink():
            return [f"{self.dir}: the Evidence directory is a symlink"]
        days = self.days()
        for day in days:
            path = self.day_file(day)
            if path.is_symlink():
                problems.append(f"{path}: is a symlink; Evidence day files must be plain files")
                continue
            if path.stat().st_nlink > 1:
                problems.append(
                    f"{path}: has {path.stat().st_nlink} hard links (to another file, maybe "
                    "Canon); Evidence day files must be plain files"
                )
            with path.open("rb") as fh:
                checked = check_chain(fh, day=day, file=path)
            problems += checked.problems
            problems += self._check_head(day, path, checked.hashes)
        for day in sorted(self.anchored_days() - set(days)):
            head = self.head(day)
            held = f" (its anchor counts {head.count} record(s))" if head else ""
            problems.append(f"{self.day_file(day)}: day file deleted{held}")
        return problems

    def _check_head(self, day: date, path: Path, hashes: list[str]) -> list[str]:
        head = self.head(day)
        if head is None:
            return []  # a day written before anchors existed
        if len(hashes) < head.count:
            missing = head.count - len(hashes)
            return [
                f"{path}:{len(hashes) + 1}: {missing} record(s) cut from the end "
                f"(the writer's anchor counts {head.count})"
            ]
        if head.count and hashes[head.count - 1] != head.hash:
            return [f"{path}:{head.count}: differs from the writer's anchored head"]
        return []


SEALED_MODE = 0o640


def _replace_sealed(dir_fd: int, name: str, data: bytes) -> None:
    """Replace ``name`` with ``data`` in a file of :data:`SEALED_MODE` - set before the
    rename, so no other user ever opens the new file for writing."""
    write_atomic_at(dir_fd, name, data, mode=0o600, final_mode=SEALED_MODE)


def seal_days_before(root: MemoryRoot, day: date) -> list[date]:
    """Seal every day of this root's chain before ``day`` (see :meth:`EvidenceLog.seal_day`):
    the days the writer refuses new events for once the nightly job reflected ``day``."""
    log = EvidenceLog(root)
    return [d for d in log.days() if d < day and log.seal_day(d)]


def repair_days(root: MemoryRoot, actor: str, day: date | None = None) -> list[Repair]:
    """Move the torn tail of ``day`` (default: every day) aside, as ``actor``.

    What an append does on its own when it meets a torn tail, by hand: the bytes go to
    ``evidence/torn/``, a ``repair`` record holds their hash, the chain goes on.
    """
    from evolving_agent.memory.canon.policy import check_actor

    check_actor(actor)
    log = EvidenceLog(root)
    days = [day] if day is not None else log.days()
    return [r for r in (log.repair(d, actor) for d in days) if r is not None]


@record
class ChainCheck:
    """What :func:`check_chain` found in a run of lines."""

    problems: list[str]
    hashes: list[str]  # each line's record hash ("" for an unreadable line)

    @property
    def records(self) -> int:
        return sum(1 for h in self.hashes if h)


def check_chain(
    lines: Iterable[bytes],
    *,
    day: date,
    file: Path | str,
    prev: str | None = None,
    first_line: int = 1,
) -> ChainCheck:
    """The one rule of a day's hash chain, for ``verify`` (a whole file) and ``sync`` (the
    lines a device added since it last synced, continuing from ``prev``): each record
    unedited (its hash and id), linked to the one before, dated on its file's day, and
    no repair record that reports a cut or rewrite."""
    prev = genesis(day) if prev is None else prev
    problems: list[str] = []
    hashes: list[str] = []
    for lineno, raw in enumerate(lines, first_line):
        where = f"{file}:{lineno}"
        try:
            rec = parse_line(raw, file=file, line=lineno)
        except InvalidInput as exc:
            problems.append(f"{where}: unreadable record ({exc})")
            prev = ""
            hashes.append("")
            continue
        if rec.expected_hash() != rec.hash or rec.expected_id() != rec.id:
            problems.append(f"{where}: record {rec.id} was edited (hash mismatch)")
        elif rec.prev != prev:
            problems.append(f"{where}: chain broken before record {rec.id}")
        if not rec.fits_day(day):
            problems.append(f"{where}: record {rec.id} dated {rec.day()} in wrong file")
        prev = rec.hash
        hashes.append(rec.hash)
        if rec.kind == "repair" and (rec.data.get("cut") or rec.data.get("rewritten")):
            problems.append(_anomaly(where, rec))
    return ChainCheck(problems, hashes)


def _anomaly(where: str, rec: EvidenceRecord) -> str:
    anchor = rec.data.get("anchor")
    if rec.data.get("cut"):
        return (
            f"{where}: {rec.data['cut']} anchored record(s) had been cut from the end before "
            f"this append (the writer's anchor counted {anchor}; repair {rec.id})"
        )
    return f"{where}: record {anchor} had been rewritten before this append (repair {rec.id})"


def parse_line(raw: bytes | str, *, file: Path | str, line: int) -> EvidenceRecord:
    try:
        return EvidenceRecord.model_validate_json(raw)
    except ValidationError as exc:
        raise InvalidInput(first_error(exc, whole="(record)"), file=file, line=line) from None


# -- the day a record counts on (the distinct-day rules of the register and the digest) --


def day_key(rec: EvidenceRecord) -> date:
    """The day a record counts on for every distinct-day rule: the UTC date of its
    instant (``ts``, the time it was recorded; an import keeps the claimed time in
    ``data.claimed_ts``).  Not the day file, which follows the writer's offset: switching
    ``TZ`` must not turn one minute into two or three "distinct days", while two real
    days (≥ 24 h apart) are two UTC dates wherever the laptop was."""
    return rec.ts.astimezone(UTC).date()


def recorded_day(rec: EvidenceRecord) -> date:
    """The day an event was appended, as counted: its :func:`day_key`.  (An older import
    stamped ``data.recorded``, a local date; it is honoured as it was written.)"""
    raw = rec.data.get("recorded") if isinstance(rec.data, dict) else None
    if isinstance(raw, str):
        try:
            return date.fromisoformat(raw)
        except ValueError:
            pass
    return day_key(rec)
