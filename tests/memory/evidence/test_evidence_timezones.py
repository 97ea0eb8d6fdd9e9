"""Issue 11, hole 10: honest Evidence written under another TZ verifies clean.

A laptop that travels, or a scheduler started with another ``TZ``, appends records
stamped with that zone's offset.  Verify used to re-date every record in *its own*
zone and report "dated … in wrong file" (exit 5).  Now a record's day is the date of
its ``ts`` in the offset it carries, chosen the same way by the writer and by verify.

Writers are real processes with ``TZ`` set; two of them run the CLI under a frozen
wall clock (freezegun inside the child) at hours where the zone's date and UTC's date
differ, so the case is exercised whatever the time of day the suite runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.paths import MemoryRoot
from tests.helpers import run_proc
from tests.helpers.roots import fresh_root

# Import the CLI's modules first, then freeze the wall clock, then run the command.
DRIVER = """
import sys
import evolving_agent.cli.memory_cmds, evolving_agent.memory.authority
from freezegun import freeze_time
from evolving_agent.cli import cli
with freeze_time(sys.argv[1]):
    cli.main(args=sys.argv[2:], prog_name="evolving-agent")
"""


def write_at(tz: str, wall: str, *args: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, wall, *args],
        env={**os.environ, "TZ": tz},
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def test_records_written_in_los_angeles_and_tokyo_verify_in_any_zone(root: MemoryRoot) -> None:
    # 20:00 in Los Angeles on 11-30 is already 12-01 in UTC; 07:00 in Tokyo on 12-01 is
    # still 11-30 in UTC.
    write_at("America/Los_Angeles", "2026-11-30 20:00:00", "friction", "from LA")
    write_at("Asia/Tokyo", "2026-12-01 07:00:00", "friction", "from Tokyo")
    # And with the real clock, as a travelling laptop would.
    for tz in ("America/Los_Angeles", "Asia/Tokyo"):
        proc = run_proc("friction", f"now in {tz}", env={"TZ": tz})
        assert proc.returncode == 0, proc.stderr.decode()

    log = EvidenceLog(root)
    la = [r for r in log.read_day(date(2026, 11, 30)) if r.text.startswith("from")]
    tokyo = [r for r in log.read_day(date(2026, 12, 1)) if r.text.startswith("from")]
    assert [r.text for r in la] == ["from LA"]
    assert la[0].ts.isoformat() == "2026-11-30T20:00:00-08:00"
    assert [r.text for r in tokyo] == ["from Tokyo"]
    assert tokyo[0].ts.isoformat() == "2026-12-01T07:00:00+09:00"

    for tz in ("UTC", "America/Los_Angeles", "Asia/Tokyo", "Pacific/Kiritimati"):
        proc = run_proc("verify", "--json", env={"TZ": tz})
        report = json.loads(proc.stdout or b"{}")
        assert proc.returncode == 0, (tz, report.get("problems"), proc.stderr.decode())
        assert report["ok"] is True


def test_a_record_moved_to_another_days_file_is_still_caught(root: MemoryRoot) -> None:
    write_at("America/Los_Angeles", "2026-11-30 20:00:00", "friction", "from LA")
    src = root.evidence / "2026-11-30.jsonl"
    # Move the record two days on: no real offset puts it there, and its chain breaks.
    src.rename(root.evidence / "2026-12-02.jsonl")
    proc = run_proc("verify")
    assert proc.returncode == 5
    out = proc.stdout.decode() + proc.stderr.decode()
    assert "in wrong file" in out
