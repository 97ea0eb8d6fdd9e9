"""End to end, as a user would run it: imported evidence -> queued review -> approved
diff committed with its review id -> verify -> revert restores Canon byte for byte.

Every step that changes something is a real ``python -m evolving_agent`` process on a
real git repository.
The review is queued exactly as the monthly job queues it (``Writer(root, "monthly")``).
"""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

from evolving_agent.memory.root import init_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.models import CanonDiff
from tests.helpers import run_cli, run_proc
from tests.test_review_support import queue

EVENTS = [
    {"ts": "2026-11-03T14:02:00", "kind": "friction", "text": "Offered three options unasked."},
    {"ts": "2026-11-10T09:15:00", "kind": "friction", "text": "Began 'or you could also…'."},
    {"ts": "2026-11-17T16:40:00", "kind": "friction", "text": "Listed alternatives unasked."},
    {"ts": "2026-11-18T11:00:00", "kind": "journal", "text": "A calm pairing day."},
]


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return init_root(tmp_path / "memory")


def _ok(*args: str) -> str:
    """A real process for the steps that change things."""
    proc = run_proc(*args)
    assert proc.returncode == 0, (args, proc.stderr.decode())
    return proc.stdout.decode()


def _read(*args: str) -> str:
    """In-process for the read-only look-ups in between (same CLI, faster)."""
    result = run_cli(*args)
    assert result.exit_code == 0, (args, result.output)
    return result.output


def test_imported_evidence_to_approved_commit_verify_and_byte_exact_revert(
    root: MemoryRoot, tmp_path: Path
) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps(e) + "\n" for e in EVENTS))
    assert _ok("evidence", "import", str(events)) == "imported 4 event(s)\n"
    cited = [
        r["id"]
        for day in ("2026-11-03", "2026-11-10", "2026-11-17")
        for r in json.loads(_read("evidence", "show", "--date", day, "--json"))
        if r["kind"] == "friction"
    ]
    assert len(cited) == 3
    canon_before = {p.name: p.read_bytes() for p in root.canon.iterdir()}
    queue(
        root,
        "rev-2026-11-1",
        CanonDiff(section="habits", op="add", text="Offer alternatives only when asked."),
        cited,
    )

    listed = json.loads(_read("review", "list", "--json"))
    assert [(r["id"], r["status"]) for r in listed] == [("rev-2026-11-1", "pending")]
    shown = _read("review", "show", "rev-2026-11-1")
    assert "+  - Offer alternatives only when asked.\n" in shown
    assert "2026-11-10 09:15  friction: Began 'or you could also…'.\n" in shown

    approved = run_proc("review", "approve", "rev-2026-11-1", "--yes", "--approver", "alice")
    assert approved.returncode == 0, approved.stderr.decode()

    repo = git.Repo(root.path)
    commit = repo.head.commit
    assert "Review-Id: rev-2026-11-1\n" in str(commit.message)
    assert "Approved-By: alice\n" in str(commit.message)
    assert f"Evidence-Ids: {', '.join(cited)}\n" in str(commit.message)
    assert list(commit.stats.files) == ["canon/identity.yaml"]
    assert "  - Offer alternatives only when asked.\n" in (root.canon / "identity.yaml").read_text()
    assert json.loads(_read("review", "list", "--json"))[0]["status"] == "approved"
    assert _ok("verify").startswith("ok: ")
    log = json.loads(_read("canon", "log", "--json"))
    assert (log[0]["commit"], log[0]["review_id"]) == (commit.hexsha, "rev-2026-11-1")

    assert _ok("canon", "revert", commit.hexsha).startswith(f"reverted {commit.hexsha[:10]}")

    assert {p.name: p.read_bytes() for p in root.canon.iterdir()} == canon_before
    assert repo.head.commit.parents[0] == commit  # a new commit, history kept
    verify = run_proc("verify", "--json")
    assert verify.returncode == 0
    report = json.loads(verify.stdout)
    assert (report["ok"], report["canon_commits"]) == (True, 2)
