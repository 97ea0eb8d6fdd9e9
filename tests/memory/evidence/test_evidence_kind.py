"""EvidenceLog.iter_kind: the records of one kind, without parsing the others."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

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
