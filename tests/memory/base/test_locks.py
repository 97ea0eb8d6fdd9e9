"""Locks that say who holds them (memory/base/locks.py), with real processes holding flocks.

The other-user cases (a few seconds, then exit 3 naming the user) need two OS users:
tests/memory/sync/test_deploy.py runs them.  Here: one user's holders are waited for, not
refused, and the holder is named from /proc/locks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from evolving_agent.memory.base.locks import Holder, holders, lock_file

HOLD = (
    "import fcntl, os, sys\n"
    "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
    "fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "print('held', flush=True)\n"
    "sys.stdin.read()\n"
    "with open(sys.argv[2], 'a') as out:\n"
    "    out.write('first ')\n"
)

TAKE = (
    "import sys\n"
    "from pathlib import Path\n"
    "from evolving_agent.memory.base.locks import lock_file\n"
    "with lock_file(Path(sys.argv[1])):\n"
    "    with open(sys.argv[2], 'a') as out:\n"
    "        out.write('second')\n"
)


def _holder(lock: Path, log: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock), str(log)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_a_holder_of_the_same_user_is_waited_for_not_refused(tmp_path: Path) -> None:
    lock, log = tmp_path / "x.lock", tmp_path / "log"
    first = _holder(lock, log)
    second = subprocess.Popen([sys.executable, "-c", TAKE, str(lock), str(log)])
    assert first.stdin is not None
    first.stdin.close()  # the first writes its word, then lets go
    assert first.wait(timeout=60) == 0
    assert second.wait(timeout=120) == 0
    assert log.read_text() == "first second"


def test_the_holder_is_named_by_pid_and_user(tmp_path: Path) -> None:
    lock = tmp_path / "y.lock"
    proc = _holder(lock, tmp_path / "log")
    try:
        fd = os.open(lock, os.O_RDONLY)
        try:
            found = holders(fd)
        finally:
            os.close(fd)
        assert Holder(proc.pid, os.geteuid()) in found
        described = Holder(proc.pid, os.geteuid()).describe()
        assert f"(pid {proc.pid}: " in described and "\n" not in described
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)


def test_a_lock_file_is_made_with_the_mode_asked_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        with lock_file(tmp_path / "z.lock", 0o660):
            pass
    finally:
        os.umask(old)
    assert (tmp_path / "z.lock").stat().st_mode & 0o777 == 0o660
