"""The root's ``schedule.yaml`` (``jobs/settings.py``): its model, its time zone, its jobs,
and the refusal of a file that would stop every job."""

from __future__ import annotations

import zoneinfo
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from evolving_agent.errors import InvalidInput
from evolving_agent.jobs.settings import (
    JOB_NAMES,
    JobCrons,
    ScheduleFile,
    check_schedule_bytes,
    load_schedule,
)
from tests.helpers.roots import fresh_root


def test_the_defaults_and_a_bare_reflector_name() -> None:
    plain = ScheduleFile.model_validate({"reflector": "rules"})
    assert plain.reflector.name == "rules"
    assert plain.scheduled_jobs() == JOB_NAMES  # sync only when its line is set
    synced = ScheduleFile.model_validate({"jobs": {"sync": "*/30 * * * *"}})
    assert synced.scheduled_jobs() == (*JOB_NAMES, "sync")


def test_a_named_time_zone_drives_the_triggers() -> None:
    s = ScheduleFile.model_validate({"timezone": "Asia/Tokyo"})
    assert s.tz() == zoneinfo.ZoneInfo("Asia/Tokyo")
    start = datetime(2026, 11, 30, 12, 0, tzinfo=zoneinfo.ZoneInfo("UTC"))
    fire = s.trigger("nightly").get_next_fire_time(None, start)
    assert fire is not None and (fire.hour, fire.minute) == (3, 0)
    assert fire.utcoffset() == zoneinfo.ZoneInfo("Asia/Tokyo").utcoffset(fire.replace(tzinfo=None))


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"timezone": "Mars/Olympus"}, "unknown time zone 'Mars/Olympus'"),
        ({"jobs": {"nightly": "every night"}}, "not a cron expression"),
        ({"jobs": {"hourly": "0 * * * *"}}, "hourly"),
        ({"schema_version": 2}, "schema_version"),
    ],
)
def test_a_file_that_would_stop_the_jobs_is_refused(data: dict[str, object], says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        ScheduleFile.model_validate(data)


@settings(max_examples=40)
@given(
    st.sampled_from(["*", "0", "5", "*/15", "1-5"]),
    st.sampled_from(["*", "3", "0-23/6"]),
    st.sampled_from(["*", "1", "15"]),
    st.sampled_from(["*", "1", "6-8"]),
    st.sampled_from(["*", "sun", "0", "7", "mon-fri"]),
)
def test_any_cron_line_the_model_accepts_has_a_next_run(
    minute: str, hour: str, dom: str, month: str, dow: str
) -> None:
    line = f"{minute} {hour} {dom} {month} {dow}"
    s = ScheduleFile(timezone="UTC", jobs=JobCrons(nightly=line))
    start = datetime(2026, 1, 1, tzinfo=zoneinfo.ZoneInfo("UTC"))
    assert s.trigger("nightly").get_next_fire_time(None, start) is not None


def test_the_file_on_disk_is_read_and_a_bad_edit_names_file_and_line(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    assert load_schedule(root).jobs.nightly == "0 3 * * *"  # what init wrote
    bad = b"schema_version: 1\ntimezone: local\njobs:\n  nightly: 'sixty 3 * * *'\n"
    with pytest.raises(InvalidInput) as info:
        check_schedule_bytes(root, bad)
    assert str(info.value).startswith(f"{root.schedule_file}:4: ")
    with pytest.raises(InvalidInput, match="not UTF-8 text"):
        check_schedule_bytes(root, b"\xff")
    root.schedule_file.unlink()
    assert load_schedule(root) == ScheduleFile()
