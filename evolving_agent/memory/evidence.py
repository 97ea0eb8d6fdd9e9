"""Evidence: append-only JSON lines, one file per day, hash-chained.

A record's day is the date of its ``ts`` in the offset it was stamped with (the
writer's local day), so it does not change with the zone of whoever reads it.

Every record carries ``prev`` (the previous record's hash in the same day file, or a
day-specific genesis value) and ``hash`` (sha256 of the record's canonical JSON
without ``hash``).  Rewriting, deleting or reordering any line breaks the chain and
``verify`` reports it with file and line.

Appends from many processes are serialised with ``flock`` on the day file itself and
written with one ``write`` on an ``O_APPEND`` descriptor, then fsynced: nothing is
lost and no two lines interleave.  The chain is per day so a bulk import of past
events extends that day's chain and leaves today's alone.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.policy import Actor
from evolving_agent.memory.redact import redact, redact_data
from evolving_agent.paths import MemoryRoot

SCHEMA_VERSION = 1

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
    "carry-outcome",  # how yesterday's bias/carry fared
    "reflector-fallback",  # a model reflector's output was invalid; rules were used
    "review",  # a human review decision (approve / reject / edit)
]


def canonical(data: dict[str, Any]) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def genesis(day: date) -> str:
    return hashlib.sha256(f"evolving-agent evidence {day.isoformat()}".encode()).hexdigest()


class EvidenceDraft(BaseModel):
    """What a caller supplies; the log adds id, prev and hash."""

    model_config = ConfigDict(extra="forbid")

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
        utc = self.ts.astimezone(timezone.utc)
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
    body = draft.model_dump(mode="json")
    body.update(schema_version=SCHEMA_VERSION, prev=prev, id="")
    # The id is derived from the content and its place in the chain, so it is unique;
    # the hash then seals the id too.
    body["id"] = "ev-" + hashlib.sha256(canonical(body)).hexdigest()[:12]
    sealed = canonical(body)
    digest = hashlib.sha256(sealed).hexdigest()
    # The line is the hashed bytes with the hash appended as a last key (readers parse
    # JSON, so key order does not matter; this saves a third serialisation per event).
    line = sealed[:-1] + b',"hash":"' + digest.encode() + b'"}\n'
    # The draft was validated and the added fields are ours: no second validation pass
    # (this is the hot path of every friction event).
    record = EvidenceRecord.model_construct(
        **draft.__dict__, schema_version=SCHEMA_VERSION, prev=prev, id=body["id"], hash=digest
    )
    return record, line


_HASH_KEY = b'"hash":"'


def _hash_of_line(line: bytes) -> str:
    """The ``hash`` field of a canonical line, without parsing the whole record."""
    at = line.find(_HASH_KEY)
    if at < 0:
        raise ValueError("no hash field")
    value = line[at + len(_HASH_KEY) : at + len(_HASH_KEY) + 64].decode("ascii")
    if len(value) != 64:
        raise ValueError("short hash")
    return value


def _last_line(fd: int, size: int) -> bytes:
    """Return the last complete line of a file (without newline), reading from the end."""
    chunk = 4096
    while True:
        start = max(0, size - chunk)
        data = os.pread(fd, size - start, start)
        stripped = data.rstrip(b"\n")
        nl = stripped.rfind(b"\n")
        if nl >= 0 or start == 0:
            return stripped[nl + 1 :]
        chunk *= 4


# (size, last hash) per day file after this process's last append: skips re-reading
# the tail when no other process appended in between (checked under the lock).
_TAIL: dict[Path, tuple[int, str]] = {}


def _masked(draft: EvidenceDraft) -> EvidenceDraft:
    """The draft with secrets masked (see memory/redact.py): Evidence never holds a key."""
    text, data = redact(draft.text), redact_data(draft.data)
    if text == draft.text and data == draft.data:
        return draft
    return draft.model_copy(update={"text": text, "data": data})


class EvidenceLog:
    """The Evidence layer of one root.  Appending is the only way to change it."""

    def __init__(self, root: MemoryRoot) -> None:
        self.root = root
        self.dir = root.evidence

    def day_file(self, day: date) -> Path:
        return self.dir / f"{day.isoformat()}.jsonl"

    def days(self) -> list[date]:
        out = []
        for p in sorted(self.dir.glob("*.jsonl")):
            try:
                out.append(date.fromisoformat(p.stem))
            except ValueError:
                continue
        return out

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

    def _append_day(self, day: date, drafts: list[EvidenceDraft]) -> list[EvidenceRecord]:
        path = self.day_file(day)
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        except FileNotFoundError:
            self.dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            if not size:
                prev = genesis(day)
            else:
                cached = _TAIL.get(path)
                if cached is not None and cached[0] == size:
                    prev = cached[1]  # nobody appended since our last write
                else:
                    try:
                        prev = _hash_of_line(_last_line(fd, size))
                    except ValueError:
                        raise InvalidInput(
                            "last Evidence line is damaged; run 'evolving-agent verify'",
                            file=path,
                        ) from None
            records = []
            lines = []
            for d in drafts:
                rec, line = _seal(d, prev)
                prev = rec.hash
                records.append(rec)
                lines.append(line)
            data = b"".join(lines)
            os.write(fd, data)
            os.fsync(fd)
            _TAIL[path] = (size + len(data), prev)
            return records
        finally:
            os.close(fd)  # also releases the flock

    # -- reading ---------------------------------------------------------------

    def read_day(self, day: date) -> list[EvidenceRecord]:
        path = self.day_file(day)
        if not path.exists():
            return []
        out = []
        with path.open("rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                if not raw.strip():
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
        for day in self.days():
            yield from self.read_day(day)

    def find(self, ids: set[str]) -> dict[str, EvidenceRecord]:
        return {r.id: r for r in self.iter_all() if r.id in ids}

    # -- checking --------------------------------------------------------------

    def verify_chain(self) -> list[str]:
        """Problems found in the chain, each as 'file:line: what'."""
        problems: list[str] = []
        for day in self.days():
            path = self.day_file(day)
            prev = genesis(day)
            with path.open("rb") as fh:
                for lineno, raw in enumerate(fh, 1):
                    where = f"{path}:{lineno}"
                    try:
                        rec = parse_line(raw, file=path, line=lineno)
                    except InvalidInput as exc:
                        problems.append(f"{where}: unreadable record ({exc})")
                        prev = ""
                        continue
                    if rec.expected_hash() != rec.hash or rec.expected_id() != rec.id:
                        problems.append(f"{where}: record {rec.id} was edited (hash mismatch)")
                    elif rec.prev != prev:
                        problems.append(f"{where}: chain broken before record {rec.id}")
                    if not rec.fits_day(day):
                        problems.append(f"{where}: record {rec.id} dated {rec.day()} in wrong file")
                    prev = rec.hash
        return problems


def parse_line(raw: bytes | str, *, file: Path | str, line: int) -> EvidenceRecord:
    try:
        return EvidenceRecord.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(record)"
        raise InvalidInput(f"{field}: {first['msg']}", file=file, line=line) from None


def now() -> datetime:
    """Current local time, aware.  (freezegun-friendly: reads datetime.now.)"""
    return datetime.now().astimezone()
