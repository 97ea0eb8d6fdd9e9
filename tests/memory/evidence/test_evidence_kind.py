"""EvidenceLog.iter_kind: the records of one kind, without parsing the others."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence.evidence import EvidenceLog
from tests.helpers.roots import fresh_root


def test_only_that_kind_across_days_and_a_torn_tail_is_skipped(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    w = Writer(root, "monthly")
    t0 = datetime(2026, 11, 1, 9).astimezone()
    a = w.append("probe", "first", data={"answer": "x"}, ts=t0)
    w.append("raw", 'looks like {"kind":"probe"}', data={"kind": "probe"}, ts=t0)
    b = w.append("probe", "second", ts=t0 + timedelta(days=3))
    log = EvidenceLog(root)
    assert [r.id for r in log.iter_kind("probe")] == [a.id, b.id]
    assert [r.id for r in log.iter_kind("probe")] == [
        r.id for r in log.iter_all() if r.kind == "probe"
    ]
    with log.day_file(b.ts.date()).open("ab") as fh:
        fh.write(b'{"kind":"probe","text":"torn')  # an append killed mid-line
    assert [r.id for r in log.iter_kind("probe")] == [a.id, b.id]


def test_grep_day_skips_what_iter_kind_refuses_and_both_read_lines_alike(tmp_path: Path) -> None:
    # Both walk a day's lines through EvidenceLog._lines_with; what differs is only what
    # a damaged complete line means: grep_day skips it (verify reports it), iter_kind
    # raises, and both take a torn tail for no record yet.
    root = fresh_root(tmp_path / "memory")
    w = Writer(root, "monthly")
    t0 = datetime(2026, 11, 1, 9).astimezone()
    a = w.append("probe", "run-7 first", ts=t0)
    w.append("probe", "other run", ts=t0)
    b = w.append("probe", "run-7 second", ts=t0)
    log = EvidenceLog(root)
    day = t0.date()
    assert [r.id for r in log.grep_day(day, b"run-7")] == [a.id, b.id]
    assert list(log.grep_day(day + timedelta(days=1), b"run-7")) == []
    with log.day_file(day).open("ab") as fh:
        fh.write(b'{"kind":"probe","text":"run-7 torn')
    assert [r.id for r in log.grep_day(day, b"run-7")] == [a.id, b.id]
    assert [r.id for r in log.iter_kind("probe")][-1] == b.id
    with log.day_file(day).open("ab") as fh:
        fh.write(b' line"}\n{"kind":"probe","text":"run-7 after"}\n')
    assert [r.id for r in log.grep_day(day, b"run-7")] == [a.id, b.id]
    with pytest.raises(InvalidInput):
        list(log.iter_kind("probe"))
