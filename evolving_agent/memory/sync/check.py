"""Check before anything changes: ``verify`` run on the merged state, staged in a
private scratch root - every rule of verify (schema and provenance of decisions,
signatures where signing is on, planted reviews, Canon provenance) applies to what the
remote brings before any of it reaches this device."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from pathlib import Path

from evolving_agent.gitcmd import git
from evolving_agent.memory.base.atomic import make_private_dir, mkdirs_private
from evolving_agent.memory.evidence.devices import (
    DeviceInfo,
)
from evolving_agent.memory.sync.base import (
    SyncRefused,
    disk_path,
    evidence_path,
    safe_tree_path,
)
from evolving_agent.memory.sync.plan import MergePlan
from evolving_agent.paths import LAYERS, REVIEW_AREAS, MemoryRoot


def verify_merged(root: MemoryRoot, remote: str, here: DeviceInfo, plan: MergePlan) -> None:
    """Run ``verify`` on the merged state, staged in a private scratch root.

    The scratch root holds the merged files laid out as this device will hold them and
    a repository that borrows this one's objects, with ``main`` at the target; so every
    rule of ``verify`` (provenance, signatures, planted reviews) applies to what the
    remote brings before any of it reaches this device.
    """
    from evolving_agent.memory.verify import verify_root

    stage = root.state / f"sync-stage.{os.getpid()}"
    shutil.rmtree(stage, ignore_errors=True)
    try:
        make_private_dir(stage)
        git(stage, "init", "-q", ".")
        alternates = stage / ".git" / "objects" / "info" / "alternates"
        alternates.write_text(str((root.path / ".git" / "objects").resolve()) + "\n")
        if plan.main_target:
            git(stage, "update-ref", "HEAD", plan.main_target)
            _extract(stage, git(stage, "archive", "--format=tar", plan.main_target).stdout, None)
        for layer in LAYERS:
            make_private_dir(stage / layer)
        for area in REVIEW_AREAS:
            make_private_dir(stage / "reviews" / area)
        if plan.merged:
            tar = git(stage, "archive", "--format=tar", plan.merged).stdout
            _extract(stage, tar, here.id)
        # This device's own chain and Canon snapshot are what it holds now.
        for day_path in root.evidence.glob("*.jsonl"):
            shutil.copyfile(day_path, stage / "evidence" / day_path.name)
        _stage_signing(root, MemoryRoot(stage))
        report = verify_root(MemoryRoot(stage), pin_of=root)
        problems = [p.replace(str(stage), f"<{remote}>") for p in report.problems]
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    if problems:
        raise SyncRefused(remote, [f"fails verify: {p}" for p in problems])


def _stage_signing(root: MemoryRoot, stage: MemoryRoot) -> None:
    """Where signing is on, the scratch root checks signatures against the key this
    device trusts (its pinned allowed signers and its own signing chain's statements),
    not against anything the remote sent."""
    from evolving_agent.memory.canon.signing import marker_path, signing_state
    from evolving_agent.memory.evidence.signing_chain import statement_dir

    mkdirs_private(stage.state)
    if statement_dir(root).is_dir():
        shutil.copytree(statement_dir(root), statement_dir(stage))
    state = signing_state(root)
    if not state.enabled:
        return
    if marker_path(root).is_file():
        shutil.copyfile(marker_path(root), marker_path(stage))
    if state.allowed_signers is not None and state.allowed_signers.is_file():
        shutil.copyfile(state.allowed_signers, stage.state / "signing.allowed_signers")


def _extract(stage: Path, tar: bytes, here: str | None) -> None:
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        for member in archive.getmembers():
            if not member.isfile() or not safe_tree_path(member.name):
                continue
            if here is not None and evidence_path(member.name) and f"/{here}/" in member.name:
                continue  # this device's own chain is taken from disk
            target = disk_path(MemoryRoot(stage), member.name, here or "")
            mkdirs_private(target.parent)
            fh = archive.extractfile(member)
            assert fh is not None
            target.write_bytes(fh.read())
