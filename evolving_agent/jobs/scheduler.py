"""The long-running scheduler: APScheduler cron triggers from each root's schedule.yaml.

APScheduler 3.x keeps job state in memory unless given a job store; its persistent
stores need SQLAlchemy, MongoDB or Redis, none of which we want as a dependency.  So
the persistent part is ours and small: ``.ea/scheduler.json`` in each root records when
each job last ran.  On start, for every job whose trigger fired at least once between
that time and now, the job runs **once** (coalesced: five missed nights give one run,
for the last complete day), then the cron triggers take over with ``coalesce=True``.

One scheduler serves any number of roots; each root's jobs use that root's time zone.
A failing job is reported and recorded, never fatal to the scheduler; so is a job that
fell back from the requested reflector (``last_error`` says why, ``schedule show`` too).
A file lock per root keeps two schedulers from serving the same root.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict, Field

from evolving_agent.errors import EvolvingAgentError, UsageError
from evolving_agent.jobs.dispatch import fallback_of, run_job
from evolving_agent.jobs.markers import load_state_file, save_state_file
from evolving_agent.jobs.settings import load_schedule
from evolving_agent.memory.base.locks import human_lock_dir
from evolving_agent.memory.evidence.evidence import now as local_now
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record

if TYPE_CHECKING:  # apscheduler is imported only when the scheduler starts
    from apscheduler.schedulers.background import BackgroundScheduler
    from apscheduler.schedulers.base import BaseScheduler

STATE_FILE = "scheduler.json"
MISFIRE_GRACE = int(timedelta(days=31).total_seconds())


class SchedulerState(BaseModel):
    """``.ea/scheduler.json``.  ``since`` is the first start (the catch-up baseline for
    jobs that never ran); ``last_run`` holds only runs that happened.  ``last_error`` is
    why the last run failed *or* fell back to another reflector; ``last_fallback`` is
    the fallback note alone (empty when the requested reflector was used)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = Field(1, le=1)
    since: datetime | None = None
    last_run: dict[str, datetime] = Field(default_factory=dict)
    last_error: dict[str, str] = Field(default_factory=dict)
    last_fallback: dict[str, str] = Field(default_factory=dict)


def state_path(root: MemoryRoot) -> Any:
    return root.state / STATE_FILE


def load_state(root: MemoryRoot) -> SchedulerState | None:
    return load_state_file(SchedulerState, state_path(root), "scheduler state")


def save_state(root: MemoryRoot, state: SchedulerState) -> None:
    save_state_file(state_path(root), state)


class NextRun(BaseModel):
    root: str
    job: str
    cron: str
    timezone: str
    next_run: datetime | None
    last_run: datetime | None
    last_error: str | None = None
    fallback: str | None = None


def missed(root: MemoryRoot, state: SchedulerState, now: datetime) -> list[str]:
    """Jobs whose trigger fired at least once after their last run and up to ``now``."""
    schedule = load_schedule(root)
    out: list[str] = []
    for job in schedule.scheduled_jobs():
        last = state.last_run.get(job) or state.since
        if last is None:
            continue
        trigger = schedule.trigger(job)
        nxt = trigger.get_next_fire_time(None, last + timedelta(microseconds=1))
        if nxt is not None and nxt <= now:
            out.append(job)
    return out


Runner = Callable[..., Any]
Log = Callable[[str], None]


def validate_roots(roots: Sequence[MemoryRoot]) -> list[MemoryRoot]:
    """The distinct roots to schedule, each a memory root with a valid ``schedule.yaml``.

    Fails on the first problem (no root, not a memory root, a malformed schedule naming
    file and line) before anything runs or is printed.
    """
    if not roots:
        raise UsageError("no memory root to schedule")
    # The same root named twice (`--roots a,a/`) would trip over its own lock.
    unique: dict[Path, MemoryRoot] = {}
    for root in roots:
        unique.setdefault(root.path.resolve(), root)
    for root in unique.values():
        require_root(root)
        load_schedule(root)
    return list(unique.values())


@record
class JobScheduler:
    """Runs the jobs of several roots; catches up once after downtime."""

    roots: list[MemoryRoot]
    runner: Runner = run_job
    log: Log = lambda _msg: None  # noqa: E731 - a silent default
    clock: Callable[[], datetime] = local_now
    _locks: list[FileLock] = field(default_factory=list)
    # Set by request_stop() (the CLI's Ctrl-C handler): a stop asked for while a catch-up
    # job runs is honoured before the next job, even if that job's code swallowed the
    # KeyboardInterrupt, instead of being lost.
    _stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.roots = validate_roots(self.roots)

    def request_stop(self) -> None:
        self._stop.set()

    # -- catch-up and firing --------------------------------------------------------------

    def catch_up(self) -> list[tuple[MemoryRoot, str]]:
        """Run each job that missed at least one fire time, once.  Returns what ran."""
        now = self.clock()
        ran: list[tuple[MemoryRoot, str]] = []
        for root in self.roots:
            state = load_state(root)
            if state is None:
                # First start: nothing was missed; remember now as the baseline.
                save_state(root, SchedulerState(since=now))
                continue
            for job in missed(root, state, now):
                if self._stop.is_set():
                    return ran
                self.fire(root, job)
                ran.append((root, job))
        return ran

    def fire(self, root: MemoryRoot, job: str) -> None:
        """Run one job now and record it; errors are reported, not raised."""
        started = self.clock()
        error = ""
        fallback: str | None = None
        try:
            result = self.runner(root, job)
            status = getattr(result, "status", "done")
            fallback = fallback_of(result)
            note = f" ({fallback})" if fallback else ""
            self.log(f"{started:%Y-%m-%d %H:%M} {root.path}: {job} {status}{note}")
            for extra in getattr(getattr(result, "plan", None), "notes", None) or []:
                self.log(f"{started:%Y-%m-%d %H:%M} {root.path}: {job} note: {extra}")
        except EvolvingAgentError as exc:
            error = str(exc)
        except Exception as exc:  # noqa: BLE001 - the scheduler must outlive a failing job
            error = f"unexpected {type(exc).__name__}: {exc}"
        if error:
            self.log(f"{started:%Y-%m-%d %H:%M} {root.path}: {job} failed: {error}")
        # Jobs of one root may finish at the same time on APScheduler's worker threads.
        with FileLock(str(human_lock_dir(root) / "scheduler-state.lock"), mode=0o600):
            state = load_state(root) or SchedulerState()
            state.last_run[job] = started
            if error or fallback:
                state.last_error[job] = error or str(fallback)
            else:
                state.last_error.pop(job, None)
            if fallback:
                state.last_fallback[job] = fallback
            else:
                state.last_fallback.pop(job, None)
            save_state(root, state)

    # -- APScheduler ---------------------------------------------------------------------------

    def add_jobs(self, scheduler: BaseScheduler) -> None:
        for root in self.roots:
            schedule = load_schedule(root)
            for job in schedule.scheduled_jobs():
                scheduler.add_job(
                    self.fire,
                    trigger=schedule.trigger(job),
                    args=(root, job),
                    id=f"{root.path}:{job}",
                    name=f"{job} for {root.path}",
                    coalesce=True,
                    misfire_grace_time=MISFIRE_GRACE,
                    max_instances=1,
                    replace_existing=True,
                )

    def acquire(self) -> None:
        for root in self.roots:
            # The human's: no other user can hold or squat it (memory/base/locks.py).
            lock = FileLock(str(human_lock_dir(root) / "scheduler.lock"), mode=0o600)
            try:
                lock.acquire(timeout=0)
            except Timeout:
                self.release()
                raise UsageError(f"another scheduler already serves {root.path}") from None
            self._locks.append(lock)

    def release(self) -> None:
        while self._locks:
            self._locks.pop().release()

    def run(self) -> None:
        """Catch up, then run the cron triggers in this thread until stopped (Ctrl-C);
        the roots' locks are released when it ends."""
        from apscheduler.schedulers.blocking import BlockingScheduler

        try:
            self._start(BlockingScheduler())
        finally:
            self.release()

    def start_background(self) -> BackgroundScheduler:
        """Catch up, then run the cron triggers in a background thread; the locks stay
        held until :meth:`release` (call it after shutting the returned scheduler down)."""
        from apscheduler.schedulers.background import BackgroundScheduler

        scheduler = BackgroundScheduler()
        try:
            self._start(scheduler)
        except BaseException:
            self.release()
            raise
        return scheduler

    def _start(self, scheduler: BaseScheduler) -> None:
        if not self._locks:  # the caller may have taken them already (to fail early)
            self.acquire()
        self.catch_up()
        if self._stop.is_set():
            raise KeyboardInterrupt  # stopped during the catch-up
        self.add_jobs(scheduler)
        scheduler.start()

    # -- inspection -------------------------------------------------------------------------------

    def next_runs(self) -> list[NextRun]:
        now = self.clock()
        out = []
        for root in self.roots:
            schedule = load_schedule(root)
            state = load_state(root)
            for job in schedule.scheduled_jobs():
                out.append(
                    NextRun(
                        root=str(root.path),
                        job=job,
                        cron=getattr(schedule.jobs, job),
                        timezone=schedule.timezone,
                        next_run=schedule.trigger(job).get_next_fire_time(None, now),
                        last_run=state.last_run.get(job) if state else None,
                        last_error=state.last_error.get(job) if state else None,
                        fallback=state.last_fallback.get(job) if state else None,
                    )
                )
        return out
