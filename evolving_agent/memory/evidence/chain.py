"""The Evidence chain on disk: append, anchor and repair day files, with the standard library.

This is the write half of :mod:`evolving_agent.memory.evidence.evidence` (read its docstring for
the format: canonical JSON lines, per-day hash chain, ``flock`` + ``O_APPEND`` + fsync,
end anchors under ``.ea/evidence/``, torn tails moved to ``evidence/torn/``, day files
opened with ``O_NOFOLLOW`` and refused when they are symlinks or hard links).  It works
on plain JSON bodies, not on the pydantic models, so that a friction write (the command
hooks run most) can append without importing pydantic: see
:mod:`evolving_agent.memory.evidence.frictionfast`.
:class:`~evolving_agent.memory.evidence.evidence.EvidenceLog`
validates drafts with its models and appends them through :class:`Chain`.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from evolving_agent.memory.base.atomic import UnsafePath, atomic_write, open_creating, open_dir
from evolving_agent.memory.base.locks import flock_bounded
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record

SCHEMA_VERSION = 1
# Where this root's own chain keeps its anchors (a device's: below it, devices/<id>/).
HEADS = (".ea", "evidence")
# A record's JSON body before the chain adds schema_version, prev, id and hash.
Body = dict[str, Any]


def canonical(data: dict[str, Any]) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def genesis(day: date) -> str:
    return hashlib.sha256(f"evolving-agent evidence {day.isoformat()}".encode()).hexdigest()


def ts_json(ts: datetime) -> str:
    """``ts`` as the record models write it (pydantic's JSON form: ISO 8601, ``Z`` for
    UTC).  The hash covers this string, so it must be the models' byte for byte."""
    offset = ts.utcoffset()
    if offset is None:
        raise ValueError("a record's time must carry its UTC offset")
    if offset % timedelta(minutes=1):
        # pydantic drops the seconds of such an offset; no real zone has one today.
        raise ValueError(f"UTC offset {offset} is not whole minutes")
    text = ts.isoformat()
    return text[:-6] + "Z" if offset == timedelta(0) else text


def seal(body: Body, prev: str) -> tuple[Body, bytes]:
    """Chain a record ``body`` after ``prev``; returns the sealed body and its JSON line."""
    body = {**body, "schema_version": SCHEMA_VERSION, "prev": prev, "id": ""}
    # The id is derived from the content and its place in the chain, so it is unique;
    # the hash then seals the id too.
    body["id"] = "ev-" + hashlib.sha256(canonical(body)).hexdigest()[:12]
    sealed = canonical(body)
    digest = hashlib.sha256(sealed).hexdigest()
    # The line is the hashed bytes with the hash appended as a last key (readers parse
    # JSON, so key order does not matter; this saves a third serialisation per event).
    line = sealed[:-1] + b',"hash":"' + digest.encode() + b'"}\n'
    body["hash"] = digest
    return body, line


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


def _whole_end(fd: int, size: int) -> int:
    """Offset just past the last newline of the file (0 when there is none)."""
    chunk = 4096
    end = size
    while end > 0:
        start = max(0, end - chunk)
        data = os.pread(fd, end - start, start)
        nl = data.rfind(b"\n")
        if nl >= 0:
            return start + nl + 1
        end = start
    return 0


def _scan(fd: int, size: int, nth: int) -> tuple[int, str]:
    """(line count, hash of line ``nth``) of a day file; "" when it has no such line."""
    count, offset, found, rest = 0, 0, "", b""
    while offset < size:
        data = os.pread(fd, min(1 << 20, size - offset), offset)
        if not data:
            break
        offset += len(data)
        lines = (rest + data).split(b"\n")
        rest = lines.pop()
        for line in lines:
            count += 1
            if count == nth:
                try:
                    found = _hash_of_line(line)
                except ValueError:
                    found = ""
    return count, found


def _count_lines(fd: int, size: int) -> int:
    count, offset = 0, 0
    while offset < size:
        data = os.pread(fd, min(1 << 20, size - offset), offset)
        if not data:
            break
        count += data.count(b"\n")
        offset += len(data)
    return count


# Bound on one write+fsync+anchor step: a kill loses at most this much of an import.
CHUNK_LINES = 500
CHUNK_BYTES = 1 << 20

_HEAD_FMT = "{count:012d} {hash}\n"
_HEAD_SIZE = len(_HEAD_FMT.format(count=0, hash="0" * 64))


@record(frozen=True)
class Head:
    """A day's anchored head: how many lines the writer had written, and the last hash."""

    count: int
    hash: str


# (size, last hash, line count) per day file after this process's last append: skips
# re-reading the tail when no other process appended in between (checked under lock).
_TAIL: dict[Path, tuple[int, str, int]] = {}


def _still_named(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd`` (a seal replaces it)."""
    try:
        named = os.lstat(path)
    except FileNotFoundError:
        return False
    st = os.fstat(fd)
    return (named.st_ino, named.st_dev) == (st.st_ino, st.st_dev)


class Chain:
    """One device's day files and anchors: the only code that appends to Evidence."""

    def __init__(self, root: MemoryRoot, directory: Path, heads: tuple[str, ...]) -> None:
        self.root = root
        self.dir = directory
        self._heads = heads

    def day_file(self, day: date) -> Path:
        return self.dir / f"{day.isoformat()}.jsonl"

    def _open_day(self, day: date) -> tuple[int, Path]:
        """Open (creating) a day file without following links; returns (fd, path)."""
        path = self.day_file(day)
        dir_fd = open_dir(self.root.real, ("evidence",))
        try:
            try:
                fd = open_creating(
                    dir_fd, path.name, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
                )
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise UnsafePath(
                        path, "is a symlink; Evidence day files must be plain files"
                    ) from None
                raise
        finally:
            os.close(dir_fd)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise UnsafePath(path, "is not a regular file")
        if st.st_nlink > 1:
            # A hard link would make an append (or a torn-tail cut) land in another file,
            # Canon's included: refused like a symlink, nothing written.
            os.close(fd)
            raise UnsafePath(
                path, f"has {st.st_nlink} hard links; Evidence day files must be plain files"
            )
        return fd, path

    def append(
        self, day: date, bodies: list[Body], *, repair_actor: str, repair_ts: datetime
    ) -> tuple[list[Body], bool]:
        """Append record bodies (validated and masked by the caller) to ``day``'s file.

        Returns the sealed bodies, and whether the first of them is a ``repair`` record
        this append added (a torn tail moved aside, or the file no longer holding what
        its anchor says): as ``repair_actor``, dated ``repair_ts`` when that falls on
        ``day``, else the day's midnight.
        """
        fd, path = self._open_day(day)
        try:
            # Another user's flock on the day file delays this by seconds (memory/base/locks.py).
            flock_bounded(fd, path)
            while not _still_named(fd, path):
                # Sealed (replaced by the human's copy) while this waited for the lock:
                # append to the file the name holds now, never to the unlinked one.
                os.close(fd)
                fd = -1
                fd, path = self._open_day(day)
                flock_bounded(fd, path)
            size = os.fstat(fd).st_size
            prev, count = genesis(day), 0
            repaired = False
            if size:
                cached = _TAIL.get(path)
                if cached is not None and cached[0] == size:
                    _, prev, count = cached  # nobody appended since our last write
                else:
                    tail = self._quarantine_torn(day, fd, size)
                    if tail is not None:
                        size = tail[0]
                    prev, count, anomaly = self._head_of(day, fd, size)
                    if tail is not None or anomaly:
                        info = {**(tail[1] if tail else {}), **anomaly}
                        what = (
                            f"moved a torn tail of {path.name} aside"
                            if tail
                            else f"{path.name} no longer holds what the writer anchored"
                        )
                        ts = (
                            repair_ts
                            if repair_ts.astimezone().date() == day
                            else datetime.combine(day, datetime.min.time()).astimezone()
                        )
                        repair = {
                            "ts": ts_json(ts),
                            "kind": "repair",
                            "actor": repair_actor,
                            "text": what,
                            "session": None,
                            "supports": None,
                            "contradicts": None,
                            "data": info,
                        }
                        bodies = [repair, *bodies]
                        repaired = True
            sealed: list[Body] = []
            pending: list[bytes] = []
            pending_size = 0
            for b in bodies:
                rec, line = seal(b, prev)
                prev = rec["hash"]
                sealed.append(rec)
                pending.append(line)
                pending_size += len(line)
                if len(pending) >= CHUNK_LINES or pending_size >= CHUNK_BYTES:
                    size, count = self._write_chunk(day, fd, path, pending, size, count, prev)
                    pending, pending_size = [], 0
            if pending:
                size, count = self._write_chunk(day, fd, path, pending, size, count, prev)
            return sealed, repaired
        finally:
            if fd >= 0:
                os.close(fd)  # also releases the flock

    def _write_chunk(
        self, day: date, fd: int, path: Path, lines: list[bytes], size: int, count: int, last: str
    ) -> tuple[int, int]:
        view = memoryview(b"".join(lines))
        written = len(view)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        size += written
        count += len(lines)
        _TAIL[path] = (size, last, count)
        self.store_head(day, Head(count, last))
        return size, count

    def _head_of(self, day: date, fd: int, size: int) -> tuple[str, int, dict[str, Any]]:
        """(last hash, line count, anomaly) of a whole-lined day file of ``size`` bytes.

        The anomaly is non-empty when the file no longer holds what the anchor says
        the writer wrote (lines cut or rewritten): the append goes on, and the repair
        record it adds keeps the finding in the chain for ``verify``.
        """
        prev = _hash_of_line(_last_line(fd, size)) if size else genesis(day)
        head = self.head(day)
        if head is None:
            return prev, _count_lines(fd, size), {}
        if head.hash == prev:
            return prev, head.count, {}  # the anchor is current: no need to count
        count, at_anchor = _scan(fd, size, head.count)
        if count < head.count:
            return prev, count, {"cut": head.count - count, "anchor": head.count}
        if at_anchor != head.hash:
            return prev, count, {"rewritten": head.count, "anchor": head.count}
        return prev, count, {}  # the anchor lagged (a crash before it was stored)

    def _quarantine_torn(self, day: date, fd: int, size: int) -> tuple[int, dict[str, Any]] | None:
        """Cut a partial (or unreadable) last line; returns (new size, repair data)."""
        end = _whole_end(fd, size)
        if end == size:
            try:
                _hash_of_line(_last_line(fd, size))
                return None
            except ValueError:
                # A whole but unreadable last line cannot be chained after; set it aside
                # too (verify still reports it when the anchor had counted it).
                end = _whole_end(fd, size - 1)
        torn = os.pread(fd, size - end, end)
        digest = hashlib.sha256(torn).hexdigest()
        side = self.dir / "torn" / f"{day.isoformat()}.{digest[:12]}.part"
        atomic_write(side, torn, base=self.root.real)
        os.ftruncate(fd, end)
        os.fsync(fd)
        data = {
            "file": f"evidence/{day.isoformat()}.jsonl",
            "offset": end,
            "bytes": len(torn),
            "sha256": digest,
            "moved_to": side.relative_to(self.root.real).as_posix(),
        }
        return end, data

    def head(self, day: date) -> Head | None:
        """The anchored head of ``day``, or None when none was recorded."""
        path = self.root.real.joinpath(*self._heads, f"{day.isoformat()}.head")
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        try:
            raw = os.pread(fd, _HEAD_SIZE, 0).decode("ascii", "replace")
        finally:
            os.close(fd)
        count, _, digest = raw.strip().partition(" ")
        if not count.isdigit() or len(digest) != 64:
            return None
        return Head(int(count), digest)

    def anchored_days(self) -> set[date]:
        """Every day the writer ever anchored (head files and the days register)."""
        base = self.root.real.joinpath(*self._heads)
        out: set[date] = set()
        names: list[str] = []
        try:
            names = [p.stem for p in base.glob("*.head")]
            names += (base / "days").read_text(encoding="ascii", errors="replace").split()
        except OSError:
            pass
        for name in names:
            try:
                out.add(date.fromisoformat(name))
            except ValueError:
                continue
        return out

    def anchor_received(self, day: date, data: bytes) -> Head:
        """Anchor a day file that ``sync`` received whole (``data``, whole lines) from
        another device, so a later cut or rewrite of it is found like one of ours."""
        count = data.count(b"\n")
        last = _hash_of_line(data.rstrip(b"\n").rsplit(b"\n", 1)[-1]) if count else genesis(day)
        head = Head(count, last)
        self.store_head(day, head)
        return head

    def store_head(self, day: date, head: Head) -> None:
        dir_fd = open_dir(self.root.real, self._heads)
        try:
            name = f"{day.isoformat()}.head"
            flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                fd = os.open(name, flags, dir_fd=dir_fd)
                if os.fstat(fd).st_nlink > 1:  # never write through a hard link
                    os.close(fd)
                    os.unlink(name, dir_fd=dir_fd)
                    raise FileNotFoundError(name)
            except FileNotFoundError:
                fd = open_creating(dir_fd, name, flags)
                reg = open_creating(dir_fd, "days", flags | os.O_APPEND)
                try:
                    os.write(reg, f"{day.isoformat()}\n".encode())
                finally:
                    os.close(reg)
            try:
                os.pwrite(fd, _HEAD_FMT.format(count=head.count, hash=head.hash).encode(), 0)
            finally:
                os.close(fd)
        finally:
            os.close(dir_fd)


def now() -> datetime:
    """Current local time, aware.  (freezegun-friendly: reads datetime.now.)"""
    return datetime.now().astimezone()
