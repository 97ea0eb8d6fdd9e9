"""The shared child-process runner (``process.py``), with real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evolving_agent.process import _marked_pids, run_process


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); read its state.
    stat = Path(f"/proc/{pid}/stat")
    try:
        state = stat.read_text().split()[2]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_stdin_input_reaches_the_child_and_output_comes_back(tmp_path: Path) -> None:
    done = run_process(
        [sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"],
        cwd=tmp_path,
        timeout=30,
        input="a prompt",
    )
    assert done.returncode == 0
    assert done.stdout.strip() == "A PROMPT"
    assert done.describe_failure() == ""


def test_a_missing_program_is_a_launch_error_not_an_exception(tmp_path: Path) -> None:
    done = run_process(["no-such-program-xyz"], cwd=tmp_path, timeout=5)
    assert done.returncode is None
    assert done.launch_error == "no-such-program-xyz: command not found"
    assert done.describe_failure() == "no-such-program-xyz: command not found"


def test_exit_127_from_a_shell_says_command_not_found(tmp_path: Path) -> None:
    done = run_process("no-such-program-xyz --flag", cwd=tmp_path, timeout=5, shell=True)
    assert done.returncode == 127
    assert done.describe_failure().startswith("command not found (exit 127): ")
    assert "no-such-program-xyz" in done.describe_failure()


def test_a_setsid_escapee_holding_stdout_neither_blocks_nor_survives(tmp_path: Path) -> None:
    pidfile = tmp_path / "escapee.pid"
    # The script ends once the escapee has written its pid (an event, not a sleep).
    script = (
        f"setsid sh -c 'echo $$ > {pidfile}.new; mv {pidfile}.new {pidfile}; sleep 300' & "
        f"while [ ! -e {pidfile} ]; do sleep 0.01; done; echo done"
    )
    started = time.monotonic()
    done = run_process(script, cwd=tmp_path, timeout=240, shell=True)
    waited = time.monotonic() - started
    assert done.returncode == 0
    assert done.stdout.strip() == "done"
    # With pipes, communicate() would wait for the 300 s sleeper; with files it cannot.
    assert waited < 240
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 120  # a guard against a hang only
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), "the setsid escapee outlived its run"


def test_timeout_kills_the_whole_group_and_says_so(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = f"sh -c 'echo $$ > {pidfile}.new; mv {pidfile}.new {pidfile}; exec sleep 300' & wait"
    # A loaded machine may not start the child within a short timeout: try longer ones
    # until a run timed out with the child started (what the assertions are about).
    for timeout in (1, 4, 16, 64):
        done = run_process(script, cwd=tmp_path, timeout=timeout, shell=True)
        if pidfile.exists():
            break
    assert done.timed_out and done.returncode is None
    assert done.describe_failure().startswith("timed out after")
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 120  # a guard against a hang only
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def test_the_marker_finds_only_marked_processes(tmp_path: Path) -> None:
    env = {**os.environ, "EA_PROCESS_MARKER": "test-marker-123"}
    proc = subprocess.Popen(["sleep", "30"], env=env)
    try:
        assert proc.pid in _marked_pids("test-marker-123")
        assert proc.pid not in _marked_pids("another-marker")
    finally:
        proc.kill()
        proc.wait()


def test_escapees_that_fork_again_are_swept_and_reaped(tmp_path: Path) -> None:
    # Guards the descendant walk that replaced the machine-wide /proc scan (the harness
    # is the child subreaper): a double fork and a setsid shell that starts children of
    # its own, all abandoned at once, are all gone when the run ends -- none a zombie.
    from evolving_agent.process import subreaper

    pids = tmp_path / "pids"
    script = (
        f"(sleep 300 & echo $! >> {pids}) ; "
        f"(setsid sh -c 'sleep 300 & echo $! >> {pids}; echo $$ >> {pids}; sleep 300' &) ; "
        f"while [ $(wc -l < {pids} 2>/dev/null || echo 0) -lt 3 ]; do sleep 0.01; done"
    )
    with subreaper() as active:
        assert active
        done = run_process(script, cwd=tmp_path, timeout=60, shell=True)
    assert done.returncode == 0
    left = [int(p) for p in pids.read_text().split()]
    assert len(left) == 3 and not [p for p in left if _alive(p)]
    assert not [p for p in left if Path(f"/proc/{p}").exists()]  # reaped, not zombies


def test_exit_codes_and_timeouts_are_the_same_without_a_pidfd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where os.pidfd_open is missing (not Linux) or refused, Popen's own wait decides."""

    def refused(pid: int) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "pidfd_open", refused)
    assert run_process("exit 7", cwd=tmp_path, timeout=60, shell=True).returncode == 7
    slow = run_process(["sleep", "30"], cwd=tmp_path, timeout=0.2)
    assert slow.timed_out and slow.returncode is None


_INTERRUPTED_WAIT = """
import _thread, sys, threading, time
from pathlib import Path
from evolving_agent.process import run_process
tmp = Path(sys.argv[1])
pidfile, finished = tmp / "pid", tmp / "finished"
script = f"echo $$ > {pidfile}.new; mv {pidfile}.new {pidfile}; sleep 120; touch {finished}"

def interrupt_once_started():
    deadline = time.monotonic() + 60  # a guard against a hang only
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    _thread.interrupt_main()

threading.Thread(target=interrupt_once_started).start()
try:
    run_process(script, cwd=tmp, timeout=600, shell=True)
except KeyboardInterrupt:
    print("interrupted")
"""


def test_an_interrupt_that_is_no_signal_ends_the_wait_and_the_child(tmp_path: Path) -> None:
    """Ray cancels a task with an interrupt raised when its thread next runs Python code
    (as ``_thread.interrupt_main`` does); a wait parked in C for the child's whole life
    let a cancelled turn finish and be recorded.

    Run in a process of its own: an interrupt of the test's own main thread reached the
    suite's worker once under load (xdist's "node down: keyboard-interrupt")."""
    pidfile, finished = tmp_path / "pid", tmp_path / "finished"
    done = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_WAIT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.stdout.strip() == "interrupted", (done.stdout, done.stderr)
    assert not finished.exists()  # killed, not waited out
    assert not _alive(int(pidfile.read_text()))
