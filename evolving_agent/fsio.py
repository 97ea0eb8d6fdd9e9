"""One atomic file writer and one tree walker, shared by the memory side and search.

A reader (or a process that crashed mid-write) sees the old file or the new one,
never a mixture: the data goes to a temp file in the same directory (created
exclusively, never through a symlink), is fsynced, then ``os.replace``-d over the
target (atomic on POSIX within one filesystem), and the directory is fsynced so the
rename itself survives a power cut.  A failure, even ``KeyboardInterrupt``, leaves no
temp file behind.

``write_atomic_at`` works relative to an open directory fd, so a caller that walked to
the directory itself (``memory/base/atomic.py``, which refuses symlinked directories below a
memory root) keeps that guarantee; ``write_atomic`` opens the directory by path.

A file is as open as the *setgid* directory it is created in (:func:`shared_mode`):
in a shared-group deployment (``evolving-agent deploy os-users``, memory/sync/deploy.py)
the directories are setgid and their group bits say what the group may do with new
entries; everywhere else (a private 0700 directory) the mode asked for is the mode
given, whatever the umask.

``walk`` is the one way the product lists a tree it did not just write (``verify`` and
boot's Canon check, boot's odd-name filter, the search report's tree diff).  It lives
beside the writer because the writer's temp names are the in-flight rule: a
``.NAME.HEX.tmp`` is a write in progress (or one a kill cut short), never a file of the
tree, so :func:`in_flight` is how a caller that reads the writer's trees leaves them out.
It never follows a symlink: a link is reported as a link, and :func:`read_nofollow`
refuses one that appears between the walk and the read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# Boot's fast path walks Canon with this module: typing and dataclasses (a few ms of a
# session start) are not imported at run time.  mypy reads TYPE_CHECKING as typing's.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Literal

    EntryKind = Literal["file", "dir", "symlink", "other"]

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


def write_atomic_at(
    dir_fd: int, name: str, data: bytes, *, mode: int, final_mode: int | None = None
) -> None:
    """Replace the entry ``name`` of the directory ``dir_fd`` with ``data``, durably.

    ``mode`` is the new file's permission bits for its owner (see :func:`shared_mode`
    for the group's, in a shared-group directory); ``final_mode``, when given, is the
    file's whole mode instead, set before the rename (a sealed Evidence day: no other
    user ever opens the new file for writing).
    """
    # os.urandom(6).hex() is secrets.token_hex(6), without importing secrets (and
    # random, hmac, base64 with it) on boot's path.
    tmp_name = f".{name}.{os.urandom(6).hex()}.tmp"
    final = shared_mode(os.fstat(dir_fd).st_mode, mode) if final_mode is None else final_mode
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


# What write_atomic_at names its temp file: a dot, the target's name, 12 hex digits.
_HEX = frozenset("0123456789abcdef")


def in_flight(name: str) -> bool:
    """True for a temp file of :func:`write_atomic_at` (a write in progress, or killed):
    ``.NAME.HEX.tmp``, NAME one line of one character or more, HEX 12 lower-case digits
    (``\\..+\\.[0-9a-f]{12}\\.tmp``, without compiling a pattern on every boot)."""
    return (
        len(name) >= 19
        and name[0] == "."
        and name.endswith(".tmp")
        and name[-17] == "."
        and _HEX.issuperset(name[-16:-4])
        and "\n" not in name[1:-17]
    )


class Entry:
    """One entry of a walked tree, as it is on disk (never through a link)."""

    __slots__ = ("rel", "path", "kind")
    rel: str  # slash-separated, relative to the walk's base
    path: Path
    kind: EntryKind

    def __init__(self, rel: str, path: Path, kind: EntryKind) -> None:
        object.__setattr__(self, "rel", rel)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "kind", kind)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")  # frozen

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Entry:
            return NotImplemented
        return (self.rel, self.path, self.kind) == (other.rel, other.path, other.kind)

    def __hash__(self) -> int:
        return hash((self.rel, self.path, self.kind))

    def __repr__(self) -> str:
        return f"Entry(rel={self.rel!r}, path={self.path!r}, kind={self.kind!r})"

    def __reduce__(self) -> tuple[type[Entry], tuple[str, Path, EntryKind]]:
        return (Entry, (self.rel, self.path, self.kind))  # pickle and copy, as a dataclass

    @property
    def problem(self) -> str | None:
        """Why a reader of plain files refuses this entry (None for a file or directory)."""
        if self.kind == "symlink":
            return f"{self.path}: is a symlink; the writer never makes one"
        if self.kind == "other":
            return f"{self.path}: is not a regular file"
        return None


def _kind(mode: int) -> EntryKind:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def walk(base: Path, rel: str, *, skip: Callable[[str], bool] = in_flight) -> Iterator[Entry]:
    """``base/rel`` itself, then (if it is a directory) everything below it, sorted.

    Nothing for a missing ``rel``.  Symlinks are yielded, never followed (a symlinked
    directory is not entered).  A name for which ``skip`` is true is left out with all
    below it: by default the writer's in-flight temp files.
    """
    path = base / rel
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    entry = Entry(rel, path, _kind(mode))
    yield entry
    if entry.kind != "dir":
        return
    try:
        names = sorted(os.listdir(path))
    except FileNotFoundError:
        return  # removed between the lstat and the listing
    for name in names:
        if not skip(name):
            yield from walk(base, f"{rel}/{name}" if rel else name, skip=skip)


def read_nofollow(path: Path) -> bytes:
    """The bytes of the regular file ``path``; OSError if it is a symlink (ELOOP) or gone."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | _CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


class TreeFiles:
    """The regular files under some tops of a tree, and what was refused on the way."""

    __slots__ = ("files", "flagged", "problems")

    def __init__(
        self,
        files: dict[str, bytes] | None = None,
        flagged: set[str] | None = None,
        problems: list[str] | None = None,
    ) -> None:
        self.files = {} if files is None else files  # rel -> bytes
        self.flagged = set() if flagged is None else flagged  # rels reported in problems
        self.problems = [] if problems is None else problems

    def reported(self, rel: str) -> bool:
        """True if ``rel`` or a directory above it was reported (so not "missing" too)."""
        return any(rel == f or rel.startswith(f + "/") for f in self.flagged)


def read_files(base: Path, tops: tuple[str, ...]) -> TreeFiles:
    """Every regular file under ``base/top`` for each top (a file or a directory),
    read without following links; symlinks, odd and unreadable entries become problems."""
    out = TreeFiles()
    for top in tops:
        for entry in walk(base, top):
            if entry.problem is not None:
                out.flagged.add(entry.rel)
                out.problems.append(entry.problem)
            elif entry.kind == "file":
                try:
                    out.files[entry.rel] = read_nofollow(entry.path)
                except OSError as exc:
                    out.flagged.add(entry.rel)
                    out.problems.append(f"{entry.path}: unreadable ({exc.strerror})")
    return out
