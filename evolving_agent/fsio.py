"""One atomic file writer, shared by the memory side and search.

A reader (or a process that crashed mid-write) sees the old file or the new one,
never a mixture: the data goes to a temp file in the same directory (created
exclusively, never through a symlink), is fsynced, then ``os.replace``-d over the
target (atomic on POSIX within one filesystem), and the directory is fsynced so the
rename itself survives a power cut.  A failure, even ``KeyboardInterrupt``, leaves no
temp file behind.

``write_atomic_at`` works relative to an open directory fd, so a caller that walked to
the directory itself (``memory/atomic.py``, which refuses symlinked directories below a
memory root) keeps that guarantee; ``write_atomic`` opens the directory by path.

A file is as open as the *setgid* directory it is created in (:func:`shared_mode`):
in a shared-group deployment (``evolving-agent deploy os-users``, memory/deploy.py)
the directories are setgid and their group bits say what the group may do with new
entries; everywhere else (a private 0700 directory) the mode asked for is the mode
given, whatever the umask.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def shared_mode(dir_mode: int, mode: int) -> int:
    """The mode of a new file (``mode``: what its owner gets) in a directory of
    ``dir_mode``: the owner's bits, plus for the group what the directory's group may
    do, when the directory is setgid (a shared-group directory); ``mode`` otherwise."""
    if not dir_mode & stat.S_ISGID:
        return mode
    return mode | ((mode & 0o600) >> 3 & dir_mode & 0o060)


def shared_dir_mode(parent_mode: int, mode: int) -> int:
    """The mode of a new directory below one of ``parent_mode``: a shared-group
    directory passes on its group bits, setgid and sticky bits; ``mode`` otherwise."""
    if not parent_mode & stat.S_ISGID:
        return mode
    return mode | (parent_mode & (0o070 | stat.S_ISGID | stat.S_ISVTX))


def write_atomic_at(dir_fd: int, name: str, data: bytes, *, mode: int) -> None:
    """Replace the entry ``name`` of the directory ``dir_fd`` with ``data``, durably.

    ``mode`` is the new file's permission bits for its owner (see :func:`shared_mode`
    for the group's, in a shared-group directory).
    """
    tmp_name = f".{name}.{secrets.token_hex(6)}.tmp"
    final = shared_mode(os.fstat(dir_fd).st_mode, mode)
    fd = os.open(
        tmp_name,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC,
        mode,
        dir_fd=dir_fd,
    )
    try:
        try:
            if final != mode:  # the umask must not take the group's bits away
                os.fchmod(fd, final)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp_name, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp_name, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        raise
    os.fsync(dir_fd)


def write_atomic(path: Path, data: bytes, *, mode: int = 0o600) -> None:
    """Replace ``path`` with ``data`` atomically and durably (missing parents created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    try:
        write_atomic_at(dir_fd, path.name, data, mode=mode)
    finally:
        os.close(dir_fd)
