"""evidence show --since/--until and --month: a range of days, not one at a time."""

from __future__ import annotations

import json
from datetime import datetime, time, timedelta
from pathlib import Path

from evolving_agent.memory.authority import Writer
from tests.helpers import run_cli
from tests.helpers.roots import fresh_root

DAY0 = datetime(2026, 10, 30).date()


def _root(tmp_path: Path) -> tuple[str, list[str]]:
    root = fresh_root(tmp_path / "memory")
    session = Writer(root, "session")
    ids = [
        session.append(
            "friction",
            f"event {i}",
            ts=datetime.combine(DAY0 + timedelta(days=i), time(9)).astimezone(),
        ).id
        for i in range(5)  # Oct 30, Oct 31, Nov 1, Nov 2, Nov 3
    ]
    return str(root.path), ids


def test_a_range_shows_each_day_in_it_with_its_date(tmp_path: Path) -> None:
    root, ids = _root(tmp_path)
    out = run_cli(
        "--root", root, "evidence", "show", "--since", "2026-10-31", "--until", "2026-11-02"
    )
    assert out.exit_code == 0, out.output
    lines = [line for line in out.output.splitlines() if "friction" in line]
    assert [line.split()[2] for line in lines] == ids[1:4]
    assert lines[0].startswith("2026-10-31 09:00:00 ")


def test_a_month_is_its_calendar_days(tmp_path: Path) -> None:
    root, ids = _root(tmp_path)
    out = run_cli("--root", root, "evidence", "show", "--month", "2026-11", "--json")
    assert out.exit_code == 0
    got = [r["id"] for r in json.loads(out.output) if r["kind"] == "friction"]
    assert got == ids[2:]


def test_conflicting_or_bad_options_are_one_line_errors(tmp_path: Path) -> None:
    root, _ = _root(tmp_path)
    both = run_cli("--root", root, "evidence", "show", "--month", "2026-11", "--date", "2026-11-01")
    assert both.exit_code == 2 and "one of them" in both.output
    bad = run_cli("--root", root, "evidence", "show", "--month", "11")
    assert bad.exit_code == 4 and "expected YYYY-MM" in bad.output
    backwards = run_cli(
        "--root", root, "evidence", "show", "--since", "2026-11-03", "--until", "2026-11-01"
    )
    assert backwards.exit_code == 4 and "after" in backwards.output
