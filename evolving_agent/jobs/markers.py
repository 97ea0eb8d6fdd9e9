"""Run markers: what makes every job idempotent for a date and safe after a crash.

A job first *plans* (reads, reflects, decides every byte it will write) and saves the
plan in ``.ea/runs/<job>-<date>.json`` (private state, like the scheduler's; not a
layer).  Then it applies the plan — overwrites that are idempotent, and one batch of
Evidence records appended with the planned timestamp and the run id — and marks the
run ``done``.  A re-run for the same date finds ``done`` and returns the stored
outcome; a re-run after a crash finds ``planned`` and applies the same plan again,
appending the records only if the run's batch is not already in Evidence (the batch
lands in one write, so it is all there or not at all).

Runs that race (two ``run nightly`` for one date, a hand run beside the scheduler) are
serialised by a lock per job and date (``.ea/human-locks/run-<job>-<date>.lock``) around both
critical steps: load-or-plan-and-save, and check-then-append.  Whoever takes the lock
first makes the plan; the other finds it and applies the *same* plan (its Today writes
are identical overwrites), and finds the batch already appended — one record set per
date, whoever wins.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evolving_agent.errors import InvalidInput, first_error
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.base.atomic import atomic_write
from evolving_agent.memory.base.locks import (
    human_lock_dir,
    lock_file,
    lock_file_now,
    shared_lock_file,
)
from evolving_agent.memory.evidence.evidence import EvidenceDraft, EvidenceLog, EvidenceRecord
from evolving_agent.memory.ops.review_trace import PROVENANCE_KINDS
from evolving_agent.paths import MemoryRoot

P = TypeVar("P", bound=BaseModel)
RunStatus = Literal["done", "already done", "resumed"]


class RunMarker(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = Field(1, le=1)
    job: str
    date: date
    run_id: str
    run_ts: datetime
    phase: Literal["planned", "done"] = "planned"
    plan: dict[str, Any] = Field(default_factory=dict)
    record_ids: list[str] = Field(default_factory=list)


EARLIEST_DAY = date(1970, 1, 1)


def refuse_future(day: date, now: datetime) -> None:
    """A job cannot run for a day that has not begun: it would fence off the real run."""
    if day < EARLIEST_DAY:
        # Also keeps the week/month arithmetic away from date.min (an OverflowError).
        raise InvalidInput(f"{day} is before {EARLIEST_DAY}: no evidence is that old")
    today = now.astimezone().date()
    if day > today:
        raise InvalidInput(f"{day} is in the future (today is {today})")


def marker_path(root: MemoryRoot, job: str, day: date) -> Path:
    return root.state / "runs" / f"{job}-{day.isoformat()}.json"


def load_state_file(model: type[P], path: Path, what: str) -> P | None:
    """A job's private JSON state file (a run marker, the scheduler's state) as ``model``:
    ``None`` when there is none yet, :class:`InvalidInput` naming ``what`` when damaged."""
    if not path.exists():
        return None
    try:
        return model.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        raise InvalidInput(f"damaged {what} ({first_error(exc)})", file=path) from None


def save_state_file(path: Path, state: BaseModel) -> None:
    """Write what :func:`load_state_file` reads, replacing the old file atomically."""
    atomic_write(path, (state.model_dump_json(indent=2) + "\n").encode())


def load_marker(root: MemoryRoot, job: str, day: date) -> RunMarker | None:
    return load_state_file(RunMarker, marker_path(root, job, day), "run marker")


def save_marker(root: MemoryRoot, marker: RunMarker) -> None:
    save_state_file(marker_path(root, marker.job, marker.date), marker)


@contextmanager
def run_lock(root: MemoryRoot, job: str, day: date) -> Iterator[None]:
    """Hold the per-job-and-date lock (released on any exit).  It lives where only the
    human can create a file (memory/base/locks.py): a lock file another user pre-created in
    the shared ``.ea/locks/`` is not this one, and cannot cost the human a day."""
    with lock_file(human_lock_dir(root) / f"run-{job}-{day.isoformat()}.lock"):
        yield


NIGHTLY_LOCK = "nightly.lock"


@contextmanager
def nightly_lock(root: MemoryRoot, *, alone: str | None = None) -> Iterator[None]:
    """Held for a whole nightly run: shared by runs (which serialise per date, above),
    exclusive for a redo (``alone`` says why), which refuses at once while a run is on."""
    path = human_lock_dir(root) / NIGHTLY_LOCK
    if alone is None:
        with shared_lock_file(path):
            yield
    else:
        with lock_file_now(path, alone):
            yield


def new_marker(job: str, day: date, run_ts: datetime, plan: dict[str, Any]) -> RunMarker:
    return RunMarker(
        job=job, date=day, run_id=f"{job}-{uuid.uuid4().hex[:12]}", run_ts=run_ts, plan=plan
    )


def append_once(
    root: MemoryRoot, writer: Writer, marker: RunMarker, records: list[dict[str, Any]]
) -> list[EvidenceRecord]:
    """Append the run's records in one batch, unless a previous attempt already did.

    Check and append happen under the run lock, so two racing runs of one plan append
    the batch once.
    """
    drafts = [
        EvidenceDraft(
            ts=marker.run_ts,
            kind=r["kind"],
            actor=writer.actor,
            text=r.get("text", ""),
            data={**r.get("data", {}), "run": marker.run_id},
        )
        for r in records
    ]
    if not drafts:
        return []
    # The batch lands in the file of the run's timestamp (its own day, whatever TZ reads it).
    run_day = drafts[0].day()
    with run_lock(root, marker.job, marker.date):
        # The runner's own bookkeeping: find this run's batch in the run day's file.
        log = EvidenceLog(root)
        already = [
            r
            # Lazily, by the run id: the run's day may be a flooded one.
            for r in log.grep_day(run_day, marker.run_id.encode())
            # provenance records (review-queued, proposal-written) name the run too, but
            # come before its batch, one per file
            if r.data.get("run") == marker.run_id and r.kind not in PROVENANCE_KINDS
        ]
        if already:
            return already
        return writer.append_drafts(drafts)


def append_provenance_once(
    root: MemoryRoot,
    writer: Writer,
    marker: RunMarker,
    records: list[dict[str, Any]],
    key: str,
) -> None:
    """Append one provenance record per file the run writes (``data[key]`` names the
    file), before the files, each once per run: a resumed run appends only the missing."""
    if not records:
        return
    drafts = [
        EvidenceDraft.model_validate({"ts": marker.run_ts, "actor": writer.actor, **r})
        for r in records
    ]
    with run_lock(root, marker.job, marker.date):
        done = {
            r.data.get(key)
            for r in EvidenceLog(root).grep_day(drafts[0].day(), marker.run_id.encode())
            if r.kind in PROVENANCE_KINDS and r.data.get("run") == marker.run_id
        }
        todo = [d for d in drafts if d.data[key] not in done]
        if todo:
            writer.append_drafts(todo)


def finish(root: MemoryRoot, marker: RunMarker, records: list[EvidenceRecord]) -> RunMarker:
    done = marker.model_copy(update={"phase": "done", "record_ids": [r.id for r in records]})
    save_marker(root, done)
    return done


def plan_or_resume(
    root: MemoryRoot,
    job: str,
    day: date,
    when: datetime,
    model: type[P],
    make_plan: Callable[[], P],
    *,
    guard: Callable[[RunMarker | None], None] | None = None,
) -> tuple[RunStatus, P, RunMarker]:
    """The plan this run applies, and whether it is new, resumed or already applied.

    ``already done``: the stored plan of a finished run (apply nothing).  ``resumed``:
    the stored plan of a run that crashed after planning (apply it again).  ``done``:
    a fresh plan from ``make_plan``, saved before anything is applied: the commit
    point.  ``guard`` sees the marker (None for a fresh run) before any planning and
    may refuse the run; it is not called for a finished one.
    """
    with run_lock(root, job, day):
        marker = load_marker(root, job, day)
        if marker is not None and marker.phase == "done":
            return "already done", model.model_validate(marker.plan), marker
        if guard is not None:
            guard(marker)
        if marker is None:
            plan = make_plan()
            marker = new_marker(job, day, when, plan.model_dump(mode="json"))
            save_marker(root, marker)  # from here a re-run applies this plan
            return "done", plan, marker
    return "resumed", model.model_validate(marker.plan), marker
