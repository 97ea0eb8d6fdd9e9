"""The redo journal: everything a ``run nightly --redo`` writes, saved before any of it.

The commit point of a redo (jobs/redo.py): a crash before the journal is saved leaves
the old state; after it, :func:`finish_interrupted` — called by every nightly run, and
by the next redo — applies it again, each step idempotent (the records by the run id,
once; Today's files whole; the new marker last, then the journal goes).  Kept apart
from redo.py so that the nightly job can finish a journal without importing the redo,
which builds on the nightly job.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evolving_agent.jobs.markers import (
    NIGHTLY_LOCK,
    RunMarker,
    append_once,
    finish,
    marker_path,
)
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.base.atomic import atomic_write
from evolving_agent.memory.base.locks import human_lock_dir, lock_file
from evolving_agent.paths import MemoryRoot


class RedoJournal(BaseModel):
    """Everything a redo writes, saved before any of it is written (the commit point)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = Field(1, le=1)
    day: date
    old: RunMarker  # the superseded run, kept beside the new marker once applied
    new: RunMarker  # the new run, phase "planned"
    today: dict[str, str | None]  # each Today file's final text (None: absent)
    records: list[dict[str, Any]]  # the redo record, restorations, the new run's batch


def journal_path(root: MemoryRoot, day: date) -> Path:
    return root.state / "runs" / f"nightly-{day.isoformat()}.redo.json"


def journals(root: MemoryRoot) -> list[Path]:
    runs = root.state / "runs"
    return sorted(runs.glob("nightly-*.redo.json")) if runs.is_dir() else []


def finish_interrupted(root: MemoryRoot) -> list[date]:
    """Apply the journal of any redo a crash cut short (the days it finished).  Cheap
    when there is none: one directory listing."""
    if not journals(root):
        return []
    done = []
    with lock_file(human_lock_dir(root) / NIGHTLY_LOCK):  # waits out a redo under way
        for path in journals(root):
            journal = RedoJournal.model_validate_json(path.read_bytes())
            apply_journal(root, journal)
            done.append(journal.day)
    return done


def apply_journal(root: MemoryRoot, journal: RedoJournal) -> RunMarker:
    """Write what the journal says (again, after a crash: each step is idempotent)."""
    writer = Writer(root, "nightly")
    records = append_once(root, writer, journal.new, journal.records)
    writer.write_many("today", {k: v for k, v in journal.today.items() if v is not None})
    for name, text in journal.today.items():
        if text is None:
            writer.delete("today", name)
    old = journal.old
    kept = marker_path(root, "nightly", journal.day).with_suffix(f".superseded-{old.run_id}.json")
    atomic_write(kept, (old.model_dump_json(indent=2) + "\n").encode())
    done = finish(root, journal.new, records)
    journal_path(root, journal.day).unlink(missing_ok=True)
    return done
