"""Issue 11, hole 12: cron lines mean what cron means, everywhere.

``"30 3 * * 0"`` used to fire on Mondays in ``schedule run`` (APScheduler 3.x counts 0
as Monday) while ``print-cron`` said Sunday; ``7`` was refused; ``*/N`` in day of month
or month gave systemd calendars it rejects; and a ``CRON_TZ=`` line leaked onto the
next root's lines.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from apscheduler.schedulers.background import BackgroundScheduler
from freezegun import freeze_time

from evolving_agent.jobs.cronexpr import CronError, parse_cron
from evolving_agent.jobs.scheduler import JobScheduler, load_state
from evolving_agent.paths import MemoryRoot
from tests.helpers import run_cli, run_proc
from tests.helpers.roots import fresh_root

NOON = datetime(2026, 11, 30, 12, tzinfo=UTC)  # a Monday


def make_root(path: Path, weekly: str, tz: str = "UTC") -> MemoryRoot:
    root = fresh_root(path)
    text = root.schedule_file.read_text().replace("timezone: local", f"timezone: {tz}")
    root.schedule_file.write_text(text.replace('"30 3 * * sun"', f'"{weekly}"'))
    return root


@pytest.mark.parametrize("weekly", ["30 3 * * 0", "30 3 * * 7", "30 3 * * sun"])
def test_day_0_and_7_are_sunday_in_run_show_and_print_cron(tmp_path: Path, weekly: str) -> None:
    root = make_root(tmp_path / "memory", weekly)
    # schedule show (a real process; the real clock: whatever today is, next is a Sunday)
    shown = run_proc("schedule", "show")
    assert shown.returncode == 0, shown.stderr.decode()
    [line] = [ln for ln in shown.stdout.decode().splitlines() if "  weekly " in ln]
    assert " next Sun " in line and " 03:30 UTC " in line
    # schedule run: the trigger the scheduler hands to APScheduler fires on Sunday too
    aps = BackgroundScheduler()
    JobScheduler([root]).add_jobs(aps)
    trigger = aps.get_job(f"{root.path}:weekly").trigger
    fire = trigger.get_next_fire_time(None, NOON)
    assert fire is not None and fire.strftime("%a %Y-%m-%d %H:%M") == "Sun 2026-12-06 03:30"
    # print-cron: the same day for systemd; the crontab line is copied verbatim for cron
    out = run_proc("schedule", "print-cron").stdout.decode().splitlines()
    assert "OnCalendar=Sun *-*-* 03:30:00 UTC" in out
    assert any(ln.startswith(f"{weekly} ") and ln.endswith("weekly.log 2>&1") for ln in out)


def test_schedule_run_process_announces_sunday_for_day_0(tmp_path: Path) -> None:
    root = make_root(tmp_path / "memory", "30 3 * * 0")
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolving_agent", "--root", str(root.path), "schedule", "run"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    # A guard against a hang on a loaded machine, never a speed assertion: the test
    # waits on the scheduler's own lines, not on a clock.
    watchdog = threading.Timer(600, proc.kill)
    watchdog.start()
    seen = []
    for line in proc.stdout:
        seen.append(line.rstrip("\n"))
        if line.startswith("scheduler running"):  # printed once Ctrl-C is handled
            break
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate()
    watchdog.cancel()
    assert proc.returncode == 0 and rest.splitlines()[-1:] == ["scheduler stopped"], rest
    [weekly] = [ln for ln in seen if ": weekly next at " in ln]
    assert weekly.split("next at ")[1].startswith("Sun ")


def test_ranges_steps_and_lists_use_cron_day_numbers() -> None:
    def days(expr: str) -> list[str]:
        spec = parse_cron(expr)
        trig = spec.trigger(UTC)
        out, t = [], NOON
        for _ in range(7):
            nxt = trig.get_next_fire_time(None, t)
            assert nxt is not None
            out.append(nxt.strftime("%a"))
            t = nxt.replace(second=1)
        return sorted(set(out))

    assert days("0 3 * * 1-5") == ["Fri", "Mon", "Thu", "Tue", "Wed"]
    assert days("0 3 * * 0-2") == ["Mon", "Sun", "Tue"]
    assert days("0 3 * * 5-7") == ["Fri", "Sat", "Sun"]
    assert days("0 3 * * */2") == ["Sat", "Sun", "Thu", "Tue"]  # 0,2,4,6 in cron
    assert days("0 3 * * 0,7") == ["Sun"]
    assert parse_cron("0 3 * * 0-7").dow is None  # every day


def test_either_day_field_matches_as_in_cron() -> None:
    # cron: the 1st of the month OR any Monday (APScheduler alone would AND them).
    trig = parse_cron("0 4 1 * 1").trigger(UTC)
    fires, t = [], datetime(2026, 12, 1, 5, tzinfo=UTC)
    for _ in range(6):
        nxt = trig.get_next_fire_time(None, t)
        assert nxt is not None
        fires.append(nxt.strftime("%a %d"))
        t = nxt.replace(second=1)
    assert fires == ["Mon 07", "Mon 14", "Mon 21", "Mon 28", "Fri 01", "Mon 04"]


@pytest.mark.parametrize(
    ("cron", "expected"),
    [
        ("0 4 */2 * *", ["*-*-01,03,05,07,09,11,13,15,17,19,21,23,25,27,29,31 04:00:00"]),
        ("0 4 1 */3 *", ["*-01,04,07,10-01 04:00:00"]),
        ("*/20 */6 * * *", ["*-*-* 00,06,12,18:00,20,40:00"]),
        ("0 3 * * 1-5", ["Mon..Fri *-*-* 03:00:00"]),
        ("0 3 * * 0,6", ["Sun,Sat *-*-* 03:00:00"]),
        ("@weekly", ["Sun *-*-* 00:00:00"]),
    ],
)
def test_systemd_calendars_are_valid(cron: str, expected: list[str]) -> None:
    values = parse_cron(cron).on_calendar()
    assert values == expected
    analyze = shutil.which("systemd-analyze")
    if analyze:  # where systemd is installed, it must accept every value
        for v in values:
            proc = subprocess.run([analyze, "calendar", v], capture_output=True, timeout=30)
            assert proc.returncode == 0, proc.stderr.decode()


@pytest.mark.parametrize("bad", ["0 3 * * 8", "0 3 L * *", "0 3 * * mon-sun-x", "60 3 * * *"])
def test_unreadable_cron_lines_are_refused(bad: str) -> None:
    with pytest.raises(CronError):
        parse_cron(bad)


def test_per_root_time_zones_do_not_leak(tmp_path: Path) -> None:
    tokyo = make_root(tmp_path / "tokyo", "30 3 * * 0", tz="Asia/Tokyo")
    local = fresh_root(tmp_path / "local")  # 'timezone: local'
    res = run_cli("schedule", "print-cron", "--roots", f"{tokyo.path},{local.path}")
    assert res.exit_code == 0
    crontab = res.output.split("# --- systemd user units ---")[0].splitlines()
    tz_lines = [n for n, ln in enumerate(crontab) if ln.startswith("CRON_TZ=")]
    local_jobs = [n for n, ln in enumerate(crontab) if f"--root {local.path} run" in ln]
    tokyo_jobs = [n for n, ln in enumerate(crontab) if f"--root {tokyo.path} run" in ln]
    assert crontab[tz_lines[0]] == "CRON_TZ=Asia/Tokyo"
    # The local root's lines come before any CRON_TZ line; Tokyo's follow its own.
    assert max(local_jobs) < tz_lines[0] < min(tokyo_jobs)
    # After the last zoned block the zone is set back (lines appended later stay local).
    assert len(tz_lines) == 2 and tz_lines[1] > max(tokyo_jobs)
    assert crontab[tz_lines[1]] != "CRON_TZ=Asia/Tokyo"
    assert res.output.count("OnCalendar=Sun *-*-* 03:30:00 Asia/Tokyo") == 1
    assert "OnCalendar=Sun *-*-* 03:30:00\n" in res.output  # the local root's weekly


def test_show_says_never_until_a_job_has_run(tmp_path: Path) -> None:
    root = make_root(tmp_path / "memory", "30 3 * * 0")
    with freeze_time("2026-11-29 12:00:00"):
        JobScheduler([root]).catch_up()  # first start: a baseline, not a run
    state = load_state(root)
    assert state is not None and state.last_run == {} and state.since is not None
    with freeze_time("2026-11-29 12:00:00"):
        out = run_cli("--root", str(root.path), "schedule", "show").output
    assert out.count("last never") == 3
    # The baseline still drives catch-up: the night after, nightly runs once.
    with freeze_time("2026-11-30 08:00:00"):
        ran = JobScheduler([root]).catch_up()
    assert [job for _root, job in ran] == ["nightly"]


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MemoryRoot:
    monkeypatch.setenv("USER", "alice")
    return fresh_root(tmp_path / "memory")


# Regression: an attack an outside review of the memory layer got through.
def test_a_stepped_star_day_field_ands_the_day_fields_as_cron_does(root: MemoryRoot) -> None:
    # Vixie cron and cronie: a day field starting with '*' ("*/2") makes the two day
    # fields AND, not OR.  "30 3 */2 * 1" runs on odd-day Mondays only.
    from datetime import UTC, datetime

    from evolving_agent.jobs.cronexpr import parse_cron

    text = root.schedule_file.read_text().replace("timezone: local", "timezone: UTC")
    root.schedule_file.write_text(text.replace('"30 3 * * sun"', '"30 3 */2 * 1"'))
    assert run_cli("accept", "schedule.yaml").exit_code == 0
    trig = parse_cron("30 3 */2 * 1").trigger(UTC)
    fires, t = [], datetime(2026, 11, 30, 12, tzinfo=UTC)
    for _ in range(3):
        nxt = trig.get_next_fire_time(None, t)
        assert nxt is not None
        fires.append(nxt.strftime("%a %Y-%m-%d"))
        t = nxt.replace(second=1)
    assert fires == ["Mon 2026-12-07", "Mon 2026-12-21", "Mon 2027-01-11"]
    out = run_cli("schedule", "print-cron").output.splitlines()
    weekly = [ln for ln in out if ln.startswith("OnCalendar=") and "03:30" in ln]
    assert weekly == [
        "OnCalendar=Mon *-*-01,03,05,07,09,11,13,15,17,19,21,23,25,27,29,31 03:30:00 UTC"
    ]
