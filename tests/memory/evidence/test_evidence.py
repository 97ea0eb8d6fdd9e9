"""Evidence: concurrent appends, the hash chain, imports, verify."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import date
from pathlib import Path

import pytest
from freezegun import freeze_time

from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.paths import MemoryRoot
from tests.helpers import new_root, run_cli, run_proc, run_verify
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


APPENDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from evolving_agent.memory.ops.events import record_friction
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
        hid = run_cli("hypothesis", "add", "the user wants one option").output.split()[0]
        rid = run_cli("friction", "offered options unasked", "--supports", hid).stdout.strip()
        run_cli("evidence", "append", "--kind", "journal", "pairing on the parser")
        shown = run_cli("evidence", "show").output.splitlines()
    assert rid.startswith("ev-")
    friction = [line for line in shown if " friction " in line]
    assert friction[0].endswith(f"friction     session  offered options unasked [supports {hid}]")
    assert friction[0].split()[1] == rid
    assert shown[-1].endswith("journal      session  pairing on the parser")
    data = json.loads(run_cli("evidence", "show", "--date", "2026-11-30", "--json").output)
    assert [r["kind"] for r in data][-2:] == ["friction", "journal"]
    assert data[-2]["supports"] == hid


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


def test_friction_citing_an_unknown_hypothesis_is_refused_and_nothing_is_recorded(
    root: MemoryRoot,
) -> None:
    # It used to be kept with a warning, which a newcomer read past: the event then
    # counted for no hypothesis.  A person typed the id, so the CLI refuses it (exit 4);
    # the MCP tool, called unattended, still keeps the event and warns
    # (tests/integrations/test_mcp_server.py).
    proc = run_proc("friction", "offered options unasked", "--supports", "h-nope")
    assert proc.returncode == 4
    assert proc.stdout == b""
    assert proc.stderr.decode() == (
        "error: no hypothesis h-nope: nothing was recorded (see 'evolving-agent hypothesis "
        "list' for the ids, or leave --supports/--contradicts out)\n"
    )
    assert list(EvidenceLog(root).iter_all()) == []

    hid = run_cli("hypothesis", "add", "Answer the question asked").output.split()[0]
    proc = run_proc("friction", "answered only what was asked", "--supports", hid)
    assert proc.returncode == 0
    assert proc.stderr == b""
    # A hypothesis the session raised today waits in Evidence for the nightly run; it
    # is known, so friction may cite it at once.
    raised = run_cli("hypothesis", "add", "I open with a plan nobody asked for", "--as", "session")
    assert raised.exit_code == 0, raised.output
    sid = raised.output.split()[0]
    proc = run_proc("friction", "opened with a plan again", "--contradicts", sid)
    assert (proc.returncode, proc.stderr) == (0, b"")


def _frictions(n: int) -> None:
    for i in range(n):
        assert run_cli("friction", f"felt off #{i}").exit_code == 0


# Regression: an integrity hole (a hidden or forged change) found in review.
def test_cutting_the_last_evidence_lines_is_tampering(root: MemoryRoot) -> None:
    _frictions(3)
    day_file = EvidenceLog(root).day_file(date.today())
    lines = day_file.read_bytes().splitlines(keepends=True)
    day_file.write_bytes(b"".join(lines[:1]))  # a valid chain, just shorter
    code, out = run_verify()
    assert code == 5
    assert f"{day_file}:2: 2 record(s) cut from the end (the writer's anchor counts 3)" in out
    # The next append does not paper over it: the finding stays in the chain.
    _frictions(1)
    code, out = run_verify()
    assert code == 5
    assert "2 anchored record(s) had been cut from the end before this append" in out


# Regression: an integrity hole (a hidden or forged change) found in review.
def test_deleting_a_whole_day_file_is_tampering(root: MemoryRoot) -> None:
    _frictions(2)
    day_file = EvidenceLog(root).day_file(date.today())
    day_file.unlink()
    code, out = run_verify()
    assert code == 5
    assert f"{day_file}: day file deleted (its anchor counts 2 record(s))" in out


# Regression: an integrity hole (a hidden or forged change) found in review.
def test_a_torn_tail_is_moved_aside_and_the_day_goes_on(root: MemoryRoot) -> None:
    _frictions(2)
    day_file = EvidenceLog(root).day_file(date.today())
    torn = b'{"actor":"session","data":{},"hash":"ab'  # a writer killed mid-line
    with day_file.open("ab") as fh:
        fh.write(torn)
    result = run_cli("friction", "after the crash")
    assert result.exit_code == 0
    records = EvidenceLog(root).read_day(date.today())
    assert [r.kind for r in records] == ["friction", "friction", "repair", "friction"]
    import hashlib

    digest = hashlib.sha256(torn).hexdigest()
    assert records[2].data["sha256"] == digest
    side = root.path / records[2].data["moved_to"]
    assert side.read_bytes() == torn
    assert run_verify()[0] == 0


# Regression: an integrity hole (a hidden or forged change) found in review.
def test_evidence_repair_by_hand(root: MemoryRoot) -> None:
    _frictions(1)
    day_file = EvidenceLog(root).day_file(date.today())
    with day_file.open("ab") as fh:
        fh.write(b'{"half a rec')
    first = run_cli("evidence", "repair")
    assert first.exit_code == 0
    assert first.output.startswith(f"{date.today()}: moved 12 torn byte(s) to evidence/torn/")
    again = run_cli("evidence", "repair")
    assert again.output == "nothing to repair: every day file ends with a whole record\n"
    assert run_verify()[0] == 0


# Regression: an integrity hole (a hidden or forged change) found in review.
@pytest.mark.slow
def test_sigkill_during_a_large_import_never_costs_the_day(
    root: MemoryRoot, tmp_path: Path
) -> None:
    _frictions(2)
    today = date.today().isoformat()
    src = tmp_path / "big.jsonl"
    text = "x" * 3000
    with src.open("w") as fh:
        for i in range(4000):
            fh.write(json.dumps({"ts": f"{today}T00:00:{i % 60:02d}", "kind": "raw", "text": text}))
            fh.write("\n")
    day_file = EvidenceLog(root).day_file(date.today())
    start = day_file.stat().st_size
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolving_agent", "evidence", "import", str(src)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Kill it the moment a chunk is seen half-written (or after a few chunks).
        with day_file.open("rb") as fh:
            while proc.poll() is None:
                size = os.fstat(fh.fileno()).st_size
                if size > start and (
                    os.pread(fh.fileno(), 1, size - 1) != b"\n" or size > start + (3 << 20)
                ):
                    break
                time.sleep(0.0002)  # leave the (shared) CPU to the import
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    left = day_file.read_bytes()
    assert 2 < left.count(b"\n") < 2 + 4000  # the kill landed mid-import
    torn = not left.endswith(b"\n")
    # The day goes on: friction appends, and verify finds nothing wrong.
    after = run_cli("friction", "after the kill")
    assert after.exit_code == 0, after.output
    code, out = run_verify()
    assert code == 0, out
    records = EvidenceLog(root).read_day(date.today())
    assert [r.text for r in records[:2]] == ["felt off #0", "felt off #1"]
    assert records[-1].text == "after the kill"
    # A kill inside a chunk's write leaves a torn line: moved aside, recorded, hashed.
    repairs = [r for r in records if r.kind == "repair"]
    assert len(repairs) == (1 if torn else 0)
    if torn:
        assert (root.path / repairs[0].data["moved_to"]).read_bytes() == left[
            left.rindex(b"\n") + 1 :
        ]


# Bad input a new user typed during QA.
def test_evidence_append_refuses_empty_text_like_friction_does(tmp_path: Path) -> None:
    root = new_root(tmp_path)
    result = run_cli("--root", str(root), "evidence", "append", "--kind", "raw", "  ")
    assert result.exit_code == 4
    assert result.output == "error: evidence text is empty: say what happened\n"
    assert not list((root / "evidence").glob("*.jsonl"))


APPEND_ONE = textwrap.dedent(
    """
    import sys
    from datetime import datetime
    from pathlib import Path
    from evolving_agent.memory.evidence.evidence import EvidenceDraft, EvidenceLog
    from evolving_agent.paths import MemoryRoot

    ts = datetime.fromisoformat(sys.argv[2])
    EvidenceLog(MemoryRoot(Path(sys.argv[1]))).append(
        EvidenceDraft(ts=ts, kind="friction", actor="session", text="waited for the lock")
    )
    """
)


def test_an_append_that_waited_while_its_day_was_sealed_lands_in_the_sealed_file(
    tmp_path: Path,
) -> None:
    # Guards a lost event: a seal (the OS-user deployment) replaces the day file under its
    # lock, so an appender that was waiting on the old file must append to the new one.
    import fcntl

    from evolving_agent.memory.evidence.evidence import EvidenceDraft, _replace_sealed

    root = fresh_root(tmp_path / "m")
    ts = "2026-11-28T12:00:00+00:00"
    log = EvidenceLog(root)
    from datetime import datetime

    log.append(
        EvidenceDraft(ts=datetime.fromisoformat(ts), kind="friction", actor="session", text="a")
    )
    day = log.day_file(date(2026, 11, 28))
    ino = os.stat(day).st_ino
    fd = os.open(day, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    child = subprocess.Popen([sys.executable, "-c", APPEND_ONE, str(root.path), ts])
    try:
        # Wait until the child waits on our lock: it holds the day file open (the writer
        # tries the lock right after opening it, and cannot take it while we hold it).
        deadline = time.monotonic() + 60

        def waiting() -> bool:
            fds = Path(f"/proc/{child.pid}/fd")
            try:
                return any(os.stat(link).st_ino == ino for link in fds.iterdir())
            except OSError:
                return False

        while not waiting():
            assert child.poll() is None, "the child appended without waiting for the lock"
            assert time.monotonic() < deadline, "the child never waited on the lock"
            time.sleep(0.01)
        dir_fd = os.open(day.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            _replace_sealed(dir_fd, day.name, os.pread(fd, os.fstat(fd).st_size, 0))
        finally:
            os.close(dir_fd)
    finally:
        os.close(fd)  # releases the lock: the child goes on
    assert child.wait(timeout=60) == 0
    texts = [r.text for r in log.read_chain_day(date(2026, 11, 28))]
    assert texts == ["a", "waited for the lock"]
    assert log.verify_chain() == []
