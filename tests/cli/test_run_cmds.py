"""``run nightly / weekly / monthly`` (``cli/run_cmds.py``): what each job's lines say."""

from __future__ import annotations

import json
from pathlib import Path

from freezegun import freeze_time

from tests.helpers import root_with_friction, run_cli
from tests.helpers.roots import fresh_root

DAY = "2026-11-03"


def test_nightly_prints_its_status_the_carry_and_the_bias_then_is_already_done(
    tmp_path: Path,
) -> None:
    root_with_friction(tmp_path / "memory", DAY)
    with freeze_time("2026-11-04 03:00:00"):
        first = run_cli("run", "nightly", "--date", DAY)
        again = run_cli(
            "run", "nightly", "--date", DAY, "--reflector", "command", "--reflector-cmd", "false"
        )
    lines = first.stdout.splitlines()
    assert first.exit_code == 0, first.output
    assert lines[0] == f"nightly {DAY}: done (reflector: rules)"
    assert any(line.startswith("carry: ") for line in lines)
    assert lines[lines.index("bias:") + 1].startswith("  ")
    assert again.exit_code == 0
    assert again.stdout.splitlines()[0] == (
        f"nightly {DAY}: already done (nothing changed) (reflector: rules)"
    )
    assert again.stderr == (
        "note: --reflector command was not used: this nightly run already happened with "
        f"rules; a day is reflected once ('run nightly --redo {DAY} --reflector command' "
        "reflects it again)\n"
    )


def test_a_quiet_day_says_so(tmp_path: Path) -> None:
    fresh_root(tmp_path / "memory")
    with freeze_time("2026-11-04 03:00:00"):
        quiet = run_cli("run", "nightly", "--date", DAY)
    assert quiet.stdout.splitlines()[-1] == (
        "quiet day: no hypothesis to carry and no friction; bias and carry unchanged"
    )


def test_weekly_and_monthly_with_nothing_to_propose_say_so_and_json_is_the_result(
    tmp_path: Path,
) -> None:
    root_with_friction(tmp_path / "memory", DAY)
    with freeze_time("2026-12-01 05:00:00"):
        weekly = run_cli("run", "weekly", "--date", "2026-11-08")
        monthly = run_cli("run", "monthly", "--date", "2026-12-01")
        as_json = json.loads(run_cli("run", "monthly", "--date", "2026-12-01", "--json").stdout)
    assert weekly.stdout.splitlines()[1:] == ["no proposals this week"]
    assert weekly.stdout.startswith("weekly week ending 2026-11-08: ")
    assert "nothing queued (limit 3 per month)" in monthly.stdout.splitlines()
    assert as_json["status"] == "already done" and as_json["plan"]["reviews"] == []
