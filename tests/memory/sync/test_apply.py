"""Applying the merge (``memory/sync/apply.py``): the planned commit put on disk, journaled
so that a sync killed in between is finished by the next one."""

from __future__ import annotations

from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.evidence.devices import local_device
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.sync import sync
from evolving_agent.memory.sync.apply import apply_plan, finish_apply, note_live
from evolving_agent.memory.sync.base import APPLYING_REF, DATA_REF
from evolving_agent.memory.verify import verify_root
from evolving_agent.paths import MemoryRoot
from tests.helpers.sync import friction, ids, planned


def test_apply_puts_the_merge_on_disk_and_clears_its_journal(
    laptop: MemoryRoot, desktop: MemoryRoot
) -> None:
    made = friction(laptop, "laptop: to be applied")
    sync(laptop)
    here, plan = planned(desktop)
    assert made not in ids(desktop)
    apply_plan(desktop, here, plan)
    assert ids(desktop)[made] == 1
    assert gitrepo.ref(desktop, DATA_REF) == plan.merged
    assert gitrepo.ref(desktop, APPLYING_REF) is None
    assert finish_apply(desktop, here) is False  # nothing left to finish
    assert verify_root(desktop).problems == []


def test_a_journaled_merge_is_finished_by_the_next_call(
    laptop: MemoryRoot, desktop: MemoryRoot
) -> None:
    made = friction(laptop, "laptop: journaled, then the power went")
    sync(laptop)
    here, plan = planned(desktop)
    assert plan.merged is not None
    # What apply_plan journals before it writes a file: a kill right after leaves only this.
    gitrepo.set_refs(desktop, {APPLYING_REF: plan.merged})
    assert made not in ids(desktop)
    assert finish_apply(desktop, here) is True
    assert ids(desktop)[made] == 1 and gitrepo.ref(desktop, DATA_REF) == plan.merged
    assert finish_apply(desktop, here) is False


def test_a_replaced_live_value_is_kept_in_evidence(desktop: MemoryRoot) -> None:
    here = local_device(desktop)
    replaced = {"key": "thread", "text": "desktop: stopped at the parser"}
    note_live(desktop, here, [{"key": "thread", "replaced": replaced}], "human")
    [kept] = [r for r in EvidenceLog(desktop).iter_all() if r.kind == "sync"]
    assert kept.actor == "human" and kept.data["live_key"] == "thread"
    assert kept.data["replaced"] == replaced and kept.data["device"] == here.id
    note_live(desktop, here, [], "human")  # nothing replaced: nothing recorded
    assert sum(r.kind == "sync" for r in EvidenceLog(desktop).iter_all()) == 1
