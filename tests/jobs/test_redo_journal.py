"""The redo journal (jobs/redo_journal.py), the commit point of ``run nightly --redo``.

Applied directly on a real root: what it writes (the records once, Today's files whole,
the superseded marker kept, the new marker last, then the journal gone), that applying
it again changes nothing, that the nightly run's check is cheap when there is none, and
that a journal it cannot read is refused and kept.  A redo killed at each step in a real
subprocess: tests/jobs/test_redo.py.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from pydantic import ValidationError

from evolving_agent.jobs.markers import RunMarker, load_marker, marker_path, new_marker
from evolving_agent.jobs.nightly import BIAS_FILE, CARRY_FILE, NIGHTLY_STATE_FILE
from evolving_agent.jobs.redo_journal import (
    RedoJournal,
    apply_journal,
    finish_interrupted,
    journal_path,
    journals,
)
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root
from tests.helpers.weeks import at

DAY = date(2026, 11, 6)


def journal(root: MemoryRoot, day: date = DAY) -> RedoJournal:
    """A redo of ``day`` that rewrites the state and the bias and removes the carry."""
    old = new_marker("nightly", day, at(day, 3), {"bias": "old"}).model_copy(
        update={"phase": "done"}
    )
    (root.today / CARRY_FILE).write_text("yesterday's carry\n")
    return RedoJournal(
        day=day,
        old=old,
        new=new_marker("nightly", day, at(day, 10), {"bias": "new"}),
        today={
            NIGHTLY_STATE_FILE: "state: redone\n",
            BIAS_FILE: "the new bias\n",
            CARRY_FILE: None,
        },
        records=[
            {"kind": "job", "text": f"redo: supersedes run {old.run_id}"},
            {"kind": "job", "text": "nightly plan", "data": {"bias": "new"}},
        ],
    )


def save(root: MemoryRoot, j: RedoJournal) -> Path:
    path = journal_path(root, j.day)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(j.model_dump_json())
    return path


def nightly_records(root: MemoryRoot, run_id: str) -> list[str]:
    return [r.text for r in EvidenceLog(root).iter_all() if r.data.get("run") == run_id]


def test_applying_writes_records_once_today_whole_keeps_the_old_marker_and_ends_the_journal(
    tmp_path: Path,
) -> None:
    root = fresh_root(tmp_path / "memory")
    j = journal(root)
    path = save(root, j)
    assert finish_interrupted(root) == [DAY]
    assert not path.exists()
    done = load_marker(root, "nightly", DAY)
    assert done is not None and done.run_id == j.new.run_id and done.phase == "done"
    assert nightly_records(root, j.new.run_id) == [j.records[0]["text"], "nightly plan"]
    assert len(done.record_ids) == 2
    assert (root.today / NIGHTLY_STATE_FILE).read_text() == "state: redone\n"
    assert (root.today / BIAS_FILE).read_text() == "the new bias\n"
    assert not (root.today / CARRY_FILE).exists()  # None: the file is removed
    kept = marker_path(root, "nightly", DAY).with_suffix(f".superseded-{j.old.run_id}.json")
    assert RunMarker.model_validate_json(kept.read_bytes()) == j.old


def test_applying_a_journal_again_changes_nothing(tmp_path: Path) -> None:
    """What a crash after any step leaves is finished by applying the whole journal again."""
    root = fresh_root(tmp_path / "memory")
    j = journal(root)
    save(root, j)
    first = apply_journal(root, j)
    files = {p: p.read_bytes() for p in sorted(root.today.iterdir()) if p.is_file()}
    second = apply_journal(root, j)
    assert second.record_ids == first.record_ids  # the batch found by its run id, not re-added
    assert len(nightly_records(root, j.new.run_id)) == 2
    assert {p: p.read_bytes() for p in sorted(root.today.iterdir()) if p.is_file()} == files
    assert journals(root) == []


def test_no_journal_is_one_listing_and_no_lock(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    locks = root.state / "human-locks"
    before = sorted(locks.iterdir()) if locks.is_dir() else None
    assert journals(root) == [] and finish_interrupted(root) == []
    assert (sorted(locks.iterdir()) if locks.is_dir() else None) == before


def test_journals_of_several_days_are_all_finished_in_day_order(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    days = [date(2026, 11, 9), date(2026, 11, 3), date(2026, 11, 6)]
    for day in days:
        save(root, journal(root, day))
    assert [p.name for p in journals(root)] == [
        "nightly-2026-11-03.redo.json", "nightly-2026-11-06.redo.json",
        "nightly-2026-11-09.redo.json",
    ]  # fmt: skip
    assert finish_interrupted(root) == sorted(days)
    assert all(load_marker(root, "nightly", d) is not None for d in days)


@pytest.mark.parametrize(
    "change",
    [{"schema_version": 2}, {"surprise": True}, {"day": "2026-13-01"}],
    ids=["newer-schema", "unknown-field", "bad-day"],
)
def test_a_journal_it_cannot_read_is_refused_and_kept(
    tmp_path: Path, change: dict[str, object]
) -> None:
    root = fresh_root(tmp_path / "memory")
    path = save(root, journal(root))
    data = {**json.loads(path.read_text()), **change}
    path.write_text(json.dumps(data))
    with pytest.raises(ValidationError):
        finish_interrupted(root)
    assert path.exists()  # nothing lost: the journal waits for a person
    assert load_marker(root, "nightly", DAY) is None
