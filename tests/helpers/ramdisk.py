"""Where the suite keeps its temporary files: in RAM when the machine has room there.

A session makes about 50,000 files (roots, git repositories, search runs) and removes
the session before last.  On a disk the writer's fsyncs (it fsyncs every file it
replaces, as it must for users) and the unlinks were a third of the fast part's time:
86 s against 63 s on a tmpfs, measured on a 2-core machine.  So, unless the developer
chose a ``TMPDIR``, the suite's temporary directory is a private folder on ``/dev/shm``
when that is a tmpfs with at least 4 GiB free that may run programs (not ``noexec``).
Files there are real files; only their durability differs, and no test is about
surviving a power cut.

A program that mounts its own ``/dev`` (Codex's bwrap sandbox does) cannot see
``/dev/shm``; tests that hand a directory to one ask for :data:`DISK_TEMP` instead.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

SHM = Path("/dev/shm")
ROOM = 4 << 30

# The temporary directory the machine gave the suite, before any change below (xdist's
# workers inherit the changed TMPDIR, so the first process passes the old one on).
_DISK_VAR = "EA_TESTS_DISK_TEMP"
DISK_TEMP = Path(os.environ.get(_DISK_VAR) or tempfile.gettempdir())


def _is_tmpfs(path: Path) -> bool:
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return False
    return any(
        len(fields) > 2 and fields[1] == str(path) and fields[2] == "tmpfs"
        for fields in (line.split() for line in mounts)
    )


def use_ram_for_temp_files() -> Path | None:
    """Point ``TMPDIR`` (this process's and every child's) at a private tmpfs folder.

    Returns the folder, or None when the developer set ``TMPDIR`` or the machine has
    no tmpfs with room.  The folder must be this user's own and closed to others (on
    a shared ``/dev/shm`` anybody could have made it first).
    """
    if os.environ.get("TMPDIR") or not _is_tmpfs(SHM):
        return None
    try:
        room = os.statvfs(SHM)
        # Tests run scripts they write (fake agents, editors); Docker mounts /dev/shm noexec
        if room.f_bavail * room.f_frsize < ROOM or room.f_flag & os.ST_NOEXEC:
            return None
        base = SHM / f"evolving-agent-tests-{os.getuid()}"
        try:
            base.mkdir(mode=0o700)
        except FileExistsError:
            pass
        info = os.lstat(base)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    os.environ[_DISK_VAR] = str(DISK_TEMP)
    os.environ["TMPDIR"] = str(base)
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again
    return base
