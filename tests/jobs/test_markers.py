"""Issue 11, hole 11: concurrent runs of one job for one date make one record set.

Three real ``run nightly --date D`` processes start together, several times over; the
reflector is slow (a command that sleeps before answering), so without the lock every
process plans on its own and appends its own batch (the hole: 5 duplicates in 8
races).  With the per-job-and-date lock one plans, the others apply that same plan,
and Evidence holds exactly one batch.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from freezegun import freeze_time

from evolving_agent.errors import InvalidInput
from evolving_agent.jobs.markers import load_state_file, save_state_file
from evolving_agent.jobs.scheduler import SchedulerState
from evolving_agent.memory.evidence.evidence import EvidenceLog
from tests.helpers import HELPERS, run_cli
from tests.helpers.roots import fresh_root

HOSTILE = str(HELPERS / "hostile_reflector.py")
DAY = "2026-11-02"
PROCESSES = 3


@pytest.mark.parametrize("repetition", range(3))
def test_concurrent_nightly_runs_for_one_date_make_one_record_set(
    tmp_path: Path, repetition: int
) -> None:
    root = fresh_root(tmp_path / "memory")
    with freeze_time(f"{DAY} 09:00:00"):
        hid = run_cli("hypothesis", "add", "give one answer, not a menu").output.split()[0]
    with freeze_time(f"{DAY} 10:00:00"):
        run_cli("friction", "listed options again", "--supports", hid)
        run_cli("friction", "offered a menu nobody asked for")
    env = {**os.environ, "EA_HOSTILE": "slow", "EA_HOSTILE_SLEEP": "0.6"}
    argv = [sys.executable, "-m", "evolving_agent", "run", "nightly", "--date", DAY]
    argv += ["--reflector-cmd", f"{sys.executable} {HOSTILE}"]
    procs = [
        subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(PROCESSES)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * PROCESSES, [e.decode() for _o, e in outs]
    statuses = Counter(o.decode().splitlines()[0].split(": ")[1].split(" (")[0] for o, _e in outs)
    assert statuses["done"] == 1, statuses  # exactly one process planned
    assert statuses["done"] + statuses["resumed"] + statuses["already done"] == PROCESSES

    records = list(EvidenceLog(root).iter_all())
    jobs = [r for r in records if r.kind == "job" and r.data.get("job") == "nightly"]
    assert len(jobs) == 1, [r.data.get("run") for r in jobs]
    run_ids = {r.data["run"] for r in records if "run" in r.data}
    assert len(run_ids) == 1  # every job record of the day belongs to one run
    states = [r for r in records if r.kind == "hypothesis-state"]
    assert len(states) == len({(r.data.get("run"), r.text) for r in states})
    assert EvidenceLog(root).verify_chain() == []


def test_a_state_file_reads_back_and_is_none_when_absent_or_named_when_damaged(
    tmp_path: Path,
) -> None:
    # One reader for the run markers and the scheduler's state (load_state_file).
    path = tmp_path / "state.json"
    assert load_state_file(SchedulerState, path, "scheduler state") is None
    state = SchedulerState(last_run={"nightly": datetime(2026, 11, 2, 3, tzinfo=UTC)})
    save_state_file(path, state)
    assert path.read_text().endswith("}\n")
    assert load_state_file(SchedulerState, path, "scheduler state") == state
    path.write_text('{"schema_version": 2}')
    with pytest.raises(InvalidInput, match=r": damaged scheduler state \(schema_version") as caught:
        load_state_file(SchedulerState, path, "scheduler state")
    assert caught.value.file == str(path)
