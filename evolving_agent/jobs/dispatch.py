"""One entry point for running a job by name: resolves the reflector, then runs it.

Reflector precedence: ``--reflector`` flag > ``schedule.yaml`` ``reflector:`` > ``rules``;
``--reflector-cmd`` alone implies the ``command`` reflector.  Used by the CLI and by the
scheduler alike.

A ``command`` reflector is bound to the root here so it runs contained (see
``reflectors/command.py``); if it tampers with Canon the job fails with exit 5 and a
``job`` record with ``status: failed`` says so in Evidence.  A job that fell back from
the requested reflector is a success with a visible note (:func:`fallback_of`);
``--strict`` turns it into exit 4 (:func:`check_strict`).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from pydantic import BaseModel

from evolving_agent.errors import EXIT_INVALID, EvolvingAgentError, UsageError
from evolving_agent.jobs.monthly import run_monthly
from evolving_agent.jobs.nightly import run_nightly
from evolving_agent.jobs.prompts import prompt_loader
from evolving_agent.jobs.redo import redo_nightly
from evolving_agent.jobs.settings import JOB_NAMES, SYNC_JOB, load_schedule
from evolving_agent.jobs.weekly import run_weekly
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence.devices import check_today_writer
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.reflectors import Reflector, get_reflector
from evolving_agent.reflectors.command import CommandReflector, ReflectorTampered


class ReflectorNotUsed(EvolvingAgentError):
    """``run --strict``: the job ran, but not with the reflector that was asked for."""

    exit_code = EXIT_INVALID

    def __init__(self, job: str, requested: str, note: str) -> None:
        self.job = job
        self.requested = requested
        super().__init__(f"--strict: {job} did not use the {requested} reflector: {note}")


def resolve_reflector(
    root: MemoryRoot, name: str | None = None, command: str | None = None
) -> Reflector:
    settings = load_schedule(root).reflector
    chosen = name or ("command" if command else settings.name)
    refl = get_reflector(chosen, settings=settings, command=command, prompts=prompt_loader(root))
    if isinstance(refl, CommandReflector):
        refl.guard(root)
    return refl


def run_job(
    root: MemoryRoot,
    job: str,
    day: date | None = None,
    *,
    reflector: str | None = None,
    reflector_cmd: str | None = None,
    now: datetime | None = None,
    redo: bool = False,
) -> BaseModel:
    """Run ``job`` (nightly / weekly / monthly) for ``day``; returns the job's result.
    ``redo`` (nightly only): reflect ``day`` again (jobs/redo.py)."""
    require_root(root)
    if job == SYNC_JOB:  # the scheduler's sync job (docs/sync.md)
        from evolving_agent.memory.sync import sync

        return sync(root)  # type: ignore[return-value]  # a result the scheduler logs
    if job not in JOB_NAMES:
        raise UsageError(f"unknown job {job!r} (valid: {', '.join(JOB_NAMES)})")
    check_today_writer(root, job)  # one device writes Today (memory/evidence/devices.py)
    if job == "monthly":
        return run_monthly(root, day, now=now)  # consolidation is deterministic: no reflector
    refl = resolve_reflector(root, reflector, reflector_cmd)
    try:
        if job == "nightly" and redo:
            assert day is not None, "a redo names its day"
            return redo_nightly(root, day, reflector=refl, now=now)
        if job == "nightly":
            return run_nightly(root, day, reflector=refl, now=now)
        return run_weekly(root, day, reflector=refl, now=now)
    except ReflectorTampered as exc:
        Writer(root, job).append(
            "job",
            f"{job} failed: {exc}",
            data={
                "job": job,
                "date": day.isoformat() if day else None,
                "status": "failed",
                "reflector": exc.reflector,
                "tampered": exc.changed,
            },
        )
        raise


def fallback_of(result: Any) -> str | None:
    """The fallback note of a job result (None when the requested reflector was used)."""
    plan = getattr(result, "plan", None)
    note = getattr(plan, "fallback", None)
    return note if isinstance(note, str) and note else None


def check_strict(job: str, result: Any) -> None:
    """Raise :class:`ReflectorNotUsed` when the job did not use the requested reflector."""
    plan = getattr(result, "plan", None)
    requested = getattr(plan, "requested", None)
    used = getattr(plan, "reflector", None)
    if requested is not None and used is not None and requested != used:
        raise ReflectorNotUsed(job, requested, fallback_of(result) or f"used {used}")
