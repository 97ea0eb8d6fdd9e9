"""Running an untrusted child process: stdin closed, its own process group, a timeout.

Agents and the score command both run code the search does not control, so both go
through ``run_process``: on timeout the whole group is killed (an agent's or scorer's
own children included) and the result says so with ``returncode=None``.
"""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Completed:
    returncode: int | None  # None: timed out (and killed)
    stdout: str
    stderr: str


def run_process(
    argv: list[str] | str,
    *,
    cwd: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    shell: bool = False,
) -> Completed:
    """Run a process with stdin closed, in its own process group, with a timeout."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        shell=shell,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        code = None
    return Completed(code, out.decode(errors="replace"), err.decode(errors="replace"))


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the process and everything it started (it leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
