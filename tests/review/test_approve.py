"""End to end through the real jobs: a month's evidence -> nightly / weekly / monthly runs
-> the queued review approved -> its commit carries the review id -> verify -> a revert
restores Canon byte for byte.

The jobs and the read-only look-ups run through the CLI in-process (the jobs under
freezegun, each on the morning after its day, as the scheduler would run them); the
approval, the revert and ``verify`` are real ``python -m evolving_agent``
processes on the real git repository.
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import git
import pytest
from freezegun import freeze_time

from evolving_agent.memory.ops.hypotheses import check_register, fold_root
from evolving_agent.paths import MemoryRoot
from tests.helpers import run_cli, run_proc
from tests.helpers.roots import fresh_root

START = date(2026, 10, 5)  # a Monday: the weeks end on Sundays 10-11 and 10-18
SUPPORT_DAYS = [1, 4, 8, 11, 13]  # five distinct days within fourteen: the rules floor


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def _cli(*args: str) -> str:
    result = run_cli(*args)
    assert result.exit_code == 0, (args, result.output)
    return result.output


def _proc(*args: str) -> str:
    proc = run_proc(*args)
    assert proc.returncode == 0, (args, proc.stderr.decode())
    return proc.stdout.decode()


def test_evidence_through_all_three_jobs_to_an_approved_reverted_identity_change(
    root: MemoryRoot, tmp_path: Path
) -> None:
    with freeze_time("2026-10-05 08:00:00"):
        hid = _cli("hypothesis", "add", "give one answer, not a menu").split()[0]
    # Each event is recorded on its own day (an import would record them all today:
    # back-dating cannot fill past days, see issue 11).
    for d in SUPPORT_DAYS:
        with freeze_time(f"{START + timedelta(days=d)} 10:00:00"):
            text = f"day {d}: listed options nobody asked for; one answer would do"
            _cli("friction", text, "--supports", hid)
    with freeze_time("2026-10-07 12:00:00"):
        _cli("evidence", "append", "--kind", "journal", "Long refactoring session.")
    canon_before = {p.name: p.read_bytes() for p in root.canon.iterdir()}
    head_before = git.Repo(root.path).head.commit.hexsha

    for i in range(14):  # through Sunday 10-18, the week the floor is reached
        day = START + timedelta(days=i)
        with freeze_time(f"{day + timedelta(days=1)} 03:00:00"):
            _cli("run", "nightly", "--date", day.isoformat())
            if day.weekday() == 6:
                _cli("run", "weekly", "--date", day.isoformat())
    with freeze_time("2026-11-01 04:00:00"):
        queued = _cli("run", "monthly", "--date", "2026-11-01")
    assert "rev-2026-10-1: add to habits: " in queued
    assert git.Repo(root.path).head.commit.hexsha == head_before  # no job touched Canon

    [review] = json.loads(_cli("review", "list", "--json"))
    assert (review["id"], review["status"]) == ("rev-2026-10-1", "pending")
    cited = review["evidence_ids"]
    assert len(cited) == len(SUPPORT_DAYS)
    shown = _cli("review", "show", "rev-2026-10-1")
    new_entry = f"  - {review['diff']['text']}\n"
    assert f"+{new_entry}" in shown
    assert "2026-10-06 10:00  friction: day 1: listed options nobody asked for" in shown

    approved = run_proc("review", "approve", "rev-2026-10-1", "--yes", "--approver", "alice")
    assert approved.returncode == 0, approved.stderr.decode()
    # The hypothesis now knows its Canon entry (a later retirement proposes removing it).
    assert fold_root(root)[hid].canon_text == "Give one answer, not a menu."
    assert check_register(root) == []

    commit = git.Repo(root.path).head.commit
    message = str(commit.message)
    assert "Actor: monthly\n" in message
    assert "Review-Id: rev-2026-10-1\n" in message
    assert "Approved-By: alice\n" in message
    assert f"Evidence-Ids: {', '.join(cited)}\n" in message
    assert new_entry in (root.canon / "identity.yaml").read_text()
    assert _proc("verify").startswith("ok: ")

    reverted = _proc("canon", "revert", commit.hexsha)
    assert reverted.startswith(f"reverted {commit.hexsha[:10]}: restored canon/identity.yaml")
    assert {p.name: p.read_bytes() for p in root.canon.iterdir()} == canon_before
    assert git.Repo(root.path).head.commit.parents[0] == commit  # a new commit, history kept
    report = json.loads(_proc("verify", "--json"))
    assert (report["ok"], report["canon_commits"], report["problems"]) == (True, 2, [])
    log = json.loads(_cli("canon", "log", "--json"))
    assert [(c["actor"], c["review_id"], c["reverts"]) for c in log[:2]] == [
        ("human", None, commit.hexsha),
        ("monthly", "rev-2026-10-1", None),
    ]
