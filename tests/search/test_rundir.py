"""The run directory's records (``evolving_agent/search/rundir.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from evolving_agent.errors import InvalidInput
from evolving_agent.search.rundir import (
    TAMPERED,
    RunDir,
    TurnRecord,
    read_records,
    recover_records,
)

ROW = {
    "seq": 1,
    "round": 1,
    "agent": 1,
    "turn": 1,
    "round_turn": 1,
    "session": "s",
    "new_session": True,
    "base_commit": "b",
    "commit": "c1",
    "score": None,
    "empty": False,
    "lines_changed": 3,
    "wall_s": 0.1,
    "ts": "t",
}


def test_a_tampered_turn_is_a_flag_even_in_a_log_from_before_the_flag(tmp_path: Path) -> None:
    # Resume used to spot a never-judged turn by its message's prefix; now only the flag
    # is read, so an old log's refused turn must load flagged.
    log = tmp_path / "log.jsonl"
    old = {**ROW, "error": f"{TAMPERED}: the scorer changed since the run began: score.py"}
    failed = {**ROW, "seq": 2, "error": "the agent exited 1"}
    log.write_text(json.dumps(old) + "\n" + json.dumps(failed) + "\n")

    first, second = read_records(log)

    assert first.tampered and not second.tampered
    assert TurnRecord(**{**ROW, "tampered": True}).tampered


def test_reading_leaves_a_torn_line_and_only_recovering_cuts_it(tmp_path: Path) -> None:
    # A report reading a live run must never change its log; resume must cut the torn
    # line (SIGKILL mid-append) so its next record starts a line of its own.
    log = tmp_path / "log.jsonl"
    whole = json.dumps(ROW) + "\n"
    log.write_text(whole + '{"seq": 2, "rou')

    assert [r.seq for r in read_records(log)] == [1]
    assert log.read_text() == whole + '{"seq": 2, "rou'  # untouched
    assert [r.seq for r in recover_records(log)] == [1]
    assert log.read_text() == whole


HOLDER = (
    "import fcntl, os, sys\n"
    "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)\n"
    "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "print('held', flush=True)\n"
    "sys.stdin.readline()\n"
)


def _holder(run: RunDir) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(run.path / ".lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_a_lock_another_process_keeps_is_refused_and_named(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    holder = _holder(run)
    try:
        with pytest.raises(InvalidInput, match="another evolving-agent process is working"):
            run.lock(grace=0)
    finally:
        holder.communicate("\n", timeout=60)


def test_a_lock_released_within_the_grace_is_taken(tmp_path: Path) -> None:
    # Regression: a resume right after a SIGKILL was refused while a child the killed
    # harness was starting still held a copy of the lock's descriptor.
    run = RunDir(tmp_path)
    holder = _holder(run)
    taken: list[int] = []
    waiting = threading.Thread(target=lambda: taken.append(run.lock(grace=120)))
    waiting.start()
    holder.communicate("\n", timeout=60)  # the holder exits: its lock goes with it
    waiting.join(timeout=120)
    assert taken, "the lock was not taken after its holder exited"
    os.close(taken[0])
