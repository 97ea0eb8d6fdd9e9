"""Crash-safe, private, symlink-proof file replacement.

A reader (or a process that crashed mid-write) sees the old file or the new one,
never a mixture: the write itself is ``evolving_agent.fsio.write_atomic_at`` (temp file
in the same directory, fsync, ``os.replace``, directory fsync), shared with search;
what this module adds is the privacy and the confinement below a memory root.

Everything is created private (0700 directories, 0600 files), whatever the umask: a
memory root holds a person's friction and identity.  The one exception is a root set
up for two OS users (``evolving-agent deploy os-users``, memory/sync/deploy.py): its
directories are setgid to a shared group, and what is created in one gets the group
bits that directory passes on (``fsio.shared_mode``) - group-readable in the human's
areas, group-writable in ``evidence/`` and ``live/`` - so the human's jobs read what
the assistant's user appended and the other way round.

When a ``base`` directory is given, the path below it is walked one component at a
time with ``O_NOFOLLOW``: a symlinked directory anywhere between ``base`` and the file
is refused (:class:`UnsafePath`) instead of followed, and the temp file and the rename
are made relative to the opened directory (``dir_fd``), so a link swapped in after the
check cannot redirect the write either.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from evolving_agent.errors import InvalidInput
from evolving_agent.fsio import shared_dir_mode, shared_mode, write_atomic_at

DIR_MODE = 0o700
FILE_MODE = 0o600

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class UnsafePath(InvalidInput):
    """A directory or file on the way to a write is a symlink (or not what it should be)."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"refusing {path}: {reason}")


def open_dir(base: Path, parts: Sequence[str], *, create: bool = True) -> int:
    """Open ``base/parts...`` as a directory fd, never following a symlink below ``base``.

    Missing directories are created 0700 when ``create``.  Raises :class:`UnsafePath`
    when a component is a symlink or not a directory.  The caller closes the fd.
    """
    # ``base`` itself is trusted (the caller resolved it once); only what lies below it
    # is walked without following links.
    fd = os.open(base, _DIR_FLAGS & ~os.O_NOFOLLOW)
    try:
        # The path of a component is built for an error only: every Evidence append and
        # every write of a layer opens its directories here.
        for i, part in enumerate(parts):
            if part in {"", ".", ".."} or "/" in part:
                raise UnsafePath(base.joinpath(*parts[: i + 1]), "not a plain path component")
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                made = True
                try:
                    os.mkdir(part, DIR_MODE, dir_fd=fd)
                except FileExistsError:
                    made = False
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
                if made:
                    _share_new_dir(fd, nxt)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise UnsafePath(base.joinpath(*parts[: i + 1]), _why(fd, part)) from None
                raise
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def _share_new_dir(parent_fd: int, fd: int) -> None:
    """A directory just made below a shared-group one gets its group bits (the umask
    and Linux's mkdir would drop some); a private parent leaves it 0700."""
    mode = shared_dir_mode(os.fstat(parent_fd).st_mode, DIR_MODE)
    if mode != DIR_MODE:
        os.fchmod(fd, mode)


def open_creating(dir_fd: int, name: str, flags: int, mode: int = FILE_MODE) -> int:
    """``os.open(name, flags | O_CREAT, mode, dir_fd=dir_fd)``, in two steps: an existing
    file is opened without ``O_CREAT`` (which a sticky shared directory refuses for
    another user's file when ``fs.protected_regular`` is 2), and a file this call
    creates gets the group bits of a shared-group directory (``fsio.shared_mode``),
    whatever the umask."""
    while True:
        try:
            return os.open(name, flags, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        try:
            fd = os.open(name, flags | os.O_CREAT | os.O_EXCL, mode, dir_fd=dir_fd)
        except FileExistsError:
            continue  # another process made it in between: open theirs
        final = shared_mode(os.fstat(dir_fd).st_mode, mode)
        if final != mode:
            os.fchmod(fd, final)
        return fd


def _why(dir_fd: int, name: str) -> str:
    try:
        st = os.lstat(name, dir_fd=dir_fd)
    except OSError:
        return "not a directory"
    return "is a symlink" if stat.S_ISLNK(st.st_mode) else "is not a directory"


def atomic_write(path: Path, data: bytes, *, base: Path | None = None) -> None:
    """Replace ``path`` with ``data`` atomically, durably and privately (0600).

    With ``base`` (an ancestor of ``path``), no directory below ``base`` and not the
    target itself may be a symlink.  Without it (a file outside any memory root, such
    as a boot copy for CLAUDE.md), a symlink at ``path`` is replaced, never followed.
    """
    confined = base is not None
    if base is None:
        mkdirs_private(path.parent)
        base = path.parent
        parts: list[str] = []
    else:
        parts = list(path.parent.relative_to(base).parts)
    dir_fd = open_dir(base, parts)
    try:
        try:
            st = os.lstat(path.name, dir_fd=dir_fd) if confined else None
        except FileNotFoundError:
            st = None
        if st is not None:
            if not stat.S_ISREG(st.st_mode):
                kind = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a regular file"
                raise UnsafePath(path, f"is {kind}")
        write_atomic_at(dir_fd, path.name, data, mode=FILE_MODE)
    finally:
        os.close(dir_fd)


def read_plain(base: Path, parts: Sequence[str]) -> bytes | None:
    """Bytes of ``base/parts...`` following no symlink below ``base``; None if absent."""
    try:
        dir_fd = open_dir(base, parts[:-1], create=False)
    except FileNotFoundError:
        return None
    try:
        try:
            fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dir_fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafePath(base.joinpath(*parts), "is a symlink") from None
            raise
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise UnsafePath(base.joinpath(*parts), "is not a regular file")
            return fh.read()
    finally:
        os.close(dir_fd)


def mkdirs_private(directory: Path) -> None:
    """``mkdir -p`` with private modes for what it creates (a shared-group parent
    passes its group bits on, see the module docstring)."""
    if directory.is_dir():
        return
    mkdirs_private(directory.parent)
    try:
        os.mkdir(directory, DIR_MODE)
    except FileExistsError:
        return
    mode = shared_dir_mode(os.stat(directory.parent).st_mode, DIR_MODE)
    if mode != DIR_MODE:
        os.chmod(directory, mode)


def make_private_dir(directory: Path) -> None:
    """Create ``directory`` (and missing parents) 0700; tighten it if it exists.

    A shared-group directory (setgid, with group bits: only its owner, running
    ``deploy os-users``, can have made it so) is left as it is.
    """
    mkdirs_private(directory)
    mode = os.stat(directory).st_mode
    if mode & stat.S_ISGID and mode & 0o070:
        return
    os.chmod(directory, DIR_MODE)


def fsync_dir(directory: Path) -> None:
    """Make a rename durable by syncing its directory entry."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
