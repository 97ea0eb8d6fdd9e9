"""``schedule show`` as a newcomer reads it after the first start."""

from __future__ import annotations

import json
from pathlib import Path

from freezegun import freeze_time

from evolving_agent.jobs.scheduler import JobScheduler, load_state
from tests.helpers import run_cli
from tests.helpers.roots import fresh_root


# A newcomer's snag.
def test_schedule_show_says_never_after_the_first_start_until_a_job_runs(
    tmp_path: Path,
) -> None:
    root = fresh_root(tmp_path / "memory")
    with freeze_time("2026-11-20 12:00:00"):
        assert JobScheduler([root]).catch_up() == []  # the first start sets a baseline
    with freeze_time("2026-11-20 13:00:00"):
        shown = json.loads(run_cli("schedule", "show", "--json").output)
    assert [(s["job"], s["last_run"]) for s in shown] == [
        ("nightly", None),
        ("weekly", None),
        ("monthly", None),
    ]
    text = run_cli("schedule", "show").output
    assert text.count("last never") == 3
    state = load_state(root)
    assert state is not None and state.last_run == {}
    # The baseline still counts: a night missed after it is caught up, once.
    with freeze_time("2026-11-21 12:00:00"):  # a Saturday: one nightly fire missed
        ran = [job for _root, job in JobScheduler([root]).catch_up()]
    assert ran == ["nightly"]
    assert "last never" not in run_cli("schedule", "show").output.splitlines()[0]


def test_a_second_schedule_run_fails_before_announcing_anything(tmp_path: Path) -> None:
    # Newcomer snag: it printed every job's next run and "scheduler running" first.
    root = fresh_root(tmp_path / "memory")
    first = JobScheduler([root])
    first.acquire()
    try:
        result = run_cli("--root", str(root.path), "schedule", "run")
    finally:
        first.release()
    assert result.exit_code == 2
    assert result.output == f"error: another scheduler already serves {root.path}\n"
