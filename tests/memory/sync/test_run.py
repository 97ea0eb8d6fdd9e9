"""sync between devices of one self through a real bare git remote.

Every root here is a real memory root with its own device id; the remote is a bare
repository on a file path; kills are real SIGKILLs of a real sync process.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections import Counter
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from freezegun import freeze_time

from evolving_agent.errors import InvalidInput
from evolving_agent.gitcmd import git
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.evidence.devices import (
    NotTodayWriter,
    check_today_writer,
    device_path,
    local_device,
    take_today,
    today_writer,
)
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops.live import entries, set_entry
from evolving_agent.memory.root import init_root
from evolving_agent.memory.sync import (
    DATA_REF,
    KILL_ENV,
    CanonDiverged,
    SyncRefused,
    add_remote,
    clone,
    sync,
)
from evolving_agent.memory.verify import verify_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.approve import approve_review
from tests.helpers.review import add, queue, set_identity
from tests.helpers.sync import (
    assert_converged,
    bare,
    friction,
    ids,
    queued_on_both,
)


@pytest.mark.slow
def test_union_in_both_orders_and_repeatedly(laptop: MemoryRoot, desktop: MemoryRoot) -> None:
    made = {friction(laptop, f"laptop {i}") for i in range(3)}
    made |= {friction(desktop, f"desktop {i}") for i in range(3)}
    sync(laptop)
    sync(desktop)
    sync(laptop)
    made |= {friction(desktop, "desktop late")}
    made |= {friction(laptop, "laptop late")}
    for root in (desktop, laptop, desktop, laptop, laptop):  # the other order, and again
        sync(root)
    held = assert_converged(laptop, desktop)
    assert made <= set(held)
    # Each device's own chain stays in evidence/DAY.jsonl; the other's is beside it.
    here = local_device(desktop).id
    there = local_device(laptop).id
    assert (desktop.evidence / "devices" / there).is_dir()
    assert not (desktop.evidence / "devices" / here).exists()


@pytest.mark.slow
def test_three_devices_with_concurrent_friction_processes(
    tmp_path: Path, remote: Path, laptop: MemoryRoot, desktop: MemoryRoot
) -> None:
    server, _ = clone(str(remote), tmp_path / "server", name="server")
    roots = [laptop, desktop, server]
    script = (
        "import sys\n"
        "from evolving_agent.memory.authority import Writer\n"
        "from evolving_agent.paths import MemoryRoot\n"
        "w = Writer(MemoryRoot(__import__('pathlib').Path(sys.argv[1])), 'session')\n"
        "for i in range(int(sys.argv[3])): w.append('friction', f'{sys.argv[2]} {i}')\n"
    )
    procs = []
    for n, root in enumerate(roots):
        for writer in range(2):  # two writers per device, at once, while it syncs
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", script, str(root.path), f"dev{n}-w{writer}", "15"]
                )
            )
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "evolving_agent", "--root", str(root.path), "sync"],
                stdout=subprocess.DEVNULL,
            )
        )
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    for _ in range(2):
        for root in roots:
            sync(root)
    held = assert_converged(*roots)
    texts = Counter(r.text.rsplit(" ", 1)[0] for r in EvidenceLog(server).iter_all())
    for n in range(3):
        for writer in range(2):
            assert texts[f"dev{n}-w{writer}"] == 15
    assert len(held) == 1 + 90


@pytest.mark.slow
def test_review_approved_on_one_device_binds_the_other(
    laptop: MemoryRoot, desktop: MemoryRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("USER", "alice")
    set_identity(laptop)
    queue(laptop, "rev-2026-11-1", add("Ask before offering options."))
    sync(laptop)
    sync(desktop)
    result = approve_review(desktop, "rev-2026-11-1", approver="alice")
    sync(desktop)
    outcome = sync(laptop)
    assert outcome.canon_commits == 1
    assert gitrepo.head_commit(laptop) == gitrepo.head_commit(desktop) == result.commit
    assert "Ask before offering options." in (laptop.canon / "identity.yaml").read_text()
    trailers = gitrepo.parse_trailers(
        git(laptop.path, "log", "-1", "--format=%B", result.commit).text
    )
    assert trailers["Review-Id"] == "rev-2026-11-1"
    assert trailers["Approved-By"] == "alice"
    decision = (laptop.area_dir("decisions") / "rev-2026-11-1.json").read_text()
    assert result.commit in decision
    assert_converged(laptop, desktop)


@pytest.mark.slow
def test_force_pushed_remote_is_refused_with_nothing_lost(
    remote: Path, laptop: MemoryRoot, desktop: MemoryRoot
) -> None:
    first = git(remote, "rev-parse", "refs/heads/ea-data").text
    friction(laptop, "laptop: recorded before the reset")
    sync(laptop)
    sync(desktop)
    held = ids(desktop)
    # Somebody resets the remote's data branch to an older commit (a force-push).
    git(remote, "update-ref", "refs/heads/ea-data", first)
    data_before = git(desktop.path, "rev-parse", DATA_REF).text
    with pytest.raises(SyncRefused, match="rewrote branch 'ea-data'"):
        sync(desktop)
    assert ids(desktop) == held
    assert git(desktop.path, "rev-parse", DATA_REF).text == data_before
    assert git(remote, "rev-parse", "refs/heads/ea-data").text == first  # never force-pushed


@pytest.mark.slow
def test_a_dropped_device_chain_is_refused(
    tmp_path: Path, remote: Path, laptop: MemoryRoot, desktop: MemoryRoot
) -> None:
    # Guards a wipe that is not a force-push: a new commit that deletes a device's chain.
    hand = tmp_path / "hand"
    subprocess.run(["git", "clone", "-q", "-b", "ea-data", str(remote), str(hand)], check=True)
    laptop_id = local_device(laptop).id
    env = {**os.environ, "GIT_AUTHOR_NAME": "x", "GIT_AUTHOR_EMAIL": "x@x",
           "GIT_COMMITTER_NAME": "x", "GIT_COMMITTER_EMAIL": "x@x"}  # fmt: skip
    subprocess.run(
        ["git", "-C", str(hand), "rm", "-rq", f"evidence/devices/{laptop_id}"], check=True
    )
    subprocess.run(["git", "-C", str(hand), "commit", "-qm", "tidy"], check=True, env=env)
    subprocess.run(["git", "-C", str(hand), "push", "-q", "origin", "ea-data"], check=True, env=env)
    with pytest.raises(SyncRefused, match="dropped evidence/devices"):
        sync(desktop)
    assert ids(desktop)  # the laptop's records are still here


def test_offline_says_how_much_waits_and_queues_nothing(tmp_path: Path, laptop: MemoryRoot) -> None:
    friction(laptop, "one")
    friction(laptop, "two")
    data_before = git(laptop.path, "rev-parse", DATA_REF).text
    (tmp_path / "remote.git").rename(tmp_path / "away.git")
    result = sync(laptop)
    assert result.offline
    assert result.summary().startswith("offline: 2 local events not yet pushed")
    assert git(laptop.path, "rev-parse", DATA_REF).text == data_before


KILL_POINTS = [
    "before-fetch", "after-fetch", "snapshot", "planned", "journaled", "file-written",
    "data-written", "canon-written", "before-push", "after-push",
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("step", KILL_POINTS)
def test_sigkill_at_any_step_then_the_next_sync_completes(
    step: str, laptop: MemoryRoot, desktop: MemoryRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("USER", "alice")
    set_identity(laptop)  # a Canon commit to fast-forward, so 'canon-written' is reached
    set_entry(laptop, "session", "thread", "laptop is on the sync work")
    friction(laptop, "laptop before the kill")
    sync(laptop)
    friction(desktop, "desktop before the kill")
    proc = subprocess.run(
        [sys.executable, "-m", "evolving_agent", "--root", str(desktop.path), "sync"],
        env={**os.environ, KILL_ENV: step},
        capture_output=True,
    )
    assert proc.returncode == -9, proc.stderr
    sync(desktop)
    sync(laptop)
    sync(desktop)
    assert_converged(laptop, desktop)
    assert gitrepo.head_commit(desktop) == gitrepo.head_commit(laptop)
    assert [e.text for e in entries(desktop)] == ["laptop is on the sync work"]


@pytest.mark.slow
def test_device_offline_for_three_weeks_catches_up(
    tmp_path: Path, remote: Path, laptop: MemoryRoot, desktop: MemoryRoot
) -> None:
    start = date(2026, 12, 2)
    for n in range(21):
        day = datetime.combine(start + timedelta(days=n), datetime.min.time()).replace(hour=10)
        with freeze_time(day.astimezone()):
            friction(laptop, f"laptop day {n}")
            friction(desktop, f"desktop day {n}")
            if n % 7 == 6:
                sync(laptop)  # the laptop keeps syncing, weekly; the desktop is away
    with freeze_time((datetime(2026, 12, 23, 9)).astimezone()):
        result = sync(desktop)
        sync(laptop)
    assert result.received == 21
    held = assert_converged(laptop, desktop)
    assert len(held) == 1 + 42


@pytest.mark.slow
def test_nightly_on_the_today_writer_reflects_friction_from_the_other_device(
    laptop: MemoryRoot, desktop: MemoryRoot
) -> None:
    from evolving_agent.jobs.nightly import run_nightly
    from evolving_agent.memory.ops.hypotheses import add_hypothesis

    day = date(2026, 12, 3)
    with freeze_time(datetime(2026, 12, 3, 9).astimezone()):
        h = add_hypothesis(
            laptop,
            "I offer options nobody asked for",
            when="about to list alternatives",
            do="give the one answer asked for",
        )
    sync(laptop)
    sync(desktop)
    with freeze_time(datetime(2026, 12, 3, 15).astimezone()):
        desk = friction(desktop, "desktop: listed `pip` and `uv` when asked for one", supports=h.id)
    sync(desktop)
    sync(laptop)
    with freeze_time(datetime(2026, 12, 4, 3).astimezone()):
        result = run_nightly(laptop, day)
        with pytest.raises(NotTodayWriter):
            check_today_writer(desktop, "nightly")
    # The friction recorded on the desktop shapes the bias the laptop writes.
    assert result.plan.bias is not None
    assert "desktop: listed pip and uv when asked for one" in result.plan.bias
    assert result.plan.carry is not None and result.plan.carry.hypothesis == h.id
    assert desk in {r.id for r in EvidenceLog(laptop).read_day(day)}
    sync(laptop)
    sync(desktop)
    assert (desktop.today / "bias.md").read_text() == (laptop.today / "bias.md").read_text()


@pytest.mark.slow
def test_today_writer_moves_and_the_later_claim_wins(
    laptop: MemoryRoot, desktop: MemoryRoot
) -> None:
    assert today_writer(desktop).device == local_device(laptop).id  # type: ignore[union-attr]
    take_today(desktop)
    sync(desktop)
    sync(laptop)
    with pytest.raises(NotTodayWriter) as denied:
        check_today_writer(laptop, "nightly")
    assert denied.value.exit_code == 3
    check_today_writer(desktop, "nightly")
    assert_converged(laptop, desktop)


@pytest.mark.slow
def test_live_bus_newest_wins_and_the_other_value_is_kept_in_evidence(
    laptop: MemoryRoot, desktop: MemoryRoot
) -> None:
    with freeze_time(datetime(2026, 12, 5, 9).astimezone()):
        set_entry(laptop, "session", "thread", "laptop: stopped at the parser")
    with freeze_time(datetime(2026, 12, 5, 10).astimezone()):
        set_entry(desktop, "session", "thread", "desktop: stopped at the tests")
    sync(laptop)
    result = sync(desktop)
    sync(laptop)
    assert result.live_replaced == ["thread"]
    for root in (laptop, desktop):
        assert [e.text for e in entries(root)] == ["desktop: stopped at the tests"]
    kept = [
        r for r in EvidenceLog(laptop).iter_all() if r.kind == "sync" and r.data.get("live_key")
    ]
    assert [r.data["replaced"]["text"] for r in kept] == ["laptop: stopped at the parser"]
    assert_converged(laptop, desktop)


@pytest.mark.slow
def test_canon_changed_on_both_devices_stops_without_merging(
    laptop: MemoryRoot, desktop: MemoryRoot
) -> None:
    set_identity(laptop)
    set_identity(desktop, "# desktop's own\nschema_version: 1\nname: Ada\n")
    late = friction(laptop, "laptop: after the identity change")
    mine = friction(desktop, "desktop: after its own identity change")
    sync(laptop)
    head = gitrepo.head_commit(desktop)
    with pytest.raises(CanonDiverged) as stopped:
        sync(desktop)
    assert stopped.value.exit_code == 4
    assert gitrepo.head_commit(desktop) == head  # Canon waits for the human...
    assert late in ids(desktop)  # ...while Evidence keeps flowing both ways
    sync(laptop)
    assert mine in ids(laptop)
    assert gitrepo.head_commit(laptop) != head
    assert verify_root(laptop).problems == [] and verify_root(desktop).problems == []


@pytest.mark.slow
def test_an_existing_single_device_root_migrates_without_rewriting(tmp_path: Path) -> None:
    remote = bare(tmp_path / "fresh.git")
    root = init_root(tmp_path / "old")
    for n in range(3):
        friction(root, f"before devices {n}")
    device_path(root).unlink()  # a root made before devices existed
    (root.state / "sync").rename(tmp_path / "gone")
    files = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.evidence.glob("*.jsonl")
    }
    add_remote(root, "origin", str(remote))
    sync(root)
    assert {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.evidence.glob("*.jsonl")
    } == files
    other, _ = clone(str(remote), tmp_path / "new")
    assert_converged(root, other)
    assert len(ids(other)) == 3


@pytest.mark.slow
def test_the_monthly_limit_counts_approvals_made_on_every_device(
    laptop: MemoryRoot, desktop: MemoryRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evolving_agent.review.approve import MonthlyLimitReached

    monkeypatch.setenv("USER", "alice")
    set_identity(laptop)
    for n in range(1, 5):
        queue(laptop, f"rev-2026-11-{n}", add(f"Habit number {n}."))
    sync(laptop)
    sync(desktop)
    for n in (1, 2, 3):
        approve_review(laptop, f"rev-2026-11-{n}", approver="alice")
    sync(laptop)
    sync(desktop)
    with pytest.raises(MonthlyLimitReached):
        approve_review(desktop, "rev-2026-11-4", approver="alice")
    assert_converged(laptop, desktop)


@pytest.mark.slow
def test_a_reset_canon_branch_on_the_remote_is_refused(
    remote: Path, laptop: MemoryRoot, desktop: MemoryRoot
) -> None:
    first = git(remote, "rev-parse", "refs/heads/main").text
    set_identity(laptop)
    sync(laptop)
    sync(desktop)
    git(remote, "update-ref", "refs/heads/main", first)  # a force-push of Canon's history
    head = gitrepo.head_commit(desktop)
    with pytest.raises(SyncRefused, match="rewrote branch 'main'"):
        sync(desktop)
    assert gitrepo.head_commit(desktop) == head


@pytest.mark.slow
def test_a_received_chain_cut_on_this_device_is_found_by_verify(
    laptop: MemoryRoot, desktop: MemoryRoot
) -> None:
    friction(laptop, "laptop: second")
    sync(laptop)
    sync(desktop)
    copy = next((desktop.evidence / "devices" / local_device(laptop).id).glob("*.jsonl"))
    lines = copy.read_bytes().splitlines(keepends=True)
    copy.write_bytes(b"".join(lines[:-1]))  # someone cuts the laptop's last record here
    problems = verify_root(desktop).problems
    assert any("cut from the end" in p for p in problems)


def test_a_synced_root_that_lost_its_device_id_refuses_a_new_one(laptop: MemoryRoot) -> None:
    # Regression guard: a fresh id would re-send this chain as another device's (doubles).
    device_path(laptop).unlink()
    with pytest.raises(InvalidInput, match="restore the file"):
        local_device(laptop)


# -- sync validates before it merges (issue 31) ----------------------------------------------


def test_a_decision_made_on_the_other_device_syncs_with_its_record(
    laptop: MemoryRoot, desktop: MemoryRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evolving_agent.review.actions import reject_review

    monkeypatch.setenv("USER", "alice")
    review_id = queued_on_both(laptop, desktop)
    reject_review(laptop, review_id, reason="not now", approver="alice")
    sync(laptop)
    sync(desktop)  # the decision's Evidence record travels in the laptop's chain
    assert (desktop.area_dir("decisions") / f"{review_id}.json").is_file()
    assert verify_root(desktop).problems == []


def test_a_signed_device_verifies_what_it_receives_against_its_own_chain(
    tmp_path: Path, laptop: MemoryRoot, desktop: MemoryRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The staged copy sync verifies holds this device's signing chain (its statements)
    # and is checked against this device's pin: signing on must not refuse every sync.
    from evolving_agent.memory.evidence.signing_chain import enable

    monkeypatch.setenv("USER", "alice")
    key = tmp_path / "human_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    set_identity(laptop)
    sync(laptop)
    sync(desktop)
    enable(laptop, key)
    queue(desktop, "rev-2026-11-1", add("Ask before offering options."))
    sync(desktop)
    outcome = sync(laptop)  # brings reviews/: the merge is verified on a staged copy
    assert outcome.pushed
    assert (laptop.area_dir("pending") / "rev-2026-11-1.json").is_file()
    assert verify_root(laptop).problems == []
    # An unsigned human Canon commit made on the other device is refused here.
    Writer(desktop, "human").write(
        "canon", "identity.yaml", (desktop.canon / "identity.yaml").read_text() + "# d\n"
    )
    sync(desktop)
    with pytest.raises(SyncRefused, match="a human commit that is not signed"):
        sync(laptop)
    assert verify_root(laptop).problems == []


@pytest.mark.slow
def test_the_soak_at_a_small_size_loses_nothing(tmp_path: Path) -> None:
    """benchmarks/soak_sync.py with 2 cycles: three devices, real CLI processes SIGKILLed
    at random steps; every event once on every device, Canon unchanged, verify clean."""
    from benchmarks.soak_sync import soak

    run, problems = soak(tmp_path, cycles=2, kill=0.3, seed=7)
    assert problems == []
    assert sum(run.sent.values()) + len(run.maybe) == 2 * 3
