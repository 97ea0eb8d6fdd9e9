"""Issue 11, hole 11 (imports): a back-dated import cannot skip the slow clock.

Six friction lines claiming the six days before today, imported in one go by a real
``evidence import`` process, used to land in those past days' files — enough distinct
days for the weekly floor, so a proposal for Canon appeared the same day.  Now they
are recorded today (as the session, their claimed time kept aside) and count as one day.
"""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from pathlib import Path

from evolving_agent.memory.evidence.evidence import EvidenceLog
from tests.helpers import new_root, run_cli, run_proc
from tests.helpers.roots import fresh_root


def test_back_dated_import_counts_as_one_recorded_day(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    added = run_proc("hypothesis", "add", "give one answer, not a menu")
    assert added.returncode == 0, added.stderr.decode()
    hid = added.stdout.decode().split()[0]
    today = date.today()
    lines = [
        {
            "ts": datetime.combine(today - timedelta(days=d), time(10)).astimezone().isoformat(),
            "kind": "friction",
            "text": f"day -{d}: listed options nobody asked for",
            "supports": hid,
        }
        for d in range(1, 7)
    ]
    src = tmp_path / "backdated.jsonl"
    src.write_text("".join(json.dumps(line) + "\n" for line in lines))
    imported = run_proc("evidence", "import", str(src))
    assert imported.stdout.decode() == "imported 6 event(s)\n", imported.stderr.decode()

    friction = [r for r in EvidenceLog(root).iter_all() if r.kind == "friction"]
    assert {r.day() for r in friction} == {today}
    assert {r.actor for r in friction} == {"session"}
    assert sorted(r.data["claimed_ts"] for r in friction) == sorted(x["ts"] for x in lines)

    weekly = run_proc("run", "weekly", "--date", today.isoformat())
    assert weekly.returncode == 0, weekly.stderr.decode()
    assert "no proposals this week" in weekly.stdout.decode()
    assert not list((root.path / "reviews" / "proposals").glob("*.json"))


# Bad input a new user typed during QA.
def test_evidence_import_of_a_non_utf8_line_names_file_and_line(tmp_path: Path) -> None:
    root = new_root(tmp_path)
    good = {"ts": "2026-11-29T10:00:00Z", "kind": "raw", "text": "fine"}
    file = tmp_path / "events.jsonl"
    file.write_bytes(json.dumps(good).encode() + b"\n" + b'{"text": "\xff"}\n')
    proc = run_proc("--root", str(root), "evidence", "import", str(file))
    assert proc.returncode == 4
    assert proc.stderr.decode() == f"error: {file}:2: not UTF-8 text\n"
    assert run_cli("--root", str(root), "evidence", "show", "--date", "2026-11-29").output == (
        "(no evidence that day)\n"
    )


# Bad input a new user typed during QA.
def test_evidence_import_refuses_a_line_with_empty_text(tmp_path: Path) -> None:
    root = new_root(tmp_path)
    file = tmp_path / "events.jsonl"
    file.write_text(json.dumps({"ts": "2026-11-29T10:00:00Z", "kind": "raw", "text": ""}) + "\n")
    result = run_cli("--root", str(root), "evidence", "import", str(file))
    assert result.exit_code == 4
    assert result.output == f"error: {file}:1: text: the text is empty\n"
    assert not list((root / "evidence").glob("*.jsonl"))


# Bad input a new user typed during QA.
def test_evidence_import_of_a_json_line_that_is_not_an_object(tmp_path: Path) -> None:
    root = new_root(tmp_path)
    file = tmp_path / "events.jsonl"
    file.write_text("[1, 2]\n")
    result = run_cli("--root", str(root), "evidence", "import", str(file))
    assert result.exit_code == 4
    assert result.output == f"error: {file}:1: not a JSON object\n"
