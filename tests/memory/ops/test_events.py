"""Appending to Evidence from outside (``memory/ops/events.py``): friction, raw and journal
events, imports, and the views of a day or a range.

Issue 11, hole 11 (imports): a back-dated import cannot skip the slow clock. Six friction
lines claiming the six days before today, imported in one go by a real ``evidence import``
process, used to land in those past days' files — enough distinct days for the weekly floor,
so a proposal for Canon appeared the same day. Now they are recorded today (as the session,
their claimed time kept aside) and count as one day.
"""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from pathlib import Path

import pytest
from freezegun import freeze_time

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops.events import append_event, record_friction, show, show_range
from evolving_agent.memory.ops.hypotheses import add_hypothesis
from evolving_agent.paths import MemoryRoot
from evolving_agent.results import Message
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


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def test_friction_result_warns_about_each_unknown_hypothesis_and_keeps_the_event(
    root: MemoryRoot,
) -> None:
    known = add_hypothesis(root, "the user wants one answer")
    result = record_friction(
        root, "session", "offered a menu", supports=known.id, contradicts="h-gone"
    )
    assert result.value.supports == known.id
    assert result.messages == [
        Message(
            "no hypothesis h-gone in the register; the event is recorded, but no job will "
            "count it for a hypothesis (see 'evolving-agent hypothesis list')"
        )
    ]
    assert [r.id for r in EvidenceLog(root).iter_all()][-1] == result.value.id
    assert record_friction(root, "session", "plain event").messages == []


def test_a_typed_unknown_hypothesis_is_refused_and_nothing_is_recorded(root: MemoryRoot) -> None:
    before = list(EvidenceLog(root).iter_all())
    with pytest.raises(InvalidInput, match="no hypothesis h-typo: nothing was recorded"):
        record_friction(root, "human", "listed options", supports="h-typo", refuse_unknown=True)
    assert list(EvidenceLog(root).iter_all()) == before


def test_empty_text_and_unknown_kinds_are_refused(root: MemoryRoot) -> None:
    with pytest.raises(InvalidInput, match="friction text is empty"):
        record_friction(root, "session", "  \n")
    with pytest.raises(InvalidInput, match=r"unknown kind 'note' \(valid: raw, journal\)"):
        append_event(root, "session", "note", "x")
    with pytest.raises(InvalidInput, match="evidence text is empty"):
        append_event(root, "session", "journal", "\t")


def test_raw_and_journal_events_are_appended_with_their_session(root: MemoryRoot) -> None:
    raw = append_event(root, "session", "raw", "ran the tests", session="s-1")
    journal = append_event(root, "human", "journal", "a long day")
    assert (raw.kind, raw.actor, raw.session) == ("raw", "session", "s-1")
    assert (journal.kind, journal.actor) == ("journal", "human")
    assert [r.id for r in EvidenceLog(root).iter_all()][-2:] == [raw.id, journal.id]


def test_show_range_reads_the_days_between_inclusive(root: MemoryRoot) -> None:
    made = {}
    for day in (3, 4, 6):
        with freeze_time(f"2026-10-0{day} 12:00:00"):
            made[day] = record_friction(root, "session", f"day {day}").value.id
    assert [r.id for r in show(root, date(2026, 10, 4))] == [made[4]]
    picked = [r.id for r in show_range(root, date(2026, 10, 4), date(2026, 10, 6))]
    assert picked == [made[4], made[6]]
    assert show_range(root, date(2026, 10, 7), date(2026, 10, 9)) == []
    with pytest.raises(InvalidInput, match="--since 2026-10-06 is after --until 2026-10-04"):
        show_range(root, date(2026, 10, 6), date(2026, 10, 4))
