"""Equivalent crontab lines and systemd timer units, for people who prefer the system scheduler.

systemd timers get ``Persistent=true``, which gives the same coalesced catch-up as our
own scheduler: after downtime a missed timer fires once.  Both outputs come from the
same parsed cron line as the scheduler's own trigger (``jobs/cronexpr.py``), so day 0
and day 7 are Sunday everywhere, and each root's time zone stays with its own lines.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import shutil
import sys

from tzlocal import get_localzone

from evolving_agent.errors import InvalidInput
from evolving_agent.jobs.cronexpr import CronError, parse_cron
from evolving_agent.jobs.settings import SYNC_JOB, load_schedule
from evolving_agent.paths import MemoryRoot


def executable() -> list[str]:
    found = shutil.which("evolving-agent")
    return [found] if found else [sys.executable, "-m", "evolving_agent"]


def job_command(root: MemoryRoot, job: str) -> str:
    verb = [job] if job == SYNC_JOB else ["run", job]
    return shlex.join([*executable(), "--root", str(root.path), *verb])


def on_calendar(cron: str, timezone: str = "local") -> list[str]:
    """A 5-field cron line as systemd ``OnCalendar=`` values (two when cron would fire on
    either of a restricted day of month and day of week)."""
    try:
        return parse_cron(cron).on_calendar(timezone)
    except CronError as exc:
        raise InvalidInput(f"cannot translate cron {cron!r} to a systemd timer: {exc}") from None


def local_zone_name() -> str | None:
    """The IANA name of this machine's zone, if it has one (to reset ``CRON_TZ``)."""
    key = getattr(get_localzone(), "key", None)
    return key if isinstance(key, str) and key else None


def unit_name(root: MemoryRoot, job: str) -> str:
    """``evolving-agent-JOB-DIR-HASH``: the root's folder name (for people) and a hash of
    its full path (so two roots' units never overwrite each other in ~/.config)."""
    folder = re.sub(r"[^A-Za-z0-9_.]+", "-", root.path.name).strip("-.") or "root"
    digest = hashlib.sha256(str(root.path.absolute()).encode()).hexdigest()[:8]
    return f"evolving-agent-{job}-{folder}-{digest}"


def print_cron(roots: list[MemoryRoot]) -> str:
    """Crontab lines and systemd ``.service`` / ``.timer`` units for every root's jobs."""
    lines = ["# --- crontab (crontab -e) ---"]
    units: list[str] = []
    schedules = [(n, root, load_schedule(root)) for n, root in enumerate(roots)]
    # A CRON_TZ= line applies to every later line of a crontab.  So roots on the local
    # zone come first, each other zone gets its own block, and the zone is set back to
    # the machine's after the last block (lines appended later stay on local time).
    crontab_order = sorted(schedules, key=lambda item: item[2].timezone != "local")
    zoned = False
    for _n, root, schedule in crontab_order:
        lines.append(f"# evolving-agent jobs for {root.path}")
        if schedule.timezone != "local":
            lines.append(f"CRON_TZ={schedule.timezone}")
            zoned = True
        for job in schedule.scheduled_jobs():
            log = shlex.quote(str(root.state / f"{job}.log"))
            cron = getattr(schedule.jobs, job)
            lines.append(f"{cron} {job_command(root, job)} >> {log} 2>&1")
    if zoned:
        local = local_zone_name()
        if local:
            lines.append(f"CRON_TZ={local}")
        else:
            lines.append("# CRON_TZ above applies to every line below it: keep these lines last")
    timers: list[str] = []
    for _n, root, schedule in schedules:
        for job in schedule.scheduled_jobs():
            cron = getattr(schedule.jobs, job)
            name = unit_name(root, job)
            timers.append(f"{name}.timer")
            units += [
                f"# ~/.config/systemd/user/{name}.service",
                "[Unit]",
                f"Description=evolving-agent {job} job for {root.path}",
                "",
                "[Service]",
                "Type=oneshot",
                f"ExecStart={job_command(root, job)}",
                "",
                f"# ~/.config/systemd/user/{name}.timer",
                "[Unit]",
                f"Description=Run evolving-agent {job} for {root.path}",
                "",
                "[Timer]",
                *(f"OnCalendar={c}" for c in on_calendar(cron, schedule.timezone)),
                "Persistent=true",
                "",
                "[Install]",
                "WantedBy=timers.target",
                "",
            ]
    enable = "# enable with: systemctl --user enable --now " + " ".join(timers)
    return (
        "\n".join([*lines, "", "# --- systemd user units ---", enable, "", *units]).rstrip() + "\n"
    )
