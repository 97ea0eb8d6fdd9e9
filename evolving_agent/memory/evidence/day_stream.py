"""One day of Evidence, read lazily and checked against its hash chain as it goes.

:meth:`EvidenceLog.read_day` returns the whole day as a list, which is what most
readers want.  The nightly job reads one day that nobody bounds (300,000 friction
events is one loop in a script), so it reads this stream instead: one record parsed
at a time, each device's chain checked line by line against the record before it, and
the devices' chains merged by time.  What it holds at any moment is one line per
chain, so its memory does not grow with the day.

A record whose bytes do not hash to its ``hash`` (edited behind the writer's back), or
a line that does not parse, is *left out* and named in :attr:`DayStream.problems`; a
record whose ``prev`` is not the hash of the line before it (a line inserted, cut or
moved) is kept (its own bytes are intact) and the break is named.  ``verify`` reports
the same things as tampering; the stream only refuses to reflect what it cannot trust,
and says so, so a reader can tell its caller.  A torn last line (an append in flight)
ends the chain, as in ``read_day``.
"""

from __future__ import annotations

import hashlib
import heapq
import os
from collections.abc import Iterator
from datetime import date

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.evidence.evidence import EvidenceLog, EvidenceRecord, genesis, parse_line

_HASH_TAIL = b',"hash":"'


def line_hash_ok(raw: bytes, rec: EvidenceRecord) -> bool:
    """Whether the line's bytes hash to the record's ``hash``.

    The writer's lines are the hashed canonical bytes with the hash appended as the
    last key, so the check is one sha256 over the line's bytes; a line in any other
    key order (an older writer) is checked the slow way, by re-serialising."""
    at = raw.rfind(_HASH_TAIL)
    if at > 0 and raw.rstrip(b"\n").endswith(b'"}'):
        if hashlib.sha256(raw[:at] + b"}").hexdigest() == rec.hash:
            return True
    return rec.expected_hash() == rec.hash


class DayStream:
    """The records of one day of every device's chain, lazily, in time order.

    Iterate it once; afterwards :attr:`problems` holds one line per record left out or
    chain break found (``file:line: what``) and :attr:`left_out` how many records were
    dropped."""

    def __init__(self, log: EvidenceLog, day: date) -> None:
        self.log = log
        self.day = day
        self.problems: list[str] = []
        self.left_out = 0

    def __iter__(self) -> Iterator[EvidenceRecord]:
        chains = [self._chain(c) for c in (self.log, *self.log.device_logs())]
        if len(chains) == 1:
            return chains[0]
        # Each chain is in append order (time order but for a stepped clock); merged by
        # time, ties keep this device's records first, as read_day's stable sort does.
        return heapq.merge(*chains, key=lambda rec: rec.ts)

    def _chain(self, chain: EvidenceLog) -> Iterator[EvidenceRecord]:
        path = chain.day_file(self.day)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return
        except OSError as exc:
            self.problems.append(f"{path}: not read ({exc.strerror or exc})")
            return
        prev = genesis(self.day)
        with os.fdopen(fd, "rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                where = f"{path}:{lineno}"
                try:
                    rec = parse_line(raw, file=path, line=lineno)
                except InvalidInput as exc:
                    if not raw.endswith(b"\n"):
                        return  # a torn tail is no record yet (as in read_day)
                    self.problems.append(f"{where}: unreadable record, left out ({exc})")
                    self.left_out += 1
                    prev = ""
                    continue
                if not line_hash_ok(raw, rec):
                    self.problems.append(
                        f"{where}: record {rec.id} was edited (hash mismatch), left out"
                    )
                    self.left_out += 1
                    prev = rec.hash
                    continue
                if rec.prev != prev:
                    self.problems.append(f"{where}: chain broken before record {rec.id}")
                prev = rec.hash
                yield rec
