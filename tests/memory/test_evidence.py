"""Evidence: concurrent appends, the hash chain, imports, verify."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import date
from pathlib import Path

import pytest
from freezegun import freeze_time

from evolving_agent.memory.evidence import EvidenceLog
from evolving_agent.memory.root import init_root
from evolving_agent.paths import MemoryRoot
from tests.helpers import run_cli, run_proc


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return init_root(tmp_path / "memory")


APPENDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from evolving_agent.memory.events import record_friction
    from evolving_agent.paths import MemoryRoot

    root, worker, n = MemoryRoot(Path(sys.argv[1])), sys.argv[2], int(sys.argv[3])
    sys.stdin.read()  # start line: all workers begin together
    for i in range(n):
        record_friction(root, "session", f"worker {worker} event {i} " + "x" * 300, session=worker)
    """
)


def test_8_processes_x_60_appends_lose_nothing_and_never_interleave(root: MemoryRoot) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(root.path), str(w), "60"],
            stdin=subprocess.PIPE,
        )
        for w in range(8)
    ]
    for p in procs:  # release them at once
        assert p.stdin is not None
        p.stdin.close()
    assert [p.wait(timeout=120) for p in procs] == [0] * 8

    lines = [ln for f in sorted(root.evidence.glob("*.jsonl")) for ln in f.read_text().splitlines()]
    assert len(lines) == 480
    records = [json.loads(ln) for ln in lines]  # every line is one whole record
    assert sorted((r["session"], r["text"].split()[3]) for r in records) == sorted(
        (str(w), str(i)) for w in range(8) for i in range(60)
    )
    assert EvidenceLog(root).verify_chain() == []
    assert run_cli("verify").exit_code == 0


def test_hand_edited_evidence_line_fails_verify_with_file_and_line(root: MemoryRoot) -> None:
    for i in range(3):
        assert run_cli("friction", f"event {i}").exit_code == 0
    day_file = next(root.evidence.glob("*.jsonl"))
    lines = day_file.read_text().splitlines()
    lines[1] = lines[1].replace("event 1", "event one")
    day_file.write_text("\n".join(lines) + "\n")

    proc = run_proc("verify")
    assert proc.returncode == 5
    assert f"{day_file}:2: record" in proc.stderr.decode()
    assert "was edited (hash mismatch)" in proc.stderr.decode()


def test_deleted_evidence_line_breaks_the_chain(root: MemoryRoot) -> None:
    for i in range(3):
        run_cli("friction", f"event {i}")
    day_file = next(root.evidence.glob("*.jsonl"))
    lines = day_file.read_text().splitlines()
    day_file.write_text("\n".join([lines[0], lines[2]]) + "\n")
    result = run_cli("verify")
    assert result.exit_code == 5
    assert f"{day_file}:2: chain broken" in result.output


def test_friction_links_and_evidence_show(root: MemoryRoot) -> None:
    with freeze_time("2026-11-30 10:15:00"):
        rid = run_cli("friction", "offered options unasked", "--supports", "h-1").stdout.strip()
        run_cli("evidence", "append", "--kind", "journal", "pairing on the parser")
        shown = run_cli("evidence", "show").output.splitlines()
    assert rid.startswith("ev-")
    assert shown[0].endswith("friction     session  offered options unasked [supports h-1]")
    assert shown[0].split()[1] == rid
    assert shown[1].endswith("journal      session  pairing on the parser")
    data = json.loads(run_cli("evidence", "show", "--date", "2026-11-30", "--json").output)
    assert [r["kind"] for r in data] == ["friction", "journal"]
    assert data[0]["supports"] == "h-1"


def test_empty_friction_is_refused(root: MemoryRoot) -> None:
    result = run_cli("friction", "   ")
    assert result.exit_code == 4
    assert list(root.evidence.iterdir()) == []


def test_import_records_now_as_session_and_keeps_the_claimed_time(
    root: MemoryRoot, tmp_path: Path
) -> None:
    # Issue 11: a back-dated import used to fill past days (and act as human).  Now it
    # is recorded today, as the session, with each line's ts kept as data.claimed_ts.
    src = tmp_path / "events.jsonl"
    src.write_text(
        '{"ts": "2026-10-01T09:00:00+00:00", "kind": "friction", "text": "a", "supports": "h-1"}\n'
        "\n"
        '{"ts": "2026-10-03T09:00:00+00:00", "kind": "raw", "text": "b", "session": "s1"}\n'
        '{"ts": "2026-10-01T18:00:00+00:00", "kind": "journal", "text": "c"}\n'
    )
    with freeze_time("2026-11-30 12:00:00"):
        result = run_cli("evidence", "import", str(src))
    assert result.exit_code == 0
    assert result.output == "imported 3 event(s)\n"
    log = EvidenceLog(root)
    assert log.days() == [date(2026, 11, 30)]
    records = log.read_day(date(2026, 11, 30))
    assert [(r.text, r.actor) for r in records] == [
        ("a", "session"),
        ("b", "session"),
        ("c", "session"),
    ]
    assert [r.data["claimed_ts"] for r in records] == [
        "2026-10-01T09:00:00+00:00",
        "2026-10-03T09:00:00+00:00",
        "2026-10-01T18:00:00+00:00",
    ]
    assert log.verify_chain() == []
    with freeze_time("2026-11-30 12:00:00"):
        assert run_cli("evidence", "import", "--as", "human", str(src)).exit_code == 0
    assert log.read_day(date(2026, 11, 30))[-1].actor == "human"


def test_malformed_import_line_aborts_with_line_number_and_appends_nothing(
    root: MemoryRoot, tmp_path: Path
) -> None:
    src = tmp_path / "events.jsonl"
    src.write_text(
        '{"ts": "2026-10-01T09:00:00+00:00", "kind": "friction", "text": "a"}\n'
        '{"ts": "2026-10-02T09:00:00+00:00", "kind": "friction", "text": "b"}\n'
        '{"ts": "yesterday", "kind": "friction", "text": "c"}\n'
    )
    result = run_cli("evidence", "import", str(src))
    assert result.exit_code == 4
    assert f"{src}:3: ts:" in result.output
    assert list(root.evidence.iterdir()) == []

    src.write_text('{"ts": "2026-10-01T09:00:00+00:00", "kind": "friction", "text": "a"}\nnope\n')
    result = run_cli("evidence", "import", str(src))
    assert result.exit_code == 4
    assert f"{src}:2: not a JSON object" in result.output
    assert list(root.evidence.iterdir()) == []


def test_newer_schema_version_is_refused(root: MemoryRoot) -> None:
    run_cli("friction", "x")
    day_file = next(root.evidence.glob("*.jsonl"))
    rec = json.loads(day_file.read_text())
    rec["schema_version"] = 99
    day_file.write_text(json.dumps(rec) + "\n")
    result = run_cli("evidence", "show", "--date", day_file.stem)
    assert result.exit_code == 4
    assert "newer than this evolving-agent understands" in result.output


def test_live_bus_set_show_clear(root: MemoryRoot) -> None:
    assert run_cli("live", "set", "thread", "parser").output == "thread set\n"
    assert run_cli("live", "set", "thread", "tests").exit_code == 0
    shown = run_cli("live", "show").output
    assert shown.startswith("thread: tests  [session, ")
    assert run_cli("live", "clear", "thread").output == "thread cleared\n"
    assert run_cli("live", "show").output == "(the Live Bus is empty)\n"
    assert run_cli("live", "clear", "thread").output == "thread was not set\n"
    bad = run_cli("live", "set", "../x", "t")
    assert bad.exit_code == 4
    assert "invalid Live Bus key" in bad.output


def test_friction_citing_an_unknown_hypothesis_is_kept_with_a_warning(root: MemoryRoot) -> None:
    proc = run_proc("friction", "offered options unasked", "--supports", "h-nope")
    assert proc.returncode == 0
    assert proc.stdout.decode().startswith("ev-")
    assert proc.stderr.decode() == (
        "warning: no hypothesis h-nope in the register; the event is recorded, but no job "
        "will count it for a hypothesis (see 'evolving-agent hypothesis list')\n"
    )
    assert [r.supports for r in EvidenceLog(root).iter_all()] == ["h-nope"]

    hid = run_cli("hypothesis", "add", "Answer the question asked").output.split()[0]
    proc = run_proc("friction", "answered only what was asked", "--supports", hid)
    assert proc.returncode == 0
    assert proc.stderr == b""
