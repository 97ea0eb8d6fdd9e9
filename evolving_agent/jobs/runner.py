"""One entry point for running a job by name: resolves the reflector, then runs it.

Reflector precedence: ``--reflector`` flag > ``schedule.yaml`` ``reflector:`` > ``rules``;
``--reflector-cmd`` alone implies the ``command`` reflector.  Used by the CLI and by the
scheduler alike.
"""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel

from evolving_agent.errors import UsageError
from evolving_agent.jobs.monthly import run_monthly
from evolving_agent.jobs.nightly import run_nightly
from evolving_agent.jobs.prompts import prompt_loader
from evolving_agent.jobs.settings import JOB_NAMES, load_schedule
from evolving_agent.jobs.weekly import run_weekly
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.reflectors import Reflector, get_reflector


def resolve_reflector(
    root: MemoryRoot, name: str | None = None, command: str | None = None
) -> Reflector:
    settings = load_schedule(root).reflector
    chosen = name or ("command" if command else settings.name)
    return get_reflector(chosen, settings=settings, command=command, prompts=prompt_loader(root))


def run_job(
    root: MemoryRoot,
    job: str,
    day: date | None = None,
    *,
    reflector: str | None = None,
    reflector_cmd: str | None = None,
    now: datetime | None = None,
) -> BaseModel:
    """Run ``job`` (nightly / weekly / monthly) for ``day``; returns the job's result."""
    require_root(root)
    if job not in JOB_NAMES:
        raise UsageError(f"unknown job {job!r} (valid: {', '.join(JOB_NAMES)})")
    if job == "monthly":
        return run_monthly(root, day, now=now)  # consolidation is deterministic: no reflector
    refl = resolve_reflector(root, reflector, reflector_cmd)
    if job == "nightly":
        return run_nightly(root, day, reflector=refl, now=now)
    return run_weekly(root, day, reflector=refl, now=now)
