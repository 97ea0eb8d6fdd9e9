"""The scheduler: coalesced catch-up after downtime, several roots, show and print-cron."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from freezegun import freeze_time

from evolving_agent.cli import cli
from evolving_agent.errors import InvalidInput, UsageError
from evolving_agent.jobs.cronprint import on_calendar, print_cron
from evolving_agent.jobs.scheduler import JobScheduler, load_state
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops.hypotheses import add_hypothesis
from evolving_agent.paths import MemoryRoot
from tests.helpers import new_root, run_cli
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def utc_schedule(root: MemoryRoot) -> None:
    text = root.schedule_file.read_text().replace("timezone: local", "timezone: UTC")
    root.schedule_file.write_text(text)


def job_records(root: MemoryRoot, job: str) -> list[str]:
    return [
        r.data["date"]
        for r in EvidenceLog(root).iter_all()
        if r.kind == "job" and r.data.get("job") == job
    ]


def test_after_five_missed_nights_nightly_runs_once(root: MemoryRoot) -> None:
    utc_schedule(root)
    with freeze_time("2026-11-20 12:00:00"):
        add_hypothesis(root, "give one answer, not a menu")
        sched = JobScheduler([root])
        assert sched.catch_up() == []  # first start: a baseline, nothing was missed
    # Down from the 20th at noon until the 25th at noon: nights of 21..25 missed.
    with freeze_time("2026-11-25 12:00:00"):
        starting = JobScheduler([root])
        background = starting.start_background()  # starting the scheduler catches up
        background.shutdown(wait=False)
        starting.release()
        # One run, for the last day — and since this root's nightly job never ran, that
        # run reflects every day since its first evidence (the 20th), each as its own day.
        assert job_records(root, "nightly") == [f"2026-11-{d}" for d in range(20, 25)]
        assert job_records(root, "weekly") == ["2026-11-24"]
        assert JobScheduler([root]).catch_up() == []  # nothing left to catch up
    state = load_state(root)
    assert state is not None
    assert state.last_run["nightly"].isoformat().startswith("2026-11-25T12:00")
    with freeze_time("2026-11-26 02:59:00"):
        assert JobScheduler([root]).catch_up() == []
    with freeze_time("2026-11-26 03:01:00"):
        assert [j for _r, j in JobScheduler([root]).catch_up()] == ["nightly"]
    assert job_records(root, "nightly") == [f"2026-11-{d}" for d in range(20, 26)]


def test_monthly_catches_up_once_after_a_long_outage(root: MemoryRoot) -> None:
    utc_schedule(root)
    with freeze_time("2026-08-15 12:00:00"):
        JobScheduler([root]).catch_up()
    with freeze_time("2026-11-15 12:00:00"):
        ran = [j for _r, j in JobScheduler([root]).catch_up()]
    assert ran == ["nightly", "weekly", "monthly"]
    assert job_records(root, "monthly") == ["2026-11-15"]  # once, not once per missed month


def test_one_scheduler_serves_several_roots(tmp_path: Path) -> None:
    a, b = fresh_root(tmp_path / "a"), fresh_root(tmp_path / "b")
    for r in (a, b):
        utc_schedule(r)
    with freeze_time("2026-11-20 12:00:00"):
        JobScheduler([a, b]).catch_up()
    with freeze_time("2026-11-21 12:00:00"):
        ran = JobScheduler([a, b]).catch_up()
    assert [(r.path.name, j) for r, j in ran] == [("a", "nightly"), ("b", "nightly")]
    assert job_records(a, "nightly") == job_records(b, "nightly") == ["2026-11-20"]


def test_a_failing_job_is_recorded_not_fatal(root: MemoryRoot) -> None:
    utc_schedule(root)
    logs: list[str] = []

    def broken(_root: MemoryRoot, job: str) -> None:
        raise InvalidInput(f"{job} exploded")

    with freeze_time("2026-11-20 12:00:00"):
        JobScheduler([root]).catch_up()
    with freeze_time("2026-11-21 12:00:00"):
        JobScheduler([root], runner=broken, log=logs.append).catch_up()
    assert logs == [f"2026-11-21 12:00 {root.path}: nightly failed: nightly exploded"]
    state = load_state(root)
    assert state is not None and state.last_error == {"nightly": "nightly exploded"}


def test_a_stop_during_the_catch_up_is_kept_even_if_a_job_swallows_it(tmp_path: Path) -> None:
    """Ctrl-C while a catch-up job runs: the job's code may swallow the KeyboardInterrupt,
    but the stop it asked for ends the catch-up before the next job and never starts the
    cron triggers (under load the interrupt used to be lost and the scheduler ran on)."""
    roots = [fresh_root(tmp_path / "a"), fresh_root(tmp_path / "b")]
    for r in roots:
        utc_schedule(r)
    with freeze_time("2026-11-20 12:00:00"):
        JobScheduler(roots).catch_up()
    ran: list[str] = []
    sched: JobScheduler

    def swallowing(root: MemoryRoot, job: str) -> None:
        ran.append(f"{root.path.name}:{job}")
        try:
            sched.request_stop()  # what the CLI's SIGINT handler does first
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            pass  # a job that cleans up and forgets to re-raise

    with freeze_time("2026-11-25 12:00:00"):
        sched = JobScheduler(roots, runner=swallowing)
        with pytest.raises(KeyboardInterrupt):
            sched.start_background()
    assert ran == ["a:nightly"]  # nothing after the stop
    assert JobScheduler(roots).acquire() is None  # the locks were released


def test_apscheduler_jobs_are_coalesced_cron_triggers(root: MemoryRoot) -> None:
    utc_schedule(root)
    sched = JobScheduler([root])
    background = sched.start_background()
    try:
        jobs = {j.id: j for j in background.get_jobs()}
        assert sorted(jobs) == sorted(f"{root.path}:{n}" for n in ("nightly", "weekly", "monthly"))
        nightly = jobs[f"{root.path}:nightly"]
        assert nightly.coalesce is True and nightly.misfire_grace_time >= 86400
        assert (
            str(nightly.trigger)
            == "cron[month='*', day='*', day_of_week='*', hour='3', minute='0']"
        )
        with pytest.raises(UsageError, match="another scheduler already serves"):
            JobScheduler([root]).acquire()
    finally:
        background.shutdown(wait=False)
        sched.release()


def test_schedule_show_lists_next_runs(root: MemoryRoot) -> None:
    utc_schedule(root)
    with freeze_time("2026-11-30 12:00:00"):
        res = CliRunner().invoke(cli, ["schedule", "show"])
    assert res.exit_code == 0
    p = root.path
    assert res.output == (
        f"{p}  nightly  0 3 * * *        next Tue 2026-12-01 03:00 UTC  last never\n"
        f"{p}  weekly   30 3 * * sun     next Sun 2026-12-06 03:30 UTC  last never\n"
        f"{p}  monthly  0 4 1 * *        next Tue 2026-12-01 04:00 UTC  last never\n"
    )
    with freeze_time("2026-11-30 12:00:00"):
        data = json.loads(CliRunner().invoke(cli, ["schedule", "show", "--json"]).output)
    assert [d["job"] for d in data] == ["nightly", "weekly", "monthly"]


def test_print_cron_gives_crontab_and_systemd_units(root: MemoryRoot) -> None:
    text = print_cron([root])
    lines = text.splitlines()
    crontab = [ln for ln in lines if ln and ln[0].isdigit()]
    assert [ln.split(" run ")[1].split(" ")[0] for ln in crontab] == [
        "nightly",
        "weekly",
        "monthly",
    ]
    assert crontab[0].startswith("0 3 * * * ") and f"--root {root.path} run nightly" in crontab[0]
    assert "OnCalendar=*-*-* 03:00:00" in lines
    assert "OnCalendar=Sun *-*-* 03:30:00" in lines
    assert "OnCalendar=*-*-01 04:00:00" in lines
    assert lines.count("Persistent=true") == 3
    res = CliRunner().invoke(cli, ["schedule", "print-cron"])
    assert res.exit_code == 0 and res.output == text


@pytest.mark.parametrize(
    ("cron", "expected"),
    [
        ("0 3 * * *", ["*-*-* 03:00:00"]),
        ("30 3 * * sun", ["Sun *-*-* 03:30:00"]),
        ("*/15 9-17 * * mon-fri", ["Mon..Fri *-*-* 09..17:00,15,30,45:00"]),
        ("0 4 1 * *", ["*-*-01 04:00:00"]),
        # Both day fields restricted: cron fires on either, so two calendars (issue 11).
        ("0 0 1,15 6 0", ["*-06-01,15 00:00:00", "Sun *-06-* 00:00:00"]),
    ],
)
def test_on_calendar(cron: str, expected: list[str]) -> None:
    assert on_calendar(cron) == expected


def test_on_calendar_refuses_what_it_cannot_translate() -> None:
    with pytest.raises(InvalidInput, match="cannot translate"):
        on_calendar("0 3 L * *")


def test_malformed_schedule_names_file_and_line(root: MemoryRoot) -> None:
    root.schedule_file.write_text(
        root.schedule_file.read_text().replace('"0 3 * * *"', '"61 3 * * *"')
    )
    res = CliRunner().invoke(cli, ["schedule", "show"])
    assert res.exit_code == 4
    assert res.output.startswith(
        f"error: {root.schedule_file}:5: jobs.nightly: Value error, not a cron"
    )


def test_scheduled_nightly_processes_yesterday(root: MemoryRoot) -> None:
    utc_schedule(root)
    with freeze_time("2026-11-29 12:00:00"):
        JobScheduler([root]).catch_up()
    with freeze_time("2026-11-30 03:00:05"):
        JobScheduler([root]).fire(root, "nightly")
    assert job_records(root, "nightly") == [str(date(2026, 11, 29))]


def test_schedule_run_process_catches_up_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    roots = [fresh_root(tmp_path / "a"), fresh_root(tmp_path / "b")]
    two_days_ago = (datetime.now().astimezone() - timedelta(days=2)).isoformat()
    for r in roots:
        r.state.mkdir(exist_ok=True)
        (r.state / "scheduler.json").write_text(
            json.dumps({"last_run": {j: two_days_ago for j in ("nightly", "weekly", "monthly")}})
        )
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolving_agent", "schedule", "run", "--roots"]
        + [",".join(str(r.path) for r in roots)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    watchdog = threading.Timer(60, proc.kill)  # never hang the suite if the line never comes
    watchdog.start()
    seen = []
    for line in proc.stdout:
        seen.append(line.rstrip("\n"))
        if line.rstrip().endswith(f"{roots[1].path}: nightly done"):
            break
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=30)
    watchdog.cancel()
    seen += rest.splitlines()
    assert proc.returncode == 0, err
    assert "scheduler running (Ctrl-C to stop)" in seen
    assert seen[-1] == "scheduler stopped"
    yesterday = str(date.today() - timedelta(days=1))
    for r in roots:
        assert len([ln for ln in seen if ln.endswith(f"{r.path}: nightly done")]) == 1
        assert job_records(r, "nightly") == [yesterday]


def test_schedule_run_stops_quietly_on_ctrl_c_but_passes_an_exit_on(
    root: MemoryRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C is the way to stop it; any other exit keeps its code (it used to be 0)."""
    raised: list[BaseException] = [KeyboardInterrupt(), SystemExit(3)]

    def run(self: JobScheduler) -> None:
        raise raised.pop(0)

    monkeypatch.setattr(JobScheduler, "run", run)
    args = ["--root", str(root.path), "schedule", "run"]
    stopped = CliRunner().invoke(cli, args)
    assert (stopped.exit_code, stopped.output.splitlines()[-1]) == (0, "scheduler stopped")
    exited = CliRunner().invoke(cli, args)
    assert exited.exit_code == 3
    assert "scheduler stopped" not in exited.output


def test_print_cron_validates_the_roots_without_a_scheduler(root: MemoryRoot) -> None:
    from evolving_agent.jobs.scheduler import validate_roots

    assert validate_roots([root, MemoryRoot(root.path / ".")]) == [root]
    with pytest.raises(UsageError, match="no memory root to schedule"):
        validate_roots([])
    (root.path / "schedule.yaml").write_text("jobs: [\n")
    with pytest.raises(InvalidInput, match="schedule.yaml"):
        validate_roots([root])


# Regression: an attack an outside review of the memory layer got through.
def test_the_scheduler_says_which_days_a_long_catch_up_left_unreflected(root: MemoryRoot) -> None:
    from datetime import datetime

    from freezegun import freeze_time

    from evolving_agent.jobs.scheduler import JobScheduler

    with freeze_time(datetime(2026, 9, 1, 10).astimezone()):
        added = run_cli("hypothesis", "add", "I offer menus", "--do", "give one answer")
        assert added.exit_code == 0
    with freeze_time(datetime(2026, 9, 2, 3).astimezone()):
        assert run_cli("run", "nightly").exit_code == 0
    logged: list[str] = []
    with freeze_time(datetime(2026, 10, 16, 3).astimezone()):  # 44 days later
        JobScheduler([root], log=logged.append).fire(root, "nightly")
    assert any("nightly done" in line for line in logged), logged
    assert any("were not reflected" in line for line in logged), logged


# Bad input a new user typed during QA.
def test_schedule_names_the_same_root_twice_serves_it_once(tmp_path: Path) -> None:
    """`schedule run --roots A,A/` said 'another scheduler already serves A' (its own lock)."""
    from evolving_agent.jobs.scheduler import JobScheduler
    from evolving_agent.paths import MemoryRoot

    root = new_root(tmp_path)
    result = run_cli("schedule", "show", "--json", "--roots", f"{root},{root}/,{root}")
    assert result.exit_code == 0
    assert [(r["root"], r["job"]) for r in json.loads(result.output)] == [
        (str(root), "nightly"),
        (str(root), "weekly"),
        (str(root), "monthly"),
    ]
    sched = JobScheduler([MemoryRoot(root), MemoryRoot(root / "canon" / "..")])
    assert [r.path for r in sched.roots] == [MemoryRoot(root).path]
    sched.acquire()  # raised "another scheduler already serves" on its own first lock
    sched.release()
