"""The root's ``schedule.yaml``: job cron lines, time zone and reflector settings.

One place resolves them, with the precedence flag > file > default.  The file is
user-editable, so it maps to a pydantic model with ``extra="forbid"``, and errors
name the file and line.  ``reflector`` may be a bare name (``reflector: rules``) or a
mapping::

    reflector:
      name: openai
      base_url: http://127.0.0.1:11434/v1   # any OpenAI-compatible endpoint
      model: llama3.1
      api_key_env: OLLAMA_KEY               # the *name* of the variable, never the key
      api_key_for: http://127.0.0.1:11434   # the one origin that key may be sent to
"""

from __future__ import annotations

import zoneinfo
from datetime import tzinfo
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evolving_agent.errors import InvalidInput
from evolving_agent.jobs.cronexpr import CronError, CronSpec, parse_cron
from evolving_agent.memory.base.yamlio import load_model, parse_yaml, validate
from evolving_agent.paths import MemoryRoot

# The reflector settings live with the reflectors (reflectors never import jobs).
from evolving_agent.reflectors.settings import (  # noqa: F401  # re-exported
    REFLECTOR_NAMES,
    ReflectorName,
    ReflectorSettings,
)

if TYPE_CHECKING:
    from apscheduler.triggers.base import BaseTrigger

JobName = Literal["nightly", "weekly", "monthly"]
JOB_NAMES: tuple[JobName, ...] = ("nightly", "weekly", "monthly")
# Scheduled besides the jobs when its cron line is set (docs/sync.md): not a reflection
# job, so never in JOB_NAMES.
SYNC_JOB = "sync"


class JobCrons(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    nightly: str = "0 3 * * *"
    weekly: str = "30 3 * * sun"
    monthly: str = "0 4 1 * *"
    # Exchange this device's state with its default remote (docs/sync.md); off unless set.
    sync: str | None = None

    @field_validator("nightly", "weekly", "monthly", "sync")
    @classmethod
    def _cron(cls, v: str | None) -> str | None:
        if v is None:
            return v
        try:
            parse_cron(v)
        except CronError as exc:
            raise ValueError(f"not a cron expression ({exc})") from None
        return v


class ScheduleFile(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = Field(1, le=1)
    timezone: str = "local"
    jobs: JobCrons = Field(default_factory=JobCrons)
    reflector: ReflectorSettings = Field(default_factory=ReflectorSettings)

    @field_validator("reflector", mode="before")
    @classmethod
    def _bare_name(cls, v: Any) -> Any:
        return {"name": v} if isinstance(v, str) else v

    @field_validator("timezone")
    @classmethod
    def _tz(cls, v: str) -> str:
        if v != "local":
            try:
                zoneinfo.ZoneInfo(v)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"unknown time zone {v!r}") from None
        return v

    def tz(self) -> tzinfo:
        if self.timezone != "local":
            return zoneinfo.ZoneInfo(self.timezone)
        from tzlocal import get_localzone  # with logging: only a local time zone needs it

        return get_localzone()

    def scheduled_jobs(self) -> tuple[str, ...]:
        """The jobs with a cron line: the three jobs, and ``sync`` when it is set."""
        return JOB_NAMES + ((SYNC_JOB,) if self.jobs.sync else ())

    def cron(self, job: str) -> CronSpec:
        """The job's cron line, read as cron reads it (0 and 7 = Sunday)."""
        return parse_cron(getattr(self.jobs, job))

    def trigger(self, job: str) -> BaseTrigger:
        return self.cron(job).trigger(self.tz())


def load_schedule(root: MemoryRoot) -> ScheduleFile:
    if not root.schedule_file.exists():
        return ScheduleFile()
    return load_model(ScheduleFile, root.schedule_file)


def check_schedule_bytes(root: MemoryRoot, content: bytes) -> None:
    """Refuse a ``schedule.yaml`` that would stop every job, before it is committed."""
    shown = root.schedule_file
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("not UTF-8 text", file=shown) from None
    validate(ScheduleFile, parse_yaml(text, file=shown), file=shown)


def accept_edits(root: MemoryRoot, relpaths: list[str], *, message: str = "") -> list[str]:
    """The human's ``accept``: commit hand edits of tracked files, ``schedule.yaml``
    validated against its model.  Returns the paths that changed."""
    from evolving_agent.memory.authority import accept_hand_edits

    return accept_hand_edits(
        root,
        relpaths,
        message=message,
        checks={"schedule.yaml": lambda data: check_schedule_bytes(root, data)},
    )
