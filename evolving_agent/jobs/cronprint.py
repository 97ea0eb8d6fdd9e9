"""Equivalent crontab lines and systemd timer units, for people who prefer the system scheduler.

systemd timers get ``Persistent=true``, which gives the same coalesced catch-up as our
own scheduler: after downtime a missed timer fires once.
"""

from __future__ import annotations

import shlex
import shutil
import sys

from evolving_agent.errors import InvalidInput
from evolving_agent.jobs.settings import JOB_NAMES, load_schedule
from evolving_agent.paths import MemoryRoot

_DOW = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_DOW_NAMES = {name.lower(): i for i, name in enumerate(_DOW[:7])}


def executable() -> list[str]:
    found = shutil.which("evolving-agent")
    return [found] if found else [sys.executable, "-m", "evolving_agent"]


def job_command(root: MemoryRoot, job: str) -> str:
    return shlex.join([*executable(), "--root", str(root.path), "run", job])


def _num(part: str, width: int) -> str:
    if not part.isdigit():
        raise ValueError(part)
    return part.zfill(width)


def _field(value: str, width: int) -> str:
    """One cron field (minute, hour, day or month) as systemd calendar syntax."""
    if value == "*":
        return "*"
    out = []
    for item in value.split(","):
        base, _, step = item.partition("/")
        if base == "*":
            text = "0".zfill(width) if step else "*"
        elif "-" in base:
            lo, hi = base.split("-", 1)
            text = f"{_num(lo, width)}..{_num(hi, width)}"
        else:
            text = _num(base, width)
        out.append(text + (f"/{int(step)}" if step else ""))
    return ",".join(out)


def _dow(value: str) -> str:
    if value in ("*", "?"):
        return ""

    def one(tok: str) -> str:
        tok = tok.lower()
        if tok in _DOW_NAMES:
            return _DOW[_DOW_NAMES[tok]]
        return _DOW[int(tok)]

    parts = []
    for item in value.split(","):
        if "-" in item:
            lo, hi = item.split("-", 1)
            parts.append(f"{one(lo)}..{one(hi)}")
        else:
            parts.append(one(item))
    return ",".join(parts) + " "


def on_calendar(cron: str, timezone: str = "local") -> str:
    """Translate a 5-field cron expression into a systemd ``OnCalendar=`` value."""
    fields = cron.split()
    if len(fields) != 5:
        raise InvalidInput(f"cron expression {cron!r} does not have 5 fields")
    minute, hour, dom, month, dow = fields
    try:
        text = (
            f"{_dow(dow)}*-{_field(month, 2)}-{_field(dom, 2)} "
            f"{_field(hour, 2)}:{_field(minute, 2)}:00"
        )
    except (ValueError, IndexError):
        raise InvalidInput(f"cannot translate cron {cron!r} to a systemd timer") from None
    return text if timezone == "local" else f"{text} {timezone}"


def print_cron(roots: list[MemoryRoot]) -> str:
    """Crontab lines and systemd ``.service`` / ``.timer`` units for every root's jobs."""
    lines = ["# --- crontab (crontab -e) ---"]
    units: list[str] = []
    for n, root in enumerate(roots):
        schedule = load_schedule(root)
        lines.append(f"# evolving-agent jobs for {root.path}")
        if schedule.timezone != "local":
            lines.append(f"CRON_TZ={schedule.timezone}")
        suffix = "" if len(roots) == 1 else f"-{n + 1}"
        for job in JOB_NAMES:
            cron = getattr(schedule.jobs, job)
            log = shlex.quote(str(root.state / f"{job}.log"))
            lines.append(f"{cron} {job_command(root, job)} >> {log} 2>&1")
            name = f"evolving-agent-{job}{suffix}"
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
                f"OnCalendar={on_calendar(cron, schedule.timezone)}",
                "Persistent=true",
                "",
                "[Install]",
                "WantedBy=timers.target",
                "",
            ]
    enable = "# enable with: systemctl --user enable --now evolving-agent-nightly.timer (etc.)"
    return (
        "\n".join([*lines, "", "# --- systemd user units ---", enable, "", *units]).rstrip() + "\n"
    )
