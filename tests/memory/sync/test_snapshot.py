"""The snapshot step (``memory/sync/snapshot.py``): this device's state as a data commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.evidence.devices import local_device
from evolving_agent.memory.sync import SyncRefused
from evolving_agent.memory.sync.base import DATA_REF
from evolving_agent.memory.sync.snapshot import new_own_lines, snapshot
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root
from tests.helpers.sync import friction


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def _own_day(root: MemoryRoot) -> Path:
    [day] = root.evidence.glob("*.jsonl")
    return day


def test_the_snapshot_holds_this_devices_chain_as_it_is_on_disk(root: MemoryRoot) -> None:
    here = local_device(root)
    friction(root, "first")
    commit = snapshot(root, here)
    assert commit is not None and gitrepo.ref(root, DATA_REF) == commit
    day = _own_day(root)
    rel = f"evidence/devices/{here.id}/{day.name}"
    entry = gitrepo.ls_tree(root, commit, rel)[rel]
    assert gitrepo.blob(root, entry.sha) == day.read_bytes()


def test_nothing_changed_is_no_new_commit_and_a_new_line_is_one(root: MemoryRoot) -> None:
    here = local_device(root)
    friction(root, "first")
    first = snapshot(root, here)
    assert snapshot(root, here) == first
    friction(root, "second")
    second = snapshot(root, here)
    assert second != first
    assert second is not None and new_own_lines(root, first, second, here) == 1
    assert new_own_lines(root, None, second, here) == 2


def test_a_torn_last_line_stays_out_until_it_is_whole(root: MemoryRoot) -> None:
    here = local_device(root)
    friction(root, "whole")
    day = _own_day(root)
    whole = day.read_bytes()
    with day.open("ab") as fh:
        fh.write(b'{"id": "half-writt')  # an append in flight
    commit = snapshot(root, here)
    rel = f"evidence/devices/{here.id}/{day.name}"
    assert commit is not None
    assert gitrepo.blob(root, gitrepo.ls_tree(root, commit, rel)[rel].sha) == whole


def test_a_chain_that_lost_what_it_already_synced_is_refused_here(root: MemoryRoot) -> None:
    here = local_device(root)
    friction(root, "one")
    friction(root, "two")
    snapshot(root, here)
    day = _own_day(root)
    day.write_bytes(day.read_bytes().splitlines(keepends=True)[0])  # the last record cut
    with pytest.raises(SyncRefused, match="no longer holds what it already synced"):
        snapshot(root, here)
    day.unlink()
    with pytest.raises(SyncRefused, match="synced day file of this device is gone"):
        snapshot(root, here)
