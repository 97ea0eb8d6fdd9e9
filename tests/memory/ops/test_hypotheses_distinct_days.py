"""Distinct days cannot be manufactured by switching ``TZ``; promotion needs two weeks.

Evidence day files follow the writer's stamped offset (honest for a laptop that
travels), so one real minute written under ``Etc/GMT+12`` and ``Etc/GMT-14`` lands in
two day files.  The state rules, the recurrence rule and the promotion floor count days
by the UTC date of each record's instant instead; two real days in two zones still
count as two.  The promotion floor also needs its first and last recorded supporting
days ≥ 7 days apart: five consecutive days straddling a Monday are not two weeks.

Every step is the real CLI in a subprocess with ``TZ`` set for that call and the wall
clock frozen (freezegun inside the child), so the cases do not depend on when the
suite runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops.hypotheses import Hypothesis, fold, meets_floor
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root

# Steps as JSON [[wall, [args...]], ...]: each runs the CLI under a frozen wall clock.
DRIVER = """
import json, sys
import evolving_agent.cli.memory_cmds, evolving_agent.cli.hypothesis_cmds
import evolving_agent.cli.run_cmds, evolving_agent.memory.authority
import evolving_agent.jobs.nightly, evolving_agent.jobs.weekly
from freezegun import freeze_time
from evolving_agent.cli import cli
for wall, args in json.loads(sys.argv[1]):
    with freeze_time(wall):
        try:
            cli.main(args=args, prog_name="evolving-agent")
        except SystemExit as exit:
            if exit.code:
                raise
"""

HIGH = ["Before a destructive command I ask first", "--do", "ask before rm -rf or force-push"]
# Wall times that are the same real minute (2026-03-10 12:30/12:31 UTC) on two day files.
WEST = ("Etc/GMT+12", "2026-03-10 00:30:00")  # UTC-12: day file 2026-03-10
EAST = ("Etc/GMT-14", "2026-03-11 02:31:00")  # UTC+14: day file 2026-03-11


def cli_at(tz: str, *steps: tuple[str, list[str]]) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(steps)],
        env={**os.environ, "TZ": tz},
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def register(root: MemoryRoot) -> dict[str, Hypothesis]:
    return fold(EvidenceLog(root).iter_all())


def carry(root: MemoryRoot) -> dict[str, object]:
    data: dict[str, object] = json.loads((root.today / "carry.json").read_text())
    return data


def add_high() -> str:
    out = cli_at("UTC", ("2026-03-09 09:00:00", ["hypothesis", "add", *HIGH, "--stakes", "high"]))
    return out.split()[0]


def test_one_minute_under_two_zones_is_one_day_of_contradiction(root: MemoryRoot) -> None:
    out = cli_at(
        "UTC",
        ("2026-03-09 09:00:00", ["hypothesis", "add", *HIGH, "--stakes", "high"]),
        ("2026-03-09 09:01:00", ["hypothesis", "add", "I list options"]),
    )
    hid, sid = (line.split()[0] for line in out.splitlines())
    # Each zone writes its friction in the same real minute, then reflects its own day
    # file after it ended.
    for (tz, wall), again, reflect in (
        (WEST, "", ("2026-03-11 04:00:00", "2026-03-10")),
        (EAST, " again", ("2026-03-12 04:00:00", "2026-03-11")),
    ):
        cli_at(
            tz,
            (wall, ["friction", f"asking was pointless{again}", "--contradicts", hid]),
            (wall, ["friction", f"a list helped{again}", "--supports", sid]),
            (wall, ["friction", f"a list was noise{again}", "--contradicts", sid]),
            (reflect[0], ["run", "nightly", "--date", reflect[1]]),
        )

    reg = register(root)
    assert len(reg[hid].contradicts) == 2  # both events counted…
    assert reg[hid].contradicted_on == (date(2026, 3, 10),)  # …on one day
    assert reg[hid].state == "emerging"
    assert carry(root)["type"] not in ("release", "refusal")
    # The split rule counts the same way: 1 day for, 1 day against.
    assert reg[sid].state == "emerging"
    assert (reg[sid].supported_on, reg[sid].contradicted_on) == ((date(2026, 3, 10),),) * 2


def test_two_real_days_in_two_zones_still_count_as_two(root: MemoryRoot) -> None:
    hid = add_high()
    cli_at(
        WEST[0],
        (WEST[1], ["friction", "asking was pointless", "--contradicts", hid]),
        ("2026-03-11 04:00:00", ["run", "nightly", "--date", "2026-03-10"]),
    )
    # A real day later (2026-03-11 12:31 UTC), written in the far east.
    cli_at(
        EAST[0],
        ("2026-03-12 02:31:00", ["friction", "asking again was pointless", "--contradicts", hid]),
        ("2026-03-13 04:00:00", ["run", "nightly", "--date", "2026-03-12"]),
    )

    h = register(root)[hid]
    assert h.contradicted_on == (date(2026, 3, 10), date(2026, 3, 11))
    # Two real days count as two — and a high-stakes rule still never weakens or is
    # released in the nightly job: the two days are the case for a narrowing instead.
    assert h.state == "emerging"
    assert carry(root)["type"] in ("rule-for-tomorrow", "vow", "watchpoint")


def test_recurrence_needs_two_real_days_not_two_day_files(root: MemoryRoot) -> None:
    cli_at(
        WEST[0],
        (WEST[1], ["friction", "the deploy script forgot the staging flag"]),
        ("2026-03-11 04:00:00", ["run", "nightly", "--date", "2026-03-10"]),
    )
    cli_at(
        EAST[0],
        (EAST[1], ["friction", "the deploy script forgot the staging flag again"]),
        ("2026-03-12 04:00:00", ["run", "nightly", "--date", "2026-03-11"]),
    )
    assert register(root) == {}

    # The same words a real day later do recur: raised, supported on two UTC days.
    cli_at(
        EAST[0],
        ("2026-03-12 02:40:00", ["friction", "deploy script forgot the staging flag"]),
        ("2026-03-13 04:00:00", ["run", "nightly", "--date", "2026-03-12"]),
    )
    (raised,) = register(root).values()
    assert raised.origin == "nightly"
    assert raised.supported_on == (date(2026, 3, 10), date(2026, 3, 11))


def support_on(hid: str, *days: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for d in days:
        steps.append(
            (f"{d} 10:00:00", ["friction", f"one answer helped on {d}", "--supports", hid])
        )
        nxt = date.fromordinal(date.fromisoformat(d).toordinal() + 1).isoformat()
        steps.append((f"{nxt} 03:00:00", ["run", "nightly", "--date", d]))
    return steps


def test_five_consecutive_days_across_a_monday_are_not_two_weeks(root: MemoryRoot) -> None:
    out = cli_at("UTC", ("2026-03-05 09:00:00", ["hypothesis", "add", "give one answer"]))
    hid = out.split()[0]
    # Friday 03-06 .. Tuesday 03-10: 5 distinct days in 2 ISO weeks, 4 days apart.
    days = ("2026-03-06", "2026-03-07", "2026-03-08", "2026-03-09", "2026-03-10")
    weekly = ("2026-03-16 03:30:00", ["run", "weekly", "--date", "2026-03-15"])
    cli_at("UTC", *support_on(hid, *days), weekly)
    h = register(root)[hid]
    assert h.state == "live" and len(h.recorded_support) == 5
    assert not meets_floor(h)
    assert list((root.area_dir("proposals")).glob("*.json")) == []

    # One more supporting day a week after the first: the floor is met.
    weekly = ("2026-03-23 03:30:00", ["run", "weekly", "--date", "2026-03-22"])
    cli_at("UTC", *support_on(hid, "2026-03-17"), weekly)
    assert meets_floor(register(root)[hid])
    (prop,) = root.area_dir("proposals").glob("*.json")
    assert json.loads(prop.read_text())["hypothesis"] == hid


def test_the_span_is_seven_days_between_first_and_last(root: MemoryRoot) -> None:
    def live(*days: int) -> Hypothesis:
        on = [date(2026, 3, d) for d in days]
        return Hypothesis(
            id="h-00000000",
            text="give one answer",
            state="live",
            origin="human",
            created=date(2026, 3, 1),
            updated=on[-1],
            supported_on=on,
            recorded_support=on,
        )

    assert not meets_floor(live(6, 7, 8, 9, 12))  # 6 days apart
    assert meets_floor(live(6, 7, 8, 9, 13))  # 7 days apart
    assert not meets_floor(live(6, 13, 20, 27))  # far apart but only 4 days
