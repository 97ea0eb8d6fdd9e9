"""The run directory's records (``evolving_agent/search/rundir.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from evolving_agent.search.rundir import TAMPERED, TurnRecord, read_records, recover_records

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
