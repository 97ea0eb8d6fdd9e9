"""Locks that say who holds them: another user's lock delays us seconds, never a day.

Every lock here is a ``flock`` on an open file.  Waiting for one is bounded by who
holds it, which Linux says in ``/proc/locks`` (pid, device and inode of each lock):

- a process of this same user (a racing run, a concurrent append): wait as long as it
  takes, as a blocking ``flock`` would - it is the same authority, doing the same work;
- a process of *another* user (the assistant's, in the OS-user deployment):
  :data:`FOREIGN_PATIENCE` seconds, then :class:`LockHeld` (exit 3), one line naming the
  user, the pid and its command;
- a holder the system does not name: :data:`UNKNOWN_PATIENCE`, then the same error.

A lock *file* another user created and this one cannot open (a squat in a group-
writable folder) is not a lock anyone of ours could share: it is unlinked and made
again.  The human's own jobs keep their locks in :func:`human_lock_dir`, a folder of
``.ea/`` only the human can create files in (memory/sync/deploy.py), so nothing there is
the assistant's to squat or hold.
"""

from __future__ import annotations

import errno
import fcntl
import os
import pwd
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from evolving_agent.errors import EXIT_DENIED, EvolvingAgentError
from evolving_agent.fsio import shared_mode
from evolving_agent.memory.base.atomic import mkdirs_private
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record
from evolving_agent.textsafe import one_line

FOREIGN_PATIENCE = 3.0  # seconds another user's lock may delay us
UNKNOWN_PATIENCE = 60.0  # seconds a lock whose holder nobody names may delay us
_POLL = (0.002, 0.05)  # first and longest pause between tries (a flock cannot time out)


class LockHeld(EvolvingAgentError):
    """Another user's process holds a lock this command needs; nothing was written."""

    exit_code = EXIT_DENIED

    def __init__(self, path: Path, holder: str, waited: float) -> None:
        self.path = path
        self.holder = holder
        super().__init__(
            f"{path}: locked by {holder}; gave up after {waited:.0f} s, nothing was "
            "written (try again once it lets go)"
        )


@record(frozen=True)
class Holder:
    pid: int
    uid: int | None

    def describe(self) -> str:
        user = "an unknown user"
        if self.uid is not None:
            try:
                user = f"user {pwd.getpwuid(self.uid).pw_name!r}"
            except KeyError:
                user = f"uid {self.uid}"
        try:
            raw = Path(f"/proc/{self.pid}/cmdline").read_bytes()
            # The holder chose its command line: one line, no escapes, in our message.
            words = (a.decode(errors="replace") for a in raw.split(b"\0") if a)
            command = one_line(" ".join(words))[:120]
        except OSError:
            command = ""
        return f"{user} (pid {self.pid}{': ' + command if command else ''})"


def holders(fd: int) -> list[Holder]:
    """The processes holding a lock on ``fd``'s file, from ``/proc/locks`` (Linux)."""
    st = os.fstat(fd)
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split()
        if len(fields) < 6 or fields[1] == "->":  # "->": a waiter, not a holder
            continue
        if fields[5] != inode or not fields[4].isdigit():
            continue
        pid = int(fields[4])
        if pid == os.getpid():
            continue
        try:
            uid: int | None = os.stat(f"/proc/{pid}").st_uid
        except OSError:
            uid = None
        found.append(Holder(pid, uid))
    return found


def flock_bounded(fd: int, path: Path, *, shared: bool = False) -> None:
    """``flock`` ``fd`` (exclusive, or ``shared``), waiting as the module docstring says."""
    op = (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB
    start = time.monotonic()
    pause = _POLL[0]
    while True:
        try:
            fcntl.flock(fd, op)
            return
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
        waited = time.monotonic() - start
        if waited >= FOREIGN_PATIENCE:  # only a long wait asks who holds it
            found = holders(fd)
            foreign = [h for h in found if h.uid != os.geteuid()]
            if foreign:
                raise LockHeld(path, foreign[0].describe(), waited)
            if not found and waited >= UNKNOWN_PATIENCE:
                raise LockHeld(path, "a process this system does not name", waited)
        time.sleep(pause)
        pause = min(pause * 2, _POLL[1])


@contextmanager
def lock_file(path: Path, mode: int = 0o600) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (made with ``mode`` if new)."""
    fd = _open_lock(path, mode)
    try:
        flock_bounded(fd, path)
        yield
    finally:
        os.close(fd)  # releases the flock


@contextmanager
def shared_lock_file(path: Path, mode: int = 0o600) -> Iterator[None]:
    """Hold a shared lock on ``path``: many holders at once, none beside an exclusive one."""
    fd = _open_lock(path, mode)
    try:
        flock_bounded(fd, path, shared=True)
        yield
    finally:
        os.close(fd)


class LockBusy(EvolvingAgentError):
    """A lock this command will not wait for is held; nothing was written."""

    exit_code = EXIT_DENIED

    def __init__(self, path: Path, holder: str, what: str) -> None:
        self.path = path
        self.holder = holder
        super().__init__(f"{what} ({holder} holds {path}); nothing was changed, try again after it")


@contextmanager
def lock_file_now(path: Path, what: str, mode: int = 0o600) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` or raise :class:`LockBusy` at once, naming the
    holder (``what`` says what the holder is doing)."""
    fd = _open_lock(path, mode)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
            found = holders(fd)
            holder = found[0].describe() if found else "a process this system does not name"
            raise LockBusy(path, holder, what) from None
        yield
    finally:
        os.close(fd)


def _open_lock(path: Path, mode: int) -> int:
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, mode)
    except PermissionError:
        # Another user's file this one cannot open: nobody of ours can share it as a
        # lock, so it is no lock of ours.  Make ours in its place.
        path.unlink(missing_ok=True)
        fd = os.open(path, flags | os.O_EXCL, mode)
    try:
        if os.fstat(fd).st_uid == os.geteuid():
            os.fchmod(fd, mode)  # the umask does not decide who may share it
    except OSError:
        pass
    return fd


def human_lock_dir(root: MemoryRoot) -> Path:
    """Where the human's jobs and human-only layers lock: below ``.ea/``, private, so in
    the OS-user deployment only the human can create (or open) a file in it."""
    path = root.state / "human-locks"
    mkdirs_private(path)
    return path


# Layers the assistant's user writes too in the OS-user deployment: their locks sit in
# the shared, group-writable ``.ea/locks/``; every other layer's lock is the human's.
SHARED_LOCK_AREAS = frozenset({"live", "evidence"})


@contextmanager
def area_lock(root: MemoryRoot, area: str) -> Iterator[None]:
    """The lock of one layer: the writer's, and sync's when it writes that layer."""
    if area not in SHARED_LOCK_AREAS:
        with lock_file(human_lock_dir(root) / f"{area}.lock"):
            yield
        return
    mkdirs_private(root.lock_dir)
    # Group-writable in a shared-group deployment, so both users take the same lock.
    mode = shared_mode(os.stat(root.lock_dir).st_mode, 0o600)
    with lock_file(root.lock_dir / f"{area}.lock", mode):
        yield
