"""Apply: put the verified merge on disk, journaled (``refs/ea/applying``), so a sync
killed at any point is completed by the next one; then main, fast-forward only, under
the writer's Canon lock."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from evolving_agent.gitcmd import git
from evolving_agent.memory.base.atomic import atomic_write
from evolving_agent.memory.base.locks import area_lock
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.canon.canon_snapshot import record_canon_snapshot
from evolving_agent.memory.evidence.devices import (
    DeviceInfo,
)
from evolving_agent.memory.evidence.evidence import EvidenceDraft, EvidenceLog, now
from evolving_agent.memory.sync.base import (
    APPLYING_MAIN_REF,
    APPLYING_REF,
    DATA_REF,
    area_of,
    disk_path,
    evidence_path,
    kill_point,
    safe_tree_path,
    update_ref,
)
from evolving_agent.memory.sync.plan import MergePlan
from evolving_agent.memory.sync.snapshot import SIZES_FILE, cached_sizes
from evolving_agent.paths import MemoryRoot


def apply_plan(root: MemoryRoot, here: DeviceInfo, plan: MergePlan) -> None:
    """Put the verified merge on disk; journaled, so a kill is finished by the next sync."""
    if plan.merged and plan.merged != plan.local:
        update_ref(root, APPLYING_REF, plan.merged, gitrepo.ref(root, APPLYING_REF))
    if plan.main_target and plan.main_target != plan.main_before:
        update_ref(root, APPLYING_MAIN_REF, plan.main_target, gitrepo.ref(root, APPLYING_MAIN_REF))
    kill_point("journaled")
    finish_apply(root, here)


def finish_apply(root: MemoryRoot, here: DeviceInfo) -> bool:
    """Complete a journaled apply (this sync's, or one a kill interrupted).  True if any."""
    merged = gitrepo.ref(root, APPLYING_REF)
    target = gitrepo.ref(root, APPLYING_MAIN_REF)
    if merged is None and target is None:
        return False
    if merged is not None:
        local = gitrepo.ref(root, DATA_REF)
        _write_data(root, here, local, merged)
        kill_point("data-written")
        if local != merged:
            update_ref(root, DATA_REF, merged, local)
            _rekey_sizes(root, local, merged)
        gitrepo.delete_ref(root, APPLYING_REF)
    if target is not None:
        _move_main(root, target)
        gitrepo.delete_ref(root, APPLYING_MAIN_REF)
    return True


def _write_data(root: MemoryRoot, here: DeviceInfo, local: str | None, merged: str) -> None:
    for path, (old, new, _mode) in sorted(gitrepo.diff_trees(root, local, merged).items()):
        target = disk_path(root, path, here.id)
        m = evidence_path(path)
        if m:
            if m.group(1) == here.id or new is None:
                continue  # never write this device's own chain
            data = gitrepo.blob(root, new)
            if not target.exists() or target.stat().st_size != len(data):
                atomic_write(target, data, base=root.real)
            EvidenceLog(root, m.group(1)).anchor_received(date.fromisoformat(m.group(2)), data)
            continue
        with area_lock(root, area_of(path)):
            current = target.read_bytes() if target.is_file() else None
            current_sha = gitrepo.blob_sha(current) if current is not None else None
            if current_sha not in (old, new):
                continue  # changed here since the snapshot: the next sync merges it
            if new is None:
                target.unlink(missing_ok=True)
            elif current_sha != new:
                atomic_write(target, gitrepo.blob(root, new), base=root.real)
        kill_point("file-written")


def _rekey_sizes(root: MemoryRoot, old: str | None, new: str) -> None:
    """The merge never changes this device's own chain: its snapshot sizes still hold."""
    sizes = cached_sizes(root, old)
    if sizes is not None:
        record = {"commit": new, "sizes": sizes}
        atomic_write(root.state / SIZES_FILE, json.dumps(record).encode() + b"\n")


def _move_main(root: MemoryRoot, target: str) -> None:
    """Fast-forward main to ``target``: files first, then the ref (compare-and-swap),
    then git's index and the Canon snapshot boot checks - all under the writer's Canon
    lock, so an approval on this device cannot land in between."""
    with area_lock(root, "canon"):
        before = gitrepo.head_commit(root)
        if before == target:
            record_canon_snapshot(root)
            return
        if before is not None and not gitrepo.is_ancestor(root, before, target):
            # Canon was changed here since the plan (or target is already in HEAD's
            # history): nothing to write; the next round plans again from HEAD.
            return
        _fast_forward(root, before, target)


def _fast_forward(root: MemoryRoot, before: str | None, target: str) -> None:
    for path, (_old, new, _mode) in gitrepo.diff_trees(root, before, target).items():
        if not (gitrepo.is_tracked(path) or path == ".gitignore"):
            continue
        if path != ".gitignore" and not safe_tree_path(path):
            continue
        disk = root.real / path
        if new is None:
            disk.unlink(missing_ok=True)
        else:
            atomic_write(disk, gitrepo.blob(root, new), base=root.real)
    kill_point("canon-written")
    update_ref(root, "HEAD", target, before)
    git(root.path, "read-tree", target, check=False)  # git's own index, for 'git status'
    record_canon_snapshot(root)


def note_live(root: MemoryRoot, here: DeviceInfo, notes: list[dict[str, Any]], actor: str) -> None:
    if not notes:
        return
    EvidenceLog(root).append_many(
        EvidenceDraft(
            ts=now(),
            kind="sync",
            actor=actor,
            text=f"Live Bus key {n['key']!r}: a newer value from another device replaced this one",
            data={"live_key": n["key"], "replaced": n["replaced"], "device": here.id},
        )
        for n in notes
    )
