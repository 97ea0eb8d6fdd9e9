"""What every step of sync shares (memory/sync/base.py): the errors and what they say,
the result's one line, the mapping between the data tree and the disk, which tree paths
are safe, the lock and the kill points.  Real files, real processes; the steps that use
these: test_plan.py, test_apply.py, test_run.py.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evolving_agent.errors import EXIT_INVALID, EXIT_TAMPERED
from evolving_agent.memory.base.locks import human_lock_dir
from evolving_agent.memory.sync.base import (
    KILL_ENV,
    CanonDiverged,
    SyncRefused,
    SyncResult,
    area_of,
    disk_path,
    evidence_path,
    incoming,
    safe_tree_path,
    sync_lock,
    synced,
)
from evolving_agent.paths import MemoryRoot
from tests.helpers import REPO
from tests.helpers.roots import fresh_root

HERE, OTHER = "d-0123456789ab", "d-ba9876543210"

# -- the errors ----------------------------------------------------------------------------


def test_a_refusal_shows_five_problems_counts_the_rest_and_says_nothing_changed() -> None:
    problems = [f"problem {i}" for i in range(8)]
    exc = SyncRefused("origin", problems)
    assert exc.exit_code == EXIT_TAMPERED and exc.problems == problems
    assert str(exc) == (
        "sync refused: remote 'origin' problem 0; problem 1; problem 2; problem 3; "
        "problem 4; and 3 more (nothing was changed on this device)"
    )
    own = SyncRefused("origin", ["a signature does not verify"], local=True)
    assert str(own) == (
        "sync refused: this device's own Evidence: a signature does not verify "
        "(nothing was changed on this device)"
    )
    assert "more" not in str(SyncRefused("origin", problems[:5]))


def test_diverged_canon_names_both_commits_short_and_says_evidence_was_synced() -> None:
    exc = CanonDiverged("origin", "a" * 40, "b" * 40)
    assert exc.exit_code == EXIT_INVALID
    text = str(exc)
    assert "(commit aaaaaaaaaa) and on remote 'origin' (commit bbbbbbbbbb)" in text
    assert "a" * 11 not in text
    assert "Evidence and the other layers were synced" in text and "\n" not in text


# -- the result ----------------------------------------------------------------------------


def test_a_result_says_what_was_exchanged_and_only_what_happened() -> None:
    plain = SyncResult("origin", HERE, received=3, sent=1)
    assert plain.status == (
        "done: synced with 'origin': received 3 event(s) from other devices, sent 1"
    )
    full = SyncResult(
        "origin", HERE, received=0, sent=2, canon_commits=2,
        live_replaced=["focus", "mood"], resumed=True,
    )  # fmt: skip
    assert full.summary() == (
        "synced with 'origin': received 0 event(s) from other devices, sent 2; "
        "2 verified Canon commit(s) applied; Live Bus keys taken from the newer device: "
        "focus, mood; an interrupted sync was completed first"
    )


def test_an_offline_result_counts_what_waits_and_is_not_done() -> None:
    result = SyncResult("nas", HERE, offline=True, offline_reason="host unreachable", unpushed=4)
    assert (
        result.status
        == result.summary()
        == ("offline: 4 local events not yet pushed (remote 'nas': host unreachable)")
    )


# -- tree paths and disk paths -------------------------------------------------------------


def test_each_area_of_the_tree_lands_where_the_root_keeps_it(tmp_path: Path) -> None:
    root = MemoryRoot(tmp_path)
    day = "2026-11-02"
    own = disk_path(root, f"evidence/devices/{HERE}/{day}.jsonl", HERE)
    assert own == root.real / "evidence" / f"{day}.jsonl"  # this device's own log
    theirs = disk_path(root, f"evidence/devices/{OTHER}/{day}.jsonl", HERE)
    assert theirs == root.real / "evidence" / "devices" / OTHER / f"{day}.jsonl"
    assert disk_path(root, "sync/register.json", HERE) == root.real / ".ea" / "sync/register.json"
    assert disk_path(root, "live/focus.json", HERE) == root.real / "live" / "focus.json"


@pytest.mark.parametrize(
    "path",
    [
        f"evidence/devices/{HERE}/2026-11-02.json",  # not a day log
        f"evidence/devices/{HERE.upper()}/2026-11-02.jsonl",
        "evidence/devices/d-0123/2026-11-02.jsonl",
        f"evidence/devices/{HERE}/2026-11-02.jsonl.bak",
        f"x/evidence/devices/{HERE}/2026-11-02.jsonl",
        f"evidence/{HERE}/2026-11-02.jsonl",
    ],
)
def test_only_a_devices_day_log_is_an_evidence_path(path: str) -> None:
    assert evidence_path(path) is None


@given(device=st.from_regex(r"d-[0-9a-f]{12}", fullmatch=True), n=st.integers(0, 99_999))
def test_every_devices_day_log_is_matched_with_its_device_and_day(device: str, n: int) -> None:
    from datetime import date, timedelta

    day = (date(2000, 1, 1) + timedelta(days=n)).isoformat()
    m = evidence_path(f"evidence/devices/{device}/{day}.jsonl")
    assert m is not None and m.groups() == (device, day)


@pytest.mark.parametrize(
    "path",
    ["", ".", "..", "live/../canon/identity.md", "/etc/passwd", ".git/config", "live/.hidden",
     "reviews/./pending/x.json", "today/.git/hooks/post-commit", "live//focus.json",
     "live/focus.json/", "/live/focus.json"],
)  # fmt: skip
def test_a_tree_path_that_could_leave_its_area_or_hide_is_unsafe(path: str) -> None:
    assert not safe_tree_path(path)


def test_plain_tree_paths_are_safe() -> None:
    assert safe_tree_path("live/focus.json") and safe_tree_path("sync/register.json")
    assert safe_tree_path(f"evidence/devices/{HERE}/2026-11-02.jsonl")


_PART = st.text(st.characters(codec="ascii", exclude_characters="/\x00"), min_size=1, max_size=8)


@given(parts=st.lists(_PART, min_size=1, max_size=5))
def test_a_path_is_safe_exactly_when_no_part_is_dotted_or_empty(parts: list[str]) -> None:
    assert safe_tree_path("/".join(parts)) == all(not p.startswith(".") for p in parts)
    assert not safe_tree_path("/" + "/".join(parts))  # never absolute
    assert not safe_tree_path("/".join([*parts, ".", *parts]))  # a "." part is not dropped


def test_the_area_of_a_path_is_its_first_part_or_the_kind_of_review() -> None:
    assert area_of("live/focus.json") == "live"
    assert area_of(f"evidence/devices/{HERE}/2026-11-02.jsonl") == "evidence"
    assert area_of("reviews/pending/r-1.json") == "pending"
    assert area_of("reviews/decisions/r-1.json") == "decisions"


def test_incoming_and_synced_refs_are_kept_apart_per_remote_and_branch() -> None:
    refs = {incoming(r, b) for r in ("origin", "nas") for b in ("main", "ea-data")}
    refs |= {synced(r, b) for r in ("origin", "nas") for b in ("main", "ea-data")}
    assert len(refs) == 8
    assert incoming("nas", "ea-data") == "refs/ea/incoming/nas/ea-data"
    assert synced("nas", "main") == "refs/ea/synced/nas/main"


# -- the lock and the kill points ----------------------------------------------------------

TRY_LOCK = """
import fcntl, sys
fd = open(sys.argv[1], "a")
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    print("busy")
else:
    print("free")
"""


def test_the_sync_lock_keeps_a_second_process_out_until_it_is_released(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    path = str(human_lock_dir(root) / "sync-run.lock")

    def other() -> str:
        argv = [sys.executable, "-c", TRY_LOCK, path]
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()

    with sync_lock(root):
        assert other() == "busy"
    assert other() == "free"
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released in this process too
    finally:
        os.close(fd)


KILL = "from evolving_agent.memory.sync.base import kill_point as k; k('{0}'); print('alive')"


def test_a_kill_point_kills_only_at_its_named_step() -> None:
    env = {**os.environ, KILL_ENV: "after-fetch", "PYTHONPATH": str(REPO)}
    died = subprocess.run([sys.executable, "-c", KILL.format("after-fetch")], env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert died.returncode == -signal.SIGKILL and died.stdout == ""
    lived = subprocess.run([sys.executable, "-c", KILL.format("before-push")], env=env,
                           capture_output=True, text=True)  # fmt: skip
    assert lived.returncode == 0 and lived.stdout == "alive\n"
