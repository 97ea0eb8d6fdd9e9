"""The one runner for child processes the product does not control.

Agents, score commands and command reflectors all run code we did not write, so all
of them go through :func:`run_process`:

- stdin is closed, or fed from ``input`` (a prompt);
- the child leads its own session and process group, so a timeout kills the group;
- stdout and stderr go to temporary *files*, not pipes: a descendant that keeps the
  pipe open (``setsid sleep 600 &``) can no longer hold the turn hostage;
- every child carries a per-run marker in its environment, and when the run ends,
  however it ends, every process still carrying that marker is killed — the group and
  any escapee that started a new session with ``setsid`` alike (Linux ``/proc``; on
  other systems only the group is swept).

The result is a :class:`Completed` with ``returncode=None`` on timeout and
``launch_error`` set when the program could not be started at all (not found, not
executable), so callers can tell "failed to start" from "ran and failed".
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from evolving_agent.records import record

MARKER_VAR = "EA_PROCESS_MARKER"
PROGRAM = "evolving-agent"


def own_command() -> list[str]:
    """How another program starts this same installation again, from any shell: the
    absolute path of the running ``evolving-agent`` script, else the one beside the
    running interpreter (a venv's ``bin/``), else ``python -m evolving_agent``.

    Set-ups a client runs later (a hook, an MCP server, a cron line) start in a shell
    whose PATH may lack the venv; a bare ``evolving-agent`` there fails with ENOENT.
    Symlinks are kept as they are: a venv's ``bin/`` is what activates it."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == PROGRAM and argv0.is_file():
        return [os.path.abspath(argv0)]
    beside = Path(sys.executable).parent / PROGRAM
    if beside.is_file() and os.access(beside, os.X_OK):
        return [os.path.abspath(beside)]
    return [os.path.abspath(sys.executable), "-m", "evolving_agent"]


_TAIL = 4000


@record(frozen=True)
class Completed:
    returncode: int | None  # None: timed out (and killed), or never started
    stdout: str
    stderr: str
    launch_error: str | None = None  # why the program never started
    timed_out: bool = False
    wall_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def stderr_tail(self, lines: int = 5) -> str:
        """The last few non-blank stderr lines, for one-line error messages."""
        kept = [line for line in self.stderr.strip().splitlines() if line.strip()]
        return " | ".join(kept[-lines:])[-_TAIL:]

    def describe_failure(self) -> str:
        """A one-line reason this run failed ('' when it succeeded)."""
        if self.launch_error:
            return self.launch_error
        if self.timed_out:
            return f"timed out after {self.wall_s:.0f}s"
        if self.returncode == 0:
            return ""
        code = self.returncode
        head = "command not found (exit 127)" if code == 127 else f"exit {code}"
        if code is not None and code < 0:
            head = f"killed by signal {-code}"
        tail = self.stderr_tail(2)
        return f"{head}: {tail}" if tail else head


def run_process(
    argv: list[str] | str,
    *,
    cwd: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    shell: bool = False,
    input: str | None = None,
    replace_env: bool = False,
    pass_fds: tuple[int, ...] = (),
) -> Completed:
    """Run ``argv`` contained: own session, group kill on timeout, escapees swept.

    ``env`` is added to ``os.environ`` (or replaces it with ``replace_env``).
    ``input`` is written to the child's stdin; otherwise stdin is ``/dev/null``.
    ``pass_fds`` are kept open in the child (every other descriptor is closed).
    A program that cannot be started returns ``launch_error`` instead of raising.
    """
    marker = uuid.uuid4().hex
    base = {} if replace_env else dict(os.environ)
    full_env = {**base, **(env or {}), MARKER_VAR: marker}
    started = time.monotonic()
    with (
        tempfile.TemporaryFile() as out_f,
        tempfile.TemporaryFile() as err_f,
        tempfile.TemporaryFile() as in_f,
    ):
        if input is not None:
            in_f.write(input.encode())
            in_f.seek(0)
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=full_env,
                shell=shell,
                stdin=in_f if input is not None else subprocess.DEVNULL,
                stdout=out_f,
                stderr=err_f,
                start_new_session=True,
                pass_fds=pass_fds,
            )
        except FileNotFoundError as exc:
            name = argv if isinstance(argv, str) else argv[0]
            missing = exc.filename if exc.filename not in (None, name) else name
            if not Path(cwd).is_dir():
                why = f"working directory does not exist: {cwd}"
            else:
                why = f"{missing}: command not found"
            return Completed(None, "", "", launch_error=why)
        except PermissionError:
            name = argv if isinstance(argv, str) else argv[0]
            return Completed(None, "", "", launch_error=f"{name}: permission denied")
        except OSError as exc:
            return Completed(None, "", "", launch_error=f"could not start: {exc.strerror}")
        try:
            code = _wait(proc, timeout)
        except BaseException:
            _sweep(proc.pid, marker)
            proc.wait()
            raise
        _sweep(proc.pid, marker)
        timed_out = code is None
        if timed_out:
            proc.wait()
        wall = time.monotonic() - started
        out_f.seek(0)
        err_f.seek(0)
        out = out_f.read().decode(errors="replace")
        err = err_f.read().decode(errors="replace")
    return Completed(code, out, err, timed_out=timed_out, wall_s=wall)


_INTERRUPTIBLE = 0.05  # seconds a wait may spend in C before Python code runs again


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> int | None:
    """The child's exit code, or None once ``timeout`` seconds have passed.

    ``Popen.wait(timeout=)`` polls with sleeps of up to 50 ms, so every short child
    cost up to 50 ms more than it ran; a pidfd (Linux 5.3) wakes the moment the child
    exits.  Elsewhere, or when the pid is already gone, Popen's own wait does it.

    The poll still returns to Python every 50 ms: an interrupt that is not a signal to
    this thread (Ray's cancel of a task, ``_thread.interrupt_main``) is raised only
    when the thread runs Python code, and a cancelled turn must end within that.
    """
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        deadline = time.monotonic() + timeout
        while not poller.poll(min(max(deadline - time.monotonic(), 0.0), _INTERRUPTIBLE) * 1000):
            if time.monotonic() >= deadline:
                return None
    finally:
        os.close(pidfd)
    try:  # the pidfd said the child exited; Popen's wait still keeps to the deadline
        return proc.wait(timeout=max(deadline - time.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        return None


@record
class Background:
    """A helper process the harness itself runs beside a turn (canary rounds' stand-in
    process): started in its own session, ended with :meth:`stop`."""

    proc: subprocess.Popen[bytes]
    first_line: str  # what it printed first (it was waited for: the process is ready)

    def stop(self) -> None:
        kill_group(self.proc)
        self.proc.wait()


def start_background(argv: list[str], *, env: dict[str, str], input: bytes) -> Background:
    """Start ``argv``, feed it ``input``, wait for its first line of stdout."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, start_new_session=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(input)
        proc.stdin.close()
        line = proc.stdout.readline().decode(errors="replace").strip()
    except BaseException:
        kill_group(proc)
        proc.wait()
        raise
    return Background(proc, line)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the process and everything in its process group (it leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _sweep(pgid: int, marker: str) -> None:
    """Kill the child's group, then every process still carrying ``marker``."""
    # Seen before the group kill: a group member killed by it is a zombie at once, and a
    # zombie's environment no longer shows the marker, yet it still must be reaped.
    seen = _marked_pids(marker) if _subreaper() else []
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    killed: list[int] = []
    # Again until a pass finds nobody new: a process caught mid-fork has a child the
    # previous pass could not see yet (it comes back to this process, the subreaper).
    for _ in range(20):
        fresh = [pid for pid in _marked_pids(marker) if pid not in killed]
        if not fresh:
            break
        for pid in fresh:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except (ProcessLookupError, PermissionError):
                pass
    # What was killed comes back to this process (the subreaper) to be reaped: each
    # once its parent has died too.  The child itself is reaped by its Popen.
    me = os.getpid()
    pending = (set(killed) | set(seen)) - {pgid}
    deadline = time.monotonic() + 2.0
    while pending and _subreaper() and time.monotonic() < deadline:
        for pid in list(pending):
            parent = _parent(pid)
            if parent == me:
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass
            elif parent is not None:
                continue  # its parent is still dying: look again
            pending.discard(pid)
        if pending:
            time.sleep(0.001)


_reaper_lock = threading.Lock()
_reaper = False


_reaper_depth = 0


@contextlib.contextmanager
def subreaper(enabled: bool = True) -> Iterator[bool]:
    """While inside, this process is the child subreaper (Linux
    ``PR_SET_CHILD_SUBREAPER``); yields whether it is.  Enter it before starting
    children (a local search run does; nested uses share one).

    Then every process a child starts and abandons (``setsid``, a double fork) is
    reparented to this process instead of init, so the sweep finds escapees by walking
    this process's descendants -- a few ``/proc`` reads -- instead of reading the
    environment of every process on the machine (tens of ms on a busy host, per turn),
    and reaps them.  Outside it (a Ray worker, a Ray driver: orphans of Ray's own
    processes must not come here to linger) the sweep reads every process.
    """
    global _reaper, _reaper_depth
    if not enabled:
        yield False
        return
    import ctypes

    with _reaper_lock:
        if _reaper_depth == 0:
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                children = Path(f"/proc/self/task/{threading.get_native_id()}/children")
                _reaper = children.is_file() and libc.prctl(36, 1, 0, 0, 0) == 0
            except (OSError, AttributeError):
                _reaper = False
        _reaper_depth += 1
        active = bool(_reaper)
    try:
        yield active
    finally:
        with _reaper_lock:
            _reaper_depth -= 1
            if _reaper_depth == 0 and _reaper:
                ctypes.CDLL(None, use_errno=True).prctl(36, 0, 0, 0, 0)
                _reaper = False


def _subreaper() -> bool:
    """Is this process the subreaper now (inside :func:`subreaper`)?"""
    return bool(_reaper)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return found


def _stat_field(pid: int, index: int) -> int | None:
    """A numeric field of ``/proc/PID/stat`` (0: the one after the state)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat[stat.rindex(")") + 2 :].split()[index + 1])
    except (OSError, ValueError, IndexError):
        return None


def _parent(pid: int) -> int | None:
    return _stat_field(pid, 0)


def _marked_pids(marker: str) -> list[int]:
    """Processes whose environment carries ``marker`` (Linux /proc; [] elsewhere): this
    process's descendants when it is the subreaper (every escapee is one), else every
    process on the machine."""
    if not _subreaper():
        return pids_with_env(MARKER_VAR, marker)
    needle = f"{MARKER_VAR}={marker}".encode()
    found, seen = [], set()
    queue = _children(os.getpid())
    while queue:
        pid = queue.pop()
        if pid in seen:
            continue
        seen.add(pid)
        queue += _children(pid)
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(pid)
    return found


def kill_with_env(var: str, value: str) -> list[int]:
    """SIGKILL every process whose environment holds ``var=value``; the pids killed."""
    killed = []
    for pid in pids_with_env(var, value):
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except (ProcessLookupError, PermissionError):
            pass
    return killed


def pids_with_env(var: str, value: str) -> list[int]:
    """Processes (other than this one) whose environment holds ``var=value``.

    Reads Linux's ``/proc/PID/environ`` (the environment a process started with, which
    its children inherit); elsewhere there is nothing to read and the answer is [].
    """
    proc_dir = Path("/proc")
    if not proc_dir.is_dir():
        return []
    needle = f"{var}={value}".encode()
    me = os.getpid()
    found: list[int] = []
    for entry in proc_dir.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def feed_interactive(cmd: list[str], text: str, *, env: dict[str, str]) -> bool:
    """Run the user's own interactive program (a pager) on this terminal, ``text`` on its
    stdin; wait for it.  Unlike :func:`run_process` it keeps our terminal and group: the
    user drives it.  False when it could not be started (the caller prints instead)."""
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, env=env)
    except OSError:
        return False
    assert proc.stdin is not None
    try:
        proc.stdin.write(text.encode("utf-8", "replace"))
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the reader quit the pager early
    proc.wait()
    return True


def run_tool(
    argv: list[str], *, input: str | None = None, stdin_path: Path | None = None, timeout: float
) -> Completed:
    """Run a trusted system tool of the user's (``ssh-keygen``): output captured, our
    terminal kept so it can ask for a passphrase or a key-agent confirmation."""
    started = time.monotonic()
    try:
        if stdin_path is not None:
            with stdin_path.open("rb") as data:
                done = subprocess.run(argv, stdin=data, capture_output=True, timeout=timeout)
        else:
            done = subprocess.run(
                argv,
                input=None if input is None else input.encode(),
                stdin=subprocess.DEVNULL if input is None else None,
                capture_output=True,
                timeout=timeout,
            )
    except OSError as exc:
        return Completed(None, "", "", launch_error=f"{argv[0]}: {exc.strerror or exc}")
    except subprocess.TimeoutExpired:
        return Completed(None, "", "", timed_out=True, wall_s=time.monotonic() - started)
    return Completed(
        done.returncode,
        done.stdout.decode(errors="replace"),
        done.stderr.decode(errors="replace"),
        wall_s=time.monotonic() - started,
    )
