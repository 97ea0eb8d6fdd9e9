"""Devices of one self for the sync tests: a bare remote, a laptop and a desktop.

``tests/memory/sync/conftest.py`` builds :func:`two_devices` once per module and gives
each test a copy (:func:`copy_two_devices`): init, a first sync and a clone cost seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.evidence.devices import DeviceInfo, local_device
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.root import init_root
from evolving_agent.memory.sync import add_remote, clone, sync
from evolving_agent.memory.sync.base import DATA_BRANCH, incoming
from evolving_agent.memory.sync.plan import MergePlan, plan_merge
from evolving_agent.memory.sync.remote import check_not_rewritten, fetch, resolve_remote
from evolving_agent.memory.sync.snapshot import snapshot
from evolving_agent.memory.verify import verify_root
from evolving_agent.paths import MemoryRoot
from tests.helpers.fixtures import isolated_env
from tests.helpers.review import add, queue, set_identity

DEVICES = ("remote.git", "laptop", "desktop")


def bare(path: Path) -> Path:
    """A bare git repository at ``path``: the remote devices sync through."""
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


def two_devices(base: Path) -> Path:
    """In ``base``: a remote, a laptop that synced one event, and a desktop cloned from it."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in isolated_env(base).items():
            mp.setenv(name, value)
        remote = bare(base / "remote.git")
        root = init_root(base / "laptop")
        add_remote(root, "origin", str(remote))
        Writer(root, "session").append("friction", "laptop: first day felt off")
        sync(root)
        clone(str(remote), base / "desktop", name="desktop")
    return base


def copy_two_devices(built: Path, target: Path) -> Path:
    """A copy of :func:`two_devices`' ``built`` in ``target``, syncing with its own copy of
    the remote; the copied remote's path."""
    for name in DEVICES:
        shutil.copytree(built / name, target / name, symlinks=True)
    for name in ("laptop", "desktop"):
        remotes = target / name / ".ea" / "remotes.json"
        data = json.loads(remotes.read_text())
        data["remotes"]["origin"] = str(target / "remote.git")
        remotes.write_text(json.dumps(data))
    return target / "remote.git"


def ids(root: MemoryRoot) -> Counter[str]:
    """How many times each Evidence id is held on ``root`` (every device's chain)."""
    return Counter(r.id for r in EvidenceLog(root).iter_all())


def assert_converged(*roots: MemoryRoot) -> Counter[str]:
    """Every event present exactly once on every device, and verify clean everywhere."""
    first = ids(roots[0])
    for root in roots:
        held = ids(root)
        assert held == first
        assert all(n == 1 for n in held.values())
        report = verify_root(root)
        assert report.problems == []
    return first


def friction(root: MemoryRoot, text: str, **kw: object) -> str:
    """A session's friction on ``root``; its Evidence id."""
    return Writer(root, "session").append("friction", text, **kw).id  # type: ignore[arg-type]


# A committer who is not the product: git by hand.
HAND_ENV = {
    "GIT_AUTHOR_NAME": "x",
    "GIT_AUTHOR_EMAIL": "x@x",
    "GIT_COMMITTER_NAME": "x",
    "GIT_COMMITTER_EMAIL": "x@x",
}


def push_by_hand(remote: Path, work: Path, edit: Callable[[Path], None]) -> None:
    """Clone the remote's data branch with plain git, edit it, push it (no force)."""
    env = {**os.environ, **HAND_ENV}
    subprocess.run(["git", "clone", "-q", "-b", "ea-data", str(remote), str(work)], check=True)
    edit(work)
    subprocess.run(["git", "-C", str(work), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(work), "commit", "-qm", "by hand"], check=True, env=env)
    subprocess.run(["git", "-C", str(work), "push", "-q", "origin", "ea-data"], check=True, env=env)


def chain_file(work: Path, device: str) -> Path:
    """``device``'s first day file in a checkout of the data branch."""
    return sorted((work / "evidence" / "devices" / device).glob("*.jsonl"))[0]


def append_forged(device: str) -> Callable[[Path], None]:
    """An edit appending a record to ``device``'s chain that no writer made."""

    def edit(work: Path) -> None:
        path = chain_file(work, device)
        last = json.loads(path.read_text().splitlines()[-1])
        forged = {**last, "text": "forged by the remote", "prev": last["hash"]}
        path.write_text(path.read_text() + json.dumps(forged) + "\n")

    return edit


def rewrite_first(device: str) -> Callable[[Path], None]:
    """An edit rewriting the first record of ``device``'s chain."""

    def edit(work: Path) -> None:
        path = chain_file(work, device)
        path.write_text(path.read_text().replace("first day felt off", "first day was fine", 1))

    return edit


def plant(rel: str, text: str) -> Callable[[Path], None]:
    """An edit writing ``text`` at ``rel`` in the data branch."""

    def edit(work: Path) -> None:
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)

    return edit


def queued_on_both(laptop: MemoryRoot, desktop: MemoryRoot) -> str:
    """A monthly review queued on the laptop and synced to the desktop; its id."""
    set_identity(laptop)
    queue(laptop, "rev-2026-11-1", add("Ask before offering options."))
    sync(laptop)
    sync(desktop)
    return "rev-2026-11-1"


def planned(root: MemoryRoot, remote: str = "origin") -> tuple[DeviceInfo, MergePlan]:
    """The steps of one sync round up to the plan (fetch, snapshot, plan), nothing applied."""
    here = local_device(root)
    _name, url = resolve_remote(root, remote)
    assert fetch(root, remote, url).ok
    check_not_rewritten(root, remote)
    local = snapshot(root, here)
    theirs = gitrepo.ref(root, incoming(remote, DATA_BRANCH))
    return here, plan_merge(root, remote, here.id, local, theirs)
