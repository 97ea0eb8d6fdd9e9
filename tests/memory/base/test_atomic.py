"""Crash safety of the atomic writer: a SIGKILL mid-write leaves the old or the new file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evolving_agent.memory.root import init_root
from evolving_agent.paths import MemoryRoot

SIZE = 4 * 1024 * 1024


# Writes A, then B through the Writer, stopping before every system call of B's write (its
# chunks at most 1 MiB, so a write of 4 MiB has four) to say where it is and wait for a
# line on stdin: the test lets it go on a chosen number of steps and kills it at the next,
# so every step of the write is a kill point, by events, not by timing.
WRITER_STEPPED = textwrap.dedent(
    f"""
    import os, sys
    from pathlib import Path
    from evolving_agent.memory.authority import Writer
    from evolving_agent.paths import MemoryRoot

    w = Writer(MemoryRoot(Path(sys.argv[1])), "human")
    w.write("today", "big.txt", b"A" * {SIZE})

    def stepped(name, call, cap=None):
        def run(*args, **kwargs):
            print("at", name, flush=True)
            sys.stdin.readline()
            if cap is not None:
                args = (args[0], args[1][:cap])
            return call(*args, **kwargs)
        return run

    os.write = stepped("write", os.write, cap=1 << 20)
    os.fsync = stepped("fsync", os.fsync)
    os.replace = stepped("replace", os.replace)
    w.write("today", "big.txt", b"B" * {SIZE})
    print("done", flush=True)
    """
)


def test_sigkill_at_every_step_of_a_write_leaves_the_old_or_the_new_file(tmp_path: Path) -> None:
    root = init_root(tmp_path / "memory")
    target = root.today / "big.txt"
    seen: list[tuple[str, bytes]] = []  # (the step killed at, the file's first byte after)
    for steps in range(64):
        with subprocess.Popen(
            [sys.executable, "-c", WRITER_STEPPED, str(root.path)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        ) as proc:  # fmt: skip
            assert proc.stdin is not None and proc.stdout is not None
            line = proc.stdout.readline().decode().split()
            for _ in range(steps):
                if line in (["done"], []):
                    break
                proc.stdin.write(b"\n")
                proc.stdin.flush()
                line = proc.stdout.readline().decode().split()
            os.kill(proc.pid, signal.SIGKILL)
        assert line, "the writer ended before it was killed (its stderr is above)"
        if line == ["done"]:
            break
        data = target.read_bytes()
        assert data in (b"A" * SIZE, b"B" * SIZE), f"killed at {line}: a half-written file"
        seen.append((line[1], data[:1]))
        for t in root.today.glob(".big.txt.*.tmp"):  # harmless debris; clear for the next
            t.unlink()
    else:
        raise AssertionError("the write never ended")
    # Killed before each of the four chunks, the fsync and the rename: the old file; after
    # the rename (at the directory's fsync): the new one.
    assert seen == [("write", b"A")] * 4 + [("fsync", b"A"), ("replace", b"A"), ("fsync", b"B")]


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return init_root(tmp_path / "memory")


def test_a_day_file_made_in_a_shared_evidence_directory_is_group_writable(tmp_path: Path) -> None:
    # The OS-user deployment: a day file the assistant's user creates must take the human's
    # jobs' appends, and a shared directory the human set up is never tightened back.
    from evolving_agent.memory.base.atomic import make_private_dir
    from evolving_agent.memory.evidence.evidence import EvidenceLog

    root = init_root(tmp_path / "m")
    for rel in ("evidence", ".ea/evidence", ".ea/locks"):
        (root.real / rel).mkdir(exist_ok=True)
        (root.real / rel).chmod(0o3770)
    old = os.umask(0o022)
    try:
        EvidenceLog(root).append(_draft())
        make_private_dir(root.real / ".ea" / "locks")
    finally:
        os.umask(old)
    (day,) = (root.real / "evidence").glob("*.jsonl")
    assert day.stat().st_mode & 0o777 == 0o660
    (head,) = (root.real / ".ea" / "evidence").glob("*.head")
    assert head.stat().st_mode & 0o777 == 0o660
    assert (root.real / ".ea" / "locks").stat().st_mode & 0o7777 == 0o3770
    assert (root.real / "canon" / "identity.yaml").stat().st_mode & 0o777 == 0o600


def _draft():  # type: ignore[no-untyped-def]
    from evolving_agent.memory.evidence.evidence import EvidenceDraft, now

    return EvidenceDraft(ts=now(), kind="friction", actor="session", text="shared")
