"""``schedule print-cron``'s systemd units: names that say which root they run."""

from __future__ import annotations

import re
from pathlib import Path

from evolving_agent.jobs.cronprint import print_cron
from tests.helpers.roots import fresh_root


def _units(text: str) -> list[str]:
    return re.findall(r"^# ~/\.config/systemd/user/(\S+)$", text, flags=re.M)


def test_units_of_two_roots_printed_apart_never_share_a_name(tmp_path: Path) -> None:
    # Newcomer snag: each root's print-cron named its units evolving-agent-nightly.timer,
    # so installing a second root's units overwrote the first's.
    home = fresh_root(tmp_path / "home" / "memory")
    work = fresh_root(tmp_path / "work" / "memory")
    a, b = _units(print_cron([home])), _units(print_cron([work]))
    assert len(a) == len(b) == 6 and not set(a) & set(b)
    assert all(
        re.fullmatch(
            r"evolving-agent-(nightly|weekly|monthly)-memory-[0-9a-f]{8}\.(service|timer)", u
        )
        for u in a
    )
    assert _units(print_cron([home])) == a  # the same root, the same names, run after run


def test_the_enable_line_names_every_timer_it_printed(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "my root")
    text = print_cron([root])
    enable = next(line for line in text.splitlines() if line.startswith("# enable with:"))
    timers = [u for u in _units(text) if u.endswith(".timer")]
    assert enable == "# enable with: systemctl --user enable --now " + " ".join(timers)
    assert all("-my-root-" in t for t in timers)
