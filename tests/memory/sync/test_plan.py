"""Planning the merge (``memory/sync/plan.py``): what the remote brings is checked path by
path and merged in a commit, before anything on disk changes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evolving_agent.errors import InvalidInput
from evolving_agent.gitcmd import git
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.evidence.devices import local_device
from evolving_agent.memory.root import init_root
from evolving_agent.memory.sync import DATA_REF, SyncRefused, add_remote, sync
from evolving_agent.memory.verify import verify_root
from evolving_agent.paths import MemoryRoot
from tests.helpers.sync import (
    append_forged,
    bare,
    friction,
    ids,
    planned,
    plant,
    push_by_hand,
    rewrite_first,
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("trick", "expected"),
    [
        ("append-forged", "was edited (hash mismatch)"),
        ("rewrite-old-line", "its first"),
        ("write-into-my-chain", "that this device did not write"),
        ("unknown-path", "which no device writes"),
    ],
)
def test_remote_tricks_on_the_data_branch_are_refused(
    trick: str,
    expected: str,
    tmp_path: Path,
    remote: Path,
    laptop: MemoryRoot,
    desktop: MemoryRoot,
) -> None:
    friction(desktop, "desktop: mine")
    sync(desktop)
    laptop_id, desktop_id = local_device(laptop).id, local_device(desktop).id
    edits = {
        "append-forged": append_forged(laptop_id),
        "rewrite-old-line": rewrite_first(laptop_id),
        "write-into-my-chain": append_forged(desktop_id),
        "unknown-path": plant("canon/identity.yaml", "name: someone else\n"),
    }
    push_by_hand(remote, tmp_path / "hand", edits[trick])
    before = ids(desktop)
    data_before = git(desktop.path, "rev-parse", DATA_REF).text
    with pytest.raises(SyncRefused, match=re.escape(expected)) as refused:
        sync(desktop)
    assert refused.value.exit_code == 5
    assert ids(desktop) == before
    assert git(desktop.path, "rev-parse", DATA_REF).text == data_before
    assert verify_root(desktop).problems == []


def test_the_plan_merges_what_the_remote_brings_and_writes_nothing_on_disk(
    laptop: MemoryRoot, desktop: MemoryRoot
) -> None:
    friction(laptop, "laptop: a second day")
    sync(laptop)
    before = ids(desktop)
    on_disk = sorted(p.read_bytes() for p in desktop.path.rglob("*.jsonl"))
    here, plan = planned(desktop)
    assert plan.received == 1
    assert plan.merged not in (None, plan.local)
    assert ids(desktop) == before  # planned, not applied
    assert sorted(p.read_bytes() for p in desktop.path.rglob("*.jsonl")) == on_disk
    laptop_chain = f"evidence/devices/{local_device(laptop).id}/"
    merged_days = gitrepo.ls_tree(desktop, plan.merged, laptop_chain)
    assert b"laptop: a second day" in b"".join(
        gitrepo.blob(desktop, e.sha) for e in merged_days.values()
    )


def test_nothing_new_on_the_remote_plans_to_stay_where_it_is(
    laptop: MemoryRoot, desktop: MemoryRoot
) -> None:
    sync(desktop)
    friction(desktop, "desktop: only here")
    _here, plan = planned(desktop)
    assert plan.received == 0 and plan.merged == plan.local  # the push brings the remote up
    assert plan.main_target == plan.main_before and not plan.needs_full_verify


@pytest.mark.slow  # a second init, with a history of its own
def test_a_remote_of_another_self_is_refused_before_any_merge(
    tmp_path: Path, laptop: MemoryRoot
) -> None:
    stranger = init_root(tmp_path / "stranger")
    add_remote(stranger, "origin", str(bare(tmp_path / "stranger.git")))
    sync(stranger)
    add_remote(laptop, "stranger", str(tmp_path / "stranger.git"))
    with pytest.raises(InvalidInput, match="holds another self's root"):
        planned(laptop, "stranger")
