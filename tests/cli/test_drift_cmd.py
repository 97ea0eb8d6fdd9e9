"""``drift`` and ``drift ack`` (``cli/drift_cmd.py``) on a real root."""

from __future__ import annotations

import json
from pathlib import Path

from freezegun import freeze_time

from evolving_agent.memory.authority import Writer
from tests.helpers import run_cli
from tests.helpers.roots import fresh_root


def test_a_calm_root_has_nothing_to_flag_in_text_or_json(tmp_path: Path) -> None:
    fresh_root(tmp_path / "memory")
    with freeze_time("2026-12-02 12:00:00"):
        text = run_cli("drift", "--since", "2026-11-01", "--until", "2026-11-30")
        shown = json.loads(run_cli("drift", "--json", "--since", "2026-11-01").stdout)
    assert text.exit_code == 0
    assert text.stdout == "drift watch 2026-11-01 .. 2026-11-30: 0 flag(s)\n  nothing to flag\n"
    assert shown["start"] == "2026-11-01" and shown["flags"] == [] and shown["held"] == []


def test_a_flood_is_flagged_citing_every_event(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    with freeze_time("2026-11-10 12:00:00"):
        made = [Writer(root, "session").append("friction", f"again {n}").id for n in range(25)]
    with freeze_time("2026-11-11 12:00:00"):
        out = run_cli("drift", "--since", "2026-11-01").stdout.splitlines()
        [flag] = json.loads(run_cli("drift", "--json", "--since", "2026-11-01").stdout)["flags"]
    assert out[0].endswith(": 1 flag(s)")
    assert out[1] == "- friction-flood: 25 friction events on 2026-11-10"
    assert sorted(flag["evidence_ids"]) == sorted(made)
    assert out[3] == "    evidence: " + ", ".join(flag["evidence_ids"])


def test_bad_ranges_and_acks_of_nothing_held_are_one_line_errors(tmp_path: Path) -> None:
    fresh_root(tmp_path / "memory")
    backwards = run_cli("drift", "--since", "2026-12-05", "--until", "2026-12-01")
    assert backwards.exit_code == 4
    assert backwards.stderr == "error: --since 2026-12-05 is after --until 2026-12-01\n"
    ack = run_cli("drift", "ack", "h-12345678")
    assert ack.exit_code == 4 and "nothing holds h-12345678 now" in ack.stderr
    assert run_cli("drift", "--since", "2026-02-30").exit_code == 2
