"""Snapshot: this device's state as a data commit on ``ea-data``.

Work grows with what changed: own day files whose size matches the last snapshot are
neither read nor looked up in git; other devices' chains come from the previous data
commit, never from disk (a device pushes only its own chain).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from evolving_agent.memory.base.atomic import atomic_write
from evolving_agent.memory.base.locks import flock_bounded
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.evidence.devices import (
    DeviceInfo,
    today_writer,
)
from evolving_agent.memory.sync.base import (
    DATA_BRANCH,
    DATA_REF,
    SHARED_PREFIXES,
    SyncRefused,
    synced,
    update_ref,
)
from evolving_agent.paths import MemoryRoot


def _read_whole_lines(path: Path) -> bytes:
    """A day file's bytes up to its last newline, read under a shared lock (an append in
    flight is either wholly in or wholly out)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        flock_bounded(fd, path, shared=True)
        size = os.fstat(fd).st_size
        data = os.pread(fd, size, 0)
    finally:
        os.close(fd)
    return data[: data.rfind(b"\n") + 1]


def _shared_files(root: MemoryRoot, with_today: bool) -> dict[str, bytes]:
    """Live, Today (the writer's only), reviews and sync/ files on disk: tree path -> bytes."""
    out: dict[str, bytes] = {}
    tops = ["live", "reviews/proposals", "reviews/pending", "reviews/decisions", "sync"]
    if with_today:
        tops.append("today")
    for top in tops:
        # sync/ (device register, today writer) sits below .ea/ on disk.
        home = root.real / ".ea" if top == "sync" else root.real
        base = home / top
        if not base.is_dir() or base.is_symlink():
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for name in filenames:
                full = Path(dirpath) / name
                if name.startswith(".") or full.is_symlink() or not full.is_file():
                    continue
                rel = full.relative_to(home).as_posix()
                out[rel] = full.read_bytes()
    return out


_DAY_FILE = re.compile(r"\d{4}-\d\d-\d\d\.jsonl")


SIZES_FILE = "sync-sizes.json"  # below .ea/: own day files' sizes in the last snapshot


def _own_days(root: MemoryRoot) -> dict[str, int]:
    """This device's day files and their sizes (one directory scan, no parsing)."""
    out: dict[str, int] = {}
    with os.scandir(root.evidence) as entries:
        for entry in entries:
            if _DAY_FILE.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                out[entry.name] = entry.stat(follow_symlinks=False).st_size
    return out


def cached_sizes(root: MemoryRoot, commit: str | None) -> dict[str, int] | None:
    """The sizes recorded with ``commit`` (None when absent, stale or unreadable: the
    snapshot then lists the tree instead)."""
    try:
        data = json.loads((root.state / SIZES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("commit") != commit or commit is None:
        return None
    sizes = data.get("sizes")
    if not isinstance(sizes, dict) or not all(isinstance(v, int) for v in sizes.values()):
        return None
    return sizes


def snapshot(root: MemoryRoot, here: DeviceInfo) -> str | None:
    """Commit this device's state on ``ea-data`` (only if it changed); its commit id.

    Other devices' chains come from the previous data commit, never from disk: a
    device pushes only its own chain.  Own day files whose size matches the last
    snapshot (``.ea/sync-sizes.json``) are neither read nor looked up in git, so the
    cost follows what grew, not how many days exist.
    """
    prev = gitrepo.ref(root, DATA_REF)
    own_prefix = f"evidence/devices/{here.id}/"
    disk = _own_days(root)
    cached = cached_sizes(root, prev)
    if cached is None:
        candidates = set(disk) | {
            p.removeprefix(own_prefix) for p in gitrepo.ls_tree(root, prev, own_prefix)
        }
        sizes: dict[str, int] = {}
    else:
        candidates = {n for n, size in disk.items() if cached.get(n) != size}
        candidates |= set(cached) - set(disk)
        sizes = {n: size for n, size in cached.items() if n not in candidates}
    old_own = (
        gitrepo.ls_tree(root, prev, *(own_prefix + n for n in sorted(candidates)))
        if candidates
        else {}
    )
    writer = today_writer(root)
    i_write_today = writer is None or writer.device == here.id
    changes: dict[str, str | None] = {}
    problems: list[str] = []
    for name in sorted(candidates):
        rel = own_prefix + name
        before = old_own.get(rel)
        day_path = root.evidence / name
        if name not in disk:
            if before is not None:
                problems.append(f"{day_path}: synced day file of this device is gone")
            continue
        if before is not None and disk[name] == before.size:
            sizes[name] = before.size
            continue
        data = _read_whole_lines(day_path)
        if before is not None:
            if len(data) < before.size or gitrepo.blob_sha(data[: before.size]) != before.sha:
                problems.append(
                    f"{day_path}: this device's chain no longer holds what it already synced "
                    f"({before.size} bytes); run 'evolving-agent verify'"
                )
                continue
            if len(data) == before.size:
                sizes[name] = before.size
                continue
        if data:
            changes[rel] = gitrepo.hash_blob(root, data)
            sizes[name] = len(data)
    if problems:
        raise SyncRefused("", problems, local=True)
    old = gitrepo.ls_tree(root, prev, *SHARED_PREFIXES)
    files = _shared_files(root, i_write_today)
    for rel, data in files.items():
        entry = old.get(rel)
        if entry is None or entry.sha != gitrepo.blob_sha(data):
            changes[rel] = gitrepo.hash_blob(root, data)
    for rel in old:
        if rel.startswith(SHARED_PREFIXES) and rel not in files:
            if rel.startswith("today/") and not i_write_today:
                continue
            if rel.startswith("sync/devices/"):
                continue  # the register only grows
            changes[rel] = None
    commit = prev
    if changes or prev is None:
        tree = gitrepo.write_tree(root, prev, changes, index_name="sync-index")
        message = f"sync: snapshot of device {here.id}"
        commit = gitrepo.commit_tree(root, tree, [prev] if prev else [], message)
        update_ref(root, DATA_REF, commit, prev)
    if commit != prev or cached is None or sizes != cached:
        record = {"commit": commit, "sizes": dict(sorted(sizes.items()))}
        atomic_write(root.state / SIZES_FILE, json.dumps(record).encode() + b"\n")
    return commit


def unpushed_events(root: MemoryRoot, remote: str, here: DeviceInfo) -> int:
    """Own records the remote is not known to hold (by its last synced data commit)."""
    held = gitrepo.ls_tree(
        root, gitrepo.ref(root, synced(remote, DATA_BRANCH)), f"evidence/devices/{here.id}/"
    )
    count = 0
    for day_path in root.evidence.glob("*.jsonl"):
        entry = held.get(f"evidence/devices/{here.id}/{day_path.name}")
        size = day_path.stat().st_size
        offset = entry.size if entry else 0
        if size > offset:
            with day_path.open("rb") as fh:
                fh.seek(offset)
                count += fh.read().count(b"\n")
    return count


def new_own_lines(root: MemoryRoot, before: str | None, after: str, here: DeviceInfo) -> int:
    """Records of this device in ``after`` that ``before`` lacks (reads only changed files)."""
    changed = gitrepo.diff_trees(root, before, after)
    prefix = f"evidence/devices/{here.id}/"
    pairs = [(old, new) for p, (old, new, _m) in changed.items() if p.startswith(prefix) and new]
    if not pairs:
        return 0
    old_sizes = gitrepo.blob_sizes(root, [old for old, _new in pairs if old])
    count = 0
    for old, new in pairs:
        data = gitrepo.blob(root, new)
        count += data[old_sizes.get(old, 0) if old else 0 :].count(b"\n")
    return count
