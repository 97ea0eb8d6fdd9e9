"""The CLI on a real pseudo-terminal where lines were typed (or pasted) before it started.

What a user pasting a block of commands does: the later lines wait in the terminal while
the first command runs.  The tests check what the command showed and what it left unread
for the shell.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time


def run_with_typeahead(
    args: list[str], waiting: bytes, env: dict[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    """``python -m evolving_agent ARGS`` on a new pty holding ``waiting``: (exit code,
    what it showed, what it left unread)."""
    primary, secondary = pty.openpty()
    os.write(primary, waiting)
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolving_agent", *args],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        env=env,
        close_fds=True,
    )
    shown = b""
    deadline = time.monotonic() + 120  # a guard against a hang only
    exited = os.pidfd_open(proc.pid)  # readable once the child has ended: no poll interval
    try:
        while proc.poll() is None or select.select([primary], [], [], 0)[0]:
            assert time.monotonic() < deadline, f"{args} still running; showed {shown!r}"
            if primary in select.select([primary, exited], [], [], 1)[0]:
                shown += os.read(primary, 65536)
        os.set_blocking(secondary, False)
        left = b""
        while True:  # the terminal hands back one line per read
            try:
                left += os.read(secondary, 1024)
            except BlockingIOError:
                break
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(exited)
        os.close(secondary)
        os.close(primary)
    return proc.returncode, shown, left
